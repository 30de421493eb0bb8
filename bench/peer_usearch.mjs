// The usearch peer of the vector benchmark (bench/vbench.c): the same float32
// rows and query vectors; its recall against exact cosine search over the
// same rows, computed here by brute force.
//   node bench/peer_usearch.mjs NPM_DIR VECTORS.f32 DIM QUERIES.f32 NQ K CALLS
// Prints {"build_s":..,"bytes":..} then one line per expansion_search:
// {"ef":..,"p50":..,"p95":..,"p99":..,"r10":..,"r20":..} (microseconds).
import { createRequire } from 'node:module';
import { readFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const [npm, vecPath, dimS, qPath, nqS, kS, callsS] = process.argv.slice(2);
const require = createRequire(resolve(npm, 'package.json'));
const { Index, MetricKind } = require('usearch');
const dim = Number(dimS), nq = Number(nqS), k = Number(kS), calls = Number(callsS);

const f32 = (path) => {
	const b = readFileSync(path);
	return new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
};
const vectors = f32(vecPath);
const n = vectors.length / dim;
const queries = f32(qPath);

// Exact top k of each query by cosine, over every row.
const norms = new Float64Array(n);
for (let i = 0; i < n; i++) {
	let s = 0;
	for (let d = 0, o = i * dim; d < dim; d++) s += vectors[o + d] * vectors[o + d];
	norms[i] = Math.sqrt(s);
}
const truth = [];
for (let qi = 0; qi < nq; qi++) {
	const q = queries.subarray(qi * dim, (qi + 1) * dim);
	const best = []; // [score, row], best first, at most k
	for (let i = 0; i < n; i++) {
		let s = 0;
		for (let d = 0, o = i * dim; d < dim; d++) s += vectors[o + d] * q[d];
		s = norms[i] > 0 ? s / norms[i] : 0;
		if (best.length === k && s <= best[k - 1][0]) continue;
		let at = best.length < k ? best.length : k - 1;
		best[at] = [s, i];
		while (at > 0 && best[at - 1][0] < s) {
			[best[at - 1], best[at]] = [best[at], best[at - 1]];
			at--;
		}
	}
	truth.push(best.map((b) => b[1]));
}

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
		const s = process.hrtime.bigint();
		const r = ix.search(queries.subarray(qi * dim, (qi + 1) * dim), k, 1);
		us.push(Number(process.hrtime.bigint() - s) / 1e3);
		const top10 = new Set(truth[qi].slice(0, 10)), topk = new Set(truth[qi]);
		let h10 = 0, hk = 0;
		r.keys.forEach((key, i) => {
			const row = Number(key);
			if (topk.has(row)) hk++;
			if (i < 10 && top10.has(row)) h10++;
		});
		r10 += h10 / 10;
		r20 += hk / k;
	}
	us.sort((a, b) => a - b);
	const at = (p) => us[Math.floor(us.length * p)];
	console.log(JSON.stringify({ ef, p50: at(0.5), p95: at(0.95), p99: at(0.99), r10: r10 / calls, r20: r20 / calls }));
}
unlinkSync(file);
