/** Phone number rules, shared by telephone identification and SMS. Pure functions. */

export interface CheckResult {
	ok: boolean;
	/** The value to send when ok; otherwise what is wrong, in words a user can act on. */
	value: string;
}

const SEPARATORS = /[\s\-()]/g;

function stripCountryCode(digits: string) {
	return digits.replace(/^(\+?86|0086)(?=1\d{10}$)/, '');
}

/** `+86 10 12345678`, `0086-21-87654321`, `+86 010 12345678` -> the domestic form with its leading 0. */
function domesticLandline(digits: string) {
	const international = /^(?:\+86|0086)(\d+)$/.exec(digits);
	if (!international) return digits;
	return international[1].startsWith('0') ? international[1] : `0${international[1]}`;
}

/** A mainland mobile number: 11 digits starting 13–19. `+86`, `0086` and separators are removed. */
export function checkMobileNumber(input: string): CheckResult {
	const digits = stripCountryCode(String(input ?? '').replace(SEPARATORS, ''));
	if (digits === '') return { ok: false, value: 'is empty' };
	if (!/^1[3-9]\d{9}$/.test(digits)) {
		return { ok: false, value: `"${input}" is not a domestic mobile number (11 digits starting with 13–19, e.g. 13800138000)` };
	}
	return { ok: true, value: digits };
}

/**
 * A landline with its area code (0 + 2–3 digits, then 7–8 digits), e.g. 010-12345678. Written
 * internationally (+86 or 0086, area code without its 0) it becomes the domestic form.
 */
export function checkLandlineNumber(input: string): CheckResult {
	const digits = domesticLandline(String(input ?? '').replace(SEPARATORS, ''));
	if (digits === '') return { ok: false, value: 'is empty' };
	if (!/^0\d{2,3}\d{7,8}$/.test(digits)) {
		return {
			ok: false,
			value: `"${input}" is not a landline with area code (area code starting with 0, then 7–8 digits, e.g. 010-12345678)`,
		};
	}
	return { ok: true, value: digits };
}

/** Either kind, as telephone identification accepts both. */
export function checkTelephoneNumber(input: string): CheckResult {
	const mobile = checkMobileNumber(input);
	if (mobile.ok) return mobile;
	const landline = checkLandlineNumber(input);
	if (landline.ok) return landline;
	if (mobile.value === 'is empty') return mobile;
	return {
		ok: false,
		value: `"${input}" is neither a mobile number (e.g. 13800138000) nor a landline with area code (e.g. 010-12345678)`,
	};
}
