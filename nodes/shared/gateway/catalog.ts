/**
 * Facts taken from the gateway's API document (restated in docs/gateway-api.md). The nodes, the
 * emulator and the tests read them from here, so each fact lives in one place.
 */

/** Every gateway operation the package calls, keyed by a stable name. */
export const OPERATIONS = {
	violationSupport: { path: '/luoz/support', idempotent: true, label: 'Get Violation Support Rules' },
	violationQuery: { path: '/luoz/query', idempotent: true, label: 'Query Violations' },
	vehicleDetail: { path: '/car/query', idempotent: true, label: 'Get Vehicle Detail' },
	enterpriseDetail: { path: '/enterprise/detail_info', idempotent: true, label: 'Get Enterprise Detail' },
	enterpriseCopyright: { path: '/enterprise/copyright', idempotent: true, label: 'Get Enterprise Copyrights' },
	telephoneIdentify: { path: '/telecom/identify', idempotent: true, label: 'Identify Telephone Number' },
	smsSend: { path: '/sms/send', idempotent: false, label: 'Send SMS' },
	smsStatus: { path: '/sms/query_status', idempotent: true, label: 'Get SMS Status' },
	signatureCreate: { path: '/sms/add_sign', idempotent: false, label: 'Create Signature' },
	signatureGet: { path: '/sms/query_sign', idempotent: true, label: 'Get Signature' },
	signatureUpdate: { path: '/sms/modify_sign', idempotent: false, label: 'Update Signature' },
	signatureDelete: { path: '/sms/delete_sign', idempotent: false, label: 'Delete Signature' },
	templateCreate: { path: '/sms/add_template', idempotent: false, label: 'Create Template' },
	templateGet: { path: '/sms/query_template', idempotent: true, label: 'Get Template' },
	templateUpdate: { path: '/sms/modify_template', idempotent: false, label: 'Update Template' },
	templateDelete: { path: '/sms/delete_template', idempotent: false, label: 'Delete Template' },
} as const;

export type OperationName = keyof typeof OPERATIONS;

/** Minimum price per successful call, in yuan (docs/gateway-api.md#prices). */
export const PRICES_YUAN = {
	violationQuery: 0.04,
	vehicleDetail: 1.2,
	enterpriseDetail: 0.35,
	enterpriseCopyright: 0.2,
	/** Per delivered message segment. */
	smsSegment: 0.035,
} as const;

/** Vehicle type codes accepted by the violation query (docs/gateway-api.md#operations). */
export const VIOLATION_VEHICLE_TYPES: ReadonlyArray<{ code: string; name: string }> = [
	{ code: '01', name: 'Large Car' },
	{ code: '02', name: 'Small Car' },
	{ code: '03', name: 'Embassy Car' },
	{ code: '04', name: 'Consulate Car' },
	{ code: '05', name: 'Overseas Car' },
	{ code: '06', name: 'Foreign-National Car' },
	{ code: '07', name: 'Two/Three-Wheel Motorcycle' },
	{ code: '08', name: 'Light Motorcycle' },
	{ code: '09', name: 'Embassy Motorcycle' },
	{ code: '10', name: 'Consulate Motorcycle' },
	{ code: '11', name: 'Overseas Motorcycle' },
	{ code: '12', name: 'Foreign-National Motorcycle' },
	{ code: '13', name: 'Agricultural Transport Vehicle' },
	{ code: '14', name: 'Tractor' },
	{ code: '15', name: 'Trailer' },
	{ code: '16', name: 'Training Car' },
	{ code: '17', name: 'Training Motorcycle' },
	{ code: '18', name: 'Test Car' },
	{ code: '19', name: 'Test Motorcycle' },
	{ code: '20', name: 'Temporary-Entry Car' },
	{ code: '21', name: 'Temporary-Entry Motorcycle' },
	{ code: '22', name: 'Temporary-Driving Vehicle' },
	{ code: '23', name: 'Police Car' },
	{ code: '24', name: 'Other' },
];

/** Vehicle type codes accepted by vehicle detail (docs/gateway-api.md#operations). */
export const DETAIL_VEHICLE_TYPES: ReadonlyArray<{ code: string; name: string }> = [
	{ code: '01', name: 'Large Car' },
	{ code: '02', name: 'Small Car' },
	{ code: '51', name: 'New-Energy Large Car' },
	{ code: '52', name: 'New-Energy Small Car' },
];

/** Template variable names the gateway refuses (docs/gateway-api.md#limits). */
export const RESERVED_VARIABLE_NAMES: readonly string[] = ['id', 'email', 'mobile', 'nick', 'site'];
export const MAX_TEMPLATE_VARIABLES = 8;
export const MAX_VARIABLE_VALUE_LENGTH = 50;

/** Characters the gateway uses to mark signatures; forbidden in templates and signature names. */
export const SIGNATURE_BRACKETS: readonly string[] = ['【', '】', '[', ']'];

/** Per-number sending limits (docs/gateway-api.md#limits); adjustable per business, so only defaults. */
export const DEFAULT_SMS_LIMITS = { perMinute: 1, perHour: 5, perDay: 10 } as const;

/** Long-message rule (docs/gateway-api.md#limits). */
export const SINGLE_SEGMENT_MAX_CHARS = 70;
export const LONG_SEGMENT_CHARS = 67;

/** Free telephone identifications per day for a non-member (docs/gateway-api.md#limits). */
export const TELEPHONE_FREE_DAILY_CALLS = 100;

/** Copyright paging defaults (docs/gateway-api.md#limits). The maximum page size is not shown. */
export const COPYRIGHT_DEFAULT_PAGE_SIZE = 10;

/** SMS task status (docs/gateway-api.md#states). */
export const SMS_TASK_STATUS = { sending: 0, delivered: 1, failed: -1 } as const;
export const SMS_TASK_STATUS_LABELS: Record<string, string> = {
	'0': 'sending',
	'1': 'delivered',
	'-1': 'failed',
};

/** Signature and template review status (docs/gateway-api.md#states). */
export const REVIEW_STATUS = { underReview: 0, approved: 1, rejected: 2 } as const;
export const REVIEW_STATUS_LABELS: Record<string, string> = {
	'0': 'under review',
	'1': 'approved',
	'2': 'rejected',
};

/** Callback actions and the header the gateway sends with them (docs/gateway-api.md#callbacks). */
export const CALLBACK_ACTIONS = ['report', 'sign', 'template'] as const;
export type CallbackAction = (typeof CALLBACK_ACTIONS)[number];
export const CALLBACK_EVENT_HEADER = 'x-service-event';
export const CALLBACK_EVENT_HEADER_VALUE = 'sms';
