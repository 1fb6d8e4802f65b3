import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

import { CALLBACK_EVENT_HEADER, CALLBACK_EVENT_HEADER_VALUE, DEFAULT_SMS_LIMITS, OPERATIONS } from '../../nodes/shared/gateway/catalog';
import { ADMIN_PREFIX, admin } from './admin';
import type { Emulator, EmulatorConfig, EmulatorOptions, HeldAnswers, ReceivedNotification } from './api';
import { CODES } from './codes';
import { AFTER_PROCESSING, FaultState, writeFault } from './faults';
import { appCodeOf, json } from './http';
import { Ledger } from './ledger';
import { fail, gatewayRoutes, type Account, type Routed } from './routes';
import { SmsState, type PendingKind } from './sms';

export type { FaultKind, FaultStep, Faults } from './faults';
export type { Emulator, EmulatorConfig, EmulatorOptions, ReceivedNotification } from './api';

export const DEMO_APP_CODE = 'demo-app-code';
export const DEMO_MEMBER_APP_CODE = 'demo-member-code';

/** A real HTTP server that behaves like the gateway of docs/gateway-api.md, with a ledger and fault injection. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
	const config: EmulatorConfig = {
		reviewDelayMs: options.reviewDelayMs ?? 2000,
		deliveryDelayMs: options.deliveryDelayMs ?? 3000,
		deliveryFailureShare: options.deliveryFailureShare ?? 0.1,
		callbackUrl: options.callbackUrl,
		withholdReports: options.withholdReports ?? false,
		smsLimits: { ...DEFAULT_SMS_LIMITS, ...options.smsLimits },
		copyrightMaxPageSize: options.copyrightMaxPageSize,
	};
	const accounts = new Map<string, Account>();
	for (const account of options.appCodes ?? [{ code: DEMO_APP_CODE }, { code: DEMO_MEMBER_APP_CODE, member: true }]) {
		accounts.set(account.code, { label: createHash('sha256').update(account.code).digest('hex').slice(0, 8), member: !!account.member });
	}

	const ledger = new Ledger();
	const timers = new Map<NodeJS.Timeout, { kind: PendingKind; id: string; run: () => void }>();
	const sockets = new Set<Socket>();
	const sentCallbacks: Array<{ action: string; status: number | string }> = [];
	const notifications: ReceivedNotification[] = [];
	const faults = new FaultState();

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
				if (action === 'report' && config.withholdReports) {
					sentCallbacks.push({ action, status: 'withheld' });
					return;
				}
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
	const routes = gatewayRoutes(config, sms);
	let held: { path: string; count: number; arrivals: Array<{ count: number; resolve: () => void }>; gate: Promise<void>; open: () => void } | undefined;
	const holdAnswers = (path: string): HeldAnswers => {
		let open = () => undefined as void;
		const gate = new Promise<void>((resolve) => (open = resolve));
		const hold = { path, count: 0, arrivals: [] as Array<{ count: number; resolve: () => void }>, gate, open };
		held = hold;
		return {
			arrived: (count) => (hold.count >= count ? Promise.resolve() : new Promise<void>((resolve) => hold.arrivals.push({ count, resolve }))),
			release: () => {
				if (held === hold) held = undefined;
				hold.open();
			},
		};
	};

	async function handle(request: IncomingMessage, response: ServerResponse) {
		const url = new URL(request.url ?? '/', 'http://emulator');
		if (url.pathname.startsWith(ADMIN_PREFIX)) return admin(emulator, notifications, url.pathname, request, response, url.searchParams);
		const known = Object.values(OPERATIONS).some((operation) => operation.path === url.pathname);
		if (!known) return json(response, 404, { code: 404, message: 'not found' });

		const appCode = appCodeOf(request, url.searchParams);
		const account = appCode ? accounts.get(appCode) : undefined;
		const label = account?.label ?? 'unknown';
		const latencyMs = faults.latencyMs;
		if (latencyMs) await new Promise((resolve) => setTimeout(resolve, latencyMs));

		const step = faults.take(url.pathname);
		if (step && !AFTER_PROCESSING.has(step.kind)) {
			ledger.record({ path: url.pathname, account: label, code: null, kind: step.kind === '429' ? 'rejected429' : 'faulted', billed: false, costYuan: 0 });
			return writeFault(step, request, response);
		}
		const retryAfter = faults.overRateCap(label);
		if (retryAfter !== undefined) {
			ledger.record({ path: url.pathname, account: label, code: null, kind: 'rejected429', billed: false, costYuan: 0 });
			return json(response, 429, { code: 429, message: 'rate limit exceeded' }, { 'retry-after': String(retryAfter) });
		}
		if (request.method !== 'GET') return json(response, 405, { code: 405, message: 'only GET is supported' });

		let result: Routed;
		if (!appCode) result = { answer: fail(CODES.missingAppCode, 'appCode is required'), costYuan: 0 };
		// Echoes the code back, as careless gateways do: the client must redact it.
		else if (!account) result = { answer: fail(CODES.invalidAppCode, `invalid appCode ${appCode}`), costYuan: 0 };
		else result = routes.answer(url.pathname, url.searchParams, account);
		if (step?.kind === 'misshapen' && result.answer.code === CODES.ok) {
			result = { ...result, answer: { ...result.answer, data: JSON.stringify(result.answer.data) } };
		}

		const billed = result.answer.code === CODES.ok && result.costYuan > 0;
		const text = url.pathname === '/sms/send' ? { phone: url.searchParams.get('phone') ?? '', params: url.searchParams.get('params') ?? '' } : {};
		ledger.record({ path: url.pathname, account: label, code: result.answer.code, kind: 'call', billed, costYuan: billed ? result.costYuan : 0, ...text });
		const hold = held?.path === url.pathname ? held : undefined;
		if (hold) {
			hold.count++;
			for (const arrival of hold.arrivals.filter((waiting) => waiting.count <= hold.count)) arrival.resolve();
			await hold.gate;
		}
		// Done and billed, and then the answer is lost on its way back.
		if (step && step.kind !== 'misshapen') return writeFault(step, request, response);
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
		setFaults: (next) => faults.set(next),
		clearFaults: () => faults.clear(),
		configure: (next) => {
			Object.assign(config, next, next.smsLimits ? { smsLimits: { ...config.smsLimits, ...next.smsLimits } } : {});
		},
		config: () => ({ ...config }),
		finishPending,
		holdAnswers,
		callbacks: () => [...sentCallbacks],
		notifications: () => [...notifications],
		reset: () => {
			ledger.reset();
			faults.clear();
			routes.resetQuota();
			config.addedViolations = undefined;
			config.nextTaskIds = undefined;
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
