/**
 * Version 1.1's simplified output: the same answers under self-explaining camelCase names, the
 * item's key fields first and `costYuan` right after them (the node fills in its value in place).
 * Version 1's simplified output lives beside each operation and never changes.
 */
import type { IDataObject } from 'n8n-workflow';

import type { CopyrightPage, EnterpriseDetail } from '../gateway/schemas/enterprise';
import type { TelephoneIdentity } from '../gateway/schemas/telephone';
import type { VehicleDetail, Violations } from '../gateway/schemas/vehicle';
import { emptyToNull, flagFromIszhapian, gatewayTimeToIso, htmlToText, toCount } from './convert';

/** A gateway timestamp as ISO 8601 (China time); text that is not one stays as it came, "-" and "" become null. */
function isoDate(value: unknown): unknown {
	return gatewayTimeToIso(value) ?? emptyToNull(value) ?? null;
}

/** Text with "-" and "" as null; absent as null. */
function text(value: unknown): unknown {
	return emptyToNull(value) ?? null;
}

/** A number that may come as text; text that is not a number stays as it came. */
function number(value: unknown): unknown {
	return toCount(value) ?? text(value);
}

/** `given` (version 1.2): the number as the user gave it, beside the normalised `phone`. */
export function friendlyTelephone(identity: TelephoneIdentity, given?: IDataObject): IDataObject {
	const details = identity.hy;
	return {
		phone: text(identity.phone),
		...given,
		isFlagged: flagFromIszhapian(identity.iszhapian),
		reportType: text(identity.rpt_type),
		reportCount: toCount(identity.rpt_cnt) ?? 0,
		costYuan: 0,
		carrier: text(identity.sp),
		province: text(identity.province),
		city: text(identity.city),
		company: text(identity.hyname),
		reportNote: text(identity.rpt_comment),
		description: htmlToText(identity.countDesc),
		companyDetails: details
			? {
					name: text(details.name),
					address: text(details.addr),
					phone: text(details.tel),
					city: text(details.city),
					longitude: number(details.lng),
					latitude: number(details.lat),
				}
			: null,
	} as IDataObject;
}

export function friendlyViolations(violations: Violations): IDataObject {
	return {
		plateNumber: text(violations.carNumber),
		violationCount: toCount(violations.count) ?? violations.records.length,
		totalFineYuan: violations.records.reduce((sum, record) => sum + (toCount(record.money) ?? 0), 0),
		costYuan: 0,
		engineNumberTail: text(violations.carEngineCode),
		frameNumberTail: text(violations.carCode),
		vehicleTypeCode: text(violations.carType),
		checkedAt: isoDate(violations.createDateStr),
		violations: violations.records.map((record) => ({
			time: isoDate(record.time),
			reason: text(record.reason),
			fineYuan: number(record.money),
			degree: text(record.degree),
			address: text(record.address),
			city: text(record.cityName),
			department: text(record.department),
			code: text(record.code),
		})),
	} as IDataObject;
}

export function friendlyVehicle(detail: VehicleDetail): IDataObject {
	return {
		plateNumber: text(detail.plateNumber),
		vin: text(detail.vin),
		brand: text(detail.brandName),
		model: text(detail.vehicleModelc),
		vehicleType: text(detail.vehicleType),
		status: text(detail.vehicleStatus),
		costYuan: 0,
		usage: text(detail.useType),
		bodyColor: text(detail.bodyColor),
		fuelType: text(detail.fuelType),
		plateTypeCode: text(detail.plateType),
		firstRegisteredAt: isoDate(detail.firstIssueDate),
		inspectionValidUntil: isoDate(detail.validityDayEnd),
		manufacturedAt: isoDate(detail.ppsDate),
		scrapDate: isoDate(detail.retirementDate),
		engineModel: text(detail.engineModel),
		engineNumber: text(detail.engineNumber),
		displacement: text(detail.cc),
		maxPowerKw: number(detail.maxJourney),
		seats: number(detail.passengers),
		axles: number(detail.shaft),
		wheelBase: number(detail.wheelBase),
		frontTread: number(detail.frontTread),
		rearTread: number(detail.rearTread),
		curbWeight: number(detail.curbWeight),
		grossWeight: number(detail.crossWeight),
		approvedLoad: number(detail.loadWeight),
		message: text(detail.remark),
	} as IDataObject;
}

type CapitalItem = { invest_type?: string | null } & Record<string, unknown>;

function capital(items: CapitalItem[] | null | undefined, amount: string, date: string): IDataObject[] {
	return (items ?? []).map((item) => ({ amount: text(item[amount]), method: text(item.invest_type), date: isoDate(item[date]) }) as IDataObject);
}

export function friendlyEnterprise(detail: EnterpriseDetail): IDataObject {
	const company = detail.data;
	return {
		name: text(company.name),
		creditCode: text(company.credit_no),
		status: text(company.status),
		legalRepresentative: text(company.oper_name),
		costYuan: 0,
		companyType: text(company.econ_kind),
		registeredCapital: text(company.regist_capi_new ?? company.regist_capi),
		currency: text(company.currency_unit),
		foundedOn: isoDate(company.start_date),
		termStart: isoDate(company.term_start),
		termEnd: isoDate(company.term_end),
		cancelledOn: isoDate(company.end_date),
		registrationNumber: text(company.reg_no),
		organizationCode: text(company.org_no),
		registrationAuthority: text(company.belong_org),
		province: text(company.province),
		address: text(company.address ?? company.addresses),
		businessScope: text(company.scope),
		keyPersonnel: (company.employees ?? []).map((person) => ({ name: text(person.name), position: text(person.job_title) })),
		branches: (company.branches ?? company.brances ?? []).map((branch) => ({ name: text(branch.name) })),
		shareholders: (company.partners ?? []).map((partner) => ({
			name: text(partner.name),
			type: text(partner.stock_type),
			subscribed: capital(partner.should_capi_items as CapitalItem[], 'shoud_capi', 'should_capi_date'),
			paidIn: capital(partner.real_capi_items as CapitalItem[], 'real_capi', 'real_capi_date'),
		})),
		changes: (company.changerecords ?? []).map((change) => ({
			item: text(change.change_item),
			date: isoDate(change.change_date),
			before: text(change.before_content),
			after: text(change.after_content),
		})),
		abnormalRecords: (company.abnormal_items ?? []).map((entry) => ({
			reason: text(entry.in_reason),
			listedOn: isoDate(entry.in_date),
			removalReason: text(entry.out_reason),
			removedOn: isoDate(entry.out_date),
		})),
		checkedOn: isoDate(company.check_date),
		signature: text(detail.sign),
	} as IDataObject;
}

type CopyrightRecord = CopyrightPage['data'][number];

export function friendlyCopyright(record: CopyrightRecord): IDataObject {
	return {
		name: text(record.Name),
		registrationNumber: text(record.RegisterNo),
		owner: text(record.Owner),
		costYuan: 0,
		pageCostYuan: 0,
		category: text(record.Category),
		registeredOn: isoDate(record.RegisterDate),
		publishedOn: isoDate(record.PublishDate),
		finishedOn: isoDate(record.FinishDate),
	} as IDataObject;
}
