// MCP tests with the official client SDK: over stdio (cairn mcp) and over
// streamable HTTP (POST /v1/mcp on cairn serve): initialize, list the
// tools, call each one on a Domain of ordinary Records (remember with a
// Kind and key of that schema, replace to update, get with lineage), and
// read the errors. The memory tools on a memory Domain are in
// test_memory.mjs. Run as
//   CAIRN=/abs/path/to/cairn node tests/mcp/test_mcp.mjs
// after `npm ci` in tests/mcp.
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execFileSync } from 'node:child_process';
import { test, done, check, eq, cli, scratch, schemaFile, serve, stop, CAIRN } from '../server/lib.mjs';
import { connect, closeAll, result, refused } from './lib.mjs';

const S = scratch();
cli(S.store, 'schema', 'apply', schemaFile(S.dir, {
	kinds: [
		{ name: 'Supplier', attributes: [{ name: 'country', type: 'string' }, { name: 'rating', type: 'float' }] },
		{ name: 'Part', attributes: [{ name: 'sku', type: 'string' }] },
	],
	relations: [{ name: 'supplied_by', from: 'Part', to: 'Supplier' }],
}), '--domain', 'd');

const WRITE_TOOLS = ['remember', 'forget', 'link', 'branch', 'propose', 'proposal'];
const READ_TOOLS = ['describe', 'get', 'list', 'neighborhood', 'resolve', 'search', 'history', 'digest'];

// What a refused call must leave as it was.
const state = () => ['export', 'log', 'branch list', 'proposal list'].map((c) => cli(S.store, ...c.split(' '), '--domain', 'd')).join('\n');

// The whole tool tour, on any transport that allows writes.
async function tour(client, tag) {
	const info = client.getServerVersion();
	eq(info.name, 'cairn');
	check(client.getInstructions().includes('describe'), 'instructions for the model');
	const tools = (await client.listTools()).tools;
	eq(tools.map((t) => t.name).sort(), [...READ_TOOLS, ...WRITE_TOOLS].sort());
	for (const t of tools) {
		check(!('title' in t), `${t.name} has no title (the list stays within 8 KB)`);
		eq(t.inputSchema.type, 'object', `${t.name} has an input schema`);
		check(t.description.length > 40, `${t.name} is described for a model`);
		eq(t.annotations.readOnlyHint, !WRITE_TOOLS.includes(t.name));
	}
	let r = result(await client.callTool({ name: 'describe', arguments: {} }));
	eq(r.schema.kinds.map((k) => k.name), ['Supplier', 'Part'], 'a Domain with a schema of its own keeps it: no memory schema');
	r = result(await client.callTool({ name: 'remember', arguments: { kind: 'Supplier', key: `S-${tag}`, text: 'Acme', values: { country: 'DE' }, source: 'https://example.com/acme', confidence: 0.8, message: 'from the catalog' } }));
	check(r.revision > 0);
	eq(r.memories, [{ kind: 'Supplier', key: `S-${tag}`, created: true, written: true, why: 'new' }]);
	const made = r.revision;
	// A key that exists is refused without replace, and nothing is written.
	let t = await refused(client, state, 'remember', { kind: 'Supplier', key: `S-${tag}`, values: { rating: 4.5 } }, 'already_exists', `Supplier:S-${tag} exists ("Acme"`, 'set replace');
	check(!t.includes('did you mean'), t);
	await refused(client, state, 'remember', { kind: 'Supplier', key: `S-${tag}`, text: 'Other' }, 'already_exists');
	r = result(await client.callTool({ name: 'remember', arguments: { kind: 'Supplier', key: `S-${tag}`, values: { rating: 4.5 }, replace: true } }));
	eq([r.revision > made, r.memories[0].created, r.memories[0].written], [true, false, true], 'replace updates the Record');
	r = result(await client.callTool({ name: 'get', arguments: { kind: 'Supplier', key: `S-${tag}` } }));
	eq(r.title, 'Acme', 'the title stays when not given');
	eq(r.values, { country: 'DE', rating: 4.5 }, 'values are merged');
	const before = state();
	r = result(await client.callTool({ name: 'remember', arguments: { kind: 'Supplier', key: `S-${tag}`, text: 'Acme', values: { rating: 4.5 }, replace: true } }));
	eq([r.revision, r.memories[0].written], [0, false], 'a write that changes nothing writes nothing');
	eq(state(), before);
	// A new Record needs a text, its title.
	await refused(client, state, 'remember', { kind: 'Supplier', key: `S-new-${tag}`, values: { country: 'FR' } }, 'invalid_argument', 'needs a text');
	await refused(client, state, 'remember', { values: { country: 'FR' } }, 'remember needs a text');
	result(await client.callTool({ name: 'remember', arguments: { kind: 'Part', key: `P-${tag}`, text: 'Bolt', values: { sku: 'B1' } } }));
	result(await client.callTool({ name: 'link', arguments: { rel: 'supplied_by', from: `Part:P-${tag}`, to: `Supplier:S-${tag}`, values: { share: 1 } } }));
	r = result(await client.callTool({ name: 'neighborhood', arguments: { kind: 'Supplier', key: `S-${tag}` } }));
	eq(r.nodes, [{ kind: 'Supplier', key: `S-${tag}`, title: 'Acme', depth: 0 }, { kind: 'Part', key: `P-${tag}`, title: 'Bolt', depth: 1 }]);
	eq(r.links.map(({ revision, ...l }) => [l, revision > 0]), [[{ rel: 'supplied_by', from: `Part:P-${tag}`, to: `Supplier:S-${tag}`, confidence: 1 }, true]], 'a Link with the confidence of its change (and its source when it has one)');
	eq([r.truncated, r.next], [false, null]);
	r = result(await client.callTool({ name: 'neighborhood', arguments: { kind: 'Supplier', key: `S-${tag}`, dir: 'in', kinds: ['Part'], depth: 2, values: true } }));
	eq(r.links[0].values, { share: 1 }, 'Link values when asked for');
	eq(r.nodes[1].values, { sku: 'B1' });
	r = result(await client.callTool({ name: 'resolve', arguments: { text: 'acme' } }));
	check(r.matches.some((m) => m.key === `S-${tag}` && m.reason === 'title, ignoring case and accents'), 'found by its title, folded');
	r = result(await client.callTool({ name: 'resolve', arguments: { text: `S-${tag}`, kinds: ['Supplier'], limit: 1 } }));
	eq(r.matches.length, 1);
	eq([r.matches[0].key, r.matches[0].score, r.matches[0].source], [`S-${tag}`, 1, 'key']);
	r = result(await client.callTool({ name: 'search', arguments: { text: 'bolts', kinds: ['Part'] } }));
	check(r.hits.some((h) => h.key === `P-${tag}` && h.score > 0), 'found by the stem of its title');
	eq(r.mode, 'words', 'with no model, search is by words');
	r = await client.callTool({ name: 'search', arguments: { text: 'bolts', mode: 'hybrid' } });
	check(r.isError && r.content[0].text.includes('needs a model'), 'hybrid needs a model');
	r = await client.callTool({ name: 'search', arguments: { text: 'bolts', rank: { confidence: true } } });
	check(r.isError && r.content[0].text.includes('rank needs'), 'rank needs hybrid or semantic');
	r = result(await client.callTool({ name: 'search', arguments: { text: 'bolts', kinds: ['Part'], explain: true } }));
	check(r.hits.every((h) => h.explain.terms.length > 0 && h.explain.snippets.some((s) => s.text.includes('<em>'))), 'explained');
	r = result(await client.callTool({ name: 'search', arguments: { text: 'bolt', kinds: ['Part'], where: { sku: 'B1' } } }));
	check(r.hits.some((h) => h.key === `P-${tag}`), 'with a filter');
	r = result(await client.callTool({ name: 'search', arguments: { text: 'bolt', kinds: ['Part'], where: { sku: 'none-such' } } }));
	eq(r.hits, []);
	r = await client.callTool({ name: 'search', arguments: { near: { kind: 'Part', key: `P-${tag}` } } });
	check(r.isError && r.content[0].text.includes('no vector'), 'near a Record without a vector is a tool error');
	r = await client.callTool({ name: 'search', arguments: { text: 'x', kinds: ['Nope'] } });
	check(r.isError && r.content[0].text.includes('unknown_kind'), 'an unknown Kind is a tool error');
	r = result(await client.callTool({ name: 'neighborhood', arguments: { kind: 'Supplier', key: `S-${tag}`, dir: 'out' } }));
	eq(r.nodes.length, 1, 'nothing out of a Supplier');
	r = await client.callTool({ name: 'neighborhood', arguments: { kind: 'Supplier', key: `S-${tag}`, rels: ['nope'] } });
	check(r.isError && r.content[0].text.includes('unknown_relation'), 'an unknown Relation is a tool error');
	r = result(await client.callTool({ name: 'list', arguments: { kind: 'Supplier', limit: 1 } }));
	eq(r.records.length, 1);
	check(!('values' in r.records[0]), 'headers only by default');
	r = result(await client.callTool({ name: 'history', arguments: { kind: 'Supplier', key: `S-${tag}` } }));
	eq(r.versions.map((v) => v.change), ['updated', 'created']);
	eq(r.versions[1].by.source, 'https://example.com/acme');
	// lineage is get's: the change behind the title and each value.
	r = result(await client.callTool({ name: 'get', arguments: { kind: 'Supplier', key: `S-${tag}`, lineage: true } }));
	eq(Object.keys(r).sort(), ['created', 'values']);
	eq([r.created.revision, r.created.source], [made, 'https://example.com/acme']);
	eq(r.values.country.confidence, 0.8);
	eq(r.values.country.message, 'from the catalog');
	eq(r.values['(title)'].revision, made);
	check(r.values.rating.revision > made && r.values.rating.confidence === 1, JSON.stringify(r.values.rating));
	eq(result(await client.callTool({ name: 'get', arguments: { kind: 'Supplier', key: `S-${tag}`, lineage: false } })), result(await client.callTool({ name: 'get', arguments: { kind: 'Supplier', key: `S-${tag}` } })), 'lineage false is the Record');
	result(await client.callTool({ name: 'branch', arguments: { name: `agent/${tag}` } }));
	result(await client.callTool({ name: 'remember', arguments: { kind: 'Part', key: `P2-${tag}`, text: 'Bolt 2', values: { sku: 'B2' }, branch: `agent/${tag}` } }));
	r = result(await client.callTool({ name: 'propose', arguments: { source: `agent/${tag}`, title: 'a second part', description: 'seen on the invoice' } }));
	eq(r.status, 'open');
	const p = result(await client.callTool({ name: 'proposal', arguments: { id: r.proposal } }));
	eq([p.proposal, p.status, p.source, p.target, p.title, p.notes], [r.proposal, 'open', `agent/${tag}`, 'main', 'a second part', []]);
	// Errors: told to the model as a tool result, or as a protocol error for a bad call.
	let e = await client.callTool({ name: 'get', arguments: { kind: 'Supplier', key: 'nope' } });
	eq(e.isError, true);
	check(e.content[0].text.startsWith('not_found'), e.content[0].text);
	e = await client.callTool({ name: 'get', arguments: { kind: 'Supplier' } });
	eq(e.isError, true);
	check(e.content[0].text.includes('"key" is required'));
	t = await refused(client, state, 'remember', { kind: 'Supplier', key: 'x', text: 'X', values: { rating: 'high' } });
	check(t.startsWith('type_mismatch'), t);
	for (const name of ['no_such_tool', 'lineage']) {
		let threw = false;
		try {
			await client.callTool({ name, arguments: { kind: 'Supplier', key: `S-${tag}` } });
		} catch (err) {
			threw = String(err).includes('no such tool');
		}
		check(threw, `${name} is not a tool: a protocol error`);
	}
	await client.ping();
}

await test('stdio: initialize, list tools, call each, read errors (SDK)', async () => {
	const transport = new StdioClientTransport({ command: CAIRN, args: ['mcp', '--store', S.store, '--domain', 'd', '--writes', '--actor', 'agent/stdio', '--no-sync', '--model', 'none'], stderr: 'pipe' });
	const client = await connect(transport);
	await tour(client, 'stdio');
	const r = result(await client.callTool({ name: 'get', arguments: { kind: 'Supplier', key: 'S-stdio' } }));
	eq(r.last_change.actor, 'agent/stdio');
	await client.close();
});

await test('stdio with a model: search is hybrid by default, with receipts and ranking', async () => {
	const model = `${S.dir}/mini.cemb`;
	execFileSync(CAIRN, ['model', 'convert', 'tests/data/glove-mini.json', model, '--id', 'glove-mini/1']);
	const transport = new StdioClientTransport({ command: CAIRN, args: ['mcp', '--store', S.store, '--domain', 'd', '--model', model], stderr: 'pipe' });
	const client = await connect(transport);
	let r = result(await client.callTool({ name: 'search', arguments: { text: 'bolts', kinds: ['Part'] } }));
	eq(r.mode, 'hybrid');
	check(r.hits.length > 0 && r.hits.every((h) => !('receipt' in h)), 'no receipts unless asked');
	r = result(await client.callTool({ name: 'search', arguments: { text: 'bolts', kinds: ['Part'], receipt: true } }));
	check(r.hits.length > 0 && r.hits.every((h) => h.receipt.fusion === 'rrf' && h.receipt.text.rank > 0), 'receipts');
	r = result(await client.callTool({ name: 'search', arguments: { text: 'bolts', kinds: ['Part'], receipt: true, rank: { confidence: true, trust: { nobody: 0.5 } } } }));
	check(r.hits.every((h) => typeof h.receipt.confidence === 'number'), 'the confidence of the last change');
	r = result(await client.callTool({ name: 'search', arguments: { text: 'bolts', kinds: ['Part'], explain: true } }));
	eq(r.mode, 'words', 'explain is by words');
	r = await client.callTool({ name: 'search', arguments: { text: 'bolts', mode: 'semantic' } });
	check(r.isError && r.content[0].text.includes('this Domain has no vectors') && r.content[0].text.includes('cairn reembed'), JSON.stringify(r));
	r = await client.callTool({ name: 'search', arguments: { text: 'bolts', mode: 'fuzzy' } });
	check(r.isError, 'an unknown mode');
	await client.close();
});

await test('stdio without --writes: read tools only, writes refused', async () => {
	const transport = new StdioClientTransport({ command: CAIRN, args: ['mcp', '--store', S.store, '--domain', 'd', '--model', 'none'], stderr: 'pipe' });
	const client = await connect(transport);
	eq((await client.listTools()).tools.map((t) => t.name).sort(), [...READ_TOOLS].sort());
	const before = state();
	for (const [name, args] of [['remember', { kind: 'Part', key: 'x', text: 'X' }], ['forget', { record: 'Part:P-stdio', how: 'delete' }], ['proposal', { id: 1, action: 'withdraw' }]]) {
		let threw = false;
		try {
			await client.callTool({ name, arguments: args });
		} catch (err) {
			threw = String(err).includes('no such tool');
		}
		check(threw, `${name} is not a tool of this session`);
	}
	eq(state(), before);
	await client.close();
});

await test('stdio with --branches: writes only there', async () => {
	const transport = new StdioClientTransport({ command: CAIRN, args: ['mcp', '--store', S.store, '--domain', 'd', '--writes', '--branches', 'agent/p7/*', '--model', 'none'], stderr: 'pipe' });
	const client = await connect(transport);
	let e = await client.callTool({ name: 'remember', arguments: { kind: 'Part', key: 'z', values: { sku: 'z' } } });
	eq(e.isError, true);
	check(e.content[0].text.includes('only to branches matching agent/p7/*') && e.content[0].text.includes('agent/p7/work'), e.content[0].text);
	check(client.getInstructions().includes('only to branches matching agent/p7/*'), client.getInstructions());
	result(await client.callTool({ name: 'branch', arguments: { name: 'agent/p7/work' } }));
	result(await client.callTool({ name: 'remember', arguments: { kind: 'Part', key: 'z', text: 'Zed', values: { sku: 'z' }, branch: 'agent/p7/work' } }));
	const { proposal } = result(await client.callTool({ name: 'propose', arguments: { source: 'agent/p7/work', title: 'Zed' } }));
	await client.close();
	// Another confined session neither reviews nor withdraws it; its own proposer may.
	const other = await connect(new StdioClientTransport({ command: CAIRN, args: ['mcp', '--store', S.store, '--domain', 'd', '--writes', '--branches', 'agent/q8/*', '--model', 'none'], stderr: 'pipe' }));
	const before = cli(S.store, 'proposal', 'show', String(proposal), '--domain', 'd');
	for (const action of ['note', 'withdraw']) {
		e = await other.callTool({ name: 'proposal', arguments: { id: proposal, action, text: 'approved' } });
		eq(e.isError, true, action);
		check(e.content[0].text.includes('agent/p7/work') && e.content[0].text.includes('agent/q8/*'), e.content[0].text);
	}
	eq(cli(S.store, 'proposal', 'show', String(proposal), '--domain', 'd'), before, 'the proposal as it was');
	await other.close();
	const again = await connect(new StdioClientTransport({ command: CAIRN, args: ['mcp', '--store', S.store, '--domain', 'd', '--writes', '--branches', 'agent/p7/*', '--model', 'none'], stderr: 'pipe' }));
	result(await again.callTool({ name: 'proposal', arguments: { id: proposal, action: 'withdraw' } }));
	await again.close();
});

const writer = cli(S.store, 'token', 'create', '--role', 'writer', '--domain', 'd', '--label', 'agent/http');
const reader = cli(S.store, 'token', 'create', '--role', 'reader', '--domain', 'd');
const patterned = cli(S.store, 'token', 'create', '--role', 'writer', '--domain', 'd', '--branches', 'agent/x/*');
const srv = await serve(S.store);
const http = (token) => new StreamableHTTPClientTransport(new URL(`${srv.base}/v1/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });

await test('streamable HTTP with a writer token: the same tour (SDK)', async () => {
	const client = await connect(http(writer));
	await tour(client, 'http');
	const r = result(await client.callTool({ name: 'get', arguments: { kind: 'Supplier', key: 'S-http' } }));
	eq(r.last_change.actor, 'agent/http');
	await client.close();
});

await test('remember from concurrent clients: every call succeeds, both values kept', async () => {
	const a = await connect(http(writer)), b = await connect(http(writer));
	result(await a.callTool({ name: 'remember', arguments: { kind: 'Supplier', key: 'race', text: 'Race' } }));
	const calls = [];
	for (let i = 0; i < 10; i++) {
		calls.push(a.callTool({ name: 'remember', arguments: { kind: 'Supplier', key: 'race', values: { country: `C${i}` }, replace: true } }));
		calls.push(b.callTool({ name: 'remember', arguments: { kind: 'Supplier', key: 'race', values: { rating: i }, replace: true } }));
	}
	for (const r of await Promise.all(calls)) result(r);
	const r = result(await a.callTool({ name: 'get', arguments: { kind: 'Supplier', key: 'race' } }));
	check('country' in r.values && 'rating' in r.values, JSON.stringify(r.values));
	eq(r.title, 'Race', 'the title stays');
	await a.close();
	await b.close();
});

await test('streamable HTTP with a reader token: read tools only', async () => {
	const client = await connect(http(reader));
	eq((await client.listTools()).tools.map((t) => t.name).sort(), [...READ_TOOLS].sort());
	const r = result(await client.callTool({ name: 'get', arguments: { kind: 'Supplier', key: 'S-http' } }));
	eq(r.title, 'Acme');
	await client.close();
});

await test('streamable HTTP: a token\'s branch pattern holds for tools', async () => {
	const client = await connect(http(patterned));
	const e = await client.callTool({ name: 'remember', arguments: { kind: 'Part', key: 'q', values: { sku: 'q' } } });
	eq(e.isError, true);
	check(e.content[0].text.includes('only to branches matching agent/x/*'), e.content[0].text);
	check(client.getInstructions().includes('only to branches matching agent/x/*'), client.getInstructions());
	await client.close();
});

await test('streamable HTTP: no token, a bad token, a foreign Origin are refused', async () => {
	let threw = 0;
	for (const t of [undefined, 'nope']) {
		try {
			const tr = new StreamableHTTPClientTransport(new URL(`${srv.base}/v1/mcp`), t ? { requestInit: { headers: { Authorization: `Bearer ${t}` } } } : {});
			await connect(tr);
		} catch {
			threw++;
		}
	}
	eq(threw, 2);
	const res = await fetch(`${srv.base}/v1/mcp`, { method: 'POST', headers: { Authorization: `Bearer ${reader}`, Origin: 'http://evil.example', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","id":1,"method":"ping"}' });
	eq(res.status, 403);
	const get = await fetch(`${srv.base}/v1/mcp`, { headers: { Authorization: `Bearer ${reader}` } });
	eq(get.status, 405);
	const note = await fetch(`${srv.base}/v1/mcp`, { method: 'POST', headers: { Authorization: `Bearer ${reader}`, 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","method":"notifications/initialized"}' });
	eq(note.status, 202);
	const bad = await fetch(`${srv.base}/v1/mcp`, { method: 'POST', headers: { Authorization: `Bearer ${reader}`, 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","id":1,' });
	eq((await bad.json()).error.code, -32700);
});

await closeAll();
eq(await stop(srv), 0);
S.cleanup();
done();
