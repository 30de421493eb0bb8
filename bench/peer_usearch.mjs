// The usearch peer of the vector benchmark (bench/vbench.c): the same float32
// rows and queries, recall against the same exact answers (row numbers).
//   node bench/peer_usearch.mjs NPM_DIR VECTORS.f32 DIM QUERIES.f32 TRUTH.u32 NQ K CALLS
// Prints {"build_s":..,"bytes":..} then one line per expansion_search:
// {"ef":..,"p50":..,"p95":..,"p99":..,"r10":..,"r20":..} (microseconds).
import { createRequire } from 'node:module';
import { readFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [npm, vecPath, dimS, qPath, tPath, nqS, kS, callsS] = process.argv.slice(2);
const require = createRequire(join(npm, 'package.json'));
const { Index, MetricKind } = require('usearch');
const dim = Number(dimS), nq = Number(nqS), k = Number(kS), calls = Number(callsS);

const f32 = (path) => {
	const b = readFileSync(path);
	return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
const vectors = f32(vecPath);
const n = vectors.length / dim;
const queries = f32(qPath);
const tb = readFileSync(tPath);
const truth = new Uint32Array(tb.buffer, tb.byteOffset, tb.byteLength / 4);

const keys = new BigUint64Array(n);
for (let i = 0; i < n; i++) keys[i] = BigInt(i);
const before = process.memoryUsage().rss;
const index = new Index({ metric: MetricKind.Cos, dimensions: dim });
const t0 = process.hrtime.bigint();
index.add(keys, vectors, 2);
const build = Number(process.hrtime.bigint() - t0) / 1e9;
const bytes = process.memoryUsage().rss - before;
console.log(JSON.stringify({ build_s: build, bytes: bytes }));
const file = join(tmpdir(), `cairn-usearch-${process.pid}.idx`);
index.save(file);

for (const ef of [16, 32, 64, 128, 256, 512]) {
	const ix = new Index({ metric: MetricKind.Cos, dimensions: dim, expansion_search: ef });
	ix.load(file);
	const us = [];
	let r10 = 0, r20 = 0;
	for (let w = 0; w < 30; w++) ix.search(queries.subarray((w % nq) * dim, (w % nq + 1) * dim), k, 1);
	for (let c = 0; c < calls; c++) {
		const qi = c % nq;
		const q = queries.subarray(qi * dim, (qi + 1) * dim);
		const s = process.hrtime.bigint();
		const r = ix.search(q, k, 1);
		us.push(Number(process.hrtime.bigint() - s) / 1e3);
		const want = truth.subarray(qi * k, (qi + 1) * k);
		const top10 = new Set(Array.from(want.subarray(0, 10)));
		const top20 = new Set(Array.from(want));
		let h10 = 0, h20 = 0;
		r.keys.forEach((key, i) => {
			const row = Number(key);
			if (top20.has(row)) h20++;
			if (i < 10 && top10.has(row)) h10++;
		});
		r10 += h10 / 10;
		r20 += h20 / k;
	}
	us.sort((a, b) => a - b);
	const at = (p) => us[Math.floor(us.length * p)];
	console.log(JSON.stringify({ ef, p50: at(0.5), p95: at(0.95), p99: at(0.99), r10: r10 / calls, r20: r20 / calls }));
}
unlinkSync(file);
