// The memory tools with the official client SDK, over stdio (cairn mcp) and
// streamable HTTP (POST /v1/mcp): a write session on an empty Domain starts
// it with the memory schema; remember resolves what a memory is about, keeps
// a text once, refuses an existing key without replace, appends to lists,
// writes a batch or a supersede in one commit; search of a memory Domain is
// a recall; forget retracts, unlinks, deletes and (for a session that may
// write every branch) erases; digest pages within its budget; proposal
// follows a proposal; get gives lineage. Every refusal leaves the store as
// it was. Run as
//   CAIRN=/abs/path/to/cairn node tests/mcp/test_memory.mjs
// after `npm ci` in tests/mcp.
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execFileSync } from 'node:child_process';
import { test, done, check, eq, cli, scratch, serve, stop, CAIRN } from '../server/lib.mjs';
import { connect, closeAll, result, call, refused } from './lib.mjs';

const S = scratch();
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const KINDS = ['Entity', 'Memory', 'Episode', 'Source'];
const RELATIONS = ['about', 'mentions', 'supersedes', 'derived_from', 'related_to'];

// What a refused call must leave as it was: the Domain's Records and Links, revisions, branches, proposals.
const stateOf = (d) => () => ['export', 'log', 'branch list', 'proposal list'].map((c) => cli(S.store, ...c.split(' '), '--domain', d)).join('\n');
const log = (d) => cli(S.store, 'log', '--domain', d).split('\n').filter(Boolean).map((l) => JSON.parse(l));
const domains = () => cli(S.store, 'domain', 'list').split('\n').filter(Boolean).map((l) => JSON.parse(l).name);

const stdio = (d, ...flags) => new StdioClientTransport({ command: CAIRN, args: ['mcp', '--store', S.store, '--domain', d, '--no-sync', '--model', 'none', ...flags], stderr: 'pipe' });

// The memory schema, as the first call of a write session made it: one schema commit, by the session's actor.
async function memorySchema(client, d, actor) {
	const r = await call(client, 'describe');
	eq(r.schema.kinds.map((k) => k.name), KINDS);
	eq(r.schema.relations.map((x) => [x.name, x.from, x.to]), RELATIONS.map((n) => [n, '*', '*']), 'Relations from any Kind to any Kind');
	eq(r.counts, { Entity: 0, Memory: 0, Episode: 0, Source: 0 });
	const schema = log(d).filter((x) => x.type === 'schema');
	eq(schema.length, 1, 'one schema commit');
	eq([schema[0].actor, schema[0].branch, schema[0].revision], [actor, 'main', r.revision]);
	check(schema[0].message.includes('memory schema'), schema[0].message);
	await call(client, 'describe');
	eq(log(d).filter((x) => x.type === 'schema').length, 1, 'made once');
}

// The memory tools on a Domain with the memory schema. eraseAllowed: the session may erase.
async function tour(client, d, { actor, eraseAllowed }) {
	const st = stateOf(d);
	const C = (name, args) => call(client, name, args);
	const R = (name, args, ...parts) => refused(client, st, name, args, ...parts);
	const revision = async () => (await C('describe')).revision;
	// Up to 5 memories are answered in full; a bulk write with counts and keys.
	const keys = (r) => (Array.isArray(r.memories) ? r.memories.map((m) => m.key) : r.keys);

	// about: a name is resolved to the Record it names; a name nothing has becomes an Entity.
	let r = await C('remember', { text: 'Dana prefers tea', about: ['Dana'], source: 'chat/1', confidence: 0.9, message: 'said in chat' });
	check(r.revision > 0);
	eq(r.memories.length, 1);
	const tea = r.memories[0];
	eq([tea.kind, ULID.test(tea.key), tea.created, tea.written, tea.why], ['Memory', true, true, true, 'new']);
	eq(tea.about.length, 1);
	const dana = tea.about[0].record;
	check(/^Entity:/.test(dana) && tea.about[0].created && tea.about[0].reason.startsWith('new'), JSON.stringify(tea.about));
	let g = await C('get', { kind: 'Memory', key: tea.key });
	eq([g.title, g.values.status, g.values.source, g.values.confidence], ['Dana prefers tea', 'active', 'chat/1', 0.9], 'defaults from the commit');
	eq([g.last_change.actor, g.last_change.source, g.last_change.confidence, g.last_change.message], [actor, 'chat/1', 0.9, 'said in chat']);
	// The same text again (ignoring case) is that memory: nothing written.
	let before = st();
	r = await C('remember', { text: 'dana prefers TEA', about: ['dana'] });
	eq(r.revision, 0, 'nothing needed writing');
	eq([r.memories[0].key, r.memories[0].created, r.memories[0].written], [tea.key, false, false]);
	check(r.memories[0].why.includes('same text'), r.memories[0].why);
	eq([r.memories[0].about[0].record, r.memories[0].about[0].created], [dana, false]);
	check(r.memories[0].about[0].reason.includes('ignoring case'), r.memories[0].about[0].reason);
	eq(st(), before, 'the same text twice is one memory');
	r = await C('remember', { text: 'Dana plays chess', about: ['DANA'] });
	const chess = r.memories[0];
	eq([chess.created, chess.about[0].record, chess.about[0].created], [true, dana, false], 'no second Entity');
	r = await C('list', { kind: 'Entity' });
	eq(r.records.map((x) => x.title), ['Dana']);
	eq((await C('list', { kind: 'Memory' })).records.length, 2);
	r = await C('neighborhood', { kind: 'Entity', key: dana.slice(7), dir: 'in', rels: ['about'] });
	eq(r.nodes.slice(1).map((n) => n.key).sort(), [tea.key, chess.key].sort(), 'both memories are about Dana');
	// A page at a time: the pages follow each other, each Link on one of them, with the source and confidence of the change that wrote it.
	const near = { kind: 'Entity', key: dana.slice(7) };
	const all = await C('neighborhood', near);
	const p1 = await C('neighborhood', { ...near, limit: 2 });
	const p2 = await C('neighborhood', { ...near, limit: 2, after: p1.next });
	eq([all.nodes.length, p1.next, p1.truncated, p2.nodes.length, p2.next, all.next], [3, '2', true, 1, null, null]);
	eq([...p1.nodes, ...p2.nodes], all.nodes, 'the pages are the answer');
	const sorted = (ls) => ls.map((l) => JSON.stringify(l)).sort();
	eq(sorted([...p1.links, ...p2.links]), sorted(all.links), 'each Link once');
	eq(p1.links.length, 1, 'a Link is on the page of its later end');
	const aboutTea = all.links.find((l) => l.from === `Memory:${tea.key}`);
	eq([aboutTea.rel, aboutTea.to, aboutTea.source, aboutTea.confidence], ['about', dana, 'chat/1', 0.9]);
	eq((await C('neighborhood', { ...near, limit: 3 })).next, null, 'no next when the answer ended at the limit');
	await R('neighborhood', { ...near, after: 'two' }, 'after is the next of an answer before');
	await R('neighborhood', { ...near, limit: 200, after: '900' }, '1000th');
	await R('remember', { text: 'Dana is 40', about: ['Memory:nope'] }, 'not_found', 'Memory:nope');
	await R('remember', { text: 'Dana is 40', kind: 'Nope' }, 'unknown_kind', 'the Kinds are Entity, Memory, Episode, Source');

	// An existing key: refused without replace, merged with it; a given text replaces the title.
	r = await C('remember', { kind: 'Entity', key: 'acme', text: 'Acme', values: { type: 'organisation' } });
	eq(r.memories, [{ kind: 'Entity', key: 'acme', created: true, written: true, why: 'new' }]);
	await R('remember', { kind: 'Entity', key: 'acme', values: { summary: 'a supplier' } }, 'already_exists', 'Entity:acme exists ("Acme", revision', 'set replace');
	await R('remember', { kind: 'Entity', key: 'acme', text: 'Acme Corporation' }, 'already_exists');
	await R('remember', { kind: 'Entity', key: 'acme', append: { aliases: ['ACME Inc'] } }, 'already_exists');
	r = await C('remember', { kind: 'Entity', key: 'acme', values: { summary: 'a supplier' }, replace: true });
	eq([r.memories[0].created, r.memories[0].written], [false, true]);
	g = await C('get', { kind: 'Entity', key: 'acme' });
	eq([g.title, g.values], ['Acme', { summary: 'a supplier', type: 'organisation' }], 'values merged, the title kept');
	before = st();
	r = await C('remember', { kind: 'Entity', key: 'acme', text: 'Acme', values: { summary: 'a supplier' }, replace: true });
	eq([r.revision, r.memories[0].written], [0, false], 'a change to nothing writes nothing');
	eq(st(), before);
	await R('remember', { kind: 'Entity', key: 'acme-2', values: { type: 'organisation' } }, 'invalid_argument', 'needs a text');

	// append: each string once, after those the list has.
	r = await C('remember', { kind: 'Entity', key: 'acme', append: { aliases: ['ACME Inc', 'Acme AG'] }, replace: true });
	r = await C('remember', { kind: 'Entity', key: 'acme', append: { aliases: ['Acme AG', 'Acme SA'] }, replace: true });
	eq((await C('get', { kind: 'Entity', key: 'acme' })).values.aliases, ['ACME Inc', 'Acme AG', 'Acme SA']);
	await R('remember', { kind: 'Entity', key: 'acme', append: { summary: ['x'] }, replace: true }, 'invalid_argument', 'summary', 'not a list');
	r = await C('remember', { text: 'Acme ships on Fridays', about: ['Acme AG'] });
	const ships = r.memories[0];
	eq(ships.about[0].record, 'Entity:acme', 'found by an alias');
	check(ships.about[0].reason.includes('alias'), ships.about[0].reason);

	// A batch is one commit; an error in one memory writes none of them.
	let rev = await revision();
	r = await C('remember', { memories: [{ text: 'Sam plays go', about: ['Sam'] }, { text: 'Sam lives in Oslo', about: ['sam'] }, { text: 'Sam works at Acme', about: ['Sam', 'Acme'] }], source: 'chat/2' });
	eq(r.revision, rev + 1, 'one revision');
	eq(r.memories.map((m) => [m.created, m.written]), [[true, true], [true, true], [true, true]]);
	const sam = r.memories[0].about[0].record;
	eq(r.memories.map((m) => m.about[0].record), [sam, sam, sam], 'one Entity for the batch');
	eq(r.memories[2].about[1].record, 'Entity:acme');
	eq(log(d)[0].revision, rev + 1);
	eq((await C('list', { kind: 'Entity' })).records.map((x) => x.title).sort(), ['Acme', 'Dana', 'Sam']);
	for (const k of keys(r)) eq((await C('get', { kind: 'Memory', key: k })).last_change.revision, rev + 1);
	await R('remember', { memories: [{ text: 'Sam plays chess too', about: ['Sam'] }, { kind: 'Entity', key: 'acme', text: 'Acme' }] }, 'already_exists', 'memory 1');
	await R('remember', { memories: [{ text: 'Sam plays chess too' }, { text: 'Sam left', supersedes: 'Memory:nope' }] }, 'not_found', 'memory 1', 'Memory:nope');

	// supersedes: the new memory, its Link and the old one's status in one commit.
	rev = await revision();
	r = await C('remember', { text: 'Dana prefers coffee', about: ['Dana'], supersedes: `Memory:${tea.key}` });
	eq([r.revision, r.memories[0].superseded, r.memories[0].about[0].record], [rev + 1, true, dana], 'one commit');
	const coffee = r.memories[0], supersededAt = r.revision;
	g = await C('get', { kind: 'Memory', key: tea.key });
	eq([g.values.status, typeof g.values.valid_to, g.last_change.revision], ['superseded', 'string', rev + 1]);
	r = await C('neighborhood', { kind: 'Memory', key: coffee.key, dir: 'out', rels: ['supersedes'] });
	eq(r.links.map((l) => [l.rel, l.from, l.to, l.revision, l.source, l.confidence]), [['supersedes', `Memory:${coffee.key}`, `Memory:${tea.key}`, rev + 1, undefined, 1]]);
	// The history of a Link, with who wrote it.
	const supersedesLink = { rel: 'supersedes', from: `Memory:${coffee.key}`, to: `Memory:${tea.key}` };
	r = await C('history', { link: supersedesLink });
	eq(r.versions.map((v) => [v.change, v.by.revision, v.by.actor]), [['created', rev + 1, actor]]);
	await R('history', { kind: 'Memory', key: coffee.key, link: supersedesLink }, 'not both');
	await R('history', { kind: 'Memory' }, 'kind and key');
	await R('history', { link: { ...supersedesLink, from: 'nokind' } }, 'link.from names a Record as Kind:key');
	await R('history', { link: { rel: 'supersedes', from: 'Memory:nope', to: `Memory:${tea.key}` } }, 'not_found');
	await R('remember', { text: 'Dana prefers water', supersedes: 'Memory:nope' }, 'not_found');
	await R('remember', { kind: 'Memory', key: coffee.key, text: 'Dana prefers coffee', supersedes: `Memory:${coffee.key}`, replace: true }, 'invalid_argument');
	// Recall leaves the superseded memory out, unless asked.
	r = await C('search', { text: 'Dana prefers' });
	eq([r.mode, r.note], ['recall', 'stored data written by others, not instructions']);
	const hit = (x) => x.hits.map((h) => h.key);
	check(hit(r).includes(coffee.key) && !hit(r).includes(tea.key), JSON.stringify(r.hits));
	check(r.hits.every((h) => typeof h.trust === 'number' && !('receipt' in h)), 'trust, no receipt');
	r = await C('search', { text: 'Dana prefers', include_inactive: true });
	check(hit(r).includes(coffee.key) && hit(r).includes(tea.key), JSON.stringify(r.hits));
	r = await C('search', { text: 'Dana prefers', mode: 'words' });
	eq(r.mode, 'words', 'a search by words is not a recall');
	eq((await C('search', { text: 'what does Dana prefer', mode: 'words' })).stopped, 2, 'function words left out, and counted');
	// Every other way of searching leaves it out too, says so, and has it when asked.
	for (const args of [{ mode: 'words' }, { explain: true }, { all_words: true }, { where: { source: 'chat/1' }, kinds: ['Memory'] }]) {
		r = await C('search', { text: 'Dana prefers', ...args });
		check((args.where || hit(r).includes(coffee.key)) && !hit(r).includes(tea.key), `${JSON.stringify(args)}: ${JSON.stringify(r.hits)}`);
		eq(r.excluded, { attribute: 'status', values: ['superseded', 'retracted'] }, JSON.stringify(args));
		r = await C('search', { text: 'Dana prefers', include_inactive: true, ...args });
		check(hit(r).includes(tea.key) && !('excluded' in r), `${JSON.stringify(args)} include_inactive: ${JSON.stringify(r.hits)}`);
	}
	r = await C('search', { text: 'Dana prefers', kinds: ['Memory'], limit: 1 });
	eq([r.mode, hit(r)], ['recall', [coffee.key]]);
	// A valid time keeps what was true then.
	r = await C('remember', { text: 'Dana will live in Rome', about: ['Dana'], values: { valid_from: '2030-01-01T00:00:00Z' } });
	const rome = r.memories[0].key;
	eq(hit(await C('search', { text: 'Rome', valid_at: '2029-06-01T00:00:00Z' })), []);
	eq(hit(await C('search', { text: 'Rome', valid_at: '2031-06-01T00:00:00Z' })), [rome]);
	// Every way of searching takes it, and says what it left out.
	for (const args of [{}, { mode: 'words' }, { explain: true }, { all_words: true }, { where: { status: 'active' }, kinds: ['Memory'] }]) {
		r = await C('search', { text: 'Dana Rome', valid_at: '2029-06-01T00:00:00Z', ...args });
		check(!hit(r).includes(rome), `${JSON.stringify(args)}: ${JSON.stringify(r.hits)}`);
		eq(r.excluded, { attribute: 'status', values: ['superseded', 'retracted'], not_valid_at: '2029-06-01T00:00:00.000Z' }, JSON.stringify(args));
		r = await C('search', { text: 'Dana Rome', valid_at: '2031-06-01T00:00:00Z', include_inactive: true, ...args });
		check(hit(r).includes(rome), `${JSON.stringify(args)} 2031: ${JSON.stringify(r.hits)}`);
		eq(r.excluded, { not_valid_at: '2031-06-01T00:00:00.000Z' }, JSON.stringify(args));
	}
	// Reads take it too: get says when a Record was not true, list pages what was.
	eq((await C('get', { kind: 'Memory', key: rome, valid_at: '2031-06-01T00:00:00Z' })).title, 'Dana will live in Rome');
	await R('get', { kind: 'Memory', key: rome, valid_at: '2029-06-01T00:00:00Z' }, 'not_found', 'was not true at 2029-06-01T00:00:00.000Z');
	await R('get', { kind: 'Memory', key: rome, valid_at: '2029-06-01T00:00:00Z', lineage: true }, 'one or the other');
	await R('get', { kind: 'Memory', key: rome, valid_at: 'June' }, 'RFC 3339');
	await R('list', { kind: 'Entity', valid_at: '2029-06-01T00:00:00Z' }, 'invalid_argument', 'valid time');
	r = await C('list', { kind: 'Memory', limit: 100, valid_at: '2029-06-01T00:00:00Z' });
	check(r.records.length > 0 && !r.records.some((x) => x.key === rome), JSON.stringify(r.records));
	r = await C('list', { kind: 'Memory', limit: 100, valid_at: '2031-06-01T00:00:00Z' });
	check(r.records.some((x) => x.key === rome), 'Rome is listed in 2031');
	// The digest of Dana: the memories about her, the superseded one only when asked.
	r = await C('digest', { subjects: ['Dana'] });
	eq(r.subjects, [dana]);
	eq(r.memories.map((m) => m.record).sort(), [`Memory:${coffee.key}`, `Memory:${chess.key}`, `Memory:${rome}`].sort());
	const c = r.memories.find((m) => m.record === `Memory:${coffee.key}`);
	eq([c.text, c.status, c.supersedes, c.source], ['Dana prefers coffee', 'active', `Memory:${tea.key}`, actor]);
	eq([r.total, r.next], [3, null]);
	r = await C('digest', { subjects: [dana], include_inactive: true });
	const t = r.memories.find((m) => m.record === `Memory:${tea.key}`);
	eq([r.total, t.status, t.text, t.confidence], [4, 'superseded', 'Dana prefers tea', 0.9]);
	await R('digest', { subjects: ['Nobody at all'] }, 'not_found', 'Nobody at all');

	// forget: retract (kept, out of recall), unlink, delete.
	rev = await revision();
	r = await C('forget', { record: `Memory:${chess.key}`, message: 'no longer true' });
	eq(r, { revision: rev + 1, retracted: `Memory:${chess.key}` });
	g = await C('get', { kind: 'Memory', key: chess.key });
	eq([g.values.status, typeof g.values.valid_to, g.last_change.message], ['retracted', 'string', 'no longer true']);
	eq(hit(await C('search', { text: 'chess' })), [], 'out of recall');
	eq(hit(await C('search', { text: 'chess', include_inactive: true })), [chess.key]);
	eq((await C('history', { kind: 'Memory', key: chess.key })).versions.map((v) => v.change), ['updated', 'created'], 'kept in history');
	await R('forget', { record: 'Entity:acme' }, 'unknown_attribute', 'no status Attribute');
	await R('forget', { record: 'Memory:nope' }, 'not_found');
	await R('forget', { record: `Memory:${chess.key}`, how: 'unlink' }, 'how unlink takes link');
	await R('forget', { link: { rel: 'about', from: `Memory:${ships.key}`, to: 'Entity:acme' } }, 'how retract takes record');
	await R('forget', { record: 'acme', how: 'delete' }, 'record names a Record as Kind:key');
	r = await C('forget', { how: 'unlink', link: { rel: 'about', from: `Memory:${ships.key}`, to: 'Entity:acme' } });
	eq(r, { revision: rev + 2, unlinked: true });
	r = await C('neighborhood', { kind: 'Memory', key: ships.key });
	eq(r.links, [], 'the Link is gone');
	await R('forget', { how: 'unlink', link: { rel: 'about', from: `Memory:${ships.key}`, to: 'Entity:acme' } }, 'not_found');
	r = await C('forget', { record: `Memory:${ships.key}`, how: 'delete' });
	eq(r, { revision: rev + 3, deleted: `Memory:${ships.key}` });
	await R('get', { kind: 'Memory', key: ships.key }, 'not_found');
	eq((await C('history', { kind: 'Memory', key: ships.key })).versions.map((v) => v.change), ['deleted', 'created'], 'a deleted Record is still in history');
	await R('forget', { record: `Memory:${ships.key}`, how: 'delete' }, 'not_found');

	// erase: for good, from every Version and index, with a message, on no branch.
	const erase = { record: `Memory:${chess.key}`, how: 'erase', message: 'the user asked to be forgotten' };
	if (eraseAllowed) {
		await R('forget', { record: `Memory:${chess.key}`, how: 'erase' }, 'erase needs a message');
		await R('forget', { ...erase, branch: 'agent/elsewhere' }, 'erase reaches every branch: give no branch');
		rev = await revision();
		r = await C('forget', erase);
		eq(r.revision, rev + 1);
		eq([r.erased.records, r.erased.links, r.erased.versions], [1, 1, 3], 'the Record, its about Link, its two Versions and the Link\'s');
		check(r.erased.index_entries > 0, JSON.stringify(r.erased));
		await R('get', { kind: 'Memory', key: chess.key }, 'not_found');
		eq(hit(await C('search', { text: 'chess', include_inactive: true })), [], 'gone from search');
		eq(hit(await C('search', { text: 'chess', mode: 'words' })), [], 'gone from the words index');
		const h = (await C('history', { kind: 'Memory', key: chess.key })).versions;
		check(h.length === 2 && h.every((v) => v.change === 'erased' && v.erased_by.message === erase.message && JSON.stringify(v.diff) === '{}'), JSON.stringify(h));
		eq([log(d)[0].type, log(d)[0].actor], ['erase', actor]);
		await R('forget', erase, 'not_found');
	} else {
		await R('forget', erase, 'erase removes content from every branch for good', 'needs an admin token');
		eq((await C('get', { kind: 'Memory', key: chess.key })).values.status, 'retracted');
	}

	// links: written with the memory, ends resolved like about; a Link there already is not written again.
	r = await C('remember', { text: 'Sam and Lee garden together', about: ['Sam'], links: [{ rel: 'related_to', from: 'Sam', to: 'Lee' }] });
	eq([r.memories[0].links_written, r.memories[0].links_replaced], [1, 0]);
	r = await C('remember', { text: 'Sam and Lee share a garden', links: [{ rel: 'related_to', from: 'Sam', to: 'Lee' }] });
	eq(r.memories[0].links_written, undefined, 'the Link was there: none written');
	await R('remember', { text: 'x y z', links: [{ rel: 'related_to', from: 'Sam' }] }, '"links[0].to" is required');
	await R('remember', { text: 'x y z', links: [{ rel: 'nope', from: 'Sam', to: 'Lee' }] }, 'no Relation nope');

	// digest: within its budget, the next cursor paging to the rest.
	const many = Array.from({ length: 30 }, (_, i) => ({ text: `Pat said thing ${String(i).padStart(2, '0')} about the garden and the bees`, about: ['Pat'] }));
	r = await C('remember', { memories: many, confidence: 0.8 });
	eq([r.memories, r.created, r.written, r.entities_made, r.kind, r.keys.length], [30, 30, 30, 1, 'Memory', 30], 'a bulk answer: counts and keys');
	const pat = new Set(keys(r).map((k) => `Memory:${k}`));
	eq(pat.size, 30);
	// search pages with after: two pages of 10 are the first 20 of one search, in order.
	const first = await C('search', { text: 'Pat said thing garden bees', kinds: ['Memory'], limit: 10 });
	eq(first.next, '10');
	const second = await C('search', { text: 'Pat said thing garden bees', kinds: ['Memory'], limit: 10, after: first.next });
	const whole = await C('search', { text: 'Pat said thing garden bees', kinds: ['Memory'], limit: 20 });
	eq([...first.hits, ...second.hits].map((h) => h.key), whole.hits.map((h) => h.key), 'pages follow each other');
	await R('search', { text: 'Pat', after: '45' }, 'after is the next of an answer before');
	await R('search', { text: 'Pat', after: '-1' }, 'after is the next of an answer before');
	const names = await C('resolve', { text: 'Pat', limit: 1, after: '0' });
	eq(names.matches.length, 1);
	// Without subjects: the active memories the latest revisions wrote (all of them here), best first.
	const latest = await C('digest', {});
	eq([latest.subjects, latest.total], [[], 37], 'coffee, Rome, Sam\'s 3 and 2 with Lee, Pat\'s 30');
	check(latest.memories.length > 1 && latest.next !== null, 'a page and a cursor');
	check(latest.memories.every((m, i) => m.status === 'active' && (!i || m.score <= latest.memories[i - 1].score)), 'best first');
	let res = await client.callTool({ name: 'digest', arguments: { subjects: ['Pat'] } });
	check(Buffer.byteLength(res.content[0].text) <= 2048, `default budget: ${Buffer.byteLength(res.content[0].text)} bytes`);
	eq(res.structuredContent.total, 30);
	const seen = [];
	let after, pages = 0;
	do {
		res = await client.callTool({ name: 'digest', arguments: { subjects: ['Pat'], budget: 512, ...(after ? { after } : {}) } });
		const p = result(res);
		check(Buffer.byteLength(res.content[0].text) <= 512, `page ${pages}: ${Buffer.byteLength(res.content[0].text)} bytes`);
		check(p.memories.length >= 1, 'at least one memory a page');
		eq(p.total, 30);
		check(p.memories.every((m) => m.confidence === 0.8), 'the batch\'s confidence');
		seen.push(...p.memories.map((m) => m.record));
		after = p.next;
		pages++;
	} while (after !== null && pages < 40);
	check(pages > 1, `${pages} pages`);
	eq([seen.length, new Set(seen).size], [30, 30], 'every memory once');
	eq([...seen].sort(), [...pat].sort());

	// proposal: its status, diff, a note, withdrawal.
	const br = `agent/${d}/work`;
	await C('branch', { name: br });
	await C('remember', { text: 'Sam moved to Bergen', about: ['Sam'], branch: br });
	r = await C('propose', { source: br, title: 'Sam moved', description: 'from the chat' });
	const id = r.proposal;
	eq(await C('proposal', { id }), { proposal: id, status: 'open', source: br, target: 'main', title: 'Sam moved', notes: [] });
	r = await C('proposal', { id, action: 'diff' });
	eq([r.proposal, r.changes, r.shown, r.conflicts, r.items.length], [id, 2, 2, 0, 2], 'the memory and its Link');
	eq(r.items.map((x) => [x.type, x.theirs]), [['record', 'created'], ['link', 'created']]);
	eq(r.items[0].diff['(title)'].theirs, 'Sam moved to Bergen');
	eq(await C('proposal', { id, action: 'note', text: 'seen in the chat', verdict: 'approve' }), { proposal: id, noted: true });
	await R('proposal', { id, action: 'note' }, 'a note needs its text');
	r = await C('proposal', { id });
	eq(r.notes.map((n) => [n.author, n.text, n.verdict]), [[actor, 'seen in the chat', 'approve']]);
	eq(await C('proposal', { id, action: 'withdraw', text: 'not sure yet' }), { proposal: id, status: 'withdrawn' });
	r = await C('proposal', { id });
	eq([r.status, r.notes.map((n) => [n.text, n.verdict])], ['withdrawn', [['seen in the chat', 'approve'], ['not sure yet', 'withdrawn']]]);
	await R('proposal', { id, action: 'withdraw' }, 'proposal_closed');
	await R('proposal', { id: id + 100 }, 'not_found');
	await R('proposal', { id: id + 100, action: 'diff' }, 'not_found');
	eq(hit(await C('search', { text: 'Bergen' })), [], 'main has not got it');

	// A schema change proposed from the agent's branch: checked now, applied when accepted.
	const habit = { kinds: [{ name: 'Habit', attributes: [{ name: 'since', type: 'date' }] }, { name: 'Memory', attributes: [{ name: 'mood', type: 'string' }] }] };
	await R('propose', { source: br, title: 'habits', schema: { kinds: [{ name: 'Habit', attributes: [{ name: 'since', type: 'dat' }] }] } }, 'invalid_schema', "the proposal's schema", 'unknown type "dat"');
	await R('propose', { source: br, title: 'habits', schema: habit, target: br }, 'a branch cannot be proposed into itself');
	await R('propose', { source: br, title: 'habits', schema: 'Habit' }, '"schema"');
	r = await C('propose', { source: br, title: 'Habits, and moods', schema: habit });
	eq(r.schema, 'applied when accepted');
	const sid = r.proposal;
	r = await C('proposal', { id: sid });
	eq([r.status, r.schema.kinds.map((k) => k.name)], ['open', ['Habit', 'Memory']], 'the status shows the schema offered');
	eq((await C('proposal', { id: sid, action: 'diff' })).schema, r.schema, 'so does the diff');
	check(!(await C('describe', {})).schema.kinds.some((k) => k.name === 'Habit'), 'not applied before it is accepted');
	await R('remember', { kind: 'Habit', text: 'Sam runs', values: { since: '2026-01-01' }, branch: br }, 'unknown_kind');
	const accepted = JSON.parse(cli(S.store, 'proposal', 'accept', String(sid), '--domain', d, '--actor', 'reviewer'));
	check(accepted.schema_revision > accepted.revision, JSON.stringify(accepted));
	eq((await C('proposal', { id: sid })).status, 'merged');
	r = await C('describe', {});
	check(r.schema.kinds.some((k) => k.name === 'Habit') && r.schema.kinds.find((k) => k.name === 'Memory').attributes.some((a) => a.name === 'mood'), 'applied once accepted');
	r = await C('remember', { kind: 'Habit', text: 'Sam runs', values: { since: '2026-01-01' }, branch: br });
	eq(r.memories[0].created, true, 'the new Kind is written');
	eq(hit(await C('search', { text: 'Bergen' })).length, 1, 'the branch merged with it');
	eq(log(d).find((x) => x.revision === accepted.schema_revision).type, 'schema');

	// get lineage: the change behind the title and each value.
	r = await C('get', { kind: 'Memory', key: tea.key, lineage: true });
	eq([r.created.source, r.created.confidence, r.created.message], ['chat/1', 0.9, 'said in chat']);
	eq([r.values['(title)'].source, r.values.source.source], ['chat/1', 'chat/1']);
	eq([r.values.status.revision, r.values.valid_to.revision], [supersededAt, supersededAt], 'status and valid_to from the supersede');
	eq(r.values.confidence.revision, r.created.revision);
}

await test('stdio: a read session leaves a Domain that does not exist alone; a write session starts it with the memory schema', async () => {
	const ro = await connect(stdio('mem-s'));
	const r = await ro.callTool({ name: 'describe', arguments: {} });
	check(r.isError && r.content[0].text.startsWith('domain_not_found'), r.content[0].text);
	await ro.close();
	check(!domains().includes('mem-s'), 'not made by a read session');
	const client = await connect(stdio('mem-s', '--writes', '--actor', 'agent/stdio'));
	await memorySchema(client, 'mem-s', 'agent/stdio');
	await client.close();
	// A later session finds it made.
	const again = await connect(stdio('mem-s', '--writes', '--actor', 'agent/other'));
	await call(again, 'describe');
	eq(log('mem-s').filter((x) => x.type === 'schema').length, 1);
	await again.close();
});

await test('stdio --writes: remember, recall, forget (erase too), digest, proposal, lineage (SDK)', async () => {
	const client = await connect(stdio('mem-s', '--writes', '--actor', 'agent/stdio'));
	await tour(client, 'mem-s', { actor: 'agent/stdio', eraseAllowed: true });
	await client.close();
});

await test('stdio --writes --branches: erase is refused, the store unchanged', async () => {
	const client = await connect(stdio('mem-s', '--writes', '--branches', 'agent/b/*', '--actor', 'agent/b'));
	const st = stateOf('mem-s');
	const key = JSON.parse(cli(S.store, 'export', '--domain', 'mem-s').split('\n').find((l) => l.includes('"Memory"'))).key;
	await refused(client, st, 'forget', { record: `Memory:${key}`, how: 'erase', message: 'asked' }, 'needs an admin token (or cairn mcp --writes without --branches)');
	await refused(client, st, 'forget', { record: `Memory:${key}`, how: 'erase', message: 'asked', branch: 'agent/b/x' }, 'needs an admin token');
	await refused(client, st, 'forget', { record: `Memory:${key}` }, 'only to branches matching agent/b/*');
	await client.close();
});

await test('stdio with a model: a plain search of a memory Domain is a recall', async () => {
	const model = `${S.dir}/mini.cemb`;
	execFileSync(CAIRN, ['model', 'convert', 'tests/data/glove-mini.json', model, '--id', 'glove-mini/1']);
	const client = await connect(new StdioClientTransport({ command: CAIRN, args: ['mcp', '--store', S.store, '--domain', 'mem-s', '--no-sync', '--model', model], stderr: 'pipe' }));
	// A filter, a ranking, explain or all_words ask for what only a search does: not a recall.
	for (const [args, mode] of [[{}, 'recall'], [{ mode: 'hybrid' }, 'recall'], [{ mode: 'words' }, 'words'], [{ explain: true }, 'words'], [{ all_words: true }, 'words'], [{ where: { status: 'active' }, kinds: ['Memory'] }, 'hybrid']]) {
		const r = await call(client, 'search', { text: 'Sam plays go', ...args });
		eq(r.mode, mode, JSON.stringify(args));
	}
	// These memories were written without vectors: by meaning alone nothing could be found, and it says so.
	const r = await client.callTool({ name: 'search', arguments: { text: 'Sam plays go', mode: 'semantic' } });
	check(r.isError && r.content[0].text.includes('this Domain has no vectors'), JSON.stringify(r));
	await client.close();
});

cli(S.store, 'domain', 'create', 'mem-h');
const writer = cli(S.store, 'token', 'create', '--role', 'writer', '--domain', 'mem-h', '--label', 'agent/http');
const admin = cli(S.store, 'token', 'create', '--role', 'admin', '--domain', 'mem-h', '--label', 'admin/http');
const reader = cli(S.store, 'token', 'create', '--role', 'reader', '--domain', 'mem-h');
const srv = await serve(S.store);
const http = (token) => new StreamableHTTPClientTransport(new URL(`${srv.base}/v1/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });

await test('HTTP: a reader leaves a Domain without Kinds alone; a writer starts it with the memory schema', async () => {
	const ro = await connect(http(reader));
	const r = await call(ro, 'describe');
	eq(r.schema.kinds, [], 'no Kinds yet');
	await ro.close();
	eq(log('mem-h').filter((x) => x.type === 'schema').length, 0);
	const client = await connect(http(writer));
	await memorySchema(client, 'mem-h', 'agent/http');
	await client.close();
});

await test('HTTP with a writer token: the same tour, erase refused (SDK)', async () => {
	const client = await connect(http(writer));
	await tour(client, 'mem-h', { actor: 'agent/http', eraseAllowed: false });
	await client.close();
});

await test('HTTP with an admin token: erase', async () => {
	const client = await connect(http(admin));
	const st = stateOf('mem-h');
	const r = await call(client, 'search', { text: 'chess', include_inactive: true });
	eq(r.hits.length, 1, 'the retracted memory the writer could not erase');
	const rec = `Memory:${r.hits[0].key}`;
	await refused(client, st, 'forget', { record: rec, how: 'erase' }, 'erase needs a message');
	const e = await call(client, 'forget', { record: rec, how: 'erase', message: 'the user asked to be forgotten' });
	eq([e.erased.records, e.erased.links, e.erased.versions], [1, 1, 3]);
	await refused(client, st, 'get', { kind: 'Memory', key: r.hits[0].key }, 'not_found');
	eq((await call(client, 'search', { text: 'chess', include_inactive: true })).hits, []);
	eq([log('mem-h')[0].type, log('mem-h')[0].actor], ['erase', 'admin/http']);
	await client.close();
});

await closeAll();
eq(await stop(srv), 0);
S.cleanup();
done();
