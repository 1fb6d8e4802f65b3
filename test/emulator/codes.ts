/**
 * The emulator's error codes. The gateway shows none (docs/gateway-api.md#open-points), so these are our choice; the nodes depend
 * only on `code != 0` and the message, never on these numbers.
 */
export const CODES = {
	ok: 0,
	missingAppCode: 10001,
	invalidAppCode: 10002,
	parameterError: 20001,
	notFound: 20004,
	quotaExceeded: 30001,
	variableError: 40001,
	frequencyLimit: 40002,
	notApproved: 40003,
	stateForbidsChange: 40004,
	smsObjectNotFound: 40005,
} as const;
