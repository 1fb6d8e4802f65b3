/** Source-address allow-lists in CIDR form, for IPv4 and IPv6, without Node's net module. */

type Address = { version: 4 | 6; bytes: number[] };

function parseIPv4(text: string): number[] | undefined {
	const parts = text.split('.');
	if (parts.length !== 4) return undefined;
	// Leading zeros are refused: some readers take 010 as octal 8, so such an entry is ambiguous.
	const bytes = parts.map((part) => (/^(0|[1-9]\d{0,2})$/.test(part) ? Number(part) : NaN));
	return bytes.every((byte) => byte >= 0 && byte <= 255) ? bytes : undefined;
}

function parseIPv6(text: string): number[] | undefined {
	let source = text;
	// A dotted IPv4 tail (::ffff:1.2.3.4) becomes its two hex groups.
	const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(source);
	if (dotted) {
		const v4 = parseIPv4(dotted[2]);
		if (!v4) return undefined;
		source = `${dotted[1]}${((v4[0] << 8) | v4[1]).toString(16)}:${((v4[2] << 8) | v4[3]).toString(16)}`;
	}
	const halves = source.split('::');
	if (halves.length > 2) return undefined;
	const left = halves[0] ? halves[0].split(':') : [];
	const right = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
	const missing = 8 - left.length - right.length;
	if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
	const groups = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...right];
	if (!groups.every((group) => /^[0-9a-f]{1,4}$/i.test(group))) return undefined;
	return groups.flatMap((group) => {
		const value = parseInt(group, 16);
		return [value >> 8, value & 0xff];
	});
}

export function parseAddress(text: string): Address | undefined {
	const clean = text.trim().replace(/^\[|\]$/g, '').replace(/%.*$/, '');
	const v4 = parseIPv4(clean);
	if (v4) return { version: 4, bytes: v4 };
	const v6 = parseIPv6(clean);
	if (!v6) return undefined;
	// An IPv4 client seen through an IPv6 socket (::ffff:a.b.c.d) is treated as IPv4.
	if (v6.slice(0, 10).every((byte) => byte === 0) && v6[10] === 0xff && v6[11] === 0xff) return { version: 4, bytes: v6.slice(12) };
	return { version: 6, bytes: v6 };
}

export interface CidrRange {
	address: Address;
	prefix: number;
}

/** `10.0.0.0/8`, `2001:db8::/32`, or a single address. Undefined when malformed. */
export function parseCidr(text: string): CidrRange | undefined {
	const [addressText, prefixText, ...rest] = text.trim().split('/');
	if (rest.length > 0) return undefined;
	const address = parseAddress(addressText);
	if (!address) return undefined;
	const bits = address.bytes.length * 8;
	const prefix = prefixText === undefined ? bits : /^\d+$/.test(prefixText) ? Number(prefixText) : NaN;
	if (!(prefix >= 0 && prefix <= bits)) return undefined;
	return { address, prefix };
}

export function cidrContains(range: CidrRange, address: Address): boolean {
	if (range.address.version !== address.version) return false;
	for (let bit = 0; bit < range.prefix; bit++) {
		const byte = bit >> 3;
		const mask = 0x80 >> (bit & 7);
		if ((range.address.bytes[byte] & mask) !== (address.bytes[byte] & mask)) return false;
	}
	return true;
}

/** Parses a comma- or newline-separated allow-list; returns the entries it could not read. */
export function parseAllowList(text: string): { ranges: CidrRange[]; invalid: string[] } {
	const entries = text.split(/[,\s]+/).map((entry) => entry.trim()).filter(Boolean);
	const ranges: CidrRange[] = [];
	const invalid: string[] = [];
	for (const entry of entries) {
		const range = parseCidr(entry);
		if (range) ranges.push(range);
		else invalid.push(entry);
	}
	return { ranges, invalid };
}
