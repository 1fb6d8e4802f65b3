/**
 * A redis-server of the test file's own, started before its tests and stopped after them, with the
 * package's shared connections closed first (as useEmulator does for the emulator).
 */
import { closeAllRedis } from '../../nodes/shared/testing';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';

export function useRedis(use: (redis: RunningRedis) => void): void {
	let redis: RunningRedis | undefined;
	beforeAll(async () => {
		redis = await startRedis(() => undefined);
		use(redis);
	});
	afterAll(async () => {
		closeAllRedis();
		await redis?.stop();
	});
}
