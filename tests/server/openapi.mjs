// Check real responses against the OpenAPI description the server serves:
// the response's status must be listed for its path and method, and its
// body must match the schema (type, required, properties, items, enum,
// nullable, allOf, $ref). Every response a test checks also counts as
// coverage of its route; uncovered() lists the operations no test checked.
export class Spec {
	constructor(doc) {
		this.doc = doc;
		this.seen = new Set();
	}
	ref(s) {
		while (s && s.$ref) {
			const parts = s.$ref.replace(/^#\//, '').split('/');
			s = parts.reduce((o, k) => o[k], this.doc);
		}
		return s;
	}
	template(path) {
		const segs = path.split('?')[0].split('/').filter(Boolean);
		for (const t of Object.keys(this.doc.paths)) {
			const ts = t.split('/').filter(Boolean);
			if (ts.length !== segs.length) continue;
			if (ts.every((x, i) => x.startsWith('{') || x === decodeURIComponent(segs[i]))) return t;
		}
		return null;
	}
	validate(value, schema, where, errors) {
		schema = this.ref(schema);
		if (!schema) return;
		if (schema.allOf) for (const s of schema.allOf) this.validate(value, s, where, errors);
		if (value === null) {
			if (!schema.nullable && schema.type) errors.push(`${where}: null is not allowed`);
			return;
		}
		const t = schema.type;
		const actual = Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
		if (t && !(t === actual || (t === 'number' && actual === 'integer'))) {
			errors.push(`${where}: ${actual}, expected ${t}`);
			return;
		}
		if (schema.enum && !schema.enum.includes(value)) errors.push(`${where}: ${JSON.stringify(value)} not in ${schema.enum}`);
		if (t === 'object') {
			for (const r of schema.required || []) if (!(r in value)) errors.push(`${where}: lacks ${r}`);
			for (const [k, s] of Object.entries(schema.properties || {}))
				if (k in value) this.validate(value[k], s, `${where}.${k}`, errors);
		}
		if (t === 'array' && schema.items) value.forEach((v, i) => this.validate(v, schema.items, `${where}[${i}]`, errors));
	}
	// Throws when the response does not match.
	check(method, path, res) {
		const t = this.template(path);
		if (!t) throw new Error(`${path}: no such path in the OpenAPI description`);
		const op = this.doc.paths[t][method.toLowerCase()];
		if (!op) throw new Error(`${method} ${t}: not in the OpenAPI description`);
		this.seen.add(`${method} ${t}`);
		let r = op.responses[String(res.status)];
		if (!r && res.status >= 400) {
			// Any route may refuse its input or its caller, or fail, with an error object.
			// (410: a read before the compaction horizon, described once in info.description.)
			if ([400, 401, 403, 404, 405, 410, 413, 422, 429, 500, 503, 507].includes(res.status))
				r = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } };
		}
		if (!r) throw new Error(`${method} ${t}: status ${res.status} is not described`);
		r = this.ref(r);
		const content = r.content || {};
		const json = content['application/json'];
		if (!json) return;
		if (res.body === undefined) throw new Error(`${method} ${t}: the body is not JSON`);
		const errors = [];
		this.validate(res.body, json.schema, 'body', errors);
		if (errors.length) throw new Error(`${method} ${t} ${res.status}: ${errors.slice(0, 4).join('; ')}`);
	}
	uncovered() {
		const all = [];
		for (const [p, ops] of Object.entries(this.doc.paths))
			for (const m of Object.keys(ops)) if (m !== 'parameters') all.push(`${m.toUpperCase()} ${p}`);
		return all.filter((x) => !this.seen.has(x));
	}
}
