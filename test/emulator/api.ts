/** What the emulator offers its users and its admin routes: its settings and its handle (server.ts builds it). */
import type { Faults } from './faults';
import type { Ledger } from './ledger';
import type { PendingKind, SmsLimits } from './sms';

export interface EmulatorConfig {
	reviewDelayMs: number;
	deliveryDelayMs: number;
	deliveryFailureShare: number;
	callbackUrl?: string;
	/** Delivery reports are not pushed (the task still reaches its final status): a receiver that was down. */
	withholdReports?: boolean;
	smsLimits: SmsLimits;
	/** Task IDs the next sends get, in order (taken off the list), whatever their account: a gateway may give two accounts the same one. */
	nextTaskIds?: string[];
	/** Serve at most this many copyright records a page, silently (the answer still echoes the asked pageSize). */
	copyrightMaxPageSize?: number;
	/** Violations committed since, by plate: that many more records after the plate's usual ones. */
	addedViolations?: Record<string, number>;
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
	/**
	 * Holds the answers to `path` (each done and billed first) until `release`: a test acts at a
	 * known moment in a batch (after `arrived(n)` requests came) without waiting on a timer.
	 */
	holdAnswers(path: string): HeldAnswers;
	/** Callbacks POSTed so far (action and the receiver's HTTP status). */
	callbacks(): Array<{ action: string; status: number | string }>;
	/** Bodies POSTed to /__emulator/notifications (the examples' notification target in the sandbox). */
	notifications(): ReceivedNotification[];
	reset(): void;
	close(): Promise<void>;
}

export interface HeldAnswers {
	/** Resolves once `count` requests to the path have come (and are held). */
	arrived(count: number): Promise<void>;
	/** Answers the held requests and holds no more. */
	release(): void;
}

export interface ReceivedNotification {
	receivedAt: string;
	/** Parsed JSON, or the raw text when the body is not JSON. */
	body: unknown;
}
