import { simplifyCopyright } from '../../nodes/DataGatewayEnterprise/actions/copyright/getAll.operation';
import { readCopyrightPages } from '../../nodes/DataGatewayEnterprise/actions/copyright/pages';
import { simplifyEnterprise } from '../../nodes/DataGatewayEnterprise/actions/registration/get.operation';
import { simplifyVehicleDetail } from '../../nodes/DataGatewayVehicle/actions/vehicle/getDetail.operation';
import { simplifyViolations } from '../../nodes/DataGatewayVehicle/actions/violation/query.operation';
import { checkKeyword } from '../../nodes/shared/checks/keyword';
import { checkDetailVehicleType, checkNumberTail, checkPlate, checkPlatePrefix, checkViolationVehicleType } from '../../nodes/shared/checks/vehicle';
import { copyrightPageSchema, enterpriseDetailSchema, type CopyrightPage } from '../../nodes/shared/gateway/schemas/enterprise';
import { supportRulesSchema, vehicleDetailSchema, violationsSchema } from '../../nodes/shared/gateway/schemas/vehicle';
import { DETAIL_VEHICLE_TYPES, VIOLATION_VEHICLE_TYPES } from '../../nodes/shared/gateway/catalog';

describe('plate numbers', () => {
	it.each([
		['京A12345', '京A12345'],
		['粤BD12345', '粤BD12345'], // new-energy small car: 8 characters
		['粤B12345D', '粤B12345D'], // new-energy large car
		[' 沪a·c1234 ', '沪AC1234'],
		['京a-12345', '京A12345'],
		['使A12345', '使A12345'],
		['京A1234学', '京A1234学'], // coach car
		['京A1234警', '京A1234警'], // police
		['京A1234挂', '京A1234挂'], // trailer
		['粤Z1234港', '粤Z1234港'], // Hong Kong crossing
		['粤Z·1234澳', '粤Z1234澳'], // Macao crossing
		['沪A1234领', '沪A1234领'], // consulate
		['京A1234试', '京A1234试'], // test vehicle
		['使123456', '使123456'], // embassy
		['沪123456领', '沪123456领'], // consulate, older form
		['WJ京12345', 'WJ京12345'], // armed police
		['wj 1234x', 'WJ1234X'],
		['VA12345', 'VA12345'], // military
	])('accepts %j as %s', (input, sent) => expect(checkPlate(input)).toEqual({ ok: true, value: sent }));

	it.each([
		['', /is empty/],
		['   ', /is empty/],
		['A12345', /not a plate number/], // no province character
		['京12345', /not a plate number/], // no letter after the province
		['京A1234', /not a plate number/], // too short
		['京A1234567', /not a plate number/], // 9 characters
		['XA12345', /not a plate number/],
		['京A12$45', /not a plate number/],
		['京A123学', /not a plate number/], // too short before the closing character
		['京A1234中', /not a plate number/], // not a closing character plates use
		['使12345', /not a plate number/],
		['WJ12', /not a plate number/],
		['AA12345', /not a plate number/],
	])('refuses %j', (input, problem) => {
		const result = checkPlate(input);
		expect(result.ok).toBe(false);
		expect(result.value).toMatch(problem);
	});
});

describe('plate prefixes (support rules)', () => {
	it('a province character, optionally its letter, or nothing for all regions', () => {
		expect(checkPlatePrefix('京')).toEqual({ ok: true, value: '京' });
		expect(checkPlatePrefix(' 粤b ')).toEqual({ ok: true, value: '粤B' });
		expect(checkPlatePrefix('')).toEqual({ ok: true, value: '' });
	});
	it.each(['B', '粤12', '粤BD', 'Guangdong'])('refuses %j', (input) => expect(checkPlatePrefix(input)).toMatchObject({ ok: false, value: expect.stringMatching(/not a plate prefix/) }));
});

describe('engine and frame number tails', () => {
	it('are optional', () => expect(checkNumberTail('')).toEqual({ ok: true, value: '' }));
	it('accept the usual 4 or 6 characters, and a whole VIN (rule 99 = whole number)', () => {
		expect(checkNumberTail('a1b2').value).toBe('A1B2');
		expect(checkNumberTail(' 123456 ').value).toBe('123456');
		expect(checkNumberTail('LSVAU2180N2183294')).toEqual({ ok: true, value: 'LSVAU2180N2183294' });
	});
	it.each(['12-34', '12*4', '中文', '1'.repeat(26)])('refuse %j', (input) => {
		const result = checkNumberTail(input);
		expect(result.ok).toBe(false);
		expect(result.value).toMatch(/only letters and digits/);
	});
});

describe('vehicle type codes', () => {
	it('violation query: every code the gateway lists, or none', () => {
		expect(VIOLATION_VEHICLE_TYPES).toHaveLength(24);
		for (const { code } of VIOLATION_VEHICLE_TYPES) expect(checkViolationVehicleType(code)).toEqual({ ok: true, value: code });
		expect(checkViolationVehicleType('')).toEqual({ ok: true, value: '' });
		expect(checkViolationVehicleType('25')).toMatchObject({ ok: false, value: expect.stringMatching(/not one of the codes 01, 02/) });
		expect(checkViolationVehicleType('2').ok).toBe(false);
	});
	it('vehicle detail: 01, 02, 51 or 52, and required', () => {
		expect(DETAIL_VEHICLE_TYPES.map((type) => type.code)).toEqual(['01', '02', '51', '52']);
		for (const code of ['01', '02', '51', '52']) expect(checkDetailVehicleType(code).ok).toBe(true);
		for (const code of ['', '03', '5']) expect(checkDetailVehicleType(code).ok).toBe(false);
	});
});

describe('keywords', () => {
	it('are trimmed and must not be empty', () => {
		expect(checkKeyword('  北京示例科技有限公司 ')).toEqual({ ok: true, value: '北京示例科技有限公司' });
		expect(checkKeyword('   ')).toEqual({ ok: false, value: 'is empty' });
	});
});

describe('tolerant schemas', () => {
	it('support rules: one object or a list both become a list', () => {
		const rule = { carEngineLen: '6', carCodeLen: 99, preCarNum: '粤', province: '广东', scope: '2' };
		expect(supportRulesSchema.parse(rule)).toEqual([{ ...rule, carEngineLen: 6, scope: 2 }]);
		expect(supportRulesSchema.parse([rule, rule])).toHaveLength(2);
	});
	it('violations: count as text or number, missing records as an empty list, unknown fields kept', () => {
		expect(violationsSchema.parse({ carNumber: '京A12345', count: 2, jgjId: 'X' })).toEqual({
			carNumber: '京A12345',
			count: '2',
			jgjId: 'X',
			records: [],
		});
	});
	it('vehicle detail: numbers arriving as numbers become text as the gateway declares', () => {
		expect(vehicleDetailSchema.parse({ passengers: 5, vin: 'LSV*****94' })).toEqual({ passengers: '5', vin: 'LSV*****94' });
	});
	it('enterprise: the nested sample and the flat table both become { sign, data }', () => {
		expect(enterpriseDetailSchema.parse({ sign: 'abc', data: { name: '甲公司' } })).toEqual({ sign: 'abc', data: { name: '甲公司' } });
		expect(enterpriseDetailSchema.parse({ name: '乙公司', reg_no: '-' })).toEqual({ data: { name: '乙公司', reg_no: '-' } });
	});
	it('copyright page: integers as text are numbers, a missing list is empty', () => {
		expect(copyrightPageSchema.parse({ pageIndex: '2', pageSize: '10', totalRecords: '47' })).toEqual({
			pageIndex: 2,
			pageSize: 10,
			totalRecords: 47,
			data: [],
		});
	});
});

describe('simplify', () => {
	it('enterprise: flattens data.data beside sign, "-" becomes null at any depth, one address and one branches key', () => {
		const fromTable = enterpriseDetailSchema.parse({
			sign: 's1',
			data: {
				name: '甲公司',
				addresses: '北京市海淀区某路1号',
				brances: [{ name: '甲公司上海分公司' }],
				term_end: '-',
				partners: [{ name: '张三', identify_no: '-', should_capi_items: [{ shoud_capi: '100', should_capi_date: '-' }] }],
			},
		});
		const simple = simplifyEnterprise(fromTable);
		expect(simple).toEqual({
			name: '甲公司',
			address: '北京市海淀区某路1号',
			branches: [{ name: '甲公司上海分公司' }],
			term_end: null,
			partners: [{ name: '张三', identify_no: null, should_capi_items: [{ shoud_capi: '100', should_capi_date: null }] }],
			sign: 's1',
		});
		expect(simple).not.toHaveProperty('addresses');
		expect(simple).not.toHaveProperty('brances');
		expect(simple).not.toHaveProperty('data');

		const fromSample = simplifyEnterprise(enterpriseDetailSchema.parse({ sign: 's2', data: { name: '乙公司', address: '广州', branches: [] } }));
		expect(fromSample).toMatchObject({ address: '广州', branches: [], sign: 's2' });
		expect(simplifyEnterprise(enterpriseDetailSchema.parse({ name: '丙公司' }))).toMatchObject({ address: null, branches: [], sign: null });
	});

	it('violations: count and money as numbers, ISO times beside the originals', () => {
		const violations = violationsSchema.parse({
			carNumber: '京A12345',
			count: '1',
			createDateStr: '2024-03-01 08:30:00',
			records: [{ time: '2024-02-27 18:05:10', money: '200', department: '' }],
		});
		expect(simplifyViolations(violations)).toEqual({
			carNumber: '京A12345',
			count: 1,
			createDateStr: '2024-03-01 08:30:00',
			createDateStrIso: '2024-03-01T08:30:00+08:00',
			records: [{ time: '2024-02-27 18:05:10', timeIso: '2024-02-27T18:05:10+08:00', money: 200, department: '' }],
		});
	});

	it('vehicle detail: dates get ISO twins, occupants and axles become numbers', () => {
		const detail = vehicleDetailSchema.parse({ firstIssueDate: '2019-05-20 00:00:00', retirementDate: '', passengers: '5', shaft: '2', cc: '1498' });
		expect(simplifyVehicleDetail(detail)).toEqual({
			firstIssueDate: '2019-05-20 00:00:00',
			firstIssueDateIso: '2019-05-20T00:00:00+08:00',
			retirementDate: '',
			retirementDateIso: null,
			passengers: 5,
			shaft: 2,
			cc: '1498',
		});
	});

	it('copyright: ISO dates and an empty category as null', () => {
		const [record] = copyrightPageSchema.parse({ data: [{ Name: 'X', Category: '', RegisterDate: '2021-01-02 00:00:00' }] }).data;
		expect(simplifyCopyright(record)).toEqual({ Name: 'X', Category: null, RegisterDate: '2021-01-02 00:00:00', RegisterDateIso: '2021-01-02T00:00:00+08:00' });
	});
});

describe('copyright paging', () => {
	/** A gateway of `total` records that answers with or without `totalRecords`. */
	function pagesOf(total: number, pageSize: number, withTotal: boolean) {
		const asked: number[] = [];
		const fetchPage = async (pageIndex: number): Promise<CopyrightPage> => {
			asked.push(pageIndex);
			const start = (pageIndex - 1) * pageSize;
			const data = Array.from({ length: Math.max(0, Math.min(pageSize, total - start)) }, (_, offset) => ({ RegisterNo: String(start + offset) }));
			return { pageIndex, pageSize, totalRecords: withTotal ? total : undefined, data };
		};
		return { asked, fetchPage };
	}

	it('stops at the total without asking for an empty page', async () => {
		const gateway = pagesOf(30, 10, true);
		expect(await readCopyrightPages(gateway.fetchPage, { limit: Infinity, pageSize: 10 })).toHaveLength(30);
		expect(gateway.asked).toEqual([1, 2, 3]);
	});

	it('without a total, stops at the first short page', async () => {
		const gateway = pagesOf(23, 10, false);
		const records = await readCopyrightPages(gateway.fetchPage, { limit: Infinity, pageSize: 10 });
		expect(records.map((record) => record.RegisterNo)).toEqual(Array.from({ length: 23 }, (_, index) => String(index)));
		expect(gateway.asked).toEqual([1, 2, 3]);
	});

	it('without a total and a full last page, one empty page ends it', async () => {
		const gateway = pagesOf(20, 10, false);
		expect(await readCopyrightPages(gateway.fetchPage, { limit: Infinity, pageSize: 10 })).toHaveLength(20);
		expect(gateway.asked).toEqual([1, 2, 3]);
	});

	it('stops when the gateway ignores pageIndex and repeats the same full page', async () => {
		const asked: number[] = [];
		const samePage = async (pageIndex: number): Promise<CopyrightPage> => {
			asked.push(pageIndex);
			return { data: Array.from({ length: 10 }, (_, offset) => ({ RegisterNo: String(offset) })) };
		};
		expect(await readCopyrightPages(samePage, { limit: Infinity, pageSize: 10 })).toHaveLength(10);
		expect(asked).toEqual([1, 2]);
	});

	it('follows totalRecords past short pages (a gateway that caps the page size silently)', async () => {
		const gateway = pagesOf(23, 5, true);
		expect(await readCopyrightPages(gateway.fetchPage, { limit: Infinity, pageSize: 10 })).toHaveLength(23);
		expect(gateway.asked).toEqual([1, 2, 3, 4, 5]);
	});

	it('an empty page ends the listing even when totalRecords promises more', async () => {
		const gateway = pagesOf(12, 10, false);
		const claimsMore = async (pageIndex: number) => ({ ...(await gateway.fetchPage(pageIndex)), totalRecords: 100 });
		expect(await readCopyrightPages(claimsMore, { limit: Infinity, pageSize: 10 })).toHaveLength(12);
		expect(gateway.asked).toEqual([1, 2, 3]);
	});

	it('a limit stops paying once it has enough', async () => {
		const gateway = pagesOf(100, 10, true);
		expect(await readCopyrightPages(gateway.fetchPage, { limit: 15, pageSize: 10 })).toHaveLength(15);
		expect(gateway.asked).toEqual([1, 2]);
	});
});
