import { asNodeError, toNodeApiError } from '../../nodes/shared/errors/failures';
import type { AppCodePlacement } from '../../nodes/shared/transport/settings';
import { client, emulator, failureOf, node, passthrough, useEmulator } from './gatewayClient';

useEmulator();

describe('the appCode never leaks', () => {
	// Characters that URL-encoding changes, so both forms are checked.
	const canary = 'CANARY+9f3/k=Q7 secret';

	const faults = [
		[],
		[{ kind: '500', count: 10 }],
		[{ kind: '429', count: 10, retryAfterSeconds: 0 }],
		[{ kind: 'malformed', count: 1 }],
		[{ kind: 'html', count: 1 }],
		[{ kind: 'truncated', count: 1 }],
		[{ kind: 'reset', count: 10 }],
		[{ kind: 'hang', count: 1 }],
	] as const;

	it.each(['query', 'header'] as AppCodePlacement[])('appears in no error text, description or cause when sent as %s', async (placement) => {
		const leaks: string[] = [];
		for (const sequence of faults) {
			await emulator.setFaults({ sequence: [...sequence] });
			const failure = await failureOf(
				client({ appCode: canary, appCodePlacement: placement, maxRetries: 1, timeoutMs: 300 }).call('telephoneIdentify', { tel: '13800138009' }, passthrough),
			);
			const error = toNodeApiError(node, failure, 0);
			const texts = [failure.message, failure.hint, error.message, error.description, JSON.stringify(error.cause), JSON.stringify(error), String(error.stack)];
			for (const text of texts) {
				if (text && (text.includes(canary) || text.includes(encodeURIComponent(canary)) || text.includes('CANARY'))) {
					leaks.push(`${JSON.stringify(sequence)}: ${text}`);
				}
			}
		}
		expect(leaks).toEqual([]);
	});

	/** Every piece of 6 or more characters of the canary, in each encoding, that a text still holds. */
	function fragmentsIn(text: string): string[] {
		const found: string[] = [];
		for (const form of new Set([canary, encodeURIComponent(canary), new URLSearchParams({ s: canary }).toString().slice(2)])) {
			for (let start = 0; start + 6 <= form.length; start++) {
				if (text.includes(form.slice(start, start + 6))) found.push(form.slice(start, start + 6));
			}
		}
		return found;
	}

	it.each(['query', 'header'] as AppCodePlacement[])(
		'an echoed request (%s) is redacted before the body is shortened, wherever the cut falls',
		async (placement) => {
			const leaks: string[] = [];
			// The filler moves the code across the 200-character cut of the error text, one position at a time.
			for (let fillerChars = 120; fillerChars <= 200; fillerChars++) {
				await emulator.setFaults({ sequence: [{ kind: 'echo', fillerChars }] });
				const failure = await failureOf(
					client({ appCode: canary, appCodePlacement: placement, maxRetries: 0 }, { ownLimiter: true }).call('telephoneIdentify', { tel: '13800138009' }, passthrough),
				);
				const error = asNodeError(node, failure, 0);
				for (const text of [failure.message, failure.hint, error.message, error.description, JSON.stringify(error)]) {
					if (text && fragmentsIn(text).length > 0) leaks.push(`${fillerChars}: ${fragmentsIn(text).join(' ')} in ${text}`);
				}
			}
			expect(leaks).toEqual([]);
		},
		30_000,
	);

	it.each(['query', 'header'] as AppCodePlacement[])('an echo the gateway itself cut leaves no piece of the code (%s)', async (placement) => {
		const leaks: string[] = [];
		const echoStart = 10;
		for (let cutAt = echoStart + 20; cutAt <= echoStart + 100; cutAt++) {
			await emulator.setFaults({ sequence: [{ kind: 'echo', fillerChars: echoStart, cutAt }] });
			const failure = await failureOf(
				client({ appCode: canary, appCodePlacement: placement, maxRetries: 0 }, { ownLimiter: true }).call('telephoneIdentify', { tel: '13800138009' }, passthrough),
			);
			if (fragmentsIn(failure.message).length > 0) leaks.push(`${cutAt}: ${failure.message}`);
		}
		expect(leaks).toEqual([]);
	}, 30_000);
});
