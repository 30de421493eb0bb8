// U+0000 in names over HTTP: a JSON body's "\u0000", a path segment's or a
// query argument's %00. Every name the server hands on is a C string, which
// U+0000 would cut ("m-0003\u0000evil" would be m-0003), so each is refused
// (400, naming what held it) and the store is left as it was. Run as
//   CAIRN=/abs/path/to/cairn node tests/server/test_nul.mjs
import { test, done, check, eq, cli, scratch, schemaFile, serve, stop, call } from './lib.mjs';

const S = scratch();
cli(S.store, 'schema', 'apply', schemaFile(S.dir, {
	kinds: [
		{ name: 'Person', attributes: [{ name: 'age', type: 'int' }, { name: 'status', type: 'string' }] },
		{ name: 'Team' },
	],
	relations: [{ name: 'member_of', from: 'Person', to: 'Team' }],
}), '--domain', 'd');
cli(S.store, 'domain', 'create', 'e');
const admin = cli(S.store, 'token', 'create', '--role', 'admin', '--domain', '*');
const writer = cli(S.store, 'token', 'create', '--role', 'writer', '--domain', 'd', '--label', 'w');
const srv = await serve(S.store);
const D = '/v1/domains/d';

let r = await call(srv, 'POST', `${D}/commits`, { token: writer, body: { changes: [
	{ kind: 'Person', key: 'm-0003', title: 'Ann', values: { age: 41, status: 'open' } },
	{ kind: 'Team', key: 't1' },
	{ rel: 'member_of', from: 'Person:m-0003', to: 'Team:t1' },
] } });
eq(r.status, 201, r.text);
r = await call(srv, 'POST', `${D}/branches`, { token: writer, body: { name: 'agent/x' } });
eq(r.status, 201, r.text);

// Everything a refusal must leave as it was: the Records and Links, the branches, the Domains, the schema.
async function state() {
	const parts = [];
	for (const [dom, path] of [['d', 'export'], ['d', 'branches'], ['d', 'schema'], ['e', 'export']])
		parts.push((await call(srv, 'GET', `/v1/domains/${dom}/${path}`, { token: admin })).text);
	parts.push((await call(srv, 'GET', '/v1/domains', { token: admin })).text);
	return parts.join('\n');
}
const before = await state();

// A refusal: the status, the error code, the words naming what held U+0000; nothing changed.
async function refused(res, what, { status = 400, code = 'invalid_argument' } = {}) {
	eq(res.status, status, `${what}: ${res.text}`);
	eq(res.body.error.code, code, what);
	check(res.body.error.message.includes(`${what} may not contain U+0000`), `"${res.body.error.message}" names ${what}`);
	eq(await state(), before, 'the store is unchanged');
}

await test('a commit: a key, a Kind, an attribute, a Link end, an op, the branch and provenance', async () => {
	const commit = (body) => call(srv, 'POST', `${D}/commits`, { token: writer, body });
	await refused(await commit({ changes: [{ kind: 'Person', key: 'm-0003\u0000evil', values: { age: 1 } }] }), 'the key', { code: 'invalid_utf8' });
	await refused(await commit({ changes: [{ kind: 'Person\u0000x', key: 'm-0003', values: { age: 1 } }] }), 'the Kind name');
	await refused(await commit({ changes: [{ kind: 'Person', key: 'm-0003', values: { 'age\u0000x': 1 } }] }), 'an attribute name');
	await refused(await commit({ changes: [{ kind: 'Person', key: 'm-0003', op: 'delete\u0000x', cascade: true }] }), '"op"');
	await refused(await commit({ changes: [{ rel: 'member_of', from: 'Person\u0000:m-0003', to: 'Team:t1', op: 'unlink' }] }), 'the Kind name');
	await refused(await commit({ changes: [{ rel: 'member_of\u0000', from: 'Person:m-0003', to: 'Team:t1', op: 'unlink' }] }), 'the Relation name');
	for (const m of ['branch', 'actor', 'source', 'message', 'trace_id', 'vector_model'])
		await refused(await commit({ changes: [{ kind: 'Person', key: 'n1' }], [m]: `agent/x\u0000y` }), `"${m}"`);
});

await test('path segments with %00: refused naming the segment; a literal never matches', async () => {
	const get = (path, token = writer) => call(srv, 'GET', path, { token });
	await refused(await get(`${D}/records/Person/m-0003%00evil`), 'the path segment key');
	await refused(await get(`${D}/records/Person%00x/m-0003`), 'the path segment kind');
	await refused(await get(`${D}/records/Person/m-0003%00/history`), 'the path segment key');
	await refused(await get(`/v1/domains/d%00x/records/Person`, admin), 'the path segment domain');
	await refused(await get(`${D}/links/member_of%00/Person:m-0003/Team:t1/history`), 'the path segment rel');
	await refused(await call(srv, 'DELETE', '/v1/domains/e%00x', { token: admin }), 'the path segment domain');
	await refused(await call(srv, 'DELETE', `${D}/branches/agent%2Fx%00y`, { token: writer }), 'the path segment branch');
	await refused(await call(srv, 'PATCH', `${D}/branches/agent%2Fx%00y`, { token: writer, body: { name: 'agent/z' } }), 'the path segment branch');
	await refused(await call(srv, 'POST', '/v1/domains/d%00x/import', { token: admin, raw: '{"kind":"Person","key":"i1"}\n' }), 'the path segment domain');
	// "v1%00" is not v1, "records%00" not records: no route.
	eq((await get('/v1%00/health')).status, 404);
	eq((await get(`${D}/records%00/Person/m-0003`)).status, 404);
	eq(await state(), before);
});

await test('query arguments with %00: refused naming the argument', async () => {
	await refused(await call(srv, 'GET', `${D}/records/Person?after=m%00x`, { token: writer }), 'the query argument after');
	await refused(await call(srv, 'GET', `${D}/records/Person/m-0003?branch=agent%2Fx%00y`, { token: writer }), 'the query argument branch');
	await refused(await call(srv, 'POST', `${D}/commits?branch=agent%2Fx%00y`, { token: writer, body: { changes: [{ kind: 'Person', key: 'q1' }] } }), 'the query argument branch');
	await refused(await call(srv, 'POST', `${D}/import?branch=agent%2Fx%00y`, { token: writer, raw: '{"kind":"Person","key":"i1"}\n' }), 'the query argument branch');
	await refused(await call(srv, 'GET', `${D}/records/Person?a%00b=1`, { token: writer }), "a query argument's name");
	// A bad escape is still told as one.
	r = await call(srv, 'GET', `${D}/records/Person?after=%zz`, { token: writer });
	eq([r.status, r.body.error.code], [400, 'bad_request']);
});

await test('branches, merges and proposals: names and resolutions', async () => {
	await refused(await call(srv, 'POST', `${D}/branches`, { token: writer, body: { name: 'agent/nul/b\u0000zz' } }), '"name"');
	await refused(await call(srv, 'POST', `${D}/branches`, { token: writer, body: { name: 'agent/nul/c', from: 'agent/x\u0000' } }), '"from"');
	await refused(await call(srv, 'PATCH', `${D}/branches/agent%2Fx`, { token: writer, body: { name: 'agent/y\u0000' } }), '"name"');
	await refused(await call(srv, 'POST', `${D}/merges`, { token: writer, body: { from: 'agent/x\u0000' } }), '"from"');
	await refused(await call(srv, 'POST', `${D}/merges`, { token: writer, body: { from: 'agent/x', resolutions: [{ kind: 'Person\u0000', key: 'm-0003', attribute: 'age', take: 'ours' }] } }), '"kind"');
	for (const m of ['source', 'target', 'title', 'description', 'author'])
		await refused(await call(srv, 'POST', `${D}/proposals`, { token: writer, body: { source: 'agent/x', title: 'a title', [m]: `agent/x\u0000y` } }), `"${m}"`);
	r = await call(srv, 'GET', `${D}/branches`, { token: writer });
	check(!r.text.includes('agent/nul'), 'no branch agent/nul/b');
});

await test('reads: names in queries, graph walks and searches', async () => {
	const post = (path, body) => call(srv, 'POST', `${D}/${path}`, { token: writer, body });
	await refused(await post('query', { kind: 'Person\u0000x' }), '"kind"');
	await refused(await post('query', { kind: 'Person', sort: 'age\u0000' }), '"sort"');
	await refused(await post('query', { kind: 'Person', after: 'm\u0000' }), '"after"');
	await refused(await post('query', { kind: 'Person', fields: ['age', 'status\u0000'] }), 'fields[1]');
	await refused(await post('query', { kind: 'Person', where: { 'status\u0000x': 'open' } }), 'an attribute name', { code: 'invalid_query' });
	await refused(await post('query/count', { kind: 'Person', group_by: 'status\u0000' }), '"group_by"');
	await refused(await post('neighborhood', { start: ['Person\u0000x:m-0003'] }), 'start[0]');
	await refused(await post('neighborhood', { start: ['Person:m-0003'], hops: [{ rels: ['member_of\u0000'] }] }), 'hops[0].rels[0]');
	await refused(await post('path', { from: 'Person:m-0003', to: 'Team:t1\u0000' }), 'to');
	await refused(await post('follow', { start: 'Person:m-0003', steps: [{ kinds: ['Team\u0000'] }] }), 'steps[0].kinds[0]');
	await refused(await post('search', { text: 'ann', kinds: ['Person\u0000'] }), 'search.kinds[0]');
	await refused(await post('search', { near: { kind: 'Person\u0000', key: 'm-0003' } }), 'near.kind');
	await refused(await post('resolve', { text: 'ann', kinds: ['Person\u0000'] }), 'resolve.kinds[0]');
	// The same reads without U+0000 answer: the refusals were for it alone.
	r = await post('query', { kind: 'Person', where: { status: 'open' }, fields: ['age'] });
	eq([r.status, r.body.items.map((x) => x.key)], [200, ['m-0003']]);
});

await test('a schema with U+0000 in a name is refused as a schema error', async () => {
	await refused(await call(srv, 'PUT', `${D}/schema`, { token: admin, body: { schema: { kinds: [{ name: 'Person\u0000x' }] } } }), 'a name', { status: 422, code: 'invalid_schema' });
	await refused(await call(srv, 'POST', '/v1/domains', { token: admin, body: { name: 'e\u0000x' } }), '"name"');
});

await test('titles and string values keep their U+0000', async () => {
	r = await call(srv, 'POST', `${D}/commits`, { token: writer, body: { changes: [{ kind: 'Person', key: 'z1', title: 'a\u0000b', values: { status: 'x\u0000y' } }] } });
	eq(r.status, 201, r.text);
	r = await call(srv, 'GET', `${D}/records/Person/z1`, { token: writer });
	eq([r.body.title, r.body.values.status], ['a\u0000b', 'x\u0000y']);
});

eq(await stop(srv), 0);
cli(S.store, 'check', '--domain', 'd');
S.cleanup();
done();
