import { z } from 'zod/v4';

import { looseInteger, looseString, record } from './envelope';

const text = looseString.nullable().optional();
const list = <Item extends z.ZodType>(item: Item) => z.array(item).nullable().optional();

const enterpriseRecord = record({
	name: text,
	econ_kind: text,
	address: text,
	addresses: text,
	reg_no: text,
	scope: text,
	term_start: text,
	term_end: text,
	belong_org: text,
	oper_name: text,
	start_date: text,
	end_date: text,
	status: text,
	org_no: text,
	credit_no: text,
	province: text,
	regist_capi_new: text,
	currency_unit: text,
	employees: list(record({ job_title: text, name: text })),
	branches: list(record({ name: text })),
	brances: list(record({ name: text })),
	changerecords: list(record({ change_item: text, change_date: text, before_content: text, after_content: text })),
	partners: list(
		record({
			name: text,
			stock_type: text,
			identify_type: text,
			identify_no: text,
			should_capi_items: list(record({ shoud_capi: text, invest_type: text, should_capi_date: text })),
			real_capi_items: list(record({ real_capi: text, invest_type: text, real_capi_date: text })),
		}),
	),
	abnormal_items: list(record({ in_reason: text, in_date: text, out_reason: text, out_date: text })),
});

/**
 * Enterprise detail (docs/gateway-api.md#enterprise-detail). The sample nests the record under `data.data` beside `sign`; the
 * field table lists it flat. Both arrive here as `{ sign, data }`.
 */
export const enterpriseDetailSchema = z
	.union([record({ sign: text, data: enterpriseRecord }), enterpriseRecord])
	.transform((value) =>
		'data' in value && value.data && typeof value.data === 'object' && !Array.isArray(value.data)
			? (value as { sign?: string | null; data: z.output<typeof enterpriseRecord> })
			: { data: value as z.output<typeof enterpriseRecord> },
	);

/** One page of copyrights (docs/gateway-api.md#copyrights). */
export const copyrightPageSchema = record({
	pageSize: looseInteger.nullable().optional(),
	pageIndex: looseInteger.nullable().optional(),
	totalRecords: looseInteger.nullable().optional(),
	data: z
		.array(
			record({
				Owner: text,
				Category: text,
				Name: text,
				RegisterNo: text,
				RegisterDate: text,
				PublishDate: text,
				FinishDate: text,
			}),
		)
		.nullable()
		.optional()
		.transform((records) => records ?? []),
});

export type EnterpriseDetail = z.output<typeof enterpriseDetailSchema>;
export type CopyrightPage = z.output<typeof copyrightPageSchema>;
