// Tenant escapes: every route of the OpenAPI description and every MCP tool,
// tried with tokens of another Domain, of a lesser role and of another
// branch pattern, and with none. Nothing may be written, and no byte of the
// victim Domain's data may come back: its data carries marker strings that
// must never appear in an answer to those tokens.
import { test, done, check, eq, cli, scratch, schemaFile, serve, stop, call } from './lib.mjs';

const S = scratch();
const schema = {
	kinds: [{ name: 'Note', attributes: [{ name: 'text', type: 'string' }] }],
	relations: [{ name: 'cites', from: 'Note', to: 'Note' }],
};
const file = schemaFile(S.dir, schema);
cli(S.store, 'schema', 'apply', file, '--domain', 'victim');
cli(S.store, 'schema', 'apply', file, '--domain', 'thief');
const MARK = 'SECRET-7f3a9c';
const victimAdmin = cli(S.store, 'token', 'create', '--role', 'admin', '--domain', 'victim');
const tokens = {
	'thief reader': cli(S.store, 'token', 'create', '--role', 'reader', '--domain', 'thief'),
	'thief writer': cli(S.store, 'token', 'create', '--role', 'writer', '--domain', 'thief'),
	'thief admin': cli(S.store, 'token', 'create', '--role', 'admin', '--domain', 'thief'),
};
const victimReader = cli(S.store, 'token', 'create', '--role', 'reader', '--domain', 'victim');
const victimPattern = cli(S.store, 'token', 'create', '--role', 'writer', '--domain', 'victim', '--branches', 'agent/p7/*');

const srv = await serve(S.store);
const V = '/v1/domains/victim';
// The victim's data: marked Records, a Link, a branch, a proposal.
async function seed() {
	let r = await call(srv, 'POST', `${V}/commits`, { token: victimAdmin, body: { changes: [
		{ kind: 'Note', key: 'n1', title: `${MARK} title`, values: { text: `${MARK} one` } },
		{ kind: 'Note', key: 'n2', title: `${MARK} two`, values: { text: `${MARK} two` } },
		{ rel: 'cites', from: 'Note:n1', to: 'Note:n2', values: { why: MARK } },
	], message: `${MARK} message`, source: `${MARK} source` } });
	eq(r.status, 201);
	r = await call(srv, 'POST', `${V}/branches`, { token: victimAdmin, body: { name: 'agent/p7/b' } });
	r = await call(srv, 'POST', `${V}/commits`, { token: victimAdmin, body: { branch: 'agent/p7/b', changes: [{ kind: 'Note', key: 'n3', values: { text: `${MARK} three` } }] } });
	r = await call(srv, 'POST', `${V}/proposals`, { token: victimAdmin, body: { source: 'agent/p7/b', title: `${MARK} proposal` } });
	eq(r.status, 201);
	return r.body.id;
}
const pid = await seed();
const spec = (await call(srv, 'GET', '/v1/openapi.json')).body;
const exportBefore = (await call(srv, 'GET', `${V}/export`, { token: victimAdmin })).text;

// A concrete path, query and body for every operation, aimed at the victim.
const values = { domain: 'victim', kind: 'Note', key: 'n1', rel: 'cites', from: 'Note:n1', to: 'Note:n2', rev: '2', name: 'agent%2Fp7%2Fb', id: String(pid) };
function concrete(tpl) {
	return tpl.replace(/\{(\w+)\}/g, (_, p) => values[p]);
}
const bodies = {
	'POST /v1/domains': { name: 'victim2' },
	'PUT /v1/domains/{domain}/schema': { schema: { kinds: [{ name: 'Stolen' }] } },
	'POST /v1/domains/{domain}/commits': { changes: [{ kind: 'Note', key: 'n1', values: { text: 'overwritten' } }] },
	'POST /v1/domains/{domain}/branches': { name: 'agent/p7/x' },
	'PATCH /v1/domains/{domain}/branches/{name}': { name: 'stolen' },
	'POST /v1/domains/{domain}/merges': { from: 'agent/p7/b', resolve: 'theirs' },
	'POST /v1/domains/{domain}/proposals': { source: 'agent/p7/b', title: 'x' },
	'POST /v1/domains/{domain}/proposals/{id}/notes': { text: 'x' },
	'POST /v1/domains/{domain}/proposals/{id}/accept': {},
	'POST /v1/domains/{domain}/proposals/{id}/reject': {},
	'POST /v1/domains/{domain}/proposals/{id}/withdraw': {},
	'POST /v1/domains/{domain}/query': { kind: 'Note', where: { text: { prefix: 'SECRET' } } },
	'POST /v1/domains/{domain}/query/count': { kind: 'Note', group_by: 'text' },
	'POST /v1/domains/{domain}/neighborhood': { start: ['Note:n1'], depth: 2, values: true },
	'POST /v1/domains/{domain}/follow': { start: 'Note:n1', steps: [{ dir: 'both' }], values: true },
	'POST /v1/domains/{domain}/path': { from: 'Note:n1', to: 'Note:n1', values: true },
	'POST /v1/domains/{domain}/resolve': { text: 'n1', values: true },
	'POST /v1/domains/{domain}/search': { text: 'n1', values: true },
	'POST /v1/mcp': { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get', arguments: { kind: 'Note', key: 'n1' } } },
};
const queries = { 'GET /v1/domains/{domain}/diff': '?ours=main&theirs=agent%2Fp7%2Fb' };
const ops = [];
for (const [tpl, item] of Object.entries(spec.paths))
	for (const m of Object.keys(item)) if (m !== 'parameters') ops.push([m.toUpperCase(), tpl]);

function leaks(res) {
	return res.text.includes(MARK);
}

await test('the description lists the routes this suite tries (more than 30)', async () => {
	check(ops.length > 30, `${ops.length} operations`);
});

for (const [who, token] of Object.entries(tokens)) {
	await test(`every route with the ${who} token of another Domain: refused, nothing leaked`, async () => {
		for (const [m, tpl] of ops) {
			const key = `${m} ${tpl}`;
			if (['GET /v1/health', 'GET /v1/openapi.json'].includes(key)) continue;
			const path = concrete(tpl) + (queries[key] || '');
			const body = m === 'POST' || m === 'PUT' || m === 'PATCH' ? bodies[key] || {} : undefined;
			const raw = key.endsWith('/import') ? `{"kind":"Note","key":"evil","values":{"text":"x"}}\n` : undefined;
			const res = await call(srv, m, path, raw ? { token, raw } : { token, body });
			check(!leaks(res), `${key}: the answer holds the victim's data: ${res.text.slice(0, 200)}`);
			if (key === 'GET /v1/domains' || key === 'POST /v1/mcp') continue; /* answered for its own Domain */
			check([401, 403].includes(res.status), `${key}: ${res.status} ${res.text.slice(0, 120)}`);
		}
	});
}

await test('no token and bad tokens: 401 everywhere but health and the description', async () => {
	for (const [m, tpl] of ops) {
		const key = `${m} ${tpl}`;
		if (['GET /v1/health', 'GET /v1/openapi.json'].includes(key)) continue;
		for (const token of [undefined, 'cairn_1_AAAA', `${victimReader}x`]) {
			const res = await call(srv, m, concrete(tpl), { token, body: m === 'GET' || m === 'DELETE' ? undefined : bodies[key] || {} });
			eq(res.status, 401, `${key} with ${token}`);
			check(!leaks(res), key);
		}
	}
});

await test('a reader of the Domain cannot write anywhere', async () => {
	for (const [m, tpl] of ops) {
		if (m === 'GET' || tpl === '/v1/mcp' || /\/(query|neighborhood|follow|path|resolve|search|digest|recall)/.test(tpl)) continue; /* reads */
		const key = `${m} ${tpl}`;
		const res = await call(srv, m, concrete(tpl), { token: victimReader, body: bodies[key] || {} });
		eq(res.status, 403, `${key}: ${res.text.slice(0, 120)}`);
	}
});

await test('a writer limited to agent/p7/* cannot write main or other branches', async () => {
	const attempts = [
		['POST', `${V}/commits`, { changes: [{ kind: 'Note', key: 'n1', values: { text: 'x' } }] }],
		['POST', `${V}/commits`, { branch: 'other', changes: [{ kind: 'Note', key: 'n1', values: { text: 'x' } }] }],
		['POST', `${V}/branches`, { name: 'elsewhere' }],
		['PATCH', `${V}/branches/agent%2Fp7%2Fb`, { name: 'elsewhere' }],
		['DELETE', `${V}/branches/main`, undefined],
		['POST', `${V}/merges`, { from: 'agent/p7/b' }],
		['POST', `${V}/merges`, { from: 'agent/p7/b', into: 'main' }],
		['POST', `${V}/proposals/${pid}/accept`, {}],
		['POST', `${V}/proposals/${pid}/reject`, {}],
		['PUT', `${V}/schema`, { schema: { kinds: [] } }],
		['POST', `${V}/import`, undefined],
	];
	for (const [m, path, body] of attempts) {
		const res = await call(srv, m, path, path.endsWith('/import') ? { token: victimPattern, raw: '{"kind":"Note","key":"z"}\n' } : { token: victimPattern, body });
		eq(res.status, 403, `${m} ${path}: ${res.text.slice(0, 120)}`);
	}
});

await test('MCP tools with another Domain\'s token see that Domain only', async () => {
	for (const token of Object.values(tokens)) {
		for (const [name, args] of [['get', { kind: 'Note', key: 'n1' }], ['list', { kind: 'Note', values: true }], ['neighborhood', { kind: 'Note', key: 'n1' }],
			['history', { kind: 'Note', key: 'n1' }], ['lineage', { kind: 'Note', key: 'n1' }], ['describe', {}],
			['remember', { kind: 'Note', key: 'n1', values: { text: 'x' } }], ['link', { rel: 'cites', from: 'Note:n1', to: 'Note:n2' }],
			['branch', { name: 'agent/p7/y' }], ['propose', { source: 'agent/p7/b', title: 'x' }]]) {
			for (const q of ['', '?domain=victim']) {
				const res = await call(srv, 'POST', `/v1/mcp${q}`, { token, body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } } });
				check(!leaks(res), `${name}: ${res.text.slice(0, 160)}`);
			}
		}
	}
});

await test('the victim\'s data is as it was', async () => {
	const after = (await call(srv, 'GET', `${V}/export`, { token: victimAdmin })).text;
	eq(after, exportBefore);
	const p = await call(srv, 'GET', `${V}/proposals/${pid}`, { token: victimAdmin });
	eq(p.body.status, 'open');
	const b = await call(srv, 'GET', `${V}/branches`, { token: victimAdmin });
	eq(b.body.items.map((x) => x.name).sort(), ['agent/p7/b', 'main']);
	const d = await call(srv, 'GET', '/v1/domains', { token: victimAdmin });
	eq(d.body.items.map((x) => x.name), ['victim']);
});

eq(await stop(srv), 0);
cli(S.store, 'check', '--domain', 'victim');
S.cleanup();
done();
