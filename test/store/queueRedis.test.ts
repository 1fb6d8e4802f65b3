/**
 * n8n's queue Redis set up as n8n documents it, against real redis-servers: the password in a
 * Docker secret (QUEUE_BULL_REDIS_PASSWORD_FILE), TLS switched on by any spelling n8n accepts,
 * n8n's TLS settings (server name, certificate check, NODE_EXTRA_CA_CERTS), settings read from
 * files, and a setting file that cannot be read named in the error.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { StoreUnavailable } from '../../nodes/shared/store/durableStore';
import { storedKeyName } from '../../nodes/shared/store/keyName';
import { openDurableStore } from '../../nodes/shared/store/openStore';
import { closeAllRedis, forgetOpenStores } from '../../nodes/shared/testing';
import { startRedis, type RunningRedis } from '../../scripts/n8n-runtime/queue';
import { makeSelfSignedCertificate } from '../harness/tlsCertificate';
import { freshKey, increment } from './contract';
import { webhookContext, withEnvironment } from './selection';

jest.setTimeout(120_000);

const PASSWORD = 'queue-secret-from-a-file-5';
let plain: RunningRedis;
let tls: RunningRedis;
let certificate: ReturnType<typeof makeSelfSignedCertificate>;
let folder: string;
/** A Docker secret: the password and the newline an editor or `echo` leaves at its end. */
let secretFile: string;
let restore: () => void = () => undefined;

beforeAll(async () => {
	certificate = makeSelfSignedCertificate();
	folder = mkdtempSync(join(tmpdir(), 'dgw-queue-settings-'));
	secretFile = join(folder, 'redis_password');
	writeFileSync(secretFile, `${PASSWORD}\n`);
	[plain, tls] = await Promise.all([
		startRedis(() => undefined, { password: PASSWORD }),
		startRedis(() => undefined, { password: PASSWORD, tls: { certFile: certificate.certFile, keyFile: certificate.keyFile } }),
	]);
});
afterAll(async () => {
	closeAllRedis();
	await Promise.all([plain?.stop(), tls?.stop()]);
	rmSync(folder, { recursive: true, force: true });
	rmSync(certificate?.dir ?? '', { recursive: true, force: true });
});
afterEach(() => {
	restore();
	closeAllRedis();
	forgetOpenStores();
});

const queueOn = (redis: RunningRedis, extra: Record<string, string> = {}) => ({
	EXECUTIONS_MODE: 'queue',
	QUEUE_BULL_REDIS_HOST: '127.0.0.1',
	QUEUE_BULL_REDIS_PORT: String(redis.port),
	QUEUE_BULL_REDIS_DB: '1',
	QUEUE_BULL_REDIS_PASSWORD_FILE: secretFile,
	...extra,
});

function keysIn(redis: RunningRedis, tlsArgs: string[] = []): string {
	return execFileSync('redis-cli', ['-p', String(redis.port), ...tlsArgs, '-a', PASSWORD, '--no-auth-warning', '-n', '1', '--scan'], { encoding: 'utf8' });
}

/** Counts once in the store a trigger would open with these settings: the count, or the error. */
async function countOnce(settings: Record<string, string>): Promise<{ count?: number; failure?: string; label: string; key: string }> {
	restore = withEnvironment(settings);
	const store = await openDurableStore(webhookContext());
	const key = freshKey('queue settings');
	try {
		return { count: await increment(store, key), label: store.label, key };
	} catch (error) {
		if (!(error instanceof StoreUnavailable)) throw error;
		return { failure: error.message, label: store.label, key };
	} finally {
		restore();
	}
}

describe("n8n's queue Redis, set up as n8n documents it", () => {
	it('logs in with the password in QUEUE_BULL_REDIS_PASSWORD_FILE (a Docker secret; its trailing newline dropped, as n8n does)', async () => {
		const { count, failure, label, key } = await countOnce(queueOn(plain));
		expect(failure).toBeUndefined();
		expect(count).toBe(1);
		expect(label).toBe(`n8n's queue Redis at 127.0.0.1:${plain.port}/1`);
		expect(keysIn(plain)).toContain(storedKeyName(key));
	});

	it('reads EXECUTIONS_MODE from its file too, and uses a set variable before its file', async () => {
		const modeFile = join(folder, 'mode');
		writeFileSync(modeFile, 'queue\n');
		const { EXECUTIONS_MODE: _mode, ...rest } = queueOn(plain);
		const queue = `n8n's queue Redis at 127.0.0.1:${plain.port}/1`;
		const fromFile = await countOnce({ ...rest, EXECUTIONS_MODE_FILE: modeFile });
		expect([fromFile.label, fromFile.count]).toEqual([queue, 1]);
		// The variable wins even over a file that does not exist.
		const variableFirst = await countOnce(queueOn(plain, { QUEUE_BULL_REDIS_PASSWORD: PASSWORD, QUEUE_BULL_REDIS_PASSWORD_FILE: join(folder, 'absent') }));
		expect([variableFirst.label, variableFirst.count]).toEqual([queue, 1]);
	});

	it('names the setting whose file cannot be read, and sends nothing to any Redis', async () => {
		const absent = join(folder, 'no-such-secret');
		const { failure } = await countOnce(queueOn(plain, { QUEUE_BULL_REDIS_PASSWORD_FILE: absent }));
		expect(failure).toBe(
			`n8n's queue Redis could not be used for the eviction check: n8n's setting QUEUE_BULL_REDIS_PASSWORD_FILE names ${absent}, which could not be read (ENOENT) (check n8n's QUEUE_BULL_REDIS_* settings)`,
		);
	});

	it('uses a single Redis when QUEUE_BULL_REDIS_CLUSTER_NODES names no node, as n8n does', async () => {
		const { count, label } = await countOnce(queueOn(plain, { QUEUE_BULL_REDIS_CLUSTER_NODES: ' , ' }));
		expect([count, label]).toEqual([1, `n8n's queue Redis at 127.0.0.1:${plain.port}/1`]);
	});

	it('connects with TLS for QUEUE_BULL_REDIS_TLS=1, without checking the certificate when QUEUE_BULL_REDIS_TLS_VALIDATE_CERTIFICATE=false', async () => {
		const { count, failure, key } = await countOnce(queueOn(tls, { QUEUE_BULL_REDIS_TLS: '1', QUEUE_BULL_REDIS_TLS_VALIDATE_CERTIFICATE: 'false' }));
		expect(failure).toBeUndefined();
		expect(count).toBe(1);
		expect(keysIn(tls, ['--tls', '--cacert', certificate.certFile])).toContain(storedKeyName(key));
	});

	it('checks the certificate by default (QUEUE_BULL_REDIS_TLS=TRUE), and says where n8n takes a private CA from', async () => {
		const { failure } = await countOnce(queueOn(tls, { QUEUE_BULL_REDIS_TLS: 'TRUE' }));
		expect(failure).toMatch(/the TLS certificate of 127\.0\.0\.1:\d+\/1 was not accepted \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\)/);
		expect(failure).toMatch(/\(check n8n's QUEUE_BULL_REDIS_TLS_\* settings, or give n8n the CA in NODE_EXTRA_CA_CERTS\)$/);
	});

	it("trusts the CA in NODE_EXTRA_CA_CERTS (read at n8n's start) and checks the certificate against QUEUE_BULL_REDIS_TLS_SERVERNAME", () => {
		const settings = [
			queueOn(tls, { QUEUE_BULL_REDIS_TLS: 'true', QUEUE_BULL_REDIS_TLS_SERVERNAME: 'localhost' }),
			queueOn(tls, { QUEUE_BULL_REDIS_TLS: 'true', QUEUE_BULL_REDIS_TLS_SERVERNAME: 'redis.elsewhere.example' }),
			queueOn(tls, { QUEUE_BULL_REDIS_TLS: 'true' }),
		];
		const output = execFileSync(process.execPath, ['--import', 'tsx', join(__dirname, 'queueProbe.ts'), JSON.stringify(settings)], {
			cwd: join(__dirname, '..', '..'),
			encoding: 'utf8',
			env: { ...process.env, NODE_EXTRA_CA_CERTS: certificate.certFile },
		});
		const [byName, wrongName, byAddress] = JSON.parse(output) as Array<number | string>;
		expect(byName).toBe(1);
		expect(wrongName).toMatch(/the TLS certificate of 127\.0\.0\.1:\d+\/1 was not accepted \(ERR_TLS_CERT_ALTNAME_INVALID\)/);
		// Without a server name the address is checked: the certificate names 127.0.0.1 too.
		expect(byAddress).toBe(1);
	});
});
