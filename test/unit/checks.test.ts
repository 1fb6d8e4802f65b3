import { checkLandlineNumber, checkMobileNumber, checkTelephoneNumber } from '../../nodes/shared/checks/phone';
import {
	checkGatewayId,
	checkSignatureName,
	checkTemplateContent,
	checkVariables,
	checkVariablesAgainstTemplate,
	messageSize,
	renderTemplate,
} from '../../nodes/shared/checks/sms';
import { checkNumberTail, checkPlate } from '../../nodes/shared/checks/vehicle';
import { DEFAULT_SMS_LIMITS } from '../../nodes/shared/gateway/catalog';
import { sendFields } from '../../nodes/DataGatewaySms/actions/message/send/fields';
import { deliveryOutcome } from '../../nodes/DataGatewaySms/actions/message/sendAndCheck.operation';

describe('plates', () => {
	it.each(['京A12345', '粤BD12345', ' 沪a·c1234 ', '使A12345'])('accepts %s', (plate) => expect(checkPlate(plate).ok).toBe(true));
	it.each(['', 'A12345', '京12345', '京A1234', '京A1234567', 'XA12345'])('refuses %s', (plate) => expect(checkPlate(plate).ok).toBe(false));
	it('normalises case and separators', () => expect(checkPlate(' 京a-12345').value).toBe('京A12345'));
	it('accepts tails of letters and digits only', () => {
		expect(checkNumberTail('a1b2').value).toBe('A1B2');
		expect(checkNumberTail('').ok).toBe(true);
		expect(checkNumberTail('12-34').ok).toBe(false);
	});
});

describe('phones', () => {
	it('mobile: strips +86 and separators', () => expect(checkMobileNumber('+86 139-0000-1234').value).toBe('13900001234'));
	it('mobile: refuses landlines and short numbers', () => {
		expect(checkMobileNumber('01012345678').ok).toBe(false);
		expect(checkMobileNumber('1390000123').ok).toBe(false);
	});
	it('landline: needs an area code', () => {
		expect(checkLandlineNumber('0755-12345678').value).toBe('075512345678');
		expect(checkLandlineNumber('12345678').ok).toBe(false);
	});
	it.each([
		['+86 10 12345678', '01012345678'],
		['0086-21-87654321', '02187654321'],
		['+86 010 12345678', '01012345678'],
		['+86 (755) 1234567', '07551234567'],
	])('landline: %s with the country code becomes the domestic %s', (input, sent) => {
		expect(checkLandlineNumber(input)).toEqual({ ok: true, value: sent });
		expect(checkTelephoneNumber(input)).toEqual({ ok: true, value: sent });
	});
	it.each(['+86 12345678', '0086-1234', '+1 212 5550100'])('landline: refuses %s', (input) => expect(checkLandlineNumber(input).ok).toBe(false));
	it('mobile: also strips 0086', () => expect(checkMobileNumber('0086 139 0000 1234').value).toBe('13900001234'));
});

describe('SMS rules', () => {
	it('variables: names, reserved words, count, length', () => {
		expect(checkVariables({ code: '1', user_name: 'x' })).toBeUndefined();
		expect(checkVariables({ Email: '1' })).toMatch(/reserved/);
		expect(checkVariables({ 'a b': '1' })).toMatch(/only letters and underscore/);
		expect(checkVariables({ code: '码'.repeat(51) })).toMatch(/51 characters/);
		expect(checkVariables(Object.fromEntries('abcdefghi'.split('').map((name) => [name, '1'])))).toMatch(/at most 8/);
	});
	it('template content and signature names', () => {
		expect(checkTemplateContent('您的验证码是${code}')).toBeUndefined();
		expect(checkTemplateContent('【x】${code}')).toMatch(/brackets/);
		expect(checkTemplateContent('${code')).toMatch(/closing/);
		expect(checkSignatureName('数据网关2')).toBeUndefined();
		expect(checkSignatureName('数据[网关]')).toMatch(/contains "\["/);
	});
	it.each([
		[70, 1],
		[71, 2],
		[134, 2],
		[135, 3],
		[201, 3],
		[202, 4],
	])('%s characters with the signature and its 【】 are %s segment(s)', (length, segments) => {
		// 【签名】 is 4 characters: the 2 brackets count, so the estimate is never below the bill.
		expect(messageSize('签名', 'x'.repeat(length - 4))).toMatchObject({ length, segments });
	});
	it('counts the 【】 around the signature', () => {
		expect(messageSize('数据网关', 'x'.repeat(65))).toMatchObject({ length: 71, segments: 2 });
		expect(messageSize('数据网关', 'x'.repeat(64))).toMatchObject({ length: 70, segments: 1 });
	});
	describe('variable names that are also built-in object properties are plain names', () => {
		const builtIns = ['constructor', 'toString', 'valueOf', '__proto__', 'hasOwnProperty'];
		it.each(builtIns)('${%s} without a value is missing, and is not rendered from Object.prototype', (name) => {
			const content = `您的验证码是\${${name}}`;
			expect(checkTemplateContent(content)).toBeUndefined();
			expect(checkVariablesAgainstTemplate(content, {})).toBe(`has no value for \${${name}}, which the template uses`);
			expect(renderTemplate(content, {})).toBe(content);
			expect(messageSize('数据网关', renderTemplate(content, {})).length).toBe(6 + content.length);
		});
		it.each(builtIns)('%s with a value is checked and rendered like any name', (name) => {
			const variables = Object.fromEntries([[name, '1234']]);
			expect(checkVariables(variables)).toBeUndefined();
			expect(checkVariablesAgainstTemplate(`码\${${name}}`, variables)).toBeUndefined();
			expect(renderTemplate(`码\${${name}}`, variables)).toBe('码1234');
		});
	});
	it.each([
		['16', 16],
		[' 42 ', 42],
		[7, 7],
		[String(Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER],
	])('ID %j is %s', (raw, id) => expect(checkGatewayId(raw)).toEqual({ id }));
	it.each([
		['0x10', /not a positive whole number written with the digits 0-9/],
		['1e2', /not a positive whole number/],
		['0b11', /not a positive whole number/],
		['0o7', /not a positive whole number/],
		['-5', /not a positive whole number/],
		['1.5', /not a positive whole number/],
		[1e21, /not a positive whole number/],
		['99999999999999999999', /too large to be an ID \(at most 9007199254740991\)/],
		['9007199254740992', /too large/],
		['0', /^is 0$/],
		['', /^is empty$/],
	])('ID %j is refused: %s', (raw, problem) => expect(checkGatewayId(raw).problem).toMatch(problem));
	it('the node\'s limit defaults are the gateway\'s', () => {
		const options = sendFields(['send']).find((field) => field.name === 'sendOptions')?.options ?? [];
		const defaults = Object.fromEntries(options.map((option) => [option.name, (option as { default: unknown }).default]));
		expect(defaults).toMatchObject(DEFAULT_SMS_LIMITS);
	});
});

describe('Send and Check Delivery outcome', () => {
	it.each([
		[1, 'delivered'],
		[-1, 'failed'],
		[0, 'sending'],
		['1', 'delivered'],
		[2, 'unknown'],
		[null, 'unknown'],
		[undefined, 'unknown'],
	])('status %j -> %s', (status, outcome) => {
		expect(deliveryOutcome(status)).toBe(outcome);
	});
});
