// Helpers for the server tests: a scratch store, tokens, a server on a free
// port, requests, and result lines in the form tests/run.sh counts
// ("ok   NAME" / "FAIL NAME: WHY").
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CAIRN = process.env.CAIRN;
if (!CAIRN) {
	console.error('set CAIRN to the cairn binary');
	process.exit(2);
}

let failures = 0;
export async function test(name, fn) {
	try {
		await fn();
		console.log(`ok   ${name}`);
	} catch (e) {
		failures++;
		console.log(`FAIL ${name}: ${e && e.stack ? e.stack.split('\n').slice(0, 3).join(' | ') : e}`);
	}
}
export function done() {
	process.exitCode = failures ? 1 : 0;
}

export function check(cond, what) {
	if (!cond) throw new Error(what || 'check failed');
}
export function eq(a, b, what) {
	if (JSON.stringify(a) !== JSON.stringify(b))
		throw new Error(`${what || 'values differ'}: ${JSON.stringify(a)} !== ${JSON.stringify(b)}`);
}

export function cli(store, ...args) {
	return execFileSync(CAIRN, [...args, '--store', store], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

// The commands that open no store (model, embed) take no --store.
export function cliNoStore(...args) {
	return execFileSync(CAIRN, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

export function scratch() {
	const dir = mkdtempSync(join(tmpdir(), 'cairn-srv-'));
	const store = join(dir, 'store');
	cli(store, 'init', store);
	return { dir, store, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function schemaFile(dir, schema) {
	const p = join(dir, `schema-${Math.random().toString(36).slice(2)}.json`);
	writeFileSync(p, JSON.stringify(schema));
	return p;
}

// Start `cairn serve` on a free port; resolves once it listens, rejects if it
// exits first (or, a guard against a hang, has not started in 5 minutes).
// Commits are not synced unless the flags include '--sync' (a test flag, not
// the server's).
export function serve(store, ...flags) {
	const sync = flags.includes('--sync');
	flags = flags.filter((f) => f !== '--sync');
	return new Promise((resolve, reject) => {
		// No model unless a test names one: the tests must not depend on models/ being there.
		const model = flags.includes('--model') ? [] : ['--model', 'none'];
		const p = spawn(CAIRN, ['serve', '--store', store, '--listen', '127.0.0.1:0', ...(sync ? [] : ['--no-sync']), ...model, ...flags],
			{ stdio: ['ignore', 'ignore', 'pipe'] });
		let err = '';
		const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 300000);
		p.stderr.on('data', (d) => {
			err += d;
			const m = err.match(/http:\/\/127\.0\.0\.1:(\d+)\//);
			if (m && !p.port) {
				clearTimeout(timer);
				p.port = Number(m[1]);
				p.base = `http://127.0.0.1:${p.port}`;
				p.log = () => err;
				resolve(p);
			}
		});
		p.on('exit', (code) => {
			p.exited = code === null ? 'signal' : code;
			if (!p.port) {
				clearTimeout(timer);
				reject(new Error(`server exited (${code}): ${err}`));
			}
		});
	});
}

export function stop(p, signal = 'SIGTERM') {
	return new Promise((resolve) => {
		if (p.exited !== undefined) return resolve(p.exited);
		p.on('exit', (code, sig) => resolve(code === null ? sig : code));
		p.kill(signal);
	});
}

// A request: returns {status, headers, body (parsed JSON when it is), text}.
export async function call(srv, method, path, { token, body, raw, headers = {} } = {}) {
	const h = { ...headers };
	if (token) h.Authorization = `Bearer ${token}`;
	let payload;
	if (raw !== undefined) payload = raw;
	else if (body !== undefined) {
		payload = JSON.stringify(body);
		h['Content-Type'] = 'application/json';
	}
	// The signal only guards against a hang: a request never answered fails the test, saying so.
	const res = await fetch(srv.base + path, { method, headers: h, body: payload, signal: AbortSignal.timeout(120000) });
	const text = await res.text();
	let json;
	try {
		json = JSON.parse(text);
	} catch {
		json = undefined;
	}
	return { status: res.status, headers: res.headers, body: json, text };
}
