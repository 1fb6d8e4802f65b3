/** Vehicle input rules (docs/gateway-api.md#operations). Pure functions. */
import { DETAIL_VEHICLE_TYPES, VIOLATION_VEHICLE_TYPES } from '../gateway/catalog';
import type { CheckResult } from './phone';

/** Province abbreviations that start a mainland plate, plus embassy/consulate plates. */
const PLATE_PREFIXES = '京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼使领';
const PROVINCES = '京津沪渝冀豫云辽黑湘皖鲁新苏浙赣鄂桂甘晋蒙陕吉闽贵粤青藏川宁琼';
/** The forms of plate the gateway may be asked about; anything else is refused before paying. */
const PLATES = [
	// Ordinary: province, letter, 5 letters or digits; new-energy: 6.
	new RegExp(`^[${PLATE_PREFIXES}][A-Z][A-Z0-9]{5,6}$`),
	// Coach, police, trailer, Hong Kong / Macao crossing, consulate and test plates end in a character.
	new RegExp(`^[${PROVINCES}][A-Z][A-Z0-9]{4}[学警挂港澳领试超]$`),
	// Embassy plates: 使 and 6 digits; consulate plates also as province, 6 digits, 领.
	/^使\d{6}$/,
	new RegExp(`^[${PROVINCES}][0-9]{6}领$`),
	// Armed police: WJ, optionally a province, 5 letters or digits (the last may be a branch character).
	new RegExp(`^WJ[${PROVINCES}]?[0-9]{4}[0-9A-Z消边通森金警电]$`),
	// Military: two letters, 5 digits.
	/^[VKHBSLJNGCQZE][A-Z]\d{5}$/,
];
/** The plate field's description, shared by the operations that take a plate. */
export const PLATE_FIELD_DESCRIPTION =
	'The plate: a province character, a letter, then 5 letters or digits (6 for new-energy plates), e.g. 京A12345; also forms ending in 学, 警, 挂, 港, 澳, 领 or 试 (京A1234学), embassy (使123456), armed police (WJ京12345) and military plates';
const PLATE_PREFIX = new RegExp(`^[${PLATE_PREFIXES}][A-Z]?$`);
const PLATE_SEPARATORS = /[\s·•.-]/g;

export function checkPlate(input: string): CheckResult {
	const plate = String(input ?? '').replace(PLATE_SEPARATORS, '').toUpperCase();
	if (plate === '') return { ok: false, value: 'is empty' };
	if (!PLATES.some((form) => form.test(plate))) {
		return {
			ok: false,
			value: `"${input}" is not a plate number. Accepted: 京A12345 (province character, letter, 5 letters or digits), 粤BD12345 (new-energy: 6), 京A1234学 (4 letters or digits, then 学, 警, 挂, 港, 澳, 领 or 试), 使123456 (embassy)`,
		};
	}
	return { ok: true, value: plate };
}

/** A plate prefix for the support rules: a province character, optionally its letter; empty means all. */
export function checkPlatePrefix(input: string): CheckResult {
	const prefix = String(input ?? '').replace(PLATE_SEPARATORS, '').toUpperCase();
	if (prefix === '') return { ok: true, value: '' };
	if (!PLATE_PREFIX.test(prefix)) {
		return { ok: false, value: `"${input}" is not a plate prefix: a province character, optionally followed by its letter, e.g. 京 or 粤B` };
	}
	return { ok: true, value: prefix };
}

/** Engine or frame (VIN) number tail: letters and digits only; optional, so empty is fine. */
export function checkNumberTail(input: string | undefined): CheckResult {
	const tail = String(input ?? '').replace(/\s/g, '').toUpperCase();
	if (tail === '') return { ok: true, value: '' };
	if (!/^[A-Z0-9]{1,25}$/.test(tail)) {
		return { ok: false, value: `"${input}" may contain only letters and digits (usually the last 4 or 6 characters)` };
	}
	return { ok: true, value: tail };
}

function checkCode(input: string, allowed: ReadonlyArray<{ code: string }>, optional: boolean): CheckResult {
	const code = String(input ?? '').trim();
	if (code === '' && optional) return { ok: true, value: '' };
	if (!allowed.some((type) => type.code === code)) {
		return { ok: false, value: `"${input}" is not one of the codes ${allowed.map((type) => type.code).join(', ')}` };
	}
	return { ok: true, value: code };
}

export const checkViolationVehicleType = (input: string) => checkCode(input, VIOLATION_VEHICLE_TYPES, true);
export const checkDetailVehicleType = (input: string) => checkCode(input, DETAIL_VEHICLE_TYPES, false);
