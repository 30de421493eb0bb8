// Helpers of the MCP tests: clients of the official SDK, every one closed at
// the end even after a failed test (an open stdio client would keep node,
// and so tests/run.sh, waiting), the result of a tool call, and a refusal,
// which must leave the store as it was.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { check, eq } from '../server/lib.mjs';

const open = new Set();

export async function connect(transport) {
	const client = new Client({ name: 'cairn-tests', version: '1.0.0' });
	await client.connect(transport);
	const close = client.close.bind(client);
	open.add(client);
	client.close = async () => {
		open.delete(client);
		await close();
	};
	return client;
}

// Close the clients a failed test left open.
export async function closeAll() {
	for (const c of [...open]) await c.close().catch(() => {});
}

// A tool's result: not an error, its text and structured content the same.
export function result(r) {
	check(!r.isError, `tool error: ${r.content && r.content[0] && r.content[0].text}`);
	eq(r.content[0].type, 'text');
	eq(JSON.parse(r.content[0].text), r.structuredContent, 'text and structured content agree');
	return r.structuredContent;
}

export async function call(client, name, args = {}) {
	return result(await client.callTool({ name, arguments: args }));
}

// A tool error holding every part, with state() (a snapshot of the store:
// an export, the log, ...) as it was before the call. Returns the text.
export async function refused(client, state, name, args, ...parts) {
	const before = state();
	const r = await client.callTool({ name, arguments: args });
	const text = r.content && r.content[0] && r.content[0].text;
	const what = `${name} ${JSON.stringify(args).slice(0, 200)}`;
	eq(r.isError, true, `${what} is refused: ${text}`);
	for (const p of parts) check(text.includes(p), `${what}: "${text}" lacks "${p}"`);
	eq(state(), before, `${what} leaves the store as it was`);
	return text;
}
