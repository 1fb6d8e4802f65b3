import { messageSize, templateVariableNames } from '../../nodes/shared/checks/sms';
import {
	MAX_TEMPLATE_VARIABLES,
	MAX_VARIABLE_VALUE_LENGTH,
	PRICES_YUAN,
	RESERVED_VARIABLE_NAMES,
	REVIEW_STATUS,
	SMS_TASK_STATUS,
} from '../../nodes/shared/gateway/catalog';
import { CODES } from './codes';
import { seedOf } from './samples';

export interface SmsLimits {
	perMinute: number;
	perHour: number;
	perDay: number;
}

export interface SmsSettings {
	reviewDelayMs: number;
	deliveryDelayMs: number;
	/** Share of messages that fail delivery, 0..1, decided by a hash of the task id. */
	deliveryFailureShare: number;
	smsLimits: SmsLimits;
	/** Task IDs the next sends get, in order, whatever their account (taken off the list): a gateway may give two accounts the same one. */
	nextTaskIds?: string[];
}

interface Reviewed {
	id: string;
	user_id: number;
	name: string;
	remark: string;
	status: number;
	error: string | null;
	create_time: string;
	update_time: string;
	content?: string;
}

interface Task {
	id: string;
	phone: string;
	content: string;
	sendDate: string;
	receiveDate: string;
	status: number;
	message: string;
	segments: number;
}

export type PendingKind = 'review' | 'delivery';

export type Answer = { code: number; message: string; data?: unknown };

export interface SmsEvents {
	/** Called once when a review ends or a task reaches its final status. */
	emit(action: 'report' | 'sign' | 'template', body: Record<string, unknown>): void;
	/** Called when a delivered message becomes billable. */
	delivered(segments: number): void;
	/** Runs `run` after the delay, or earlier when a test finishes that kind of pending work. */
	schedule(delayMs: number, run: () => void, kind: PendingKind, id: string): void;
}

/** China local time, the format of the gateway's samples. */
export function gatewayTime(at = Date.now()): string {
	return new Date(at + 8 * 3600_000).toISOString().replace('T', ' ').slice(0, 19);
}

const SIGNATURE_REJECTION = /测试|test/i;
const TEMPLATE_REJECTION = /贷款|彩票|loan|lottery/i;
const VARIABLE = /\$\{([^}]*)\}/g;

const ok = (data?: unknown): Answer => ({ code: CODES.ok, message: 'success', ...(data === undefined ? {} : { data }) });
const fail = (code: number, message: string): Answer => ({ code, message });

/** Tasks are the account's own: another account asking about the same ID does not see them. */
const taskKey = (query: URLSearchParams, id: string) => `${query.get('appCode') ?? ''}\n${id}`;

/** Signatures, templates and tasks with the review and delivery state machines of docs/gateway-api.md#states. */
export class SmsState {
	private nextId = 1000;
	readonly signatures = new Map<string, Reviewed>();
	readonly templates = new Map<string, Reviewed>();
	readonly tasks = new Map<string, Task>();
	private readonly sendsByPhone = new Map<string, number[]>();

	constructor(
		private readonly settings: SmsSettings,
		private readonly events: SmsEvents,
	) {}

	/** Ready-made approved objects so demos can send at once. */
	seed() {
		const signature = this.create(this.signatures, { name: '数据网关', remark: '验证码与通知，网站 https://example.com' });
		const template = this.create(this.templates, { name: '验证码', remark: '登录验证码', content: '您的验证码是${code}，5分钟内有效。' });
		const plain = this.create(this.templates, { name: '通知', remark: '系统通知', content: '您的订单已发货，请注意查收。' });
		for (const object of [signature, template, plain]) object.status = REVIEW_STATUS.approved;
		return { signatureId: signature.id, templateId: template.id, templateWithoutVariablesId: plain.id };
	}

	resetLimits() {
		this.sendsByPhone.clear();
	}

	private create(store: Map<string, Reviewed>, fields: { name: string; remark: string; content?: string }): Reviewed {
		const now = gatewayTime();
		const object: Reviewed = {
			id: String(this.nextId++),
			user_id: 1,
			...fields,
			status: REVIEW_STATUS.underReview,
			error: null,
			create_time: now,
			update_time: now,
		};
		store.set(object.id, object);
		return object;
	}

	private publicFields(object: Reviewed, withReview: boolean) {
		const { status, error, ...rest } = object;
		return withReview ? { ...rest, status, error } : rest;
	}

	private scheduleReview(store: Map<string, Reviewed>, object: Reviewed, action: 'sign' | 'template') {
		this.events.schedule(this.settings.reviewDelayMs, () => {
			if (store.get(object.id) !== object || object.status !== REVIEW_STATUS.underReview) return;
			const rejection =
				action === 'sign'
					? SIGNATURE_REJECTION.test(object.name) && '签名含测试字样，不符合规范'
					: TEMPLATE_REJECTION.test(object.content ?? '') && '模板内容涉及禁止发送的内容';
			object.status = rejection ? REVIEW_STATUS.rejected : REVIEW_STATUS.approved;
			object.error = rejection || null;
			object.update_time = gatewayTime();
			// The gateway sends templates under the key `sign` too.
			this.events.emit(action, { action, sign: this.publicFields(object, true) });
		}, 'review', object.id);
	}

	addSign(query: URLSearchParams): Answer {
		const name = query.get('name');
		const remark = query.get('remark');
		if (!name || !remark) return fail(CODES.parameterError, 'name and remark are required');
		const signature = this.create(this.signatures, { name, remark });
		this.scheduleReview(this.signatures, signature, 'sign');
		return ok(this.publicFields(signature, false));
	}

	addTemplate(query: URLSearchParams): Answer {
		const name = query.get('name');
		const remark = query.get('remark');
		const content = query.get('content');
		if (!name || !remark || !content) return fail(CODES.parameterError, 'name, content and remark are required');
		const template = this.create(this.templates, { name, remark, content });
		this.scheduleReview(this.templates, template, 'template');
		return ok(this.publicFields(template, false));
	}

	query(kind: 'sign' | 'template', query: URLSearchParams): Answer {
		const object = this.store(kind).get(query.get('id') ?? '');
		if (!object) return fail(CODES.smsObjectNotFound, `${kind === 'sign' ? 'signature' : 'template'} not found`);
		return ok(this.publicFields(object, true));
	}

	modify(kind: 'sign' | 'template', query: URLSearchParams): Answer {
		const store = this.store(kind);
		const object = store.get(query.get('id') ?? '');
		const label = kind === 'sign' ? 'signature' : 'template';
		if (!object) return fail(CODES.smsObjectNotFound, `${label} not found`);
		const name = query.get('name');
		const remark = query.get('remark');
		if (!name || !remark) return fail(CODES.parameterError, 'id, name and remark are required');
		if (object.status === REVIEW_STATUS.approved) {
			return fail(CODES.stateForbidsChange, `an approved ${label} cannot be modified; delete it and create a new one`);
		}
		if (object.status === REVIEW_STATUS.underReview) {
			return fail(CODES.stateForbidsChange, `the ${label} is under review and cannot be modified now`);
		}
		object.name = name;
		object.remark = remark;
		const content = query.get('content');
		if (kind === 'template' && content) object.content = content;
		object.status = REVIEW_STATUS.underReview;
		object.error = null;
		object.update_time = gatewayTime();
		this.scheduleReview(store, object, kind);
		return ok(this.publicFields(object, false));
	}

	/** "Approved and rejected ones may be deleted" (docs/gateway-api.md#states); read strictly, one under review may not. */
	remove(kind: 'sign' | 'template', query: URLSearchParams): Answer {
		const id = query.get('id') ?? '';
		const store = this.store(kind);
		const label = kind === 'sign' ? 'signature' : 'template';
		const object = store.get(id);
		if (!object) return fail(CODES.smsObjectNotFound, `${label} not found`);
		if (object.status === REVIEW_STATUS.underReview) {
			return fail(CODES.stateForbidsChange, `the ${label} is under review and cannot be deleted now`);
		}
		store.delete(id);
		return ok();
	}

	private store(kind: 'sign' | 'template') {
		return kind === 'sign' ? this.signatures : this.templates;
	}

	send(query: URLSearchParams): Answer {
		const phone = query.get('phone') ?? '';
		const signature = this.signatures.get(query.get('signId') ?? '');
		const template = this.templates.get(query.get('templateId') ?? '');
		if (!/^1[3-9]\d{9}$/.test(phone)) return fail(CODES.parameterError, 'phone must be a domestic mobile number');
		if (!signature || signature.status !== REVIEW_STATUS.approved) return fail(CODES.notApproved, 'the signature is missing or not approved');
		if (!template || template.status !== REVIEW_STATUS.approved) return fail(CODES.notApproved, 'the template is missing or not approved');

		const variables = templateVariableNames(template.content ?? '');
		const rawParams = query.get('params');
		let params: Record<string, unknown> = {};
		if (rawParams !== null) {
			if (variables.length === 0) return fail(CODES.variableError, 'variable error: the template has no variables, leave params out');
			try {
				params = JSON.parse(rawParams);
			} catch {
				return fail(CODES.variableError, 'variable error: params is not a JSON object');
			}
			if (typeof params !== 'object' || params === null || Array.isArray(params)) {
				return fail(CODES.variableError, 'variable error: params is not a JSON object');
			}
		}
		const names = Object.keys(params);
		if (names.length > MAX_TEMPLATE_VARIABLES) return fail(CODES.variableError, 'variable error: too many variables');
		for (const name of names) {
			if (!/^[A-Za-z_]+$/.test(name) || RESERVED_VARIABLE_NAMES.includes(name)) {
				return fail(CODES.variableError, `variable error: invalid variable name ${name}`);
			}
			if (String(params[name]).length > MAX_VARIABLE_VALUE_LENGTH) {
				return fail(CODES.variableError, `variable error: value of ${name} is too long`);
			}
		}
		const missing = variables.filter((name) => !(name in params));
		if (missing.length > 0) return fail(CODES.variableError, `variable error: missing ${missing.join(', ')}`);

		const limited = this.overLimit(phone);
		if (limited) return fail(CODES.frequencyLimit, limited);

		const content = (template.content ?? '').replace(VARIABLE, (_, name: string) => String(params[name]));
		const task: Task = {
			id: this.settings.nextTaskIds?.shift() ?? `T${Date.now().toString(36)}${(this.nextId++).toString(36)}`,
			phone,
			content: `【${signature.name}】${content}`,
			sendDate: gatewayTime(),
			receiveDate: '',
			status: SMS_TASK_STATUS.sending,
			message: '',
			// Billed as the node estimates, 【】 included: the strict reading of the length rule (docs/gateway-api.md#limits).
			segments: messageSize(signature.name, content).segments,
		};
		this.tasks.set(taskKey(query, task.id), task);
		this.events.schedule(this.settings.deliveryDelayMs, () => this.deliver(task), 'delivery', task.id);
		return ok({ id: task.id });
	}

	private overLimit(phone: string): string | undefined {
		const now = Date.now();
		const times = (this.sendsByPhone.get(phone) ?? []).filter((time) => now - time < 86_400_000);
		const { perMinute, perHour, perDay } = this.settings.smsLimits;
		const within = (ms: number) => times.filter((time) => now - time < ms).length;
		if (within(60_000) >= perMinute) return `frequency limit: at most ${perMinute} per minute to one number`;
		if (within(3_600_000) >= perHour) return `frequency limit: at most ${perHour} per hour to one number`;
		if (times.length >= perDay) return `frequency limit: at most ${perDay} per day to one number`;
		times.push(now);
		this.sendsByPhone.set(phone, times);
		return undefined;
	}

	private deliver(task: Task) {
		const failed = (seedOf(task.id) % 10_000) / 10_000 < this.settings.deliveryFailureShare;
		task.status = failed ? SMS_TASK_STATUS.failed : SMS_TASK_STATUS.delivered;
		task.message = failed ? '用户手机关机或停机' : '';
		task.receiveDate = gatewayTime();
		if (!failed) this.events.delivered(task.segments);
		this.events.emit('report', {
			action: 'report',
			sms: {
				id: task.id,
				phone: task.phone,
				content: task.content,
				sendDate: task.sendDate,
				receiveDate: task.receiveDate,
				status: task.status,
				message: task.message,
			},
		});
	}

	status(query: URLSearchParams): Answer {
		const task = this.tasks.get(taskKey(query, query.get('id') ?? ''));
		if (!task) return fail(CODES.smsObjectNotFound, 'task not found');
		// The status query spells it `reveiveDate` and gives the phone as a number, as in the gateway's samples.
		return ok({
			id: task.id,
			phone: Number(task.phone),
			content: task.content,
			sendDate: task.sendDate,
			reveiveDate: task.receiveDate,
			status: task.status,
			message: task.message,
		});
	}

	static segmentCost(segments: number) {
		return Math.round(segments * PRICES_YUAN.smsSegment * 10000) / 10000;
	}
}
