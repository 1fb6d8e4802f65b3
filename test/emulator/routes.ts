import {
	COPYRIGHT_DEFAULT_PAGE_SIZE,
	DETAIL_VEHICLE_TYPES,
	OPERATIONS,
	PRICES_YUAN,
	TELEPHONE_FREE_DAILY_CALLS,
	VIOLATION_VEHICLE_TYPES,
} from '../../nodes/shared/gateway/catalog';
import { CODES } from './codes';
import * as samples from './samples';
import type { Answer, SmsState } from './sms';

export interface Account {
	label: string;
	member: boolean;
}

export interface Routed {
	answer: Answer;
	costYuan: number;
}

export const ok = (data?: unknown): Answer => ({ code: CODES.ok, message: 'success', ...(data === undefined ? {} : { data }) });
export const fail = (code: number, message: string): Answer => ({ code, message });
const NOT_FOUND_MARKER = /404|不存在|notfound/i;

/** The gateway's answers by path: SMS paths go to the SMS state, the rest are lookups. */
export function gatewayRoutes(config: { copyrightMaxPageSize?: number; addedViolations?: Record<string, number> }, sms: SmsState) {
	const quotaUsed = new Map<string, number>();

	/** Lookups: billed only when code is 0; telephone is free within the daily quota. */
	function lookup(path: string, query: URLSearchParams, account: Account): Routed {
		const param = (name: string) => (query.get(name) ?? '').trim();
		switch (path) {
			case OPERATIONS.violationSupport.path:
				return { answer: ok(samples.supportRules(param('preCarNum') || undefined, param('province') || undefined)), costYuan: 0 };
			case OPERATIONS.violationQuery.path: {
				const carNumber = param('carNumber');
				if (!carNumber) return { answer: fail(CODES.parameterError, 'carNumber is required'), costYuan: 0 };
				const carType = param('carType');
				if (carType && !VIOLATION_VEHICLE_TYPES.some((type) => type.code === carType)) {
					return { answer: fail(CODES.parameterError, 'unknown carType'), costYuan: 0 };
				}
				if (NOT_FOUND_MARKER.test(carNumber)) return { answer: fail(CODES.notFound, 'no record of this vehicle'), costYuan: 0 };
				const added = config.addedViolations?.[carNumber] ?? 0;
				return { answer: ok(samples.violations(carNumber, carType, param('carEngineCode'), param('carCode'), added)), costYuan: PRICES_YUAN.violationQuery };
			}
			case OPERATIONS.vehicleDetail.path: {
				const carNumber = param('carNumber');
				const carType = param('carType');
				if (!carNumber || !DETAIL_VEHICLE_TYPES.some((type) => type.code === carType)) {
					return { answer: fail(CODES.parameterError, 'carNumber and carType (01, 02, 51, 52) are required'), costYuan: 0 };
				}
				if (NOT_FOUND_MARKER.test(carNumber)) return { answer: fail(CODES.notFound, 'no record of this vehicle'), costYuan: 0 };
				return { answer: ok(samples.vehicleDetail(carNumber, carType)), costYuan: PRICES_YUAN.vehicleDetail };
			}
			case OPERATIONS.enterpriseDetail.path: {
				const keyword = param('keyword');
				if (!keyword) return { answer: fail(CODES.parameterError, 'keyword is required'), costYuan: 0 };
				if (NOT_FOUND_MARKER.test(keyword)) return { answer: fail(CODES.notFound, 'no enterprise matches the keyword'), costYuan: 0 };
				return { answer: ok(samples.enterpriseDetail(keyword)), costYuan: PRICES_YUAN.enterpriseDetail };
			}
			case OPERATIONS.enterpriseCopyright.path: {
				const keyword = param('keyword');
				if (!keyword) return { answer: fail(CODES.parameterError, 'keyword is required'), costYuan: 0 };
				const pageIndex = Number(param('pageIndex') || 1);
				const pageSize = Number(param('pageSize') || COPYRIGHT_DEFAULT_PAGE_SIZE);
				if (!Number.isInteger(pageIndex) || pageIndex < 1 || !Number.isInteger(pageSize) || pageSize < 1 || pageSize > 50) {
					return { answer: fail(CODES.parameterError, 'pageIndex must be >= 1 and pageSize 1..50'), costYuan: 0 };
				}
				if (NOT_FOUND_MARKER.test(keyword)) return { answer: fail(CODES.notFound, 'no enterprise matches the keyword'), costYuan: 0 };
				const total = samples.copyrightTotal(keyword);
				const served = Math.min(pageSize, config.copyrightMaxPageSize ?? pageSize);
				const start = (pageIndex - 1) * served;
				const records = Array.from({ length: Math.max(0, Math.min(served, total - start)) }, (_, offset) => samples.copyrightRecord(keyword, start + offset));
				return { answer: ok({ pageSize, pageIndex, totalRecords: total, data: records }), costYuan: PRICES_YUAN.enterpriseCopyright };
			}
			case OPERATIONS.telephoneIdentify.path: {
				const tel = param('tel').replace(/[\s-]/g, '');
				if (!/^(1[3-9]\d{9}|0\d{9,11})$/.test(tel)) return { answer: fail(CODES.parameterError, 'tel must be a mobile number or a landline with area code'), costYuan: 0 };
				if (!account.member) {
					const key = `${account.label}|${new Date().toISOString().slice(0, 10)}`;
					const used = quotaUsed.get(key) ?? 0;
					if (used >= TELEPHONE_FREE_DAILY_CALLS) {
						return { answer: fail(CODES.quotaExceeded, `the free quota of ${TELEPHONE_FREE_DAILY_CALLS} calls a day is used up; members have no limit`), costYuan: 0 };
					}
					quotaUsed.set(key, used + 1);
				}
				if (NOT_FOUND_MARKER.test(tel)) return { answer: fail(CODES.notFound, 'no information about this number'), costYuan: 0 };
				return { answer: ok(samples.telephoneIdentity(tel)), costYuan: 0 };
			}
		}
		return { answer: fail(CODES.parameterError, 'unknown path'), costYuan: 0 };
	}

	function answer(path: string, query: URLSearchParams, account: Account): Routed {
		const smsRoutes: Record<string, () => Answer> = {
			[OPERATIONS.smsSend.path]: () => sms.send(query),
			[OPERATIONS.smsStatus.path]: () => sms.status(query),
			[OPERATIONS.signatureCreate.path]: () => sms.addSign(query),
			[OPERATIONS.signatureGet.path]: () => sms.query('sign', query),
			[OPERATIONS.signatureUpdate.path]: () => sms.modify('sign', query),
			[OPERATIONS.signatureDelete.path]: () => sms.remove('sign', query),
			[OPERATIONS.templateCreate.path]: () => sms.addTemplate(query),
			[OPERATIONS.templateGet.path]: () => sms.query('template', query),
			[OPERATIONS.templateUpdate.path]: () => sms.modify('template', query),
			[OPERATIONS.templateDelete.path]: () => sms.remove('template', query),
		};
		const smsRoute = smsRoutes[path];
		if (smsRoute) return { answer: smsRoute(), costYuan: 0 };
		return lookup(path, query, account);
	}

	return { answer, resetQuota: () => quotaUsed.clear() };
}
