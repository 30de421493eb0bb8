// API tests: every route, its success and its errors, each response checked
// against the OpenAPI description the server serves. Run as
//   CAIRN=/abs/path/to/cairn node tests/server/test_api.mjs
import { test, done, check, eq, cli, cliNoStore, scratch, schemaFile, serve, stop, call } from './lib.mjs';
import { Spec } from './openapi.mjs';

const S = scratch();
const schema = {
	kinds: [
		{ name: 'Supplier', attributes: [{ name: 'vat', type: 'string', unique: true }, { name: 'rating', type: 'int' }] },
		{ name: 'Part', attributes: [{ name: 'sku', type: 'string', required: true }] },
	],
	relations: [{ name: 'supplied_by', from: 'Part', to: 'Supplier' }],
};
cli(S.store, 'schema', 'apply', schemaFile(S.dir, schema), '--domain', 'acme');
cli(S.store, 'domain', 'create', 'other');
const admin = cli(S.store, 'token', 'create', '--role', 'admin', '--domain', '*', '--label', 'root');
const owner = cli(S.store, 'token', 'create', '--role', 'admin', '--domain', 'acme', '--label', 'owner');
const writer = cli(S.store, 'token', 'create', '--role', 'writer', '--domain', 'acme', '--label', 'writer');
const agent = cli(S.store, 'token', 'create', '--role', 'writer', '--domain', 'acme', '--branches', 'agent/p7/*', '--label', 'agent/p7');
const reader = cli(S.store, 'token', 'create', '--role', 'reader', '--domain', 'acme', '--label', 'reader');
const other = cli(S.store, 'token', 'create', '--role', 'writer', '--domain', 'acme', '--branches', 'agent/q8/*', '--label', 'agent/q8');
const outsider = cli(S.store, 'token', 'create', '--role', 'admin', '--domain', 'other', '--label', 'outsider');
const revoked = cli(S.store, 'token', 'create', '--role', 'reader', '--domain', 'acme');
cli(S.store, 'token', 'revoke', revoked.split('_')[1]);

const srv = await serve(S.store);
let spec;
// A checked call: the response must match the description.
async function c(method, path, opts) {
	const res = await call(srv, method, path, opts);
	spec.check(method, path, res);
	return res;
}
const D = '/v1/domains/acme';

await test('health and openapi need no token', async () => {
	const h = await call(srv, 'GET', '/v1/health');
	eq(h.status, 200);
	eq(h.body.status, 'ok');
	const o = await call(srv, 'GET', '/v1/openapi.json');
	eq(o.status, 200);
	check(o.body.openapi.startsWith('3.'), 'an OpenAPI 3 document');
	spec = new Spec(o.body);
	spec.check('GET', '/v1/health', h);
	spec.check('GET', '/v1/openapi.json', o);
});

await test('no token, a bad token, a revoked token: 401', async () => {
	for (const token of [undefined, 'nope', 'cairn_1_x', revoked]) {
		const r = await c('GET', '/v1/domains', { token });
		eq(r.status, 401, `token ${token}`);
		eq(r.body.error.code, 'unauthorized');
	}
	const r = await call(srv, 'GET', '/v1/domains', { headers: { Authorization: 'Basic abc' } });
	eq(r.status, 401);
});

await test('domains: list by token, create and drop by the admin of every Domain', async () => {
	let r = await c('GET', '/v1/domains', { token: admin });
	eq(r.body.items.map((d) => d.name).sort(), ['acme', 'other']);
	r = await c('GET', '/v1/domains', { token: reader });
	eq(r.body.items.map((d) => d.name), ['acme'], 'a Domain token sees its own only');
	check(r.body.items[0].revision >= 1 && r.body.items[0].horizon === 0, 'its revision and horizon');
	r = await c('POST', '/v1/domains', { token: owner, body: { name: 'x' } });
	eq(r.status, 403);
	r = await c('POST', '/v1/domains', { token: admin, body: { name: 'tmp' } });
	eq(r.status, 201);
	r = await c('POST', '/v1/domains', { token: admin, body: { name: 'tmp' } });
	eq(r.status, 409);
	eq(r.body.error.code, 'already_exists');
	r = await c('POST', '/v1/domains', { token: admin, body: { name: 'bad name' } });
	eq(r.status, 400);
	r = await c('POST', '/v1/domains', { token: admin, body: { nom: 'x' } });
	eq(r.status, 400);
	r = await c('DELETE', '/v1/domains/tmp', { token: admin });
	eq(r.status, 200);
	r = await c('DELETE', '/v1/domains/tmp', { token: admin });
	eq(r.status, 404);
	eq(r.body.error.code, 'domain_not_found');
});

await test('schema: read by readers, changed by admins, refused changes explained', async () => {
	let r = await c('GET', `${D}/schema`, { token: reader });
	eq(r.status, 200);
	eq(r.body.kinds.map((k) => k.name), ['Supplier', 'Part']);
	r = await c('PUT', `${D}/schema`, { token: writer, body: { schema: { kinds: [{ name: 'Plant' }] } } });
	eq(r.status, 403);
	r = await c('PUT', `${D}/schema`, { token: owner, body: { schema: { kinds: [{ name: 'Plant', attributes: [{ name: 'city', type: 'string' }] }] }, message: 'plants' } });
	eq(r.status, 200);
	check(r.body.revision > 1);
	r = await c('PUT', `${D}/schema`, { token: owner, body: { schema: { kinds: [{ name: 'Plant', colour: 'red' }] } } });
	eq(r.status, 422);
	eq(r.body.error.code, 'invalid_schema');
	r = await c('PUT', `${D}/schema`, { token: owner, body: { kinds: [] } });
	eq(r.status, 400);
});

let rev1;
await test('commits: durable, validated, atomic; errors name the change', async () => {
	let r = await c('POST', `${D}/commits`, {
		token: writer,
		body: {
			changes: [
				{ kind: 'Supplier', key: 'S1', title: 'Acme', values: { vat: 'V1', rating: 3 } },
				{ kind: 'Part', key: 'P1', values: { sku: 'A' } },
				{ rel: 'supplied_by', from: 'Part:P1', to: 'Supplier:S1', values: { share: 1 } },
			],
			actor: 'alice', source: 'https://example.com', confidence: 0.9, message: 'first', trace_id: 't-1',
		},
	});
	eq(r.status, 201);
	eq(r.body.changes, 3);
	eq(r.headers.get('x-cairn-revision'), String(r.body.revision));
	rev1 = r.body.revision;
	eq(r.body.unchanged, 0);
	// The same again: nothing written, 200, the head's revision and hash, and it says so.
	const first = r.body;
	r = await c('POST', `${D}/commits`, { token: writer, body: { changes: [
		{ kind: 'Supplier', key: 'S1', title: 'Acme', values: { rating: 3, vat: 'V1' } },
		{ kind: 'Part', key: 'P1', op: 'patch', values: { sku: 'A' } },
		{ rel: 'supplied_by', from: 'Part:P1', to: 'Supplier:S1', values: { share: 1 } }] } });
	eq([r.status, r.body.revision, r.body.hash, r.body.changes, r.body.unchanged], [200, rev1, first.hash, 0, 3]);
	const before = await call(srv, 'GET', `${D}/export`, { token: reader });
	r = await c('POST', `${D}/commits`, { token: writer, body: { changes: [{ kind: 'Part', key: 'P2', values: { sku: 'B' } }, { kind: 'Part', key: 'P3', values: {} }] } });
	eq(r.status, 422);
	eq(r.body.error.code, 'required_missing');
	eq(r.body.error.change, 1);
	r = await c('POST', `${D}/commits`, { token: writer, body: { changes: [{ kind: 'Supplier', key: 'S2', values: { vat: 'V1' } }] } });
	eq(r.status, 409);
	eq(r.body.error.code, 'unique_violation');
	r = await c('POST', `${D}/commits`, { token: writer, body: { changes: [{ kind: 'Nope', key: 'x' }] } });
	eq(r.status, 422);
	eq(r.body.error.code, 'unknown_kind');
	r = await c('POST', `${D}/commits`, { token: writer, body: { changes: [{ kind: 'Part', key: 'P4', values: { sku: 1 } }] } });
	eq(r.body.error.code, 'type_mismatch');
	r = await c('POST', `${D}/commits`, { token: writer, body: { changes: [{ kind: 'Part', key: 'P4', values: { sku: 'x' } }], expect_revision: 1 } });
	eq(r.status, 409);
	eq(r.body.error.code, 'revision_conflict');
	r = await c('POST', `${D}/commits`, { token: writer, body: { changes: [] } });
	eq(r.status, 400);
	r = await c('POST', `${D}/commits`, { token: writer, body: { changes: [{ kind: 'Part', key: 'P4', values: { sku: 'x' } }], colour: 1 } });
	eq(r.status, 400);
	eq(r.body.error.code, 'invalid_argument');
	r = await c('POST', `${D}/commits`, { token: writer, body: { changes: [{ kind: 'Part', key: 'P4', values: { sku: 'x' } }], confidence: 2 } });
	eq(r.status, 400);
	r = await c('POST', `${D}/commits`, { token: reader, body: { changes: [{ kind: 'Part', key: 'P4', values: { sku: 'x' } }] } });
	eq(r.status, 403);
	r = await c('POST', `${D}/commits`, { token: writer, body: { branch: 'nope', changes: [{ kind: 'Part', key: 'P4', values: { sku: 'x' } }] } });
	eq(r.status, 404);
	eq(r.body.error.code, 'branch_not_found');
	const after = await call(srv, 'GET', `${D}/export`, { token: reader });
	eq(after.text, before.text, 'refused commits left the store unchanged');
});

await test('reads: get with provenance, pages, Links, counts, ETag and revision headers', async () => {
	let r = await c('GET', `${D}/records/Supplier/S1`, { token: reader });
	eq(r.status, 200);
	eq(r.body.values, { rating: 3, vat: 'V1' });
	eq(r.body.provenance.actor, 'alice');
	eq(r.body.provenance.trace_id, 't-1');
	check(r.headers.get('etag').startsWith('"r'));
	r = await c('GET', `${D}/records/Supplier/nope`, { token: reader });
	eq(r.status, 404);
	eq(r.body.error.code, 'not_found');
	r = await c('GET', `${D}/records/Nope/x`, { token: reader });
	eq(r.status, 422);
	r = await c('GET', `${D}/records/Part?limit=1`, { token: reader });
	eq(r.body.items.length, 1);
	eq(r.body.next, 'P1');
	r = await c('GET', `${D}/records/Part?after=P1`, { token: reader });
	eq(r.body.items, []);
	eq(r.body.next, null);
	r = await c('GET', `${D}/records/Part?limit=0`, { token: reader });
	eq(r.status, 400);
	r = await c('GET', `${D}/records/Part/P1/links?dir=out`, { token: reader });
	eq(r.body.items.length, 1);
	eq(r.body.items[0], { rel: 'supplied_by', from: 'Part:P1', to: 'Supplier:S1', values: { share: 1 }, revision: rev1, source: 'https://example.com', confidence: 0.9 }, 'a Link with the source and confidence of its change');
	r = await c('POST', `${D}/neighborhood`, { token: reader, body: { start: ['Part:P1'] } });
	eq([r.body.links[0].source, r.body.links[0].confidence], ['https://example.com', 0.9]);
	r = await c('GET', `${D}/records/Part/P1/links?dir=sideways`, { token: reader });
	eq(r.status, 400);
	r = await c('GET', `${D}/records/Part/P1/links?cursor=zz`, { token: reader });
	eq(r.status, 400);
	r = await c('GET', `${D}/counts`, { token: reader });
	eq(r.body.counts.Supplier, 1);
	eq(r.body.counts.Part, 1);
	r = await c('GET', `${D}/revisions?limit=2`, { token: reader });
	eq(r.body.items.length, 2);
	check(r.body.next !== null);
	r = await c('GET', `${D}/revisions/${rev1}`, { token: reader });
	eq(r.body.message, 'first');
	r = await c('GET', `${D}/revisions/99999`, { token: reader });
	eq(r.status, 404);
	r = await c('GET', `${D}/revisions/${rev1}/changes`, { token: reader });
	eq(r.body.items.length, 3);
});

await test('time travel: ?at= a revision or a time', async () => {
	let r = await c('POST', `${D}/commits`, { token: writer, body: { changes: [{ kind: 'Supplier', key: 'S1', op: 'patch', values: { rating: 5 } }] } });
	eq(r.status, 201);
	r = await c('GET', `${D}/records/Supplier/S1?at=${rev1}`, { token: reader });
	eq(r.body.values.rating, 3);
	eq(r.headers.get('x-cairn-revision'), String(rev1));
	r = await c('GET', `${D}/records/Supplier/S1`, { token: reader });
	eq(r.body.values.rating, 5);
	r = await c('GET', `${D}/records/Supplier/S1?at=2001-01-01T00:00:00Z`, { token: reader });
	eq(r.status, 404);
	r = await c('GET', `${D}/records/Supplier/S1?at=yesterday`, { token: reader });
	eq(r.status, 400);
	r = await c('GET', `${D}/records/Supplier/S1?at=999999`, { token: reader });
	eq(r.status, 404);
});

await test('history and lineage of Records and Links', async () => {
	let r = await c('GET', `${D}/records/Supplier/S1/history`, { token: reader });
	eq(r.body.items.map((e) => e.change), ['updated', 'created']);
	eq(r.body.items[0].diff.rating, { before: 3, after: 5 });
	r = await c('GET', `${D}/records/Supplier/S1/history?limit=1`, { token: reader });
	eq(r.body.items.length, 1);
	check(r.body.next, 'a cursor');
	r = await c('GET', `${D}/records/Supplier/S1/history?limit=1&cursor=${r.body.next}`, { token: reader });
	eq(r.body.items[0].change, 'created');
	eq(r.body.next, null);
	r = await c('GET', `${D}/records/Supplier/S1/lineage`, { token: reader });
	const vat = r.body.values.find((v) => v.attribute === 'vat');
	eq(vat.provenance.actor, 'alice');
	r = await c('GET', `${D}/links/supplied_by/Part:P1/Supplier:S1/history`, { token: reader });
	eq(r.body.items.length, 1);
	r = await c('GET', `${D}/links/supplied_by/Part:P1/Supplier:S1/lineage`, { token: reader });
	eq(r.body.values[0].attribute, '(values)');
	r = await c('GET', `${D}/links/supplied_by/P1/Supplier:S1/lineage`, { token: reader });
	eq(r.status, 400);
	r = await c('GET', `${D}/links/supplied_by/Part:P9/Supplier:S1/history`, { token: reader });
	eq(r.status, 404);
});

await test('branches: a slash in a name travels percent-encoded; patterns limit writers', async () => {
	let r = await c('POST', `${D}/branches`, { token: agent, body: { name: 'agent/p7/try' } });
	eq(r.status, 201);
	r = await c('POST', `${D}/branches`, { token: agent, body: { name: 'elsewhere' } });
	eq(r.status, 403);
	r = await c('POST', `${D}/branches`, { token: agent, body: { name: 'agent/p7/try' } });
	eq(r.status, 409);
	r = await c('POST', `${D}/commits`, { token: agent, body: { branch: 'agent/p7/try', changes: [{ kind: 'Supplier', key: 'S1', op: 'patch', values: { rating: 4 } }, { kind: 'Part', key: 'P5', values: { sku: 'E' } }] } });
	eq(r.status, 201);
	r = await c('POST', `${D}/commits`, { token: agent, body: { changes: [{ kind: 'Part', key: 'P6', values: { sku: 'F' } }] } });
	eq(r.status, 403, 'main is not in the pattern');
	r = await c('GET', `${D}/records/Part/P5?branch=agent%2Fp7%2Ftry`, { token: reader });
	eq(r.status, 200);
	r = await c('GET', `${D}/records/Part/P5`, { token: reader });
	eq(r.status, 404, 'not on main');
	r = await c('GET', `${D}/branches`, { token: reader });
	check(r.body.items.some((b) => b.name === 'agent/p7/try' && b.parent === 'main'));
	r = await c('POST', `${D}/branches`, { token: writer, body: { name: 'scratch' } });
	r = await c('PATCH', `${D}/branches/scratch`, { token: writer, body: { name: 'scratch2' } });
	eq(r.status, 200);
	r = await c('PATCH', `${D}/branches/nope`, { token: writer, body: { name: 'x' } });
	eq(r.status, 404);
	r = await c('DELETE', `${D}/branches/scratch2`, { token: writer });
	eq(r.status, 200);
	r = await c('DELETE', `${D}/branches/main`, { token: writer });
	eq(r.status, 400);
	r = await c('DELETE', `${D}/branches/scratch2`, { token: writer });
	eq(r.status, 404);
});

await test('diff and merge: conflicts reported in full, resolved, merged once', async () => {
	let r = await c('POST', `${D}/commits`, { token: writer, body: { changes: [{ kind: 'Supplier', key: 'S1', op: 'patch', values: { rating: 1 } }] } });
	const head = r.body.revision;
	r = await c('GET', `${D}/diff?ours=main&theirs=agent%2Fp7%2Ftry`, { token: reader });
	eq(r.status, 200);
	const s1 = r.body.items.find((i) => i.key === 'S1');
	eq(s1.conflicts, 1);
	eq(s1.diff.rating.conflict, true);
	r = await c('GET', `${D}/diff?branch=main&from=${rev1}&to=${head}`, { token: reader });
	eq(r.status, 200);
	check(r.body.items.length >= 1);
	r = await c('GET', `${D}/diff`, { token: reader });
	eq(r.status, 400);
	r = await c('POST', `${D}/merges`, { token: writer, body: { from: 'agent/p7/try' } });
	eq(r.status, 409);
	eq(r.body.unresolved, 1);
	eq(r.body.error.code, 'merge_conflict');
	r = await c('POST', `${D}/merges`, { token: writer, body: { from: 'agent/p7/try', dry_run: true, resolve: 'theirs' } });
	eq(r.status, 200);
	eq(r.body.revision, 0);
	r = await c('POST', `${D}/merges`, { token: agent, body: { from: 'agent/p7/try' } });
	eq(r.status, 403, 'the agent may not write main');
	r = await c('POST', `${D}/merges`, { token: writer, body: { from: 'agent/p7/try', resolutions: [{ kind: 'Supplier', key: 'S1', attribute: 'rating', value: 2 }], message: 'merge' } });
	eq(r.status, 201);
	check(r.body.revision > head);
	r = await c('GET', `${D}/records/Supplier/S1`, { token: reader });
	eq(r.body.values.rating, 2);
	r = await c('POST', `${D}/merges`, { token: writer, body: { from: 'agent/p7/try' } });
	eq(r.status, 200);
	eq(r.body.revision, 0);
	r = await c('POST', `${D}/merges`, { token: writer, body: { from: 'agent/p7/try', resolve: 'sideways' } });
	eq(r.status, 400);
	r = await c('POST', `${D}/merges`, { token: writer, body: { from: 'agent/p7/try', resolutions: [{ kind: 'Supplier', key: 'S1', attribute: 'ratin', take: 'ours' }] } });
	eq(r.status, 422);
	r = await c('POST', `${D}/merges`, { token: writer, body: {} });
	eq(r.status, 400);
	r = await c('POST', `${D}/merges`, { token: writer, body: { from: 'agent/p7/try', expect_revision: 1 } });
	eq(r.status, 409);
	eq(r.body.error.code, 'revision_conflict');
});

await test('proposals: propose from a branch, note, diff, accept; reject, withdraw', async () => {
	let r = await c('POST', `${D}/branches`, { token: agent, body: { name: 'agent/p7/idea' } });
	r = await c('POST', `${D}/commits`, { token: agent, body: { branch: 'agent/p7/idea', changes: [{ kind: 'Part', key: 'P7', values: { sku: 'G' } }] } });
	r = await c('POST', `${D}/proposals`, { token: agent, body: { source: 'agent/p7/idea', title: 'Add P7', description: 'found it' } });
	eq(r.status, 201);
	const id = r.body.id;
	r = await c('POST', `${D}/proposals`, { token: agent, body: { source: 'elsewhere' } });
	eq(r.status, 403);
	r = await c('POST', `${D}/proposals/${id}/notes`, { token: writer, body: { text: 'looks right', verdict: 'approve' } });
	eq(r.status, 201);
	r = await c('POST', `${D}/proposals/${id}/notes`, { token: reader, body: { text: 'x' } });
	eq(r.status, 403);
	// Another confined agent neither reviews nor withdraws agent/p7's proposal, and no one signs as another.
	const proposalBefore = (await c('GET', `${D}/proposals/${id}`, { token: reader })).text;
	r = await c('POST', `${D}/proposals/${id}/notes`, { token: other, body: { text: 'approved', verdict: 'approve' } });
	eq([r.status, r.body.error.code], [403, 'forbidden'], r.text);
	check(r.body.error.message.includes('agent/p7/idea') && r.body.error.message.includes('agent/q8/*'), r.body.error.message);
	r = await c('POST', `${D}/proposals/${id}/withdraw`, { token: other });
	eq([r.status, r.body.error.code], [403, 'forbidden'], r.text);
	r = await c('POST', `${D}/proposals/${id}/notes`, { token: writer, body: { text: 'ok', author: 'agent/p7' } });
	eq([r.status, r.body.error.code], [403, 'forbidden'], r.text);
	check(r.body.error.message.includes('"writer"'), r.body.error.message);
	r = await c('POST', `${D}/proposals/${id}/withdraw`, { token: agent, body: { author: 'writer' } });
	eq(r.status, 403, r.text);
	r = await c('POST', `${D}/proposals`, { token: agent, body: { source: 'agent/p7/idea', author: 'writer' } });
	eq(r.status, 403, r.text);
	eq((await c('GET', `${D}/proposals/${id}`, { token: reader })).text, proposalBefore, 'the refusals changed nothing');
	// Its own name is its signature, said or not.
	r = await c('POST', `${D}/proposals/${id}/notes`, { token: agent, body: { text: 'the proposer adds', author: 'agent/p7' } });
	eq(r.status, 201, r.text);
	r = await c('GET', `${D}/proposals/${id}`, { token: reader });
	eq(r.body.status, 'open');
	eq(r.body.author, 'agent/p7');
	eq(r.body.notes.map((n) => [n.author, n.verdict || null]), [['writer', 'approve'], ['agent/p7', null]]);
	r = await c('GET', `${D}/proposals/${id}/diff`, { token: reader });
	eq(r.body.items.length, 1);
	r = await c('POST', `${D}/proposals/${id}/accept`, { token: agent });
	eq(r.status, 403, 'accepting writes main');
	r = await c('POST', `${D}/proposals/${id}/accept`, { token: writer, body: { expect_revision: 1 } });
	eq(r.status, 409);
	eq(r.body.error.code, 'revision_conflict');
	r = await c('POST', `${D}/proposals/${id}/accept`, { token: writer, body: { message: 'ok' } });
	eq(r.status, 201);
	check(r.body.revision > 0);
	r = await c('POST', `${D}/proposals/${id}/accept`, { token: writer });
	eq(r.status, 409);
	eq(r.body.error.code, 'proposal_closed');
	r = await c('POST', `${D}/proposals`, { token: agent, body: { source: 'agent/p7/idea', title: 'again' } });
	const id2 = r.body.id;
	r = await c('POST', `${D}/proposals/${id2}/reject`, { token: writer, body: { note: 'no' } });
	eq(r.body.status, 'rejected');
	r = await c('POST', `${D}/proposals`, { token: agent, body: { source: 'agent/p7/idea' } });
	r = await c('POST', `${D}/proposals/${r.body.id}/withdraw`, { token: agent });
	eq(r.body.status, 'withdrawn');
	r = await c('GET', `${D}/proposals?status=rejected`, { token: reader });
	eq(r.body.items.map((p) => p.id), [id2]);
	r = await c('GET', `${D}/proposals?status=maybe`, { token: reader });
	eq(r.status, 400);
	r = await c('GET', `${D}/proposals/999`, { token: reader });
	eq(r.status, 404);
});

await test('proposals: an agent offers a schema change from its branch; a writer of main accepts it', async () => {
	const schema = { kinds: [{ name: 'Depot', attributes: [{ name: 'size', type: 'int' }] }] };
	let r = await c('POST', `${D}/branches`, { token: agent, body: { name: 'agent/p7/kinds' } });
	eq(r.status, 201);
	const before = (await c('GET', `${D}/proposals`, { token: reader })).body.items.length;
	for (const [body, status, code, part] of [
		[{ source: 'agent/p7/kinds', schema: 'Depot' }, 400, 'invalid_argument', 'schema document'],
		[{ source: 'agent/p7/kinds', schema: { kinds: [{ name: 'Depot', attributes: [{ name: 'size', type: 'integer' }] }] } }, 422, 'invalid_schema', 'unknown type'],
		[{ source: 'agent/p7/kinds', schema, target: 'agent/p7/idea' }, 400, 'invalid_argument', 'propose it into main'],
	]) {
		r = await c('POST', `${D}/proposals`, { token: agent, body });
		eq([r.status, r.body.error.code], [status, code], JSON.stringify(body));
		check(r.body.error.message.includes(part), r.body.error.message);
	}
	eq((await c('GET', `${D}/proposals`, { token: reader })).body.items.length, before, 'nothing opened');
	r = await c('POST', `${D}/proposals`, { token: agent, body: { source: 'agent/p7/kinds', title: 'Depots', schema } });
	eq(r.status, 201);
	const id = r.body.id;
	r = await c('GET', `${D}/proposals/${id}`, { token: reader });
	eq(r.body.schema, { kinds: [{ attributes: [{ name: 'size', type: 'int' }], name: 'Depot' }] });
	r = await c('POST', `${D}/commits`, { token: writer, body: { changes: [{ kind: 'Depot', key: 'D1', values: { size: 3 } }] } });
	eq(r.status, 422, 'not before it is accepted');
	r = await c('POST', `${D}/proposals/${id}/accept`, { token: agent });
	eq(r.status, 403, 'accepting writes main');
	r = await c('POST', `${D}/proposals/${id}/accept`, { token: writer, body: { message: 'depots ok' } });
	eq(r.status, 201);
	check(r.body.schema_revision > 0 && r.body.revision === 0, JSON.stringify(r.body));
	r = await c('POST', `${D}/commits`, { token: writer, body: { changes: [{ kind: 'Depot', key: 'D1', values: { size: 3 } }] } });
	eq(r.status, 201);
	r = await c('GET', `${D}/schema`, { token: reader });
	check(JSON.stringify(r.body).includes('"Depot"'), 'in the schema');
});

await test('export: NDJSON that imports back', async () => {
	const r = await call(srv, 'GET', `${D}/export`, { token: reader });
	spec.check('GET', `${D}/export`, r);
	eq(r.status, 200);
	eq(r.headers.get('content-type'), 'application/x-ndjson');
	const lines = r.text.trim().split('\n').map((l) => JSON.parse(l));
	check(lines.some((l) => l.kind === 'Part' && l.key === 'P7'));
});

await test('import: JSON Lines streamed, committed in batches; bad lines reported', async () => {
	const lines = (n, from) => Array.from({ length: n }, (_, i) => JSON.stringify({ kind: 'Part', key: `I${from + i}`, values: { sku: `i${from + i}` } })).join('\n') + '\n';
	let r = await c('POST', `${D}/import?batch=100`, { token: writer, raw: lines(250, 0), headers: { 'Content-Type': 'application/x-ndjson' } });
	eq(r.status, 200);
	eq([r.body.lines, r.body.records, r.body.commits], [250, 250, 3]);
	r = await c('POST', `${D}/import?on_error=skip`, { token: writer, raw: '{"kind":"Part","key":"J1","values":{"sku":"j"}}\n{"kind":"Part","key":"J2"}\nnot json\n' });
	eq([r.body.records, r.body.skipped], [1, 2]);
	eq(r.body.bad_lines.map((b) => [b.line, b.code]), [[2, 'required_missing'], [3, 'invalid_json']]);
	r = await c('POST', `${D}/import`, { token: writer, raw: '{"kind":"Part","key":"K1","values":{"sku":"k"}}\n{"kind":"Part","key":"K2"}\n' });
	eq(r.status, 422);
	eq(r.body.error.code, 'required_missing');
	r = await c('GET', `${D}/records/Part/K1`, { token: reader });
	eq(r.status, 404, 'a stopped batch commits nothing');
	r = await c('POST', `${D}/import`, { token: reader, raw: lines(1, 900) });
	eq(r.status, 403);
	r = await c('POST', `${D}/import?branch=main`, { token: agent, raw: lines(1, 900) });
	eq(r.status, 403);
	r = await c('POST', `${D}/import?batch=0`, { token: writer, raw: lines(1, 900) });
	eq(r.status, 400);
	r = await c('POST', `${D}/import?on_error=maybe`, { token: writer, raw: lines(1, 900) });
	eq(r.status, 400);
	r = await c('GET', `${D}/counts`, { token: reader });
	eq(r.body.counts.Part >= 251, true);
});

await test('tenants: another Domain\'s token reaches nothing here', async () => {
	for (const [m, p] of [['GET', `${D}/records/Supplier/S1`], ['GET', `${D}/schema`], ['GET', `${D}/export`], ['POST', `${D}/commits`]]) {
		const r = await c(m, p, { token: outsider, body: m === 'POST' ? { changes: [{ kind: 'Part', key: 'Z', values: { sku: 'z' } }] } : undefined });
		eq(r.status, 403, `${m} ${p}`);
		check(!r.text.includes('S1') && !r.text.includes('Acme'), 'no data in the refusal');
	}
});

await test('bad requests: malformed JSON, deep JSON, unknown paths and methods, framing', async () => {
	let r = await c('POST', `${D}/commits`, { token: writer, raw: '{"changes":[', headers: { 'Content-Type': 'application/json' } });
	eq(r.status, 400);
	eq(r.body.error.code, 'invalid_json');
	r = await c('POST', `${D}/commits`, { token: writer, raw: '[1]' });
	eq(r.status, 400);
	r = await c('POST', `${D}/commits`, { token: writer, raw: '' });
	eq(r.status, 400);
	r = await c('POST', `${D}/commits`, { token: writer, raw: `{"changes":${'['.repeat(40)}${']'.repeat(40)}}` });
	eq(r.status, 400);
	eq(r.body.error.code, 'limit_exceeded');
	r = await call(srv, 'GET', '/v1/nope', { token: reader });
	eq(r.status, 404);
	eq(r.body.error.code, 'route_not_found');
	r = await call(srv, 'DELETE', `${D}/records/Part/P1`, { token: writer });
	eq(r.status, 405);
	eq(r.body.error.code, 'method_not_allowed');
	r = await call(srv, 'GET', `${D}/records/Part/P1/`, { token: reader });
	eq(r.status, 404);
	r = await call(srv, 'GET', `${D}/records/Part/%zz`, { token: reader });
	eq(r.status, 400);
	eq(r.body.error.code, 'bad_request');
	r = await call(srv, 'GET', `${D}/records/Part/P1?branch=%ZZ`, { token: reader });
	eq(r.status, 400, 'a bad escape in the query');
	eq(r.body.error.code, 'bad_request');
	r = await call(srv, 'GET', `${D}/import`, { token: reader });
	eq(r.status, 405);
});

await test('metrics: Prometheus text, for the admin of every Domain', async () => {
	let r = await call(srv, 'GET', '/v1/metrics');
	eq(r.status, 401);
	r = await call(srv, 'GET', '/v1/metrics', { token: owner });
	eq(r.status, 403, 'store-wide figures are not one Domain\'s');
	r = await call(srv, 'GET', '/v1/metrics', { token: admin });
	spec.check('GET', '/v1/metrics', r);
	eq(r.status, 200);
	check(/^cairn_requests_total \d+$/m.test(r.text), 'requests counter');
	check(/^cairn_commits_total [1-9]\d*$/m.test(r.text), 'commits counter');
	check(/cairn_request_seconds_bucket\{le="\+Inf"\} \d+/.test(r.text), 'latency histogram');
	check(/cairn_store_bytes\{db="all"\} [1-9]/.test(r.text), 'store size');
});

await test('backup: the admin of every Domain takes an online backup, which opens as a store', async () => {
	const dir = `${S.dir}/backup-http`;
	let r = await call(srv, 'POST', '/v1/backup', { token: owner, body: { dir } });
	eq(r.status, 403, 'a whole store is not one Domain\'s');
	r = await call(srv, 'POST', '/v1/backup', { token: admin, body: { dir: 'relative' } });
	eq([r.status, r.body.error.code], [400, 'invalid_argument']);
	r = await call(srv, 'POST', '/v1/backup', { token: admin, body: { dir, extra: 1 } });
	eq(r.status, 400);
	r = await call(srv, 'POST', '/v1/backup', { token: admin, body: { dir } });
	spec.check('POST', '/v1/backup', r);
	eq([r.status, r.body.backup], [201, dir]);
	check(r.body.bytes > 0, 'bytes');
	const got = JSON.parse(cli(dir, 'get', 'Supplier', 'S1', '--domain', D.split('/').pop()));
	eq(got.title, 'Acme');
	check(cli(dir, 'check').includes('"ok":true'), 'the backup checks clean');
	r = await call(srv, 'POST', '/v1/backup', { token: admin, body: { dir } });
	eq([r.status, r.body.error.code], [409, 'already_exists']);
});

await test('queries: filter, sort, page, fields, explain, counts; errors name their place', async () => {
	for (let i = 0; i < 12; i++)
		await c('POST', `${D}/commits`, { token: writer, body: { changes: [{ kind: 'Supplier', key: `Q${String(i).padStart(2, '0')}`, values: { vat: `QV${i}`, rating: i % 4 } }] } });
	const where = { vat: { prefix: 'QV' }, rating: { gte: 2 } };
	let r = await c('POST', `${D}/query`, { token: reader, body: { kind: 'Supplier', where, sort: 'rating', limit: 4, fields: ['rating'], explain: true } });
	eq(r.status, 200);
	eq(r.body.items.map((x) => x.values.rating), [2, 2, 2, 3]);
	eq(r.body.items.map((x) => x.key), ['Q02', 'Q06', 'Q10', 'Q03'], 'ties by key');
	check(r.body.next && r.body.plan, 'a cursor and a plan');
	eq(r.body.items[0].values, { rating: 2 }, 'fields');
	const seen = r.body.items.map((x) => x.key);
	for (let next = r.body.next; next;) {
		r = await c('POST', `${D}/query`, { token: reader, body: { kind: 'Supplier', where, sort: 'rating', limit: 4, after: next } });
		seen.push(...r.body.items.map((x) => x.key));
		next = r.body.next;
	}
	eq(seen.length, 6, 'every match once across the pages');
	eq(new Set(seen).size, 6);
	r = await c('POST', `${D}/query`, { token: reader, body: { kind: 'Supplier', where: { vat: 'QV3' } } });
	eq(r.body.items.map((x) => x.key), ['Q03']);
	eq(r.body.scanned, false, 'vat is indexed');
	r = await c('POST', `${D}/query?at=${rev1}`, { token: reader, body: { kind: 'Supplier', where: { vat: 'QV3' } } });
	eq(r.body.items, [], 'time travel');
	r = await c('POST', `${D}/query/count`, { token: reader, body: { kind: 'Supplier', where: { vat: { prefix: 'QV' } }, group_by: 'rating' } });
	eq(r.body.total, 12);
	eq(r.body.groups, [{ value: 0, count: 3 }, { value: 1, count: 3 }, { value: 2, count: 3 }, { value: 3, count: 3 }]);
	r = await c('POST', `${D}/query`, { token: reader, body: { kind: 'Supplier', where: { rating: { gtee: 1 } } } });
	eq(r.status, 400);
	eq(r.body.error.code, 'invalid_query');
	check(r.body.error.message.startsWith('where.rating.gtee'), r.body.error.message);
	r = await c('POST', `${D}/query`, { token: reader, body: { kind: 'Nope' } });
	eq(r.status, 422);
	r = await c('POST', `${D}/query`, { token: reader, body: { kind: 'Supplier', limit: 0 } });
	eq(r.status, 400);
	r = await c('POST', `${D}/query`, { token: reader, body: { kind: 'Supplier', after: 'zzz' } });
	eq(r.body.error.code, 'invalid_query');
	r = await c('POST', `${D}/query/count`, { token: reader, body: { kind: 'Supplier', group_by: 'nope' } });
	eq(r.body.error.code, 'invalid_query');
});

await test('graph: neighborhoods with hops and caps, follow, shortest paths; errors', async () => {
	const changes = [];
	for (let i = 0; i < 5; i++) {
		changes.push({ kind: 'Part', key: `G${i}`, values: { sku: `g${i}` } });
		changes.push({ rel: 'supplied_by', from: `Part:G${i}`, to: 'Supplier:S1', values: i === 0 ? { share: 0.5 } : {} });
	}
	await c('POST', `${D}/commits`, { token: writer, body: { changes } });
	let r = await c('POST', `${D}/neighborhood`, { token: reader, body: { start: ['Part:G0'], depth: 2 } });
	eq(r.status, 200);
	eq(r.body.nodes[0], { kind: 'Part', key: 'G0', title: '', depth: 0 });
	eq(r.body.nodes[1].key, 'S1');
	eq(r.body.nodes[1].depth, 1);
	check(r.body.nodes.filter((n) => n.depth === 2).length >= 4, 'the other Parts of S1 at depth 2');
	check(r.body.links.every((l) => l.rel === 'supplied_by' && l.to === 'Supplier:S1'));
	eq(r.body.truncated, false);
	r = await c('POST', `${D}/neighborhood`, { token: reader, body: { start: ['Part:G0'], depth: 2, fanout: 2, values: true } });
	eq(r.body.truncated, true, 'S1 has more Links than the fanout');
	eq(r.body.nodes[0].values, { sku: 'g0' });
	eq(r.body.links[0].values, { share: 0.5 });
	r = await c('POST', `${D}/neighborhood`, { token: reader, body: { start: ['Supplier:S1'], hops: [{ dir: 'out' }] } });
	eq(r.body.nodes.length, 1, 'S1 has no Links out');
	r = await c('POST', `${D}/neighborhood`, { token: reader, body: { start: ['Supplier:S1'], hops: [{ dir: 'in', kinds: ['Part'] }], max_nodes: 3 } });
	eq(r.body.nodes.length, 3);
	eq(r.body.truncated, true);
	r = await c('POST', `${D}/follow`, { token: reader, body: { start: 'Part:G1', steps: [{ dir: 'out', rels: ['supplied_by'] }, { dir: 'in' }] } });
	check(r.body.nodes.some((n) => n.key === 'G1') && r.body.nodes.every((n) => n.kind === 'Part'), 'back to the Parts');
	r = await c('POST', `${D}/path`, { token: reader, body: { from: 'Part:G1', to: 'Part:G3' } });
	eq(r.body.found, true);
	eq(r.body.nodes.map((n) => n.key), ['G1', 'S1', 'G3']);
	eq(r.body.links.map((l) => l.from), ['Part:G1', 'Part:G3']);
	r = await c('POST', `${D}/path`, { token: reader, body: { from: 'Part:G1', to: 'Part:G3', hop: { dir: 'out' } } });
	eq(r.body.found, false, 'not along Links out only');
	eq(r.body.nodes, []);
	r = await c('POST', `${D}/neighborhood?at=${rev1}`, { token: reader, body: { start: ['Part:G0'] } });
	eq(r.status, 404, 'G0 did not exist then');
	r = await c('POST', `${D}/neighborhood`, { token: reader, body: { start: ['G0'] } });
	eq(r.status, 400);
	check(r.body.error.message.includes('start[0]'), r.body.error.message);
	r = await c('POST', `${D}/neighborhood`, { token: reader, body: { start: ['Part:G0'], depth: 4 } });
	eq(r.status, 400);
	r = await c('POST', `${D}/neighborhood`, { token: reader, body: { start: ['Part:G0'], hops: [{ dir: 'up' }] } });
	eq(r.status, 400);
	check(r.body.error.message.includes('hops[0].dir'), r.body.error.message);
	r = await c('POST', `${D}/neighborhood`, { token: reader, body: { start: ['Part:G0'], hops: [{ rels: ['nope'] }] } });
	eq(r.status, 422);
	eq(r.body.error.code, 'unknown_relation');
	r = await c('POST', `${D}/neighborhood`, { token: reader, body: { start: ['Part:G0'], values: 1 } });
	eq(r.status, 400);
	r = await c('POST', `${D}/follow`, { token: reader, body: { start: 'Part:G0', steps: [] } });
	eq(r.status, 400);
	r = await c('POST', `${D}/path`, { token: reader, body: { from: 'Part:G0', to: 'Part:nope' } });
	eq(r.status, 404);
	r = await c('POST', `${D}/path`, { token: reader, body: { from: 'Part:G0', to: 'Part:G1', max_depth: 9 } });
	eq(r.status, 400);
	r = await c('POST', `/v1/domains/other/neighborhood`, { token: reader, body: { start: ['Part:G0'] } });
	eq(r.status, 403);
});

await test('resolve: keys, titles, unique values, folded, spellings, prefixes; errors', async () => {
	await c('POST', `${D}/commits`, { token: writer, body: { changes: [
		{ kind: 'Supplier', key: 'R1', title: 'Müller Präzision GmbH', values: { vat: 'DE55501' } },
		{ kind: 'Supplier', key: 'R2', title: 'Muller Precision Ltd', values: { vat: 'GB55502' } }] } });
	let r = await c('POST', `${D}/resolve`, { token: reader, body: { text: 'R1' } });
	eq(r.status, 200);
	eq(r.body.matches[0].key, 'R1');
	eq(r.body.matches[0].source, 'key');
	eq(r.body.matches[0].match, 'exact');
	eq(r.body.matches[0].score, 1);
	r = await c('POST', `${D}/resolve`, { token: reader, body: { text: 'muller prazision gmbh', values: true } });
	eq(r.body.matches[0].key, 'R1');
	eq(r.body.matches[0].match, 'folded');
	eq(r.body.matches[0].values, { vat: 'DE55501' });
	r = await c('POST', `${D}/resolve`, { token: reader, body: { text: 'DE55501' } });
	eq([r.body.matches[0].key, r.body.matches[0].source, r.body.matches[0].attr], ['R1', 'unique', 'vat']);
	r = await c('POST', `${D}/resolve`, { token: reader, body: { text: 'Muller Precisoin Ltd' } });
	eq(r.body.matches[0].key, 'R2');
	eq([r.body.matches[0].match, r.body.matches[0].edits], ['spelling', 1]);
	r = await c('POST', `${D}/resolve`, { token: reader, body: { text: 'Muller', kinds: ['Supplier'] } });
	eq(r.body.matches.map((m) => m.key).sort(), ['R1', 'R2'], 'both start with the word');
	check(r.body.matches.every((m) => m.match === 'prefix'));
	r = await c('POST', `${D}/resolve`, { token: reader, body: { text: 'Muller', exact: true } });
	eq(r.body.matches, []);
	r = await c('POST', `${D}/resolve?at=${rev1}`, { token: reader, body: { text: 'R1' } });
	eq(r.body.matches, [], 'not there yet');
	r = await c('POST', `${D}/resolve`, { token: reader, body: { text: '' } });
	eq(r.status, 400);
	r = await c('POST', `${D}/resolve`, { token: reader, body: { text: 'x', limit: 101 } });
	eq(r.status, 400);
	r = await c('POST', `${D}/resolve`, { token: reader, body: { text: 'x', max_edits: 3 } });
	eq(r.status, 400);
	r = await c('POST', `${D}/resolve`, { token: reader, body: { text: 'x', kinds: ['Nope'] } });
	eq(r.status, 422);
	r = await c('POST', `${D}/resolve`, { token: reader, body: { text: 'x', nope: 1 } });
	eq(r.status, 400);
});

await test('search: every word, stems, Kinds, past revisions, values; errors', async () => {
	const rev = (await c('POST', `${D}/commits`, { token: writer, body: { changes: [
		{ kind: 'Supplier', key: 'W1', title: 'Forged steel valves', values: { vat: 'DE77701' } },
		{ kind: 'Supplier', key: 'W2', title: 'Valve housings of steel' },
		{ kind: 'Part', key: 'W3', title: 'Steel valve', values: { sku: 'w3' } }] } })).body.revision;
	let r = await c('POST', `${D}/search`, { token: reader, body: { text: 'steel valves' } });
	eq(r.status, 200);
	eq(r.body.words, 2);
	eq(r.body.hits[0].key, 'W1', 'as written first');
	eq(r.body.hits.map((h) => h.key).sort(), ['W1', 'W2', 'W3'], 'and by stem');
	check(r.body.hits.every((h) => h.score > 0 && h.kind && h.title));
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'STEEL', kinds: ['Part'], values: true } });
	eq(r.body.hits.map((h) => h.key), ['W3']);
	eq(r.body.hits[0].values, { sku: 'w3' });
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'steel', limit: 1 } });
	eq(r.body.hits.length, 1);
	r = await c('POST', `${D}/search?at=${rev - 1}`, { token: reader, body: { text: 'forged' } });
	eq(r.body.hits, [], 'not there yet');
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'titanium' } });
	eq([r.status, r.body.hits], [200, []]);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'forged titanium' } });
	eq([r.body.hits.map((h) => [h.key, h.words]), r.body.partial], [[['W1', 1]], 1], 'some of the words');
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'forged titanium', all_words: true } });
	eq(r.body.hits, []);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'x', all_words: 1 } });
	eq(r.status, 400);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'x', no_typos: 'yes' } });
	eq(r.status, 400);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'what are the steel valves' } });
	eq([r.body.words, r.body.stopped, r.body.hits[0].key], [2, 3, 'W1'], 'function words left out, and counted');
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'froged' } });
	eq([r.body.hits.map((h) => h.key), r.body.corrected], [['W1'], 1], 'a typo, corrected');
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'froged', no_typos: true } });
	eq([r.body.hits, r.body.corrected], [[], 0]);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'hous* stee*', all_words: true } });
	eq(r.body.hits.map((h) => h.key), ['W2'], 'prefixes: housings, steel');
	r = await c('POST', `${D}/search`, { token: reader, body: { text: '"steel valves"' } });
	eq(r.body.hits.map((h) => h.key), ['W1'], 'a phrase: in a row, as written');
	r = await c('POST', `${D}/search`, { token: reader, body: { text: '"valves steel"' } });
	eq(r.body.hits, []);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'forged valve', explain: true } });
	const x = r.body.hits[0].explain;
	eq(r.body.hits[0].key, 'W1');
	eq(x.terms.map((t) => [t.word, t.term, t.match, t.fields]),
		[['forged', 'forged', 'word', ['title']], ['forged', 'forg', 'stem', ['title']], ['valve', 'valv', 'stem', ['title']]]);
	check(Math.abs(x.terms.reduce((s, t) => s + t.score, 0) - r.body.hits[0].score) < 1e-3, 'the terms add up');
	eq(x.snippets, [{ field: 'title', text: '<em>Forged</em> steel <em>valves</em>' }]);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'steel' } });
	check(r.body.hits.every((h) => h.explain === undefined), 'only when asked');
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'x', explain: 'yes' } });
	eq(r.status, 400);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'steel', kinds: ['Supplier'], where: { vat: 'DE77701' } } });
	eq(r.body.hits.map((h) => h.key), ['W1'], 'a filter inside the ranking');
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'steel', where: { vat: 'DE77701' } } });
	eq(r.status, 400, 'a filter needs its Kinds');
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'steel', kinds: ['Supplier'], where: { nope: 1 } } });
	eq([r.status, r.body.error.code], [400, 'invalid_query']);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'steel', kinds: ['Supplier'], where: 'x' } });
	eq(r.status, 400);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: '' } });
	eq(r.status, 400);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'x', limit: 101 } });
	eq(r.status, 400);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'x', kinds: ['Nope'] } });
	eq(r.status, 422);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'x', nope: 1 } });
	eq(r.status, 400);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'w '.repeat(40) } });
	eq(r.status, 413);
	r = await c('POST', `/v1/domains/other/search`, { token: reader, body: { text: 'steel' } });
	eq(r.status, 403);
});

await test('search by vector: near a Record, by a vector, metrics, filters; errors', async () => {
	const rev = (await c('POST', `${D}/commits`, { token: writer, body: { changes: [
		{ kind: 'Supplier', key: 'V1', title: 'first', values: { vat: 'DE-V1' }, vector: [1, 0, 0] },
		{ kind: 'Supplier', key: 'V2', title: 'second', values: { vat: 'DE-V2' }, vector: [0.8, 0.2, 0] },
		{ kind: 'Supplier', key: 'V3', title: 'third', values: { vat: 'DE-V3' }, vector: [0, 1, 0] }] } })).body.revision;
	check(rev > 0);
	let r = await c('POST', `${D}/search`, { token: reader, body: { near: { kind: 'Supplier', key: 'V1' }, limit: 2 } });
	eq(r.status, 200);
	eq(r.body.hits.map((h) => h.key), ['V2', 'V3'], 'nearest first, itself left out');
	check(r.body.hits[0].score > 0.9);
	r = await c('POST', `${D}/search`, { token: reader, body: { vector: [0, 1, 0], metric: 'l2', limit: 1, values: true } });
	eq([r.body.hits[0].key, r.body.hits[0].values.vat], ['V3', 'DE-V3']);
	r = await c('POST', `${D}/search`, { token: reader, body: { vector: [1, 0, 0], kinds: ['Supplier'], where: { vat: 'DE-V3' } } });
	eq(r.body.hits.map((h) => h.key), ['V3'], 'a filter inside the top k');
	r = await c('POST', `${D}/search`, { token: reader, body: { vector: [1, 0] } });
	eq([r.status, r.body.error.code], [422, 'vector_dimension']);
	r = await c('POST', `${D}/search`, { token: reader, body: { near: { kind: 'Supplier', key: 'none' } } });
	eq(r.status, 404);
	r = await c('POST', `${D}/search`, { token: reader, body: { near: { kind: 'Supplier', key: 'V1' }, text: 'x' } });
	eq(r.status, 400, 'text or near, not both');
	r = await c('POST', `${D}/search`, { token: reader, body: { vector: [1, 0, 0], metric: 'manhattan' } });
	eq(r.status, 400);
	r = await c('POST', `${D}/search`, { token: reader, body: { vector: [1, 'x', 0] } });
	eq(r.status, 400);
	r = await c('POST', `${D}/search`, { token: reader, body: { vector: [1, 0, 0], explain: true } });
	eq(r.status, 400, 'explain is for text');
});

await test('hybrid and semantic search: fusion, receipts, ranking; errors', async () => {
	let r = await c('POST', `${D}/search`, { token: reader, body: { hybrid: true, text: 'first', vector: [1, 0, 0], limit: 3 } });
	eq(r.status, 200);
	eq(r.body.hits[0].key, 'V1', 'found by words and by meaning');
	check(r.body.hits[0].receipt.text.rank === 1 && r.body.hits[0].receipt.vector.rank === 1);
	check(Math.abs(r.body.hits[0].score - (1 / 61 + 0.1 / 61)) < 1e-6, 'reciprocal rank fusion, meaning a tenth of words by default');
	check(r.body.hits[0].receipt.read.revision > 0 && r.body.hits[0].receipt.version > 0);
	eq(r.body.model, null);
	r = await c('POST', `${D}/search`, { token: reader, body: { hybrid: true, text: 'first', vector: [1, 0, 0], fusion: 'weighted', weights: { text: 0, vector: 1 }, limit: 2 } });
	eq(r.body.hits.map((h) => h.key), ['V1', 'V2'], 'meaning only');
	check(r.body.hits.every((h) => !h.receipt.text));
	r = await c('POST', `${D}/search`, { token: reader, body: { hybrid: true, text: 'third', vector: [1, 0, 0], rank: { confidence: true, trust: { nobody: 0.1 } }, limit: 3 } });
	eq(r.status, 200);
	check(r.body.hits.every((h) => h.receipt.confidence === 1));
	r = await c('POST', `${D}/search`, { token: reader, body: { semantic: true, vector: [0, 1, 0], limit: 1 } });
	eq(r.body.hits.map((h) => h.key), ['V3']);
	r = await c('POST', `${D}/search`, { token: reader, body: { semantic: true, text: 'first' } });
	eq(r.status, 400, 'no model to embed the text');
	r = await c('POST', `${D}/search`, { token: reader, body: { hybrid: true, semantic: true, text: 'first' } });
	eq(r.status, 400);
	r = await c('POST', `${D}/search`, { token: reader, body: { hybrid: true, text: 'first', rank: { bogus: 1 } } });
	eq(r.status, 400);
	r = await c('POST', `${D}/search`, { token: reader, body: { hybrid: true, text: 'first', rank: { exclude: ['x'] } } });
	eq(r.status, 400, 'exclude needs a status attribute');
	r = await c('POST', `${D}/search`, { token: reader, body: { hybrid: true, text: 'first', fusion: 'max' } });
	eq(r.status, 400);
	r = await c('POST', `${D}/search`, { token: reader, body: { hybrid: true, text: 'first', near_records: ['Supplier:none'] } });
	eq(r.status, 404);
	r = await c('POST', `${D}/search`, { token: reader, body: { hybrid: true, text: 'first', explain: true } });
	eq(r.status, 400, 'explain is for words');
	r = await c('POST', `${D}/search`, { token: reader, body: { hybrid: true, vector: [1, 0] } });
	eq([r.status, r.body.error.code], [422, 'vector_dimension']);
	r = await c('POST', `${D}/search`, { token: reader, body: { text: 'first', rank: { confidence: true } } });
	eq(r.status, 400, 'rank is for hybrid or semantic search');
});

await test('commits embed on write only with a model; vector_model keeps models apart', async () => {
	let r = await c('POST', `${D}/commits`, { token: writer, body: { embed: true, changes: [{ kind: 'Supplier', key: 'E1', title: 'steel', values: { vat: 'DE-E1' } }] } });
	eq([r.status, r.body.error.code], [400, 'invalid_argument'], 'no model on this server');
	r = await c('POST', `${D}/commits`, { token: writer, body: { vector_model: 'other/1', changes: [{ kind: 'Supplier', key: 'E2', title: 'x', values: { vat: 'DE-E2' }, vector: [1, 0, 0] }] } });
	eq([r.status, r.body.error.code], [422, 'vector_dimension'], 'the Domain\'s vectors are of the unnamed model');
	r = await c('POST', `${D}/commits`, { token: writer, body: { vector_model: 7, changes: [{ kind: 'Supplier', key: 'E3', values: { vat: 'DE-E3' } }] } });
	eq(r.status, 400);
});

await test('reembed needs an admin and a model', async () => {
	let r = await c('POST', `${D}/reembed`, { token: writer, body: {} });
	eq(r.status, 403);
	r = await c('POST', `${D}/reembed`, { token: owner, body: { message: 'new model' } });
	eq([r.status, r.body.error.code], [400, 'invalid_argument'], 'no model on this server');
	r = await c('POST', `${D}/reembed`, { token: owner, body: { bogus: 1 } });
	eq(r.status, 400);
});

await test('compact: an admin bounds time travel; reads before the horizon are 410', async () => {
	const O = '/v1/domains/other';
	let r = await c('PUT', `${O}/schema`, { token: admin, body: { schema: { kinds: [{ name: 'N', attributes: [{ name: 'tag', type: 'string', indexed: true }] }] } } });
	eq(r.status, 200);
	for (const tag of ['x', 'y', 'z']) {
		r = await c('POST', `${O}/commits`, { token: admin, body: { changes: [{ kind: 'N', key: 'a', title: `a ${tag}`, values: { tag } }] } });
		eq(r.status, 201);
	}
	const last = r.body.revision;
	r = await c('POST', `${O}/compact`, { token: outsider, body: { horizon: last - 1, dry_run: true } });
	eq([r.status, r.body.horizon, r.body.versions], [200, last - 1, 1], 'a dry run counts');
	r = await c('GET', `${O}/records/N/a?at=${last - 2}`, { token: admin });
	eq(r.status, 200, 'and writes nothing');
	r = await c('POST', `${O}/compact`, { token: admin, body: { dry_run: 1 } });
	eq(r.status, 400);
	r = await c('POST', `${O}/compact`, { token: outsider, body: { horizon: last - 1 } });
	eq(r.status, 200, 'the admin of the Domain');
	eq([r.body.horizon, r.body.versions, r.body.attr_entries], [last - 1, 1, 1]);
	r = await c('GET', `${O}/records/N/a?at=${last - 2}`, { token: admin });
	eq([r.status, r.body.error.code], [410, 'compacted']);
	r = await c('GET', '/v1/domains', { token: admin });
	eq(r.body.items.find((d) => d.name === 'other'), { name: 'other', revision: last, horizon: last - 1 });
	r = await c('GET', `${O}/records/N/a?at=${last - 1}`, { token: admin });
	eq([r.status, r.body.values.tag], [200, 'y']);
	r = await c('POST', `${O}/query?at=${last - 1}`, { token: admin, body: { kind: 'N', where: { tag: 'y' } } });
	eq([r.status, r.body.items.length], [200, 1]);
	r = await c('POST', `${D}/compact`, { token: writer, body: {} });
	eq(r.status, 403);
	r = await c('POST', `${O}/compact`, { token: admin, body: { horizon: last + 5 } });
	eq([r.status, r.body.error.code], [400, 'invalid_argument']);
	r = await c('POST', `${O}/compact`, { token: admin, body: { horizon: 1, retain_ms: 5 } });
	eq(r.status, 400);
	r = await c('POST', `${O}/compact`, { token: admin, body: { retain_ms: -1 } });
	eq(r.status, 400);
	r = await c('POST', `${O}/compact`, { token: admin, body: { bogus: 1 } });
	eq(r.status, 400);
	r = await c('POST', `${O}/compact`, { token: admin, body: {} });
	eq([r.status, r.body.horizon], [200, last - 1], 'nothing is a week old: the horizon stays');
});

await test('memory: a Domain with the memory schema, remember, supersede, retract; errors', async () => {
	let r = await c('POST', '/v1/domains', { token: admin, body: { name: 'mem', memory: true } });
	eq([r.status, r.body.memory_schema], [201, true]);
	r = await c('POST', '/v1/domains', { token: admin, body: { name: 'mem', memory: true } });
	eq([r.status, r.body.error.code], [409, 'already_exists']);
	check(r.body.error.message.includes('/v1/domains/mem/schema'), 'the way to give an existing Domain the schema');
	const M = '/v1/domains/mem';
	r = await c('POST', `${M}/remember`, { token: admin, body: { text: 'Dana prefers tea', about: 'Dana', values: { type: 'preference' }, source: 'chat/1' } });
	eq(r.status, 200);
	const m0 = r.body.memories[0];
	eq([m0.kind, m0.created, m0.written, m0.key.length], ['Memory', true, true, 26]);
	eq(m0.about[0].created, true);
	// A batch in one commit: the same text is the memory there is, and Dana the Entity made before.
	r = await c('POST', `${M}/remember`, { token: admin, body: { memories: [
		{ text: 'dana prefers TEA', about: ['dana'] },
		{ text: 'Dana moved to Porto', about: ['Dana'], supersedes: null }] } });
	eq(r.status, 200);
	eq([r.body.memories[0].key, r.body.memories[0].created, r.body.memories[0].written], [m0.key, false, false]);
	eq(r.body.memories[1].about[0].record, m0.about[0].record);
	const rev = r.body.revision;
	r = await c('POST', `${M}/remember`, { token: admin, body: { text: 'Dana prefers coffee', about: 'Dana', supersedes: `Memory:${m0.key}` } });
	eq([r.status, r.body.revision, r.body.memories[0].superseded], [200, rev + 1, true]);
	r = await c('GET', `${M}/records/Memory/${m0.key}`, { token: admin });
	eq(r.body.values.status, 'superseded');
	r = await c('POST', `${M}/retract`, { token: admin, body: { record: `Memory:${r.body.key}` } });
	eq(r.status, 200);
	r = await c('GET', `${M}/records/Memory/${m0.key}`, { token: admin });
	eq(r.body.values.status, 'retracted');
	// Errors: each with a clear code, nothing written.
	const head = (await c('GET', `${M}/revisions?limit=1`, { token: admin })).body.items[0].revision;
	r = await c('POST', `${M}/remember`, { token: admin, body: { text: 'x', key: m0.key } });
	eq([r.status, r.body.error.code], [409, 'already_exists']);
	r = await c('POST', `${M}/remember`, { token: admin, body: { text: 'x', valeus: {} } });
	eq([r.status, r.body.error.code], [400, 'invalid_argument']);
	r = await c('POST', `${M}/remember`, { token: admin, body: { memories: [{ text: 'x', valeus: {} }] } });
	eq(r.status, 400);
	check(r.body.error.message.includes('memories[0]') && r.body.error.message.includes('valeus'), 'names the member');
	r = await c('POST', `${M}/remember`, { token: admin, body: { memories: [], text: 'x' } });
	eq(r.status, 400);
	r = await c('POST', `${M}/remember`, { token: admin, body: { memories: [] } });
	eq(r.status, 400);
	r = await c('POST', `${M}/remember`, { token: admin, body: { text: 'x', key: 'a\u0000b' } });
	eq(r.status, 400);
	check(r.body.error.message.includes('U+0000'), 'U+0000 refused');
	r = await c('POST', `${M}/remember`, { token: admin, body: { text: 'x', about: 'Entity:nope' } });
	eq([r.status, r.body.error.code], [404, 'not_found']);
	r = await c('POST', `${M}/retract`, { token: admin, body: { record: 'nocolon' } });
	eq(r.status, 400);
	r = await c('POST', `${M}/retract`, { token: admin, body: { record: 'Memory:nope' } });
	eq(r.status, 404);
	r = await c('POST', `${D}/remember`, { token: reader, body: { text: 'x' } });
	eq(r.status, 403);
	r = await c('POST', `${D}/remember`, { token: agent, body: { text: 'x' } });
	eq(r.status, 403, 'main is not the agent\'s to write');
	r = await c('POST', `${D}/remember`, { token: writer, body: { text: 'x' } });
	eq([r.status, r.body.error.code], [422, 'unknown_kind']);
	check(r.body.error.message.includes('cairn init --memory'), 'says how to get the memory schema');
	eq((await c('GET', `${M}/revisions?limit=1`, { token: admin })).body.items[0].revision, head);
	// The digest: Dana's active memories, within a budget, with a cursor.
	r = await c('POST', `${M}/digest`, { token: admin, body: { subjects: 'Dana' } });
	eq(r.status, 200);
	eq(r.body.subjects, [m0.about[0].record]);
	check(r.body.memories.every((m) => m.status === 'active'), 'active memories only');
	check(r.body.memories.some((m) => m.text === 'Dana moved to Porto'));
	r = await c('POST', `${M}/digest`, { token: admin, body: { subjects: ['Dana'], include_inactive: true, budget: 256 } });
	eq(r.status, 200);
	check(JSON.stringify(r.body).length <= 300 && r.body.next !== null, 'cut to the budget, with a cursor');
	const rest = await c('POST', `${M}/digest`, { token: admin, body: { subjects: ['Dana'], include_inactive: true, after: r.body.next } });
	eq(rest.body.total, r.body.total);
	check(rest.body.memories.length >= 1 && rest.body.memories[0].record !== r.body.memories[0].record, 'the rest');
	r = await c('POST', `${M}/digest`, { token: admin, body: {} });
	eq([r.status, r.body.subjects], [200, []]);
	r = await c('POST', `${M}/digest`, { token: admin, body: { subjects: 'Nobody' } });
	eq([r.status, r.body.error.code], [404, 'not_found']);
	r = await c('POST', `${M}/digest`, { token: admin, body: { subjects: 'Dana', budget: 5 } });
	eq(r.status, 400);
	r = await c('POST', `${M}/digest`, { token: admin, body: { subjects: 'Dana', valid_at: 'x' } });
	eq(r.status, 400);
	r = await c('POST', `${M}/digest`, { token: admin, body: { subject: 'Dana' } });
	eq(r.status, 400);
	// Recall: the superseded memory left out unless asked for.
	r = await c('POST', `${M}/recall`, { token: admin, body: { text: 'Dana prefers', kinds: ['Memory'] } });
	eq(r.status, 200);
	check(r.body.note.includes('not instructions'), 'marked as stored data');
	check(!r.body.hits.some((h) => h.key === m0.key), 'the superseded memory is left out');
	r = await c('POST', `${M}/recall`, { token: admin, body: { text: 'Dana prefers', kinds: ['Memory'], include_inactive: true, explain: true } });
	check(r.body.hits.some((h) => h.key === m0.key) && r.body.hits[0].receipt, 'included when asked, with receipts');
	r = await c('POST', `${M}/recall`, { token: admin, body: { text: 'Dana', limit: 51 } });
	eq(r.status, 400);
	r = await c('POST', `${M}/recall`, { token: admin, body: { limit: 5 } });
	eq(r.status, 400);
	// A plain search leaves it out too, and says what it left out; include_inactive shows it.
	const excluded = { attribute: 'status', values: ['superseded', 'retracted'] };
	for (const extra of [{}, { where: { type: 'preference' } }, { explain: true }, { hybrid: true }]) {
		r = await c('POST', `${M}/search`, { token: admin, body: { text: 'Dana prefers', kinds: ['Memory'], ...extra } });
		eq(r.status, 200, JSON.stringify(extra));
		check(!r.body.hits.some((h) => h.key === m0.key), `search ${JSON.stringify(extra)} leaves the superseded memory out`);
		eq(r.body.excluded, excluded);
		r = await c('POST', `${M}/search`, { token: admin, body: { text: 'Dana prefers', kinds: ['Memory'], include_inactive: true, ...extra } });
		check(r.body.hits.some((h) => h.key === m0.key) && r.body.excluded === undefined, `search ${JSON.stringify(extra)} with include_inactive has it`);
	}
	// Valid time: every way of searching keeps what was true then, and says what it left out.
	r = await c('POST', `${M}/remember`, { token: admin, body: { text: 'Dana will move to Oslo', about: 'Dana', values: { valid_from: '2030-01-01T00:00:00Z' } } });
	eq(r.status, 200);
	const oslo = r.body.memories[0].key;
	for (const extra of [{}, { where: { status: 'active' } }, { explain: true }, { hybrid: true }]) {
		r = await c('POST', `${M}/search`, { token: admin, body: { text: 'Dana Oslo', kinds: ['Memory'], valid_at: '2029-01-01T00:00:00Z', ...extra } });
		eq(r.status, 200, JSON.stringify(extra));
		check(!r.body.hits.some((h) => h.key === oslo), `search ${JSON.stringify(extra)} at 2029 leaves Oslo out`);
		eq(r.body.excluded, { ...excluded, not_valid_at: '2029-01-01T00:00:00.000Z' });
		r = await c('POST', `${M}/search`, { token: admin, body: { text: 'Dana Oslo', kinds: ['Memory'], valid_at: '2031-01-01T00:00:00Z', include_inactive: true, ...extra } });
		check(r.body.hits.some((h) => h.key === oslo), `search ${JSON.stringify(extra)} at 2031 has Oslo`);
		eq(r.body.excluded, { not_valid_at: '2031-01-01T00:00:00.000Z' });
	}
	r = await c('GET', `${M}/records/Memory/${oslo}?valid_at=2031-01-01T00:00:00Z`, { token: admin });
	eq([r.status, r.body.title], [200, 'Dana will move to Oslo']);
	r = await c('GET', `${M}/records/Memory/${oslo}?valid_at=2029-01-01T00:00:00Z`, { token: admin });
	check(r.status === 404 && r.body.error.message.includes('was not true at 2029-01-01T00:00:00.000Z'), JSON.stringify(r.body));
	r = await c('GET', `${M}/records/Memory/${oslo}?valid_at=later`, { token: admin });
	eq([r.status, r.body.error.code], [400, 'invalid_argument']);
	r = await c('GET', `${M}/records/Memory?limit=1000&valid_at=2029-01-01T00:00:00Z`, { token: admin });
	check(r.status === 200 && r.body.items.length > 0 && !r.body.items.some((x) => x.key === oslo), 'Oslo is not listed in 2029');
	r = await c('GET', `${M}/records/Memory?limit=1000&valid_at=2031-01-01T00:00:00Z`, { token: admin });
	check(r.body.items.some((x) => x.key === oslo), 'Oslo is listed in 2031');
	r = await c('GET', `${M}/records/Entity?valid_at=2031-01-01T00:00:00Z`, { token: admin });
	eq(r.status, 400);
	r = await c('POST', `${M}/search`, { token: admin, body: { text: 'Dana', valid_at: 'soon' } });
	eq([r.status, r.body.error.code], [400, 'invalid_argument']);
	r = await c('POST', `${M}/search`, { token: admin, body: { text: 'Dana', kinds: ['Entity'], valid_at: '2029-01-01T00:00:00Z' } });
	check(r.status === 400 && r.body.error.message.includes('valid time'), JSON.stringify(r.body));
	r = await c('POST', `${M}/search`, { token: admin, body: { text: 'Dana', kinds: ['Entity'] } });
	check(r.status === 200 && r.body.excluded === undefined, 'no status, nothing left out');
	r = await c('POST', `${M}/search`, { token: admin, body: { text: 'Dana', include_inactive: 'yes' } });
	eq(r.status, 400);
});

await test('erase: an admin erases a Record and what a source wrote; reads and history say so', async () => {
	const E = '/v1/domains/erasing';
	let r = await c('POST', '/v1/domains', { token: admin, body: { name: 'erasing' } });
	eq(r.status, 201);
	r = await c('PUT', `${E}/schema`, { token: admin, body: { schema: { kinds: [{ name: 'N', attributes: [{ name: 'tag', type: 'string', indexed: true }] }] } } });
	eq(r.status, 200);
	r = await c('POST', `${E}/commits`, { token: admin, body: { source: 'chat', changes: [{ kind: 'N', key: 'a', title: 'zqxmarker7731 alpha', values: { tag: 'zqxmarker7731' } }, { kind: 'N', key: 'c', title: 'gamma zqxmarker7731' }] } });
	eq(r.status, 201);
	r = await c('POST', `${E}/commits`, { token: admin, body: { source: 'notes', changes: [{ kind: 'N', key: 'b', title: 'beta', values: { tag: 'x' } }] } });
	eq(r.status, 201);
	const head = r.body.revision;
	// Every bad input: a clear error, and nothing written.
	r = await c('POST', `${E}/erase`, { token: writer, body: { target: { kind: 'N', key: 'a' }, message: 'why' } });
	eq(r.status, 403, 'a writer may not erase');
	r = await c('POST', `${E}/erase`, { body: { target: { kind: 'N', key: 'a' }, message: 'why' } });
	eq(r.status, 401, 'no token');
	r = await c('POST', `${E}/erase`, { token: admin, raw: '{"target":', headers: { 'Content-Type': 'application/json' } });
	eq([r.status, r.body.error.code], [400, 'invalid_json']);
	r = await c('POST', `${E}/erase`, { token: admin, body: { target: { kind: 'N', key: 'a' } } });
	eq([r.status, r.body.error.code], [400, 'invalid_argument'], 'no message');
	check(r.body.error.message.includes('message'));
	r = await c('POST', `${E}/erase`, { token: admin, body: { message: 'why' } });
	eq([r.status, r.body.error.code], [400, 'invalid_argument'], 'no target');
	r = await c('POST', `${E}/erase`, { token: admin, body: { target: { kind: 'N' }, message: 'why' } });
	eq(r.status, 400);
	r = await c('POST', `${E}/erase`, { token: admin, body: { target: { source: '' }, message: 'why' } });
	eq([r.status, r.body.error.code], [400, 'invalid_argument'], 'an empty source');
	r = await c('POST', `${E}/erase`, { token: admin, body: { target: { source: 'chat', actor: 'x' }, message: 'why' } });
	eq(r.status, 400, 'two targets');
	r = await c('POST', `${E}/erase`, { token: admin, body: { target: { kind: 'N', key: 'zz' }, message: 'why' } });
	eq([r.status, r.body.error.code], [404, 'not_found'], 'an unknown Record');
	r = await c('POST', `${E}/erase`, { token: admin, body: { target: { kind: 'Nope', key: 'a' }, message: 'why' } });
	eq([r.status, r.body.error.code], [422, 'unknown_kind']);
	r = await c('POST', '/v1/domains/nosuch/erase', { token: admin, body: { target: { kind: 'N', key: 'a' }, message: 'why' } });
	eq([r.status, r.body.error.code], [404, 'domain_not_found']);
	r = await c('POST', `${E}/erase`, { token: admin, body: { target: { kind: 'N', key: 'a' }, message: 'why', bogus: 1 } });
	eq(r.status, 400);
	r = await c('GET', `${E}/revisions`, { token: admin });
	eq(r.body.items[0].revision, head, 'nothing was written');
	// A dry run counts; the erasure itself.
	r = await c('POST', `${E}/erase`, { token: admin, body: { target: { kind: 'N', key: 'a' }, message: 'the user asked', dry_run: true } });
	eq([r.status, r.body.revision, r.body.records, r.body.versions], [200, 0, 1, 1]);
	r = await c('GET', `${E}/records/N/a`, { token: admin });
	eq(r.status, 200);
	r = await c('POST', `${E}/erase`, { token: admin, body: { target: { kind: 'N', key: 'a' }, message: 'the user asked', actor: 'dpo' } });
	eq([r.status, r.body.records, r.body.versions, r.body.resumed], [200, 1, 1, false]);
	check(r.body.revision > head && r.body.postings > 0 && r.body.attr_entries > 0);
	r = await c('GET', `${E}/records/N/a`, { token: admin });
	eq(r.status, 404);
	r = await c('GET', `${E}/records/N/a/history`, { token: admin });
	eq([r.status, r.body.items[0].change, r.body.items[0].title], [200, 'erased', '']);
	eq([r.body.items[0].erased.actor, r.body.items[0].erased.message, r.body.items[0].erased.type], ['dpo', 'the user asked', 'erase']);
	r = await c('POST', `${E}/erase`, { token: admin, body: { target: { source: 'chat' }, message: 'forget the chat' } });
	eq([r.status, r.body.records, r.body.versions], [200, 1, 1]);
	r = await c('POST', `${E}/search`, { token: admin, body: { text: 'zqxmarker7731' } });
	eq([r.status, r.body.hits.length], [200, 0]);
	r = await c('GET', `${E}/records/N/b`, { token: admin });
	eq([r.status, r.body.title], [200, 'beta'], 'what another source wrote stays');
});

await test('MCP over HTTP answers JSON-RPC (the SDK tests are in tests/mcp)', async () => {
	let r = await c('POST', '/v1/mcp', { token: reader, body: { jsonrpc: '2.0', id: 7, method: 'ping' } });
	eq(r.status, 200);
	eq(r.body, { jsonrpc: '2.0', id: 7, result: {} });
	r = await c('POST', '/v1/mcp', { token: reader, body: { jsonrpc: '2.0', method: 'notifications/initialized' } });
	eq(r.status, 202);
	r = await c('POST', '/v1/mcp?domain=acme', { token: admin, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
	check(r.body.result.tools.some((t) => t.name === 'remember'));
	r = await c('POST', '/v1/mcp', { token: admin, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
	eq(r.status, 400, 'an admin of every Domain names one');
	r = await c('POST', '/v1/mcp?domain=acme', { token: outsider, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
	eq(r.status, 200, 'its own Domain, whatever the query says');
	r = await c('POST', '/v1/mcp', { token: outsider, body: { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get', arguments: { kind: 'Supplier', key: 'S1' } } } });
	eq(r.body.result.isError, true, 'the outsider reads its own Domain, which has no S1');
});

await test('every operation of the description was checked by a test', async () => {
	eq(spec.uncovered(), []);
});

eq(await stop(srv), 0);

await test('a server with a model embeds on write and searches texts by their meaning', async () => {
	const M = scratch();
	const model = `${M.dir}/mini.cemb`;
	cliNoStore('model', 'convert', 'tests/data/glove-mini.json', model, '--id', 'glove-mini/1');
	cli(M.store, 'schema', 'apply', schemaFile(M.dir, schema), '--domain', 'm');
	const w = cli(M.store, 'token', 'create', '--role', 'writer', '--domain', 'm');
	const ms = await serve(M.store, '--model', model);
	let r = await call(ms, 'POST', '/v1/domains/m/search', { token: w, body: { semantic: true, text: 'government' } });
	check(r.status === 400 && r.body.error.message.includes('this Domain has no vectors'), 'by meaning, before any vector: says so');
	r = await call(ms, 'POST', '/v1/domains/m/commits', { token: w, body: { embed: true, changes: [
		{ kind: 'Supplier', key: 'g', title: 'the government said', values: { vat: 'G' } },
		{ kind: 'Supplier', key: 'p', title: 'people of the world', values: { vat: 'P' } }] } });
	eq(r.status, 201);
	r = await call(ms, 'POST', '/v1/domains/m/search', { token: w, body: { semantic: true, text: 'government', limit: 1 } });
	eq([r.status, r.body.hits[0].key, r.body.model], [200, 'g', 'glove-mini/1']);
	eq(r.body.hits[0].receipt.vector.rank, 1);
	r = await call(ms, 'POST', '/v1/domains/m/commits', { token: w, body: { embed: true, vector_model: 'x', changes: [{ kind: 'Supplier', key: 'q', values: { vat: 'Q' } }] } });
	eq(r.status, 400, 'embed names its model');
	// Re-embedding: every vector anew by the server's model, recorded in the log.
	const a = cli(M.store, 'token', 'create', '--role', 'admin', '--domain', 'm');
	r = await call(ms, 'POST', '/v1/domains/m/reembed', { token: a, body: { expect_revision: 1 } });
	eq([r.status, r.body.error.code], [409, 'revision_conflict']);
	r = await call(ms, 'POST', '/v1/domains/m/reembed', { token: a, body: { message: 'again' } });
	eq([r.status, r.body.vectors, r.body.empty, r.body.model, r.body.dim], [200, 2, 0, 'glove-mini/1', 100]);
	const rev = r.body.revision;
	r = await call(ms, 'GET', `/v1/domains/m/revisions/${rev}`, { token: w });
	eq([r.body.type, r.body.message, r.body.changes], ['vectors', 'again', 0]);
	r = await call(ms, 'POST', '/v1/domains/m/search', { token: w, body: { semantic: true, text: 'government', limit: 1 } });
	eq([r.status, r.body.hits[0].key], [200, 'g']);
	eq(await stop(ms), 0);
	M.cleanup();
});

S.cleanup();
done();
