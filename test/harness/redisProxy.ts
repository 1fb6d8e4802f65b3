/**
 * A TCP proxy in front of a real redis-server that reads the commands it relays (RESP arrays, as
 * ioredis sends them) and can drop the connection at the N-th script (EVAL or EVALSHA) it sees,
 * counted across every connection: `applied` relays that script to Redis first (Redis runs it, the
 * reply is lost), else the connection ends just before it. Commands earlier in the same write reach
 * Redis; every reply not yet relayed is lost with the connection. The client's socket closes only
 * once Redis has closed its side, so what Redis was given has run before the client may retry.
 */
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface RedisProxy {
	url: string;
	/** Scripts (EVAL, EVALSHA) relayed so far, on every connection. */
	scripts(): number;
	/**
	 * Drops the connection that sends the `at`-th script from now (1 = the next). `staysDown`: every
	 * connection after it is refused until `up()` (Redis unreachable for a while), else the next one works.
	 */
	dropAt(at: number, applied: boolean, staysDown?: boolean): void;
	/** Lets connections through again, and cancels a drop not reached; answers how many connections were dropped so far. */
	up(): number;
	close(): Promise<void>;
}

/** Where each complete command in `buffer` ends, with its name; a partial command at the end is left out. */
function commandsIn(buffer: Buffer): Array<{ end: number; name: string }> {
	const commands: Array<{ end: number; name: string }> = [];
	let offset = 0;
	const line = (from: number) => {
		const end = buffer.indexOf('\r\n', from, 'latin1');
		return end < 0 ? undefined : { text: buffer.toString('latin1', from, end), next: end + 2 };
	};
	for (;;) {
		const head = line(offset);
		if (!head || !head.text.startsWith('*')) return commands;
		let at = head.next;
		let name = '';
		for (let index = 0; index < Number(head.text.slice(1)); index++) {
			const size = line(at);
			if (!size) return commands;
			const length = Number(size.text.slice(1));
			if (size.next + length + 2 > buffer.length) return commands;
			if (index === 0) name = buffer.toString('latin1', size.next, size.next + length).toUpperCase();
			at = size.next + length + 2;
		}
		commands.push({ end: at, name });
		offset = at;
	}
}

export async function startRedisProxy(redisPort: number): Promise<RedisProxy> {
	let seen = 0;
	let dropAfter: { script: number; applied: boolean; staysDown: boolean } | undefined;
	let down = false;
	let drops = 0;
	const sockets = new Set<Socket>();

	const server: Server = createServer((client) => {
		if (down) return void client.resetAndDestroy();
		const upstream = connect(redisPort, '127.0.0.1');
		sockets.add(client);
		sockets.add(upstream);
		let pending = Buffer.alloc(0);
		let dropped = false;
		const drop = () => {
			dropped = true;
			client.pause();
			// Redis runs what it was given, then closes on the end of input: only then does the client see the loss.
			upstream.end();
			upstream.once("close", () => client.resetAndDestroy());
		};
		client.on('data', (chunk: Buffer) => {
			if (dropped) return;
			pending = Buffer.concat([pending, chunk]);
			let relayed = 0;
			for (const { end, name } of commandsIn(pending)) {
				if (name === "EVAL" || name === "EVALSHA") {
					seen++;
					if (dropAfter && seen === dropAfter.script) {
						const through = dropAfter.applied ? end : relayed;
						down = dropAfter.staysDown;
						drops++;
						dropAfter = undefined;
						if (through > 0) upstream.write(pending.subarray(0, through));
						return drop();
					}
				}
				relayed = end;
			}
			if (relayed > 0) upstream.write(pending.subarray(0, relayed));
			pending = pending.subarray(relayed);
		});
		upstream.on('data', (chunk: Buffer) => {
			if (!dropped) client.write(chunk);
		});
		const end = () => {
			client.destroy();
			upstream.destroy();
			sockets.delete(client);
			sockets.delete(upstream);
		};
		client.on('error', end);
		upstream.on('error', end);
		client.on('close', () => dropped || end());
		upstream.on('close', () => dropped || end());
	});
	await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
	return {
		url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`,
		scripts: () => seen,
		dropAt: (at, applied, staysDown = false) => {
			dropAfter = { script: seen + at, applied, staysDown };
		},
		up: () => {
			down = false;
			dropAfter = undefined;
			return drops;
		},
		close: async () => {
			for (const socket of sockets) socket.destroy();
			await new Promise((closed) => server.close(closed));
		},
	};
}
