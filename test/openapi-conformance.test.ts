import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiJson } from '../src/openapi/serve.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';

// The document is the contract a generated client is built from: whatever it allows the service
// must take (never a 400 VALIDATION_ERROR, never a 5xx), and whatever it refuses the service must
// refuse naming the parameter. Inputs are generated from the document itself: candidate values
// from each schema's constraints (examples, enums, bounds, lengths), kept only when the schema
// allows them (Ajv, JSON Schema 2020-12), and for each constraint one value just past it.

type Json = Record<string, any>;
interface Parameter { name: string; in: string; required: boolean; schema: Json }
interface Operation { parameters: Parameter[]; requestBody?: { content: Record<string, { schema: Json }> } }

const doc = JSON.parse(openApiJson()) as { paths: Record<string, Record<string, Operation>> };
const ajv = new Ajv2020({ strict: false, validateFormats: false });
const compiled = new Map<string, ValidateFunction>();
const allows = (schema: Json, value: unknown): boolean => {
  const key = JSON.stringify(schema);
  if (!compiled.has(key)) compiled.set(key, ajv.compile(schema));
  return compiled.get(key)!(value) as boolean;
};

/** The schema without a null alternative (an optional body field also takes null). */
function nonNull(schema: Json): Json {
  if (Array.isArray(schema.anyOf)) return nonNull(schema.anyOf.find((s: Json) => s.type !== 'null') ?? schema);
  if (Array.isArray(schema.type)) return { ...schema, type: schema.type.find((t: string) => t !== 'null') };
  return schema;
}

/** Values a schema's constraints suggest, valid or not: Ajv sorts them. */
function candidates(raw: Json): unknown[] {
  const s = nonNull(raw);
  const out: unknown[] = [];
  if (s.default !== undefined) out.push(s.default);
  if (Array.isArray(s.examples)) out.push(...s.examples);
  if (Array.isArray(s.enum)) out.push(...s.enum);
  switch (s.type) {
    case 'integer':
    case 'number':
      for (const bound of [s.minimum, s.maximum]) if (typeof bound === 'number') out.push(bound);
      out.push(1);
      break;
    case 'boolean':
      out.push(true, false);
      break;
    case 'string': {
      const min = s.minLength ?? 1;
      // Letters fit every pattern the document gives a free string (ids, slugs, no control characters).
      out.push('a'.repeat(Math.max(min, 3)), 'a'.repeat(min || 1));
      if (typeof s.maxLength === 'number') out.push('a'.repeat(s.maxLength));
      if (s.format === 'email') out.push('conformance@example.com');
      // A loopback target: the test app's webhook policy allows one, and no DNS is asked.
      if (s.format === 'uri') out.push('http://127.0.0.1:9/hook', 'https://example.com/hook');
      break;
    }
    case 'array':
      out.push([generate(s.items ?? {})].filter((v) => v !== undefined));
      break;
    case 'object':
      out.push(generate(s));
      break;
  }
  return out;
}

/** Values each breaking exactly one declared constraint of `s` (and no longer allowed by it). */
function violations(raw: Json): unknown[] {
  const s = nonNull(raw);
  const out: unknown[] = [];
  if (Array.isArray(s.enum)) out.push('not-a-value');
  if (typeof s.maximum === 'number') out.push(s.maximum + 1);
  if (typeof s.minimum === 'number') out.push(s.minimum - 1);
  if (typeof s.maxLength === 'number') out.push('a'.repeat(s.maxLength + 1));
  if (s.minLength > 0) out.push('');
  if (typeof s.pattern === 'string') out.push('a\u0001b', 'a!b', '1.001', '0');
  if (s.type === 'integer') out.push(1.5);
  if (s.type === 'boolean') out.push('maybe');
  return out.filter((v) => !allows(s, v) && !allows(s, String(v)));
}

/** One value the schema allows: its required members and every optional one that fits. */
function generate(raw: Json): unknown {
  const s = nonNull(raw);
  if (s.type === 'object' && s.properties) {
    const value: Json = {};
    for (const name of s.required ?? []) value[name] = generate(s.properties[name]);
    for (const [name, property] of Object.entries<Json>(s.properties)) {
      if (name in value) continue;
      const tried = { ...value, [name]: generate(property) };
      // An optional member that would break a rule of the whole (addressId with shippingAddress) is left out.
      if (allows(s, tried)) Object.assign(value, tried);
    }
    return value;
  }
  return candidates(s).find((v) => allows(s, v));
}

/** Values schemathesis-like testers send; each the service refuses must be one the document refuses. */
const PROBES = ['a\u0001b', 'a\u007fb', '\u00c2', '922550412.3351892', '1.001', '-1', '0', 'a'.repeat(2001), ' ', 'a b'];

const asQuery = (value: unknown) => encodeURIComponent(String(value));

let app: TestApp;
let adminKey: string;
let known: { supplierId: string; productId: string };

/**
 * Rules no JSON Schema can state, so a body the document allows may still break them; the
 * generated body keeps clear of them: what must name saved data (an active supplier and its
 * product, a saved address, a coupon: checked against the database), and compareAtPrice above
 * price (a comparison of two members).
 */
/** The order's members checked against the database (an unknown supplier is refused, not undeclared). */
const DATABASE_CHECKED = new Set(['supplierId', 'items', 'addressId', 'couponCode']);

function clearOfUndeclarable(method: string, template: string, body: unknown): unknown {
  if (!body || typeof body !== 'object') return body;
  const value = { ...(body as Json) };
  if (method === 'POST' && template === '/api/orders') {
    value.supplierId = known.supplierId;
    value.items = [{ productId: known.productId, quantity: 1 }];
    delete value.addressId;
    delete value.couponCode;
  }
  if (template === '/api/v1/prices/{productId}') delete value.compareAtPrice;
  return value;
}

beforeAll(async () => {
  // Private webhook targets allowed, as in development: whether they are is the deployment's, not the document's.
  app = await startTestApp({ env: { ORDER_CREATE_LIMIT: '100000', WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const admin = await createTestKey(app.url, { owner: 'conformance@example.com', plan: 'enterprise', limit: 1_000_000, windowSeconds: 3600, scopes: ['admin:all'] });
  adminKey = admin.key;
  // Acting for a supplier, the key reaches the supplier-side routes too.
  const { rows } = await app.sql.query(
    `SELECT s.id AS "supplierId", p.id AS "productId" FROM "Supplier" s JOIN "Product" p ON p."supplierId" = s.id
      WHERE s."isActive" AND p."isActive" AND p.stock > 10 ORDER BY p.id LIMIT 1`,
  );
  known = rows[0];
  await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") SELECT $1, id FROM "Supplier" WHERE "isActive" ORDER BY id LIMIT 1`, [admin.accountId]);
}, 60_000);

afterAll(async () => {
  await app?.close();
});

const operations = Object.entries(doc.paths).flatMap(([template, item]) =>
  Object.entries(item).map(([method, operation]) => ({ template, method: method.toUpperCase(), operation })),
);

async function send(method: string, template: string, path: Record<string, string>, query: string, body?: unknown) {
  const url = template.replace(/\{(\w+)\}/g, (_m, name: string) => path[name] ?? '') + (query ? `?${query}` : '');
  const res = await app.get(url, {
    method,
    headers: { 'x-api-key': adminKey, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { ...res, url };
}

describe('the service takes what its OpenAPI document allows and refuses what it does not', () => {
  it('has something to check', () => {
    expect(operations.length).toBeGreaterThan(20);
  });

  for (const { template, method, operation } of operations) {
    it(`${method} ${template}`, async () => {
      const params = operation.parameters.filter((p) => p.in === 'path' || p.in === 'query');
      const pathParams = Object.fromEntries(params.filter((p) => p.in === 'path').map((p) => [p.name, String(generate(p.schema))]));
      const required = params.filter((p) => p.in === 'query' && p.required).map((p) => `${p.name}=${asQuery(generate(p.schema))}`);
      const bodySchema = operation.requestBody?.content['application/json']?.schema;
      const body = bodySchema ? clearOfUndeclarable(method, template, generate(bodySchema)) : undefined;
      const fine = (res: { status: number; body: any; url: string }, what: string) => {
        expect(res.status, `${method} ${res.url} ${what}: ${JSON.stringify(res.body?.error)}`).toBeLessThan(500);
        expect(res.body?.error?.code, `${method} ${res.url} ${what}: ${JSON.stringify(res.body?.error)}`).not.toBe('VALIDATION_ERROR');
      };

      if (body !== undefined) expect(allows(bodySchema!, body), `the generated body fits the document`).toBe(true);
      fine(await send(method, template, pathParams, required.join('&'), body), 'with what the document requires');

      for (const p of params.filter((x) => x.in === 'query')) {
        const others = required.filter((r) => !r.startsWith(`${p.name}=`));
        // Every value the document allows, each alone beside the required ones.
        const good = [...new Set(candidates(p.schema).map(String))].filter((v) => allows(p.schema, v) || allows(p.schema, Number(v)) || allows(p.schema, v === 'true' || (v === 'false' ? false : v)));
        for (const value of good) fine(await send(method, template, pathParams, [...others, `${p.name}=${asQuery(value)}`].join('&'), body), `(${p.name} allowed)`);
        // One value past each declared constraint: a 400 naming the parameter.
        for (const value of violations(p.schema)) {
          const res = await send(method, template, pathParams, [...others, `${p.name}=${asQuery(value)}`].join('&'), body);
          expect(res.status, `${method} ${res.url}: the document refuses ${p.name}=${JSON.stringify(value)}`).toBe(400);
          expect(res.body.error.details, `${method} ${res.url}`).toHaveProperty(p.name);
        }
        // The other way round: a value the service refuses naming the parameter, the document must refuse too.
        for (const value of PROBES) {
          const res = await send(method, template, pathParams, [...others, `${p.name}=${asQuery(value)}`].join('&'), body);
          if (res.status === 400 && res.body.error.details?.[p.name] !== undefined) {
            expect(allows(p.schema, value), `${method} ${res.url}: refused (${res.body.error.details[p.name]}) but the document allows it`).toBe(false);
          }
        }
        // Given twice: refused, as the document's description says.
        const twice = await send(method, template, pathParams, [...others, `${p.name}=${asQuery(good[0])}`, `${p.name}=${asQuery(good[0])}`].join('&'), body);
        expect(twice.status, `${method} ${twice.url}`).toBe(400);
      }
      const unknown = await send(method, template, pathParams, [...required, 'undocumented=1'].join('&'), body);
      expect(unknown.status, `${method} ${unknown.url}`).toBe(400);
      expect(unknown.body.error.details).toHaveProperty('undocumented');

      // A path segment the document's pattern refuses names nothing: 404 (as documented), never 400.
      for (const p of params.filter((x) => x.in === 'path')) {
        // Every path segment is an id or a slug, and says so.
        expect(p.schema.pattern, `${method} ${template}: {${p.name}} declares its pattern`).toBeDefined();
        const res = await send(method, template, { ...pathParams, [p.name]: '%C3%82' }, required.join('&'), body);
        expect(res.status, `${method} ${res.url}`).toBe(404);
      }

      if (bodySchema && body && typeof body === 'object') {
        const shape = nonNull(bodySchema);
        // An unknown field, where the document says additionalProperties false.
        if (shape.additionalProperties === false) {
          const res = await send(method, template, pathParams, required.join('&'), { ...body, undocumentedField: 1 });
          expect(res.status, `${method} ${res.url} with an unknown field`).toBe(400);
        }
        // A member the service refuses naming it: the document refuses it too (but what names saved data).
        for (const name of Object.keys(shape.properties ?? {}).filter((n) => !(method === 'POST' && template === '/api/orders' && DATABASE_CHECKED.has(n)))) {
          for (const value of PROBES) {
            const res = await send(method, template, pathParams, required.join('&'), { ...body, [name]: value });
            if (res.status === 400 && JSON.stringify(res.body.error.details ?? {}).includes(`"${name}`)) {
              expect(allows(bodySchema, { ...body, [name]: value }), `${method} ${res.url} with ${name}=${JSON.stringify(value)}: refused but the document allows it`).toBe(false);
            }
          }
        }
        // Each top-level member past one of its declared constraints.
        for (const [name, property] of Object.entries<Json>(shape.properties ?? {})) {
          for (const value of violations(property).slice(0, 3)) {
            const res = await send(method, template, pathParams, required.join('&'), { ...body, [name]: value });
            expect(allows(bodySchema, { ...body, [name]: value })).toBe(false);
            expect(res.status, `${method} ${res.url} with ${name}=${JSON.stringify(value)}`).toBe(400);
            expect(JSON.stringify(res.body.error.details ?? {}), `${method} ${res.url} with ${name}=${JSON.stringify(value)}`).toContain(name);
          }
        }
        // A rule of the whole the document declares (not: both members together).
        const together = shape.not?.required as string[] | undefined;
        if (together) {
          const both = { ...body, ...Object.fromEntries(together.map((n) => [n, (body as Json)[n] ?? generate(shape.properties[n])])) };
          expect(allows(bodySchema, both)).toBe(false);
          const res = await send(method, template, pathParams, required.join('&'), both);
          expect(res.status, `${method} ${res.url} with ${together.join(' and ')}`).toBe(400);
        }
      }
    }, 30_000);
  }
});
