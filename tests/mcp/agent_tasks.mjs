// What an agent's tasks cost over MCP: each task as the tool calls an agent
// would make, through the official SDK over stdio, against
// `cairn mcp --writes` on a fresh store with durable commits; for each, the
// calls, the bytes of the largest answer (the JSON text of the tool result)
// and the median latency; then remember's latency over 200 sequential calls
// and the bytes of tools/list. Run as
//   CAIRN=/abs/path/to/cairn node tests/mcp/agent_tasks.mjs [--out docs/mcp.md] [--check]
// --out replaces the block between <!-- mcp-tasks:begin --> and
// <!-- mcp-tasks:end --> of the file with the table; --check asserts the
// goals that do not depend on the machine's speed (test_agent_tasks.mjs
// runs it so in tests/run.sh): at most 2 calls a task, answers within 2 KB
// unless the task asked for more, tools/list within 8 KB.
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { test, done, check, scratch, CAIRN } from '../server/lib.mjs';
import { connect, closeAll } from './lib.mjs';

export const GOALS = { calls: 2, bytes: 2048, toolsList: 8192, rememberP50Ms: 2 };
const BEGIN = '<!-- mcp-tasks:begin -->';
const END = '<!-- mcp-tasks:end -->';

const PEOPLE = ['Dana', 'Lee', 'Noor', 'Ivo', 'Maren', 'Tariq', 'Elin', 'Bao', 'Ruth', 'Kofi'];
const PLACES = ['Oslo', 'Lyon', 'Porto', 'Graz', 'Turku'];
const TOPICS = ['the quarterly report', 'the garden project', 'the chess club', 'the new bakery', 'the bike repair', 'the book club', 'the school run', 'the budget review'];

const quantile = (xs, q) => {
	const s = [...xs].sort((a, b) => a - b);
	return s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : NaN;
};

// A session of one agent: every call counted, timed and sized under the task it belongs to.
class Agent {
	constructor(client) {
		this.client = client;
		this.tasks = new Map();
	}

	task(name, { more } = {}) {
		if (!this.tasks.has(name)) this.tasks.set(name, { name, more, rounds: [], latencies: [] });
		const t = this.tasks.get(name);
		const round = { calls: 0, bytes: [] };
		t.rounds.push(round);
		return async (tool, args) => {
			const t0 = performance.now();
			const r = await this.client.callTool({ name: tool, arguments: args });
			t.latencies.push(performance.now() - t0);
			const text = r.content && r.content[0] && r.content[0].text;
			if (r.isError) throw new Error(`${name}: ${tool} ${JSON.stringify(args).slice(0, 200)}: ${text}`);
			round.calls++;
			round.bytes.push(Buffer.byteLength(text));
			return r.structuredContent;
		};
	}

	rows() {
		return [...this.tasks.values()].map((t) => ({
			task: t.name,
			more: t.more,
			calls: Math.max(...t.rounds.map((r) => r.calls)),
			bytes: Math.max(...t.rounds.flatMap((r) => r.bytes)),
			p50: quantile(t.latencies, 0.5),
			samples: t.latencies.length,
		}));
	}
}

const need = (cond, what) => {
	if (!cond) throw new Error(what);
};

// One round of the tasks, about person n (a name no round shares).
async function round(agent, n, i) {
	const slug = n.toLowerCase().replace(/[^a-z0-9]+/g, '-');
	let a = agent.task('remember with provenance (source, confidence, message)');
	let r = await a('remember', { text: `${n} prefers green tea in the morning`, about: [n], source: `chat/${i}`, confidence: 0.9, message: 'said in the chat' });
	const tea = r.memories[0].key, person = r.memories[0].about[0].record;

	a = agent.task('recall by words (search)');
	r = await a('search', { text: `${n} tea in the morning` });
	need(r.mode === 'recall' && r.hits.some((h) => h.key === tea), `recall finds the memory: ${JSON.stringify(r.hits)}`);

	a = agent.task('relate (remember with about, link)');
	r = await a('remember', { text: `${n} works at Acme with Sam`, about: [n, 'Acme'] });
	const acme = r.memories[0].about[1].record;
	await a('link', { rel: 'related_to', from: person, to: acme, values: { role: 'employee' }, source: `chat/${i}` });

	a = agent.task('resolve before writing (resolve, remember)');
	r = await a('resolve', { text: n.toLowerCase(), kinds: ['Entity'], limit: 3 });
	need(r.matches.length && `Entity:${r.matches[0].key}` === person, `resolve finds ${n}: ${JSON.stringify(r.matches)}`);
	r = await a('remember', { text: `${n} has a cat called Miso`, about: [`Entity:${r.matches[0].key}`] });
	const cat = r.memories[0].key;

	a = agent.task('neighborhood');
	r = await a('neighborhood', { kind: 'Entity', key: person.slice(7) });
	need(r.nodes.length > 1, 'a neighborhood');

	a = agent.task('history and lineage (history, get lineage)');
	r = await a('history', { kind: 'Memory', key: tea });
	need(r.versions.length === 1, 'one version');
	r = await a('get', { kind: 'Memory', key: tea, lineage: true });
	need(r.created.source === `chat/${i}`, 'lineage');

	const branch = `agent/1/${slug}`;
	a = agent.task('branch and propose (branch, propose)');
	await a('branch', { name: branch });
	const w = agent.task('remember on the branch');
	await w('remember', { text: `${n} moved to ${PLACES[i % PLACES.length]}`, about: [n], branch, source: `chat/${i}` });
	r = await a('propose', { source: branch, title: `${n} moved`, description: 'from the chat' });
	const id = r.proposal;

	a = agent.task('follow the proposal (proposal status, diff)');
	r = await a('proposal', { id });
	need(r.status === 'open', 'open');
	r = await a('proposal', { id, action: 'diff' });
	need(r.changes === 2, `the diff: ${JSON.stringify(r)}`);

	a = agent.task('supersede (remember with supersedes)');
	r = await a('remember', { text: `${n} prefers coffee now`, about: [n], supersedes: `Memory:${tea}` });
	need(r.memories[0].superseded, 'superseded');

	a = agent.task('retract (forget)');
	await a('forget', { record: `Memory:${cat}`, message: 'not true any more' });

	a = agent.task('erase (forget how erase)');
	r = await a('forget', { record: `Memory:${cat}`, how: 'erase', message: 'the user asked to be forgotten' });
	need(r.erased.records === 1, 'erased');

	a = agent.task('digest');
	r = await a('digest', { subjects: [n] });
	need(r.memories.length > 0 && !r.memories.some((m) => m.record === `Memory:${tea}`), 'the digest leaves the superseded one out');

	a = agent.task('bulk write of 100 memories (remember memories)', { more: 'a key per memory' });
	const memories = Array.from({ length: 100 }, (_, j) => ({ text: `${n} note ${j}: ${TOPICS[j % TOPICS.length]} came up again, item ${i}-${j}`, about: [n, PEOPLE[j % PEOPLE.length]] }));
	r = await a('remember', { memories, source: `import/${i}` });
	need(r.memories === 100 && r.keys.length === 100 && r.revision > 0, 'one commit of 100, answered with counts and keys');
}

// Run every measurement on a fresh store; rounds: the times each task runs (its latency is their median).
export async function measure({ rounds = 5, model = 'none', sync = true } = {}) {
	const S = scratch();
	try {
		const args = ['mcp', '--store', S.store, '--domain', 'mem', '--writes', '--actor', 'agent/1', '--model', model, ...(sync ? [] : ['--no-sync'])];
		const client = await connect(new StdioClientTransport({ command: CAIRN, args, stderr: 'pipe' }));
		const toolsList = Buffer.byteLength(JSON.stringify(await client.listTools()));
		// The first call the instructions ask for; not a task of the table, its size is shown below it.
		const d = await client.callTool({ name: 'describe', arguments: {} });
		const describe = Buffer.byteLength(d.content[0].text);
		// remember, 200 sequential calls: also the memories the tasks then find themselves among.
		const lat = [];
		for (let j = 0; j < 200; j++) {
			const who = PEOPLE[j % PEOPLE.length];
			const args = { text: `${who} mentioned ${TOPICS[j % TOPICS.length]} on day ${j}`, about: [who], source: `chat/seed-${j % 7}`, confidence: 0.5 + (j % 5) / 10 };
			const t0 = performance.now();
			const r = await client.callTool({ name: 'remember', arguments: args });
			lat.push(performance.now() - t0);
			if (r.isError) throw new Error(`remember: ${r.content[0].text}`);
		}
		const agent = new Agent(client);
		const names = ['Ada', 'Bruno', 'Chiara', 'Dmitri', 'Esme', 'Farid', 'Greta', 'Hugo', 'Iris', 'Jonas'];
		for (let i = 0; i < rounds; i++) await round(agent, i < names.length ? names[i] : `${names[i % names.length]} ${Math.floor(i / names.length)}`, i);
		const memories = (await client.callTool({ name: 'describe', arguments: {} })).structuredContent.counts.Memory;
		await client.close();
		return { rows: agent.rows(), remember: { p50: quantile(lat, 0.5), p95: quantile(lat, 0.95), n: lat.length }, toolsList, describe, memories, rounds, sync };
	} finally {
		await closeAll();
		S.cleanup();
	}
}

export function machine() {
	let cpu = 'unknown CPU';
	try {
		const m = readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.+)$/m);
		if (m) cpu = m[1].trim();
	} catch {
		// not Linux: the name stays unknown
	}
	return `${cpu}, ${cpus().length} cores, node ${process.versions.node}, ${new Date().toISOString().slice(0, 10)}`;
}

const ms = (x) => (x < 10 ? x.toFixed(2) : x.toFixed(1));

// A paragraph as lines of at most 75 columns, as the pages are written.
const wrap = (text) => text.split(' ').reduce((ls, w) => {
	if (ls.length && ls[ls.length - 1].length + 1 + w.length <= 75) ls[ls.length - 1] += ` ${w}`;
	else ls.push(w);
	return ls;
}, []).join('\n');

export function table(m) {
	const lines = ['| task | calls | bytes of the answers (max) | latency p50 ms |', '|---|---:|---:|---:|'];
	for (const r of m.rows) lines.push(`| ${r.task} | ${r.calls} | ${r.bytes.toLocaleString('en-US')}${r.more ? ` (${r.more})` : ''} | ${ms(r.p50)} |`);
	lines.push('');
	lines.push(wrap(`remember over stdio, ${m.remember.n} sequential calls, each a ${m.sync ? 'durable commit' : 'commit not synced (--no-sync)'}: p50 ${ms(m.remember.p50)} ms, p95 ${ms(m.remember.p95)} ms (goal: p50 within ${GOALS.rememberP50Ms} ms). tools/list with every tool: ${m.toolsList.toLocaleString('en-US')} bytes (the JSON of its result); describe of the memory schema: ${m.describe.toLocaleString('en-US')} bytes. Each task ran ${m.rounds} times, on a Domain of ${m.memories.toLocaleString('en-US')} memories at the end; its latency is the median of its calls.`));
	lines.push('');
	lines.push(wrap(`Measured on ${machine()}.`));
	return lines.join('\n');
}

// Replace the block between the markers of file with text.
export function writeBlock(file, text) {
	const page = readFileSync(file, 'utf8');
	const b = page.indexOf(BEGIN), e = page.indexOf(END);
	if (b < 0 || e < b) throw new Error(`${file} lacks ${BEGIN} ... ${END}`);
	writeFileSync(file, `${page.slice(0, b + BEGIN.length)}\n${text}\n${page.slice(e)}`);
}

// The goals that do not depend on the machine's speed, as ok/FAIL lines.
export async function checkGoals(m) {
	for (const r of m.rows) {
		await test(`${r.task}: ${r.calls} calls, at most ${GOALS.calls}`, () => check(r.calls <= GOALS.calls, `${r.calls} calls`));
		if (!r.more)
			await test(`${r.task}: answers within ${GOALS.bytes} bytes (${r.bytes})`, () => check(r.bytes <= GOALS.bytes, `${r.bytes} bytes`));
	}
	await test(`tools/list within ${GOALS.toolsList} bytes (${m.toolsList})`, () => check(m.toolsList <= GOALS.toolsList, `${m.toolsList} bytes`));
}

export async function main(argv) {
	const opt = (name) => {
		const i = argv.indexOf(name);
		return i >= 0 ? argv[i + 1] : undefined;
	};
	const out = opt('--out');
	let m;
	await test('the agent tasks run', async () => {
		m = await measure({ rounds: Number(opt('--rounds') || 5), model: opt('--model') || 'none', sync: !argv.includes('--no-sync') });
	});
	if (m) {
		const t = table(m);
		console.log(t);
		if (out) writeBlock(out, t);
		if (argv.includes('--check')) await checkGoals(m);
	}
	done();
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await main(process.argv.slice(2));
