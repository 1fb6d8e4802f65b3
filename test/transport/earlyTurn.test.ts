/**
 * The first turn of a call asked for ahead of it (GatewayClient.firstTurn, what Send asks while an
 * item's claim is with the store) against a real Redis shared rate and the emulator: used fresh it
 * books one start; used after its start passed it is given back and taken again; dropped, its slot
 * comes back; when Redis fails it fails the call as not sent, and dropping it stays quiet.
 */
import { execFileSync } from 'node:child_process';
import { z } from 'zod/v4';

import { accountKeyOf } from '../../nodes/shared/gateway/account';
import { redisTimeouts } from '../../nodes/shared/store/redis/connection';
import { closeAllRedis } from '../../nodes/shared/testing';
import { earlyTurns, type CallOptions, type GatewayClient } from '../../nodes/shared/transport/gatewayClient';
import { freePort } from '../../scripts/n8n-runtime/run';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import { client, emulator, failureOf, useEmulator } from './gatewayClient';

jest.setTimeout(60_000);

let redis: RunningRedis;
const timeouts = { ...redisTimeouts };
const fresh = { ...earlyTurns };

useEmulator();
beforeAll(async () => {
	redis = await startRedis(() => undefined);
});
afterAll(async () => {
	closeAllRedis();
	await redis?.stop();
});
afterEach(() => {
	Object.assign(earlyTurns, fresh);
	Object.assign(redisTimeouts, timeouts);
});

let credentials = 0;
/** A client of a credential of its own (its limiter and shared rate are per credential), `maxConcurrent` calls at once, and the starts its shared rate booked. */
function sharing(redisUrl: string, maxConcurrent: number) {
	const appCode = emulator.demo.appCode;
	const baseUrl = `${emulator.url}/?credential=${++credentials}`;
	const made = client({ baseUrl, appCode, timeoutMs: 3000, maxRetries: 0, limiter: { maxConcurrent, maxPerSecond: 50, sharedRedis: { url: redisUrl } } });
	const startsKey = `n8n-nodes-data-gateway:starts:${accountKeyOf(baseUrl, appCode)}`;
	const booked = () => Number(execFileSync('redis-cli', ['-p', String(redis.port), 'ZCARD', startsKey], { encoding: 'utf8' }).trim());
	return { client: made, booked };
}

let phone = 13900007000;
const send = async (gateway: GatewayClient, options: CallOptions = {}) =>
	await gateway.call('smsSend', { signId: emulator.demo.signatureId, templateId: emulator.demo.templateId, phone: String(++phone), params: { code: '1234' } }, z.unknown(), options);
const sendCalls = () => emulator.ledger().byPath['/sms/send']?.calls ?? 0;

describe('a first turn asked for ahead of its call', () => {
	it('used while fresh, it is the call\'s turn: one start booked in the shared rate, one request', async () => {
		earlyTurns.freshMs = 60_000;
		const { client: gateway, booked } = sharing(redis.url, 1);
		const turn = gateway.firstTurn('smsSend');
		expect(turn).toBeDefined();
		await send(gateway, { turn });
		expect(booked()).toBe(1);
		expect(sendCalls()).toBe(1);
	});

	it('used after its booked start passed, it is given back and a fresh turn taken: two starts booked, one request', async () => {
		earlyTurns.freshMs = -1;
		const { client: gateway, booked } = sharing(redis.url, 1);
		const turn = gateway.firstTurn('smsSend');
		await turn?.given;
		await send(gateway, { turn });
		expect(booked()).toBe(2);
		expect(sendCalls()).toBe(1);
		// With one slot, the turn given back freed it for the fresh one, and that one for the next call.
		await send(gateway);
		expect(sendCalls()).toBe(2);
	});

	it('dropped (the claim refused the send), its slot comes back: with one slot the next call goes at once, whether it was given yet or not', async () => {
		const { client: gateway } = sharing(redis.url, 1);
		const given = gateway.firstTurn('smsSend');
		await given?.given;
		given?.drop();
		gateway.firstTurn('smsSend')?.drop();
		await send(gateway);
		await send(gateway);
		expect(sendCalls()).toBe(2);
	});

	it('without a shared rate there is none: a local turn costs no round trip', () => {
		const local = client({ limiter: { maxConcurrent: 1, maxPerSecond: 0 } }, { ownLimiter: true });
		expect(local.firstTurn('smsSend')).toBeUndefined();
	});

	it("when the shared rate's Redis fails, the call fails not sent and nothing reaches the gateway; a dropped one rejects nothing", async () => {
		redisTimeouts.connectMs = 500;
		redisTimeouts.commandMs = 500;
		const { client: gateway } = sharing(`redis://127.0.0.1:${await freePort()}`, 1);
		const unhandled: unknown[] = [];
		const note = (reason: unknown) => unhandled.push(reason);
		process.on('unhandledRejection', note);
		try {
			gateway.firstTurn('smsSend')?.drop();
			const failure = await failureOf(send(gateway, { turn: gateway.firstTurn('smsSend') }));
			expect(failure.kind).toBe('not-sent');
			expect(sendCalls()).toBe(0);
			// Node reports an unhandled rejection once the microtasks after it have run: two turns of the event loop are past that.
			for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
			expect(unhandled).toEqual([]);
		} finally {
			process.off('unhandledRejection', note);
		}
	});
});
