import { BlockList, isIP } from 'node:net';

import { cidrContains, parseAddress, parseAllowList, parseCidr } from '../../nodes/shared/checks/network';

/** The node may not use Node's net module; the tests use it as the reference. */
function allowedBy(list: string, address: string): boolean {
	const source = parseAddress(address);
	return !!source && parseAllowList(list).ranges.some((range) => cidrContains(range, source));
}

describe('addresses', () => {
	it.each([
		['192.168.1.7', 4],
		['0.0.0.0', 4],
		['255.255.255.255', 4],
		['::1', 6],
		['::', 6],
		['2001:DB8:0:0:0:0:0:1', 6],
		['2001:db8::1:0:0:1', 6],
		['[2001:db8::1]', 6],
		['fe80::1%eth0', 6],
		['64:ff9b::192.0.2.33', 6],
		['::ffff:10.1.2.3', 4],
		['::ffff:a01:203', 4],
	])('reads %s as IPv%s', (text, version) => expect(parseAddress(text)?.version).toBe(version));

	it.each(['', '1.2.3', '1.2.3.4.5', '1.2.3.256', '01.2.3.4', '1.2.3.-1', '1::2::3', ':::', 'g::1', '1:2:3:4:5:6:7:8:9', '1:2:3:4:5:6:7::8', '::ffff:1.2.3', '12345::1'])(
		'refuses %p, as Node does',
		(text) => {
			expect(parseAddress(text)).toBeUndefined();
			expect(isIP(text)).toBe(0);
		},
	);

	it('an IPv4 client seen through a dual-stack socket matches IPv4 ranges', () => {
		expect(allowedBy('10.0.0.0/8', '::ffff:10.20.30.40')).toBe(true);
		expect(allowedBy('::ffff:0:0/96', '10.20.30.40')).toBe(false);
	});
});

describe('ranges', () => {
	it('prefix boundaries, byte-aligned or not', () => {
		expect(allowedBy('192.168.1.0/24', '192.168.1.0')).toBe(true);
		expect(allowedBy('192.168.1.0/24', '192.168.1.255')).toBe(true);
		expect(allowedBy('192.168.1.0/24', '192.168.2.0')).toBe(false);
		expect(allowedBy('172.16.0.0/12', '172.31.255.255')).toBe(true);
		expect(allowedBy('172.16.0.0/12', '172.32.0.0')).toBe(false);
		expect(allowedBy('2001:db8::/33', '2001:db8:7fff::1')).toBe(true);
		expect(allowedBy('2001:db8::/33', '2001:db8:8000::1')).toBe(false);
	});

	it('a single address is a full-length range; /0 is every address of its family only', () => {
		expect(parseCidr('192.168.1.7')).toMatchObject({ prefix: 32 });
		expect(parseCidr('::1')).toMatchObject({ prefix: 128 });
		expect(allowedBy('192.168.1.7', '192.168.1.8')).toBe(false);
		expect(allowedBy('0.0.0.0/0', '8.8.8.8')).toBe(true);
		expect(allowedBy('0.0.0.0/0', '2001:db8::1')).toBe(false);
		expect(allowedBy('::/0', '2001:db8::1')).toBe(true);
		expect(allowedBy('::/0', '8.8.8.8')).toBe(false);
	});

	it.each(['1.2.3.4/33', '1.2.3.4/', '1.2.3.4/-1', '1.2.3.4/8/1', '1.2.3.4/x', '::/129', 'nonsense/8'])('refuses %p', (text) =>
		expect(parseCidr(text)).toBeUndefined(),
	);

	it('allow-lists split on commas, spaces and new lines, and name the entries they cannot read', () => {
		const { ranges, invalid } = parseAllowList(' 10.0.0.0/8,192.168.1.7\n2001:db8::/32  nonsense, 1.2.3.4/33,,');
		expect(ranges.map((range) => range.prefix)).toEqual([8, 32, 32]);
		expect(invalid).toEqual(['nonsense', '1.2.3.4/33']);
		expect(parseAllowList('')).toEqual({ ranges: [], invalid: [] });
	});
});

describe('agrees with Node\'s BlockList on random ranges and nearby addresses', () => {
	let seed = 20261122;
	const random = (below: number) => {
		seed = (seed * 1103515245 + 12345) % 2 ** 31;
		return seed % below;
	};
	const randomBytes = (count: number) => Array.from({ length: count }, () => random(256));
	const flipBit = (bytes: number[], bit: number) => bytes.map((byte, index) => (index === bit >> 3 ? byte ^ (0x80 >> (bit & 7)) : byte));
	const formatV4 = (bytes: number[]) => bytes.join('.');
	const formatV6 = (bytes: number[]) => {
		const groups = Array.from({ length: 8 }, (_, index) => ((bytes[2 * index] << 8) | bytes[2 * index + 1]).toString(16));
		const text = groups.join(':');
		// Sometimes compress a zero run, to exercise '::'.
		return random(2) ? text.replace(/(^|:)0(:0)+(:|$)/, '::') : text;
	};

	it.each([
		['ipv4', 4, formatV4],
		['ipv6', 16, formatV6],
	] as const)('%s', (family, length, format) => {
		for (let round = 0; round < 300; round++) {
			const base = randomBytes(length);
			// Zero a few groups so IPv6 compression happens.
			if (family === 'ipv6') for (let group = random(4); group < 4 + random(4); group++) base.splice(group * 2, 2, 0, 0);
			const prefix = random(length * 8 + 1);
			const reference = new BlockList();
			reference.addSubnet(format(base), prefix, family);
			const range = parseCidr(`${format(base)}/${prefix}`)!;
			expect(range).toBeDefined();
			const candidates = [base, flipBit(base, Math.max(0, prefix - 1)), flipBit(base, Math.min(length * 8 - 1, prefix)), randomBytes(length)];
			for (const bytes of candidates) {
				const text = format(bytes);
				expect([text, cidrContains(range, parseAddress(text)!)]).toEqual([text, reference.check(text, family)]);
			}
		}
	});
});
