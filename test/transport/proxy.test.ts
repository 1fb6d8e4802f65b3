import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';

import { client, passthrough, useEmulator } from './gatewayClient';
import { resetConnectionPool } from '../../nodes/shared/testing';

useEmulator();

describe('proxies from the environment', () => {
	let proxy: Server;
	let proxied: string[];
	const saved = { HTTP_PROXY: process.env.HTTP_PROXY, NO_PROXY: process.env.NO_PROXY };

	beforeAll(async () => {
		proxied = [];
		// A minimal forward proxy: records the request line it relays, in absolute form or inside a CONNECT tunnel.
		proxy = createServer((incoming, outgoing) => {
			proxied.push(incoming.url ?? '');
			const target = new URL(incoming.url ?? '');
			const relay = httpRequest(
				{ host: target.hostname, port: target.port, path: target.pathname + target.search, method: incoming.method, headers: incoming.headers },
				(answer) => {
					outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
					answer.pipe(outgoing);
				},
			);
			incoming.pipe(relay);
		});
		proxy.on('connect', (incoming, clientSocket, head) => {
			const [host, port] = (incoming.url ?? '').split(':');
			const upstream = connect(Number(port), host, () => {
				clientSocket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
				if (head.length) upstream.write(head);
				clientSocket.once('data', (chunk: Buffer) => proxied.push(`http://${incoming.url}${chunk.toString('utf8').split(' ')[1]}`));
				clientSocket.pipe(upstream).pipe(clientSocket);
			});
			clientSocket.on('error', () => upstream.destroy());
			upstream.on('error', () => clientSocket.destroy());
		});
		await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
	});
	afterAll(async () => {
		process.env.HTTP_PROXY = saved.HTTP_PROXY;
		process.env.NO_PROXY = saved.NO_PROXY;
		if (saved.HTTP_PROXY === undefined) delete process.env.HTTP_PROXY;
		if (saved.NO_PROXY === undefined) delete process.env.NO_PROXY;
		await resetConnectionPool();
		proxy.closeAllConnections();
		await new Promise((resolve) => proxy.close(resolve));
	});

	it('goes through HTTP_PROXY, and the header placement keeps the appCode out of the proxied URL', async () => {
		process.env.HTTP_PROXY = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
		delete process.env.NO_PROXY;
		await resetConnectionPool();
		await client({ appCodePlacement: 'header' }).call('telephoneIdentify', { tel: '13800138004' }, passthrough);
		expect(proxied).toHaveLength(1);
		expect(proxied[0]).toContain('/telecom/identify?tel=13800138004');
		expect(proxied[0]).not.toContain('appCode');
	});

	it('bypasses the proxy for hosts in NO_PROXY', async () => {
		process.env.NO_PROXY = '127.0.0.1';
		await resetConnectionPool();
		const before = proxied.length;
		await client().call('telephoneIdentify', { tel: '13800138005' }, passthrough);
		expect(proxied.length).toBe(before);
	});
});
