// The server's memory after storms of traffic (docs/reliability.md, "Memory
// after a storm"): ROUNDS rounds (default 10) of 16 concurrent clients, each
// round 240 commits of 20 Records with 1 to 3 KB of text, 240 searches and
// 240 bodies of 500 KB of broken JSON. After each round, once the server is
// idle, its anonymous resident memory (the data file's mapped pages, which
// grow with the store, left out) is read from /proc. Prints a Markdown
// table; exits 1 when the last round's figure is more than twice the
// first's. Not part of `make check` (a minute or two): `make test-hostile`.
//
//   CAIRN=build/rel/cairn node tests/server/storm.mjs [ROUNDS]
import fs from 'node:fs';
import { cli, scratch, schemaFile, serve, stop, call } from './lib.mjs';

const rounds = Number(process.argv[2] || 10);
const S = scratch();
cli(S.store, 'schema', 'apply', schemaFile(S.dir, { kinds: [{ name: 'Note', attributes: [{ name: 'body', type: 'string' }] }] }), '--domain', 'd');
const token = cli(S.store, 'token', 'create', '--role', 'writer', '--domain', 'd', '--label', 'w');
const srv = await serve(S.store);

const words = 'river stone memory agent ledger harbor signal orbit lantern meadow copper thunder'.split(' ');
let seq = 0;
const text = (n) => Array.from({ length: n }, (_, i) => words[(seq * 7 + i * 13) % words.length]).join(' ');
const broken = '{"changes":[{"kind":"Note","key":"x","values":{"body":"' + 'z'.repeat(500 * 1024);

function anonKiB(pid) {
	const m = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8').match(/^Anonymous:\s+(\d+) kB/m);
	return m ? Number(m[1]) : NaN;
}

async function client(per) {
	for (let i = 0; i < per; i++) {
		const changes = Array.from({ length: 20 }, () => {
			seq++;
			return { kind: 'Note', key: `n${seq}`, title: text(4), values: { body: text(150 + (seq % 300)) } };
		});
		await call(srv, 'POST', '/v1/domains/d/commits', { token, body: { changes } });
		await call(srv, 'GET', `/v1/domains/d/search?q=${words[i % words.length]}&limit=20`, { token });
		await call(srv, 'POST', '/v1/domains/d/commits', { token, raw: broken, headers: { 'Content-Type': 'application/json' } });
	}
}

// Idle: more than the server's trimming interval (a second) since its last
// request, then one request, whose end hands free memory back.
async function idle() {
	await new Promise((r) => setTimeout(r, 1100));
	await call(srv, 'GET', '/v1/health');
}

const after = [];
for (let r = 0; r < rounds; r++) {
	await Promise.all(Array.from({ length: 16 }, () => client(15)));
	await idle();
	after.push(anonKiB(srv.pid));
}
report();
function report() {
	const mib = (k) => (k / 1024).toFixed(0);
	console.log(`| | ${after.map((_, i) => `round ${i + 1}`).join(' | ')} |`);
	console.log(`|---|${after.map(() => '---:').join('|')}|`);
	console.log(`| anonymous resident memory (MiB) | ${after.map(mib).join(' | ')} |`);
	console.log(`\nlast / first: ${(after[after.length - 1] / after[0]).toFixed(2)} (at most 2)`);
}
await stop(srv);
S.cleanup();
process.exit(after[after.length - 1] <= 2 * after[0] ? 0 : 1);
