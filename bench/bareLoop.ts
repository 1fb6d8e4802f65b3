import { Agent, request } from 'undici';

/** The bare undici loop section 4 compares with: the same calls, 10 at a time, text and JSON.parse, nothing else. */
export async function bareLoop(baseUrl: string, appCode: string, tels: string[]): Promise<void> {
	const agent = new Agent({ keepAliveTimeout: 30_000, connections: 64 });
	let next = 0;
	await Promise.all(
		Array.from({ length: 10 }, async () => {
			while (next < tels.length) {
				const tel = tels[next++];
				const response = await request(`${baseUrl}/telecom/identify?tel=${tel}&appCode=${appCode}`, { dispatcher: agent });
				JSON.parse(await response.body.text());
			}
		}),
	);
	await agent.close();
}
