import type { INode } from 'n8n-workflow';
import { z } from 'zod/v4';

import { GatewayFailure } from '../../nodes/shared/errors/failures';
import { GatewayClient } from '../../nodes/shared/transport/gatewayClient';
import type { GatewaySettings } from '../../nodes/shared/transport/settings';
import { resetConnectionPool } from '../../nodes/shared/testing';
import { startEmulator, type Emulator } from '../emulator/server';

/** Shared setup of the transport test files: one emulator per file, a client on it, and small readers. */
export const node: INode = {
	id: 'n1',
	name: 'Gateway',
	type: 'CUSTOM.dataGatewayTelephone',
	typeVersion: 1,
	position: [0, 0],
	parameters: {},
};

/** The file's emulator, started by useEmulator() (a live binding: importers see it once beforeAll ran). */
export let emulator: Emulator;

/** Starts the emulator for the calling test file, clears its faults and ledger before each test. */
export function useEmulator() {
	beforeAll(async () => {
		emulator = await startEmulator();
	});
	afterAll(async () => {
		await emulator.close();
		await resetConnectionPool();
	});
	beforeEach(async () => {
		await emulator.clearFaults();
		await emulator.resetLedger();
	});
}

export function client(overrides: Partial<GatewaySettings> = {}, { ownLimiter = false } = {}) {
	return new GatewayClient(
		{
		baseUrl: emulator.url,
		appCode: emulator.demo.memberAppCode,
		appCodePlacement: 'query',
		timeoutMs: 5000,
		maxRetries: 3,
			limiter: { maxConcurrent: 4, maxPerSecond: 0 },
			money: { capYuan: 0, dailyYuan: 0, monthlyYuan: 0 },
			...overrides,
		},
		// A limiter of its own where many calls follow 429s of earlier tests, whose learned rate would slow them.
		{ ownLimiter },
	);
}

export async function failureOf(promise: Promise<unknown>): Promise<GatewayFailure> {
	try {
		await promise;
	} catch (error) {
		if (error instanceof GatewayFailure) return error;
		throw error;
	}
	throw new Error('expected the call to fail');
}

/** Rejects if the call has not settled long before what a stall would take; no assertion on elapsed time. */
export async function beforeGuard<T>(promise: Promise<T>, guardMs: number): Promise<T> {
	let timer: NodeJS.Timeout | undefined;
	const guard = new Promise<never>((_, reject) => {
		timer = setTimeout(() => reject(new Error(`still waiting after ${guardMs / 1000} s`)), guardMs);
	});
	try {
		return await Promise.race([promise, guard]);
	} finally {
		clearTimeout(timer);
	}
}

export async function callsTo(path: string) {
	const ledger = await emulator.ledger();
	return ledger.byPath[path] ?? { calls: 0, billedCalls: 0, costYuan: 0 };
}

export const plate = { carNumber: '京A12345', carType: '02' };
export const passthrough = z.unknown();
