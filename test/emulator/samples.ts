import { createHash } from 'node:crypto';

/** Deterministic sample data: the same input always gives the same answer. */
export function seedOf(text: string): number {
	return createHash('sha256').update(text).digest().readUInt32BE(0);
}

export function pick<T>(seed: number, list: readonly T[], salt = 0): T {
	return list[(seed + salt * 7919) % list.length];
}

const PROVINCES = [
	{ prefix: '京', province: '北京', city: '北京' },
	{ prefix: '沪', province: '上海', city: '上海' },
	{ prefix: '粤', province: '广东', city: '广州' },
	{ prefix: '浙', province: '浙江', city: '杭州' },
	{ prefix: '苏', province: '江苏', city: '南京' },
	{ prefix: '川', province: '四川', city: '成都' },
];

export function supportRules(preCarNum?: string, province?: string) {
	return PROVINCES.filter(
		(entry) => (!preCarNum || preCarNum.startsWith(entry.prefix)) && (!province || entry.province.startsWith(province)),
	).map((entry, index) => ({
		carEngineLen: index % 2 === 0 ? 6 : 0,
		carCodeLen: index % 3 === 0 ? 99 : 6,
		preCarNum: entry.prefix,
		province: entry.province,
		cityName: entry.city,
		carTypeScope: '0',
		scope: 2,
		jgjId: `JGJ${1100 + index}`,
	}));
}

function timestamp(seed: number, yearFrom: number, salt = 0) {
	const value = seed + salt * 104729;
	const pad = (n: number) => String(n).padStart(2, '0');
	return `${yearFrom + (value % 5)}-${pad(1 + (value % 12))}-${pad(1 + (value % 28))} ${pad(value % 24)}:${pad(value % 60)}:${pad(Math.floor(value / 8) % 60)}`;
}

/** `added` violations come after the plate's usual ones, as if committed since. */
export function violations(carNumber: string, carType: string, engine: string, frame: string, added = 0) {
	const seed = seedOf(`violations|${carNumber}`);
	const count = (seed % 4) + added;
	const reasons = ['超速行驶', '违反禁止标线指示', '不按规定停车', '闯红灯'];
	return {
		carNumber,
		carCode: frame,
		carEngineCode: engine,
		carType: carType || '02',
		count: String(count),
		createDateStr: timestamp(seed, 2024),
		records: Array.from({ length: count }, (_, index) => ({
			time: timestamp(seed, 2022, index + 1),
			degree: String((seed + index) % 7),
			reason: pick(seed, reasons, index),
			address: `${pick(seed, ['长安街', '人民路', '解放大道'], index)}${(seed % 300) + index}号`,
			department: index % 2 === 0 ? '交警支队' : '',
			cityName: index % 2 === 0 ? pick(seed, PROVINCES, index).city : '',
			money: String(((seed + index) % 4) * 50),
			code: index % 2 === 0 ? String(10000 + ((seed + index) % 9000)) : '',
		})),
	};
}

function mask(value: string, keepStart: number, keepEnd: number) {
	return value.slice(0, keepStart) + '*'.repeat(Math.max(0, value.length - keepStart - keepEnd)) + value.slice(value.length - keepEnd);
}

export function vehicleDetail(carNumber: string, carType: string) {
	const seed = seedOf(`vehicle|${carNumber}|${carType}`);
	const vin = `LSV${String(seed).padStart(14, '7')}`.slice(0, 17);
	return {
		remark: '查询成功',
		vehicleModelc: pick(seed, ['SVW71612BM', 'BYD7150WT5', 'TSL7000BEV']),
		bodyColor: pick(seed, ['白', '黑', '蓝', '银']),
		vehicleStatus: '正常',
		validityDayEnd: timestamp(seed, 2026),
		ppsDate: timestamp(seed, 2018),
		frontTread: String(1500 + (seed % 100)),
		brandName: pick(seed, ['大众', '比亚迪', '特斯拉', '丰田']),
		passengers: String(5),
		plateType: carType,
		vin: mask(vin, 4, 4),
		plateNumber: mask(carNumber, 2, 2),
		maxJourney: String(80 + (seed % 120)),
		useType: '非营运',
		rearTread: String(1500 + (seed % 90)),
		engineModel: `EA${200 + (seed % 100)}`,
		engineNumber: mask(String(seed).padStart(8, '3'), 2, 2),
		shaft: '2',
		wheelBase: String(2600 + (seed % 300)),
		loadWeight: '',
		fuelType: carType === '51' || carType === '52' ? '电' : '汽油',
		curbWeight: String(1300 + (seed % 500)),
		firstIssueDate: timestamp(seed, 2018, 1),
		vehicleType: carType === '01' || carType === '51' ? '大型汽车' : '小型轿车',
		crossWeight: String(1800 + (seed % 500)),
		retirementDate: timestamp(seed, 2099),
		cc: String(1400 + (seed % 1600)),
	};
}

export function enterpriseDetail(keyword: string) {
	const seed = seedOf(`enterprise|${keyword}`);
	const name = /公司$/.test(keyword) ? keyword : `${keyword}科技有限公司`;
	return {
		sign: createHash('md5').update(keyword).digest('hex'),
		data: {
			id: String(seed),
			name,
			econ_kind: '有限责任公司(自然人投资或控股)',
			address: `${pick(seed, PROVINCES).city}市${pick(seed, ['海淀区', '浦东新区', '天河区'])}某路${seed % 200}号`,
			reg_no: seed % 3 === 0 ? '-' : String(110000000000000 + (seed % 899999999)),
			scope: '技术开发、技术咨询、技术服务。',
			term_start: '2015-03-12',
			term_end: '-',
			belong_org: '市场监督管理局',
			oper_name: pick(seed, ['张伟', '王芳', '李强']),
			start_date: '2015-03-12',
			end_date: '-',
			status: '存续',
			org_no: `${String(seed % 99999999).padStart(8, '0')}-X`,
			credit_no: `91110108${String(seed).padStart(10, '0').slice(0, 10)}`,
			province: pick(seed, PROVINCES).prefix,
			regist_capi_new: `${(seed % 900) + 100}万元`,
			currency_unit: '人民币',
			regist_capi: `${(seed % 900) + 100}万元人民币`,
			check_date: '2023-05-20',
			employees: [
				{ job_title: '执行董事', name: pick(seed, ['张伟', '王芳', '李强']) },
				{ job_title: '监事', name: pick(seed, ['赵敏', '孙丽'], 1) },
			],
			branches: seed % 2 === 0 ? [{ name: `${name}分公司` }] : [],
			changerecords: [{ change_item: '注册资本', change_date: '2020-01-01', before_content: '100万', after_content: '500万' }],
			partners: [
				{
					name: pick(seed, ['张伟', '王芳', '李强']),
					stock_type: '自然人股东',
					identify_type: '非公示项',
					identify_no: '-',
					should_capi_items: [{ shoud_capi: '300', invest_type: '货币', should_capi_date: '2030-12-31' }],
					real_capi_items: [{ real_capi: '100', invest_type: '货币', real_capi_date: '2016-01-01' }],
				},
			],
			abnormal_items: [],
		},
	};
}

/** Total copyright records of a keyword; a keyword containing "many" has 47, enough for several pages. */
export function copyrightTotal(keyword: string) {
	if (/many/i.test(keyword)) return 47;
	return seedOf(`copyright|${keyword}`) % 12;
}

export function copyrightRecord(keyword: string, index: number) {
	const seed = seedOf(`copyright|${keyword}|${index}`);
	return {
		Owner: keyword,
		Category: index % 3 === 0 ? '' : '应用软件',
		Name: `${keyword}管理系统V${1 + (index % 5)}.0`,
		RegisterNo: `2023SR${String(100000 + index).padStart(7, '0')}`,
		RegisterDate: timestamp(seed, 2020),
		PublishDate: timestamp(seed, 2019, 1),
		FinishDate: timestamp(seed, 2019, 2),
	};
}

export function telephoneIdentity(tel: string) {
	const seed = seedOf(`tel|${tel}`);
	const flagged = seed % 2 === 0;
	const place = pick(seed, PROVINCES);
	return {
		iszhapian: flagged ? 1 : 0,
		province: tel.startsWith('0') ? '' : place.province,
		city: place.city,
		sp: tel.startsWith('0') ? '' : pick(seed, ['移动', '联通', '电信']),
		phone: tel,
		rpt_type: flagged ? pick(seed, ['骚扰电话', '广告推销', '诈骗电话']) : '',
		rpt_comment: flagged ? '被多人标记' : '',
		rpt_cnt: flagged ? seed % 500 : 0,
		hy: seed % 3 === 0 ? { city: place.city, lng: '116.40', lat: '39.90', name: '某公司', addr: '某路1号', tel } : null,
		hyname: seed % 3 === 0 ? '某公司' : '',
		countDesc: flagged ? `该号码被<b>${seed % 500}</b>人标记` : '',
	};
}
