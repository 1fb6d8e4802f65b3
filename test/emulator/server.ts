import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

import {
	CALLBACK_EVENT_HEADER,
	CALLBACK_EVENT_HEADER_VALUE,
	DEFAULT_SMS_LIMITS,
	DETAIL_VEHICLE_TYPES,
	OPERATIONS,
	PRICES_YUAN,
	TELEPHONE_FREE_DAILY_CALLS,
	VIOLATION_VEHICLE_TYPES,
	COPYRIGHT_DEFAULT_PAGE_SIZE,
} from '../../nodes/shared/spec';
import { CODES } from './codes';
import { Ledger } from './ledger';
import * as samples from './samples';
import { SmsState, type Answer, type PendingKind, type SmsLimits } from './sms';

/**
 * `misshapen`: the gateway answers as usual (code 0, billed) but `data` arrives as JSON text
 * instead of an object, as a gateway that changed its format might send it.
 */
export type FaultKind = '500' | '502' | '429' | 'reset' | 'malformed' | 'html' | 'truncated' | 'hang' | 'echo' | 'misshapen';

export interface FaultStep {
	kind: FaultKind;
	/** How many matching requests get this fault (default 1). */
	count?: number;
	retryAfterSeconds?: number;
	/** Only requests to this path; every gateway path when absent. */
	path?: string;
	/** Lets this many matching requests through untouched before the fault applies. */
	skip?: number;
	/**
	 * `echo`: a 500 whose text body is this many filler characters, then the request line and the
	 * Authorization header, as careless gateways and proxies write them; `cutAt` shortens that body.
	 */
	fillerChars?: number;
	cutAt?: number;
}

export interface Faults {
	latencyMs?: number;
	sequence?: FaultStep[];
	/** Above this many requests per second per appCode, answer 429 with Retry-After. */
	rateCapPerSecond?: number;
	/** The window of the rate cap (default 1000 ms); a long one lets tests hit the cap without racing the clock. */
	rateCapWindowMs?: number;
}

export interface EmulatorConfig {
	reviewDelayMs: number;
	deliveryDelayMs: number;
	deliveryFailureShare: number;
	callbackUrl?: string;
	smsLimits: SmsLimits;
	/** Serve at most this many copyright records a page, silently (the answer still echoes the asked pageSize). */
	copyrightMaxPageSize?: number;
}

export interface EmulatorOptions extends Partial<EmulatorConfig> {
	port?: number;
	host?: string;
	/** Accepted appCodes; defaults to a non-member demo code and a member demo code. */
	appCodes?: Array<{ code: string; member?: boolean }>;
}

export interface Emulator {
	url: string;
	port: number;
	demo: { appCode: string; memberAppCode: string; signatureId: string; templateId: string; templateWithoutVariablesId: string };
	ledger(): ReturnType<Ledger['snapshot']>;
	resetLedger(): void;
	setFaults(faults: Faults): void;
	clearFaults(): void;
	configure(config: Partial<EmulatorConfig>): void;
	config(): EmulatorConfig;
	/** Ends pending reviews or deliveries now (all, or those of one ID), as if the delay had passed: tests wait on no timer. */
	finishPending(kind: PendingKind, id?: string): void;
	/** Callbacks POSTed so far (action and the receiver's HTTP status). */
	callbacks(): Array<{ action: string; status: number | string }>;
	/** Bodies POSTed to /__emulator/notifications (the examples' notification target in the sandbox). */
	notifications(): ReceivedNotification[];
	reset(): void;
	close(): Promise<void>;
}

export interface ReceivedNotification {
	receivedAt: string;
	/** Parsed JSON, or the raw text when the body is not JSON. */
	body: unknown;
}

export const DEMO_APP_CODE = 'demo-app-code';
export const DEMO_MEMBER_APP_CODE = 'demo-member-code';
const ADMIN_PREFIX = '/__emulator/';

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
	const text = JSON.stringify(body);
	response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), ...headers });
	response.end(text);
}

async function readBody(request: IncomingMessage): Promise<string> {
	const chunks: Buffer[] = [];
	for await (const chunk of request) chunks.push(chunk as Buffer);
	return Buffer.concat(chunks).toString('utf8');
}

function appCodeOf(request: IncomingMessage, query: URLSearchParams): string | undefined {
	const header = request.headers.authorization;
	const fromHeader = header?.match(/^AppCode\s+(.+)$/i)?.[1];
	return query.get('appCode') ?? fromHeader ?? undefined;
}

const ok = (data?: unknown): Answer => ({ code: CODES.ok, message: 'success', ...(data === undefined ? {} : { data }) });
const fail = (code: number, message: string): Answer => ({ code, message });
const NOT_FOUND_MARKER = /404|不存在|notfound/i;

/** A real HTTP server that behaves like the gateway of the spec, with a ledger and fault injection. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
	const config: EmulatorConfig = {
		reviewDelayMs: options.reviewDelayMs ?? 2000,
		deliveryDelayMs: options.deliveryDelayMs ?? 3000,
		deliveryFailureShare: options.deliveryFailureShare ?? 0.1,
		callbackUrl: options.callbackUrl,
		smsLimits: { ...DEFAULT_SMS_LIMITS, ...options.smsLimits },
		copyrightMaxPageSize: options.copyrightMaxPageSize,
	};
	const accounts = new Map<string, { label: string; member: boolean }>();
	for (const account of options.appCodes ?? [{ code: DEMO_APP_CODE }, { code: DEMO_MEMBER_APP_CODE, member: true }]) {
		accounts.set(account.code, { label: createHash('sha256').update(account.code).digest('hex').slice(0, 8), member: !!account.member });
	}

	const ledger = new Ledger();
	const timers = new Map<NodeJS.Timeout, { kind: PendingKind; id: string; run: () => void }>();
	const sockets = new Set<Socket>();
	const sentCallbacks: Array<{ action: string; status: number | string }> = [];
	const notifications: ReceivedNotification[] = [];
	let faults: Faults = {};
	const quotaUsed = new Map<string, number>();
	const acceptedTimes = new Map<string, number[]>();

	const schedule = (delayMs: number, run: () => void, kind: PendingKind, id: string) => {
		const timer = setTimeout(() => {
			timers.delete(timer);
			run();
		}, delayMs);
		timer.unref();
		timers.set(timer, { kind, id, run });
	};
	const finishPending = (kind: PendingKind, id?: string) => {
		for (const [timer, pending] of [...timers]) {
			if (pending.kind !== kind || (id !== undefined && pending.id !== id)) continue;
			clearTimeout(timer);
			timers.delete(timer);
			pending.run();
		}
	};

	// SmsState reads `config` live, so configure() changes delays, share and limits at once.
	const sms = new SmsState(
		config,
		{
			schedule,
			delivered: (segments) =>
				ledger.record(
					{ path: OPERATIONS.smsSend.path, account: 'sms', code: 0, kind: 'delivery', billed: true, costYuan: SmsState.segmentCost(segments) },
					segments,
				),
			emit: (action, body) => {
				// The real gateway has one callback URL; a comma-separated list lets tests feed several receivers.
				const urls = (config.callbackUrl ?? '').split(',').map((entry) => entry.trim()).filter(Boolean);
				for (const url of urls) {
					// Pushed once, like the real gateway: no retry when the receiver fails.
					fetch(url, {
						method: 'POST',
						headers: { 'content-type': 'application/json', [CALLBACK_EVENT_HEADER]: CALLBACK_EVENT_HEADER_VALUE },
						body: JSON.stringify(body),
					})
						.then(async (response) => {
							sentCallbacks.push({ action, status: response.status });
							await response.body?.cancel();
						})
						.catch((error: Error) => sentCallbacks.push({ action, status: error.message }));
				}
			},
		},
	);
	const demoObjects = sms.seed();

	function takeFault(path: string): FaultStep | undefined {
		const step = faults.sequence?.find((candidate) => (candidate.count ?? 1) > 0 && (!candidate.path || candidate.path === path));
		if (!step) return undefined;
		if (step.skip) {
			step.skip--;
			return undefined;
		}
		step.count = (step.count ?? 1) - 1;
		return step;
	}

	function overRateCap(account: string): number | undefined {
		const cap = faults.rateCapPerSecond;
		if (!cap) return undefined;
		const windowMs = faults.rateCapWindowMs ?? 1000;
		const now = Date.now();
		const times = (acceptedTimes.get(account) ?? []).filter((time) => now - time < windowMs);
		acceptedTimes.set(account, times);
		if (times.length >= cap) return Math.max(1, Math.ceil((times[0] + windowMs - now) / 1000));
		times.push(now);
		return undefined;
	}

	function writeFault(step: FaultStep, request: IncomingMessage, response: ServerResponse) {
		switch (step.kind) {
			case 'echo': {
				const echoed = `${'.'.repeat(step.fillerChars ?? 0)}${request.method} ${request.url} Authorization: ${request.headers.authorization ?? ''}`;
				response.writeHead(500, { 'content-type': 'text/plain' });
				return response.end(step.cutAt === undefined ? echoed : echoed.slice(0, step.cutAt));
			}
			case '500':
				return json(response, 500, { code: 500, message: 'internal error' });
			case '502':
				response.writeHead(502, { 'content-type': 'text/html' });
				return response.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
			case '429':
				return json(response, 429, { code: 429, message: 'too many requests' }, { 'retry-after': String(step.retryAfterSeconds ?? 1) });
			case 'reset':
				return response.socket?.destroy();
			case 'malformed':
				response.writeHead(200, { 'content-type': 'application/json' });
				return response.end('{"code":0,"message":"success","data":{"phone":');
			case 'html':
				response.writeHead(200, { 'content-type': 'text/html' });
				return response.end('<!DOCTYPE html><html><body>Service temporarily unavailable</body></html>');
			case 'truncated':
				response.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
				response.write('{"code":0,"message":"success","data":{');
				return setTimeout(() => response.socket?.destroy(), 20).unref();
			case 'hang':
				return; // never answers; the client's timeout must fire
		}
	}

	/** Lookups: billed only when code is 0; telephone is free within the daily quota. */
	function lookup(path: string, query: URLSearchParams, account: { label: string; member: boolean }): { answer: Answer; costYuan: number } {
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
				return { answer: ok(samples.violations(carNumber, carType, param('carEngineCode'), param('carCode'))), costYuan: PRICES_YUAN.violationQuery };
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

	function gateway(path: string, query: URLSearchParams, account: { label: string; member: boolean }): { answer: Answer; costYuan: number } {
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

	async function admin(path: string, request: IncomingMessage, response: ServerResponse, query: URLSearchParams) {
		const route = `${request.method} ${path.slice(ADMIN_PREFIX.length)}`;
		if (route === 'POST notifications') {
			const text = await readBody(request);
			let body: unknown = text;
			try {
				body = JSON.parse(text);
			} catch {
				// Kept as text: any workflow may post here.
			}
			notifications.push({ receivedAt: new Date().toISOString(), body });
			return json(response, 200, { ok: true, received: notifications.length });
		}
		const body = request.method === 'PUT' || request.method === 'PATCH' ? JSON.parse((await readBody(request)) || '{}') : undefined;
		switch (route) {
			case 'GET ledger':
				return json(response, 200, ledger.snapshot());
			case 'DELETE ledger':
				ledger.reset();
				return json(response, 200, { ok: true });
			case 'PUT faults':
				emulator.setFaults(body);
				return json(response, 200, { ok: true });
			case 'DELETE faults':
				emulator.clearFaults();
				return json(response, 200, { ok: true });
			case 'GET config':
				return json(response, 200, { ...config, demo: emulator.demo });
			case 'PATCH config':
				emulator.configure(body);
				return json(response, 200, { ...config, demo: emulator.demo });
			case 'GET callbacks':
				return json(response, 200, sentCallbacks);
			case 'POST finish/reviews':
				finishPending('review', query.get('id') ?? undefined);
				return json(response, 200, { ok: true });
			case 'POST finish/deliveries':
				finishPending('delivery', query.get('id') ?? undefined);
				return json(response, 200, { ok: true });
			case 'GET notifications':
				return json(response, 200, notifications);
			case 'DELETE notifications':
				notifications.length = 0;
				return json(response, 200, { ok: true });
			case 'POST reset':
				emulator.reset();
				return json(response, 200, { ok: true });
		}
		return json(response, 404, { message: `unknown admin route ${route}` });
	}

	async function handle(request: IncomingMessage, response: ServerResponse) {
		const url = new URL(request.url ?? '/', 'http://emulator');
		if (url.pathname.startsWith(ADMIN_PREFIX)) return admin(url.pathname, request, response, url.searchParams);
		const known = Object.values(OPERATIONS).some((operation) => operation.path === url.pathname);
		if (!known) return json(response, 404, { code: 404, message: 'not found' });

		const appCode = appCodeOf(request, url.searchParams);
		const account = appCode ? accounts.get(appCode) : undefined;
		const label = account?.label ?? 'unknown';
		if (faults.latencyMs) await new Promise((resolve) => setTimeout(resolve, faults.latencyMs));

		const step = takeFault(url.pathname);
		if (step && step.kind !== 'misshapen') {
			ledger.record({ path: url.pathname, account: label, code: null, kind: step.kind === '429' ? 'rejected429' : 'faulted', billed: false, costYuan: 0 });
			return writeFault(step, request, response);
		}
		const retryAfter = overRateCap(label);
		if (retryAfter !== undefined) {
			ledger.record({ path: url.pathname, account: label, code: null, kind: 'rejected429', billed: false, costYuan: 0 });
			return json(response, 429, { code: 429, message: 'rate limit exceeded' }, { 'retry-after': String(retryAfter) });
		}
		if (request.method !== 'GET') return json(response, 405, { code: 405, message: 'only GET is supported' });

		let result: { answer: Answer; costYuan: number };
		if (!appCode) result = { answer: fail(CODES.missingAppCode, 'appCode is required'), costYuan: 0 };
		// Echoes the code back, as careless gateways do: the client must redact it.
		else if (!account) result = { answer: fail(CODES.invalidAppCode, `invalid appCode ${appCode}`), costYuan: 0 };
		else result = gateway(url.pathname, url.searchParams, account);
		if (step?.kind === 'misshapen' && result.answer.code === CODES.ok) {
			result = { ...result, answer: { ...result.answer, data: JSON.stringify(result.answer.data) } };
		}

		const billed = result.answer.code === CODES.ok && result.costYuan > 0;
		const text = url.pathname === '/sms/send' ? { phone: url.searchParams.get('phone') ?? '', params: url.searchParams.get('params') ?? '' } : {};
		ledger.record({ path: url.pathname, account: label, code: result.answer.code, kind: 'call', billed, costYuan: billed ? result.costYuan : 0, ...text });
		json(response, 200, result.answer);
	}

	const server: Server = createServer((request, response) => {
		handle(request, response).catch((error: Error) => json(response, 500, { code: 500, message: error.message }));
	});
	server.keepAliveTimeout = 60_000;
	server.on('connection', (socket) => {
		sockets.add(socket);
		socket.on('close', () => sockets.delete(socket));
	});
	await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve));
	const port = (server.address() as AddressInfo).port;

	const emulator: Emulator = {
		url: `http://${options.host ?? '127.0.0.1'}:${port}`,
		port,
		demo: { appCode: DEMO_APP_CODE, memberAppCode: DEMO_MEMBER_APP_CODE, ...demoObjects },
		ledger: () => ledger.snapshot(),
		resetLedger: () => ledger.reset(),
		setFaults: (next) => {
			faults = { ...next, sequence: next.sequence?.map((step) => ({ ...step })) };
		},
		clearFaults: () => {
			faults = {};
			acceptedTimes.clear();
		},
		configure: (next) => {
			Object.assign(config, next, next.smsLimits ? { smsLimits: { ...config.smsLimits, ...next.smsLimits } } : {});
		},
		config: () => ({ ...config }),
		finishPending,
		callbacks: () => [...sentCallbacks],
		notifications: () => [...notifications],
		reset: () => {
			ledger.reset();
			faults = {};
			acceptedTimes.clear();
			quotaUsed.clear();
			sms.resetLimits();
			sentCallbacks.length = 0;
			notifications.length = 0;
		},
		close: async () => {
			for (const timer of timers.keys()) clearTimeout(timer);
			timers.clear();
			for (const socket of sockets) socket.destroy();
			await new Promise<void>((resolve) => server.close(() => resolve()));
		},
	};
	return emulator;
}
