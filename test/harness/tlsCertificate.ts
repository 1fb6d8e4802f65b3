import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A self-signed certificate for localhost and 127.0.0.1, valid for a day, made by openssl in a new folder. */
export function makeSelfSignedCertificate(): { dir: string; certFile: string; keyFile: string; pem: string } {
	const dir = mkdtempSync(join(tmpdir(), 'dgw-tls-'));
	const certFile = join(dir, 'cert.pem');
	const keyFile = join(dir, 'key.pem');
	execFileSync(
		'openssl',
		['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', keyFile, '-out', certFile],
		{ stdio: 'ignore' },
	);
	return { dir, certFile, keyFile, pem: readFileSync(certFile, 'utf8') };
}
