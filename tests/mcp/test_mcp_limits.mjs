// MCP and the limits of what a message may hold, with the official client
// SDK and raw JSON-RPC: U+0000 in a tool's names is refused as a tool error
// with the store left as it was; a message nested too deep is refused with
// an error that carries the request's id (so the caller's request ends now,
// not at its timeout), over stdio and over HTTP, where the server's
// --max-depth and --max-body hold for /v1/mcp as for every route. Run as
//   CAIRN=/abs/path/to/cairn node tests/mcp/test_mcp_limits.mjs
// after `npm ci` in tests/mcp.
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { test, done, check, eq, cli, scratch, schemaFile, serve, stop, CAIRN } from '../server/lib.mjs';
import { connect, closeAll } from './lib.mjs';

const S = scratch();
cli(S.store, 'schema', 'apply', schemaFile(S.dir, {
	kinds: [{ name: 'Person', attributes: [{ name: 'age', type: 'int' }] }],
}), '--domain', 'd');
const writer = cli(S.store, 'token', 'create', '--role', 'writer', '--domain', 'd', '--label', 'agent/http');

// Longer than any answer takes, shorter than the SDK's 60 s: a request whose
// error came back without its id would end here, as a timeout.
const GUARD = { timeout: 30000 };

const stdio = () => new StdioClientTransport({ command: CAIRN, args: ['mcp', '--store', S.store, '--domain', 'd', '--writes', '--no-sync', '--model', 'none'], stderr: 'pipe' });

const exported = () => cli(S.store, 'export', '--domain', 'd');
const branches = () => cli(S.store, 'branch', 'list', '--domain', 'd');

// An object nested n levels deep around a value.
const nest = (n) => {
	let v = 'x';
	for (let i = 0; i < n; i++) v = [v];
	return v;
};

// The SDK's call ends with the server's error, not with its own timeout.
async function rejects(promise, want) {
	let err;
	try {
		await promise;
	} catch (e) {
		err = e;
	}
	check(err, 'the call failed');
	check(!/timed out/i.test(String(err)), `answered, not timed out: ${err}`);
	check(want.test(String(err)), `${err} matches ${want}`);
}

// U+0000 in a name: a tool error in the same words as elsewhere, and nothing written.
async function nulRefused(client) {
	const before = [exported(), branches()];
	let r = await client.callTool({ name: 'remember', arguments: { kind: 'Person', key: 'm-0003\u0000evil', text: 'Mallory', values: { age: 99 }, replace: true } }, CallToolResultSchema, GUARD);
	eq(r.isError, true);
	check(r.content[0].text.includes('"key" holds U+0000'), r.content[0].text);
	r = await client.callTool({ name: 'get', arguments: { kind: 'Person\u0000x', key: 'm-0003' } }, CallToolResultSchema, GUARD);
	eq(r.isError, true);
	check(r.content[0].text.includes('"kind" holds U+0000'), r.content[0].text);
	r = await client.callTool({ name: 'branch', arguments: { name: 'agent/nul/b\u0000zz' } }, CallToolResultSchema, GUARD);
	eq(r.isError, true);
	check(r.content[0].text.includes('"name" holds U+0000'), r.content[0].text);
	r = await client.callTool({ name: 'search', arguments: { near: { kind: 'Person\u0000', key: 'm-0003' } } }, CallToolResultSchema, GUARD);
	eq(r.isError, true);
	check(r.content[0].text.includes('"near.kind" holds U+0000'), r.content[0].text);
	// The memory tools' names, at the top and nested: a record, a link's ends, a batch's keys, subjects.
	for (const [name, args, path] of [
		['forget', { record: 'Person:m-0003\u0000evil', how: 'delete' }, 'record'],
		['forget', { how: 'unlink', link: { rel: 'about', from: 'Person:m-0003\u0000x', to: 'Person:m-0003' } }, 'link.from'],
		['remember', { memories: [{ kind: 'Person', key: 'm-0003\u0000evil', text: 'Mallory', replace: true }] }, 'memories[0].key'],
		['remember', { text: 'Maria is 99', about: ['Person:m-0003\u0000evil'] }, 'about[0]'],
		['remember', { kind: 'Person', key: 'm-0003', text: 'Maria\u0000evil', replace: true }, 'text'],
		['digest', { subjects: ['Person:m-0003\u0000'] }, 'subjects[0]'],
	]) {
		r = await client.callTool({ name, arguments: args }, CallToolResultSchema, GUARD);
		eq(r.isError, true, `${name} ${path}`);
		check(r.content[0].text.includes(`"${path}" holds U+0000`), r.content[0].text);
	}
	eq([exported(), branches()], before, 'the store is unchanged');
	check(!branches().includes('agent/nul'), 'no branch agent/nul/b');
	// m-0003 keeps its value, read without U+0000.
	r = await client.callTool({ name: 'get', arguments: { kind: 'Person', key: 'm-0003' } });
	eq([r.isError, r.structuredContent.title, r.structuredContent.values], [false, 'Maria', { age: 41 }]);
}

await test('stdio: U+0000 in a key, a Kind, a branch name is a tool error; the store unchanged', async () => {
	const client = await connect(stdio());
	const r = await client.callTool({ name: 'remember', arguments: { kind: 'Person', key: 'm-0003', text: 'Maria', values: { age: 41 } } });
	eq([r.isError, r.structuredContent.memories[0].created], [false, true]);
	await nulRefused(client);
	await client.close();
});

await test('stdio: a message nested too deep is answered with its id', async () => {
	// Raw JSON-RPC: the id is read from the message the reader refused.
	const p = spawn(CAIRN, ['mcp', '--store', S.store, '--domain', 'd', '--no-sync', '--model', 'none'], { stdio: ['pipe', 'pipe', 'ignore'] });
	const lines = createInterface({ input: p.stdout })[Symbol.asyncIterator]();
	const ask = async (msg) => {
		p.stdin.write(msg + '\n');
		return JSON.parse((await lines.next()).value);
	};
	let a = await ask(JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'get', arguments: { kind: 'Person', key: 'm-0003', x: nest(70) } }, id: 'deep-1' }));
	eq([a.id, a.error.code], ['deep-1', -32700]);
	check(a.error.message.includes('deeper than 64'), a.error.message);
	// Broken after the id, with spaces: the id still.
	a = await ask('{ "jsonrpc": "2.0", "id" : 17, "method": "tools/call", "params": {"name": ');
	eq([a.id, a.error.code], [17, -32700]);
	// No id to read: null, as JSON-RPC says.
	a = await ask('{"jsonrpc":"2.0","params":' + '['.repeat(70) + ']'.repeat(70) + '}');
	eq(a.id, null);
	p.stdin.end();
	await new Promise((resolve) => p.on('close', resolve));
	// The SDK's call ends with the error, not at its timeout.
	const client = await connect(stdio());
	await rejects(client.callTool({ name: 'get', arguments: { kind: 'Person', key: 'm-0003', x: nest(70) } }, CallToolResultSchema, GUARD), /-32700.*deeper than 64/);
	await client.close();
});

const srv = await serve(S.store, '--max-depth', '8', '--max-body', '4096');
const http = () => new StreamableHTTPClientTransport(new URL(`${srv.base}/v1/mcp`), { requestInit: { headers: { Authorization: `Bearer ${writer}` } } });
const post = (body) => fetch(`${srv.base}/v1/mcp`, { method: 'POST', headers: { Authorization: `Bearer ${writer}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body });

await test('HTTP: U+0000 in a key, a Kind, a branch name is a tool error; the store unchanged', async () => {
	const client = await connect(http());
	await nulRefused(client);
	await client.close();
});

await test('HTTP: /v1/mcp holds to --max-depth, answering with the request\'s id', async () => {
	const call = (id, x) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get', arguments: { kind: 'Person', key: 'm-0003', x } } });
	// 8 levels in all: the message, params, arguments, and 5 arrays.
	let res = await post(call(41, nest(5)));
	let a = await res.json();
	eq([res.status, a.id, typeof a.result], [200, 41, 'object'], 'answered by the tool (its arguments are refused there), not by the depth limit');
	res = await post(call(42, nest(6)));
	a = await res.json();
	eq([res.status, a.id, a.error.code], [200, 42, -32600]);
	check(a.error.message.includes('nests deeper than 8 levels'), a.error.message);
	res = await post(call('r-43', nest(70)));
	a = await res.json();
	eq([a.id, a.error.code], ['r-43', -32700]);
	const client = await connect(http());
	await rejects(client.callTool({ name: 'get', arguments: { kind: 'Person', key: 'm-0003', x: nest(6) } }, CallToolResultSchema, GUARD), /-32600.*deeper than 8/);
	await client.close();
});

await test('HTTP: a body over --max-body is refused on /v1/mcp', async () => {
	const before = exported();
	const big = JSON.stringify({ jsonrpc: '2.0', id: 50, method: 'tools/call', params: { name: 'remember', arguments: { kind: 'Person', key: 'big', text: 'x'.repeat(5000) } } });
	const res = await post(big);
	eq(res.status, 413);
	eq((await res.json()).error.code, 'payload_too_large');
	const client = await connect(http());
	await rejects(client.callTool({ name: 'remember', arguments: { kind: 'Person', key: 'big', text: 'x'.repeat(5000) } }, CallToolResultSchema, GUARD), /payload_too_large/);
	await client.close();
	eq(exported(), before, 'nothing written');
});

await closeAll();
eq(await stop(srv), 0);
S.cleanup();
done();
