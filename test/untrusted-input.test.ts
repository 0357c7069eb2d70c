import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createOrderInput } from '../src/domain/orders/orders.service.js';
import { schema } from '../src/domain/schema.js';
import { deriveRoute, type DerivedRoute } from '../src/rest/derive.js';
import { restRoutes } from '../src/rest/routes.js';
import { restParamForm } from '../src/shared/validation.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';

// Input as a careless or hostile client sends it, swept over every REST route's query parameters
// and every field of the order body: names and values that are also members of Object.prototype,
// and values of the wrong JSON type. Each is a 400 naming the parameter or field, in the house
// wording: never a 500, never dropped, never zod's own text.

let app: TestApp;
let admin: { key: string; accountId: string };

beforeAll(async () => {
  // Every body in the sweep reaches createOrder's per-account limit check first.
  app = await startTestApp({ env: { ORDER_CREATE_LIMIT: '100000' } });
  admin = await createTestKey(app.url, { owner: 'sweep@example.com', plan: 'enterprise', limit: 1_000_000, windowSeconds: 3600, scopes: ['admin:all'] });
  // Acting for a supplier, the key reaches the supplier-side routes' parameters too.
  await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") SELECT $1, id FROM "Supplier" WHERE "isActive" ORDER BY id LIMIT 1`, [admin.accountId]);
});
afterAll(() => app?.close());

/** Names a plain object already has: looked up in one, each is found without being given. */
const PROTOTYPE_NAMES = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];
const ZOD_WORDING = /invalid input|expected|received/i;

const asKey = (init: RequestInit = {}): RequestInit => ({ ...init, headers: { 'x-api-key': admin.key, ...init.headers } });
const samplePath = (route: Pick<DerivedRoute, 'path'>) => route.path.replace(/:\w+/g, 'no-such-thing');
// Each route's query parameters as the router derives them from its fields.
const derivedRoutes = restRoutes.map((r) => deriveRoute(r, schema));
const queryRoutes = derivedRoutes.filter((r) => r.method === 'GET' && Object.keys(r.querySchema.shape).length > 0);

/** The parser under a parameter's optional/default wrappers. */
function unwrap(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodNullable || schema instanceof z.ZodDefault) return unwrap(schema.unwrap() as z.ZodType);
  return schema;
}

/** A parameter whose values are a closed set (boolean, enum, number, a price's decimal text): a word such as `constructor` is refused. */
function isClosed(schema: z.ZodType): boolean {
  const form = restParamForm.get(unwrap(schema));
  if (form === undefined) return false;
  if (form.enum !== undefined || ['boolean', 'integer', 'number'].includes(String(form.type))) return true;
  return form.pattern !== undefined && !new RegExp(form.pattern, 'u').test('constructor');
}

function expectNoZodWording(body: unknown) {
  const text = JSON.stringify(body);
  expect(text, text).not.toMatch(ZOD_WORDING);
}

describe('query parameters named or valued like Object.prototype members', () => {
  it.each(queryRoutes.map((r) => [r.path, r] as const))('%s: every closed parameter refuses each such value by name', async (_path, route) => {
    for (const [name, schema] of Object.entries(route.querySchema.shape)) {
      for (const word of PROTOTYPE_NAMES) {
        const res = await app.get(`${route.path}?${name}=${encodeURIComponent(word)}`, asKey());
        const seen = `${route.path}?${name}=${word}: ${res.status} ${JSON.stringify(res.body)}`;
        expect(res.status, seen).toBeLessThan(500);
        if (isClosed(schema as z.ZodType)) {
          expect(res.status, seen).toBe(400);
          expect(res.body.error.code, seen).toBe('VALIDATION_ERROR');
          expect(Object.keys(res.body.error.details), seen).toEqual([name]);
        } else {
          // Free text and identifiers: such a word is a value like any other, matching what it matches.
          expect([200, 404], seen).toContain(res.status);
        }
      }
    }
  });

  it.each(restRoutes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s: each such name is an unknown parameter, named', async (_name, route) => {
    for (const word of PROTOTYPE_NAMES) {
      const init = asKey(route.method !== 'GET' ? { method: route.method, headers: { 'content-type': 'application/json' }, body: '{}' } : {});
      const res = await app.get(`${samplePath(route)}?${encodeURIComponent(word)}=1`, init);
      const seen = `${route.path}?${word}=1: ${res.status} ${JSON.stringify(res.body)}`;
      expect(res.status, seen).toBe(400);
      expect(res.body.error.details, seen).toEqual({ [word]: 'is not a recognised parameter' });
    }
  });

  it('a parameter named like a member given twice is refused as given twice, and once as unknown', async () => {
    const once = await app.get('/api/products?toString=1');
    expect(once.body.error.details).toEqual({ toString: 'is not a recognised parameter' });
    const twice = await app.get('/api/products?featured=1&featured=0');
    expect(twice.body.error.details).toEqual({ featured: 'must be given only once' });
  });

  it('path segments named like members are simply not found', async () => {
    for (const route of restRoutes.filter((r) => r.method === 'GET' && r.path.includes(':'))) {
      for (const word of PROTOTYPE_NAMES) {
        const res = await app.get(route.path.replace(/:\w+/g, word), asKey());
        expect(res.status, `${route.path} ${word}`).toBe(404);
      }
    }
  });
});

/** Every field of a body schema as a client names it: `items[0].quantity`, `shippingAddress.city`. */
function fieldPaths(schema: z.ZodType, at = ''): string[] {
  const inner = unwrap(schema);
  if (inner instanceof z.ZodPipe) return fieldPaths(inner.in as z.ZodType, at);
  if (inner instanceof z.ZodArray) return [`${at}[0]`, ...fieldPaths(inner.element as z.ZodType, `${at}[0]`)];
  if (inner instanceof z.ZodObject) {
    return Object.entries(inner.shape).flatMap(([key, field]) => {
      const path = at ? `${at}.${key}` : key;
      return [path, ...fieldPaths(field as z.ZodType, path)];
    });
  }
  return [];
}

/** A body valid in shape (the supplier does not exist, so it is never placed). */
const validShape = () => ({
  supplierId: 'no-such-supplier',
  items: [{ productId: 'no-such-product', quantity: 1, variantId: null }],
  shippingAddress: { fullName: 'A', companyName: 'B', phone: '1', email: 'a@example.com', address: 'x', city: 'y', county: 'z', postalCode: '1' },
  notes: 'n',
  couponCode: 'C',
});

const keysOf = (path: string) => path.split(/\.|\[(\d+)\]\.?/).filter((k) => k !== undefined && k !== '');

const valueAt = (body: unknown, path: string) => keysOf(path).reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], body);

function withValue(body: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const keys = keysOf(path);
  let target: Record<string, unknown> = body;
  for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
  target[keys.at(-1)!] = value;
  return body;
}

const jsonType = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

const postOrder = (body: unknown) =>
  app.get('/api/orders', asKey({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }));

describe('POST /api/orders: every body field', () => {
  const paths = fieldPaths(createOrderInput);

  it('knows the fields it sweeps', () => {
    expect(paths).toEqual(expect.arrayContaining(['supplierId', 'items', 'items[0]', 'items[0].quantity', 'shippingAddress.city', 'notes', 'couponCode']));
  });

  it('refuses each field named like a member, at every level, by name', async () => {
    for (const word of PROTOTYPE_NAMES) {
      // Written as JSON text: "__proto__" in an object literal would set a prototype, not a field.
      const field = `${JSON.stringify(word)}: 1`;
      const bodies: [string, string][] = [
        [word, `{"supplierId": "s", "items": [{"productId": "p", "quantity": 1}], ${field}}`],
        [`items[0].${word}`, `{"supplierId": "s", "items": [{"productId": "p", "quantity": 1, ${field}}]}`],
        [`shippingAddress.${word}`, `{"supplierId": "s", "items": [{"productId": "p", "quantity": 1}], "shippingAddress": {"fullName": "A", "phone": "1", "address": "x", "city": "y", "county": "z", "postalCode": "1", ${field}}}`],
      ];
      for (const [path, text] of bodies) {
        const res = await app.get('/api/orders', asKey({ method: 'POST', headers: { 'content-type': 'application/json' }, body: text }));
        expect(res.status, text).toBe(400);
        // Named with the rest of what is wrong: the made-up supplier and product (every broken rule at once).
        expect(res.body.error.details, text).toEqual({
          [path]: 'is not a recognised field',
          supplierId: 'is not an active supplier',
          'items[0].productId': 'is not an active product',
        });
      }
    }
  });

  it('refuses a value of the wrong JSON type in each field by name, in the house wording', async () => {
    const wrongValues: unknown[] = [123, true, [], {}, 'text'];
    for (const path of paths) {
      const valid = valueAt(validShape(), path);
      // A field left out of the valid body (addressId) takes a string; variantId takes only null.
      const accepted = valid === undefined ? 'string' : jsonType(valid);
      for (const value of wrongValues.filter((v) => jsonType(v) !== accepted)) {
        const body = withValue(validShape(), path, value);
        const res = await postOrder(body);
        const seen = `${path} = ${JSON.stringify(value)}: ${res.status} ${JSON.stringify(res.body)}`;
        expect(res.status, seen).toBe(400);
        expect(res.body.error.code, seen).toBe('VALIDATION_ERROR');
        expect(Object.keys(res.body.error.details), seen).toContain(path);
        expect(res.body.error.details[path], seen).toMatch(/^(must|is) /);
        expectNoZodWording(res.body);
      }
    }
  });

  it('says what a field must be when its value is a member name, never a 500', async () => {
    for (const path of paths) {
      for (const word of PROTOTYPE_NAMES) {
        const res = await postOrder(withValue(validShape(), path, word));
        const seen = `${path} = ${word}: ${res.status} ${JSON.stringify(res.body)}`;
        // Free text (notes) and identifiers accept the word; the body then fails on its made-up supplier.
        expect(res.status, seen).toBe(400);
        expect(res.body.error.details, seen).toBeTypeOf('object');
        expect(Object.keys(res.body.error.details).length, seen).toBeGreaterThan(0);
        expectNoZodWording(res.body);
      }
    }
  });
});

describe('query parameters with odd values', () => {
  const oddValues = ['', ' ', '[]', '{}', 'null', 'true', '-1', '1.5', '1e308', 'NaN', 'Infinity', '0x10', 'x'.repeat(300), '%00'];

  it.each(queryRoutes.map((r) => [r.path, r] as const))('%s: refuses each by name in the house wording, never a 500', async (_path, route) => {
    const names = Object.keys(route.querySchema.shape);
    for (const name of names) {
      for (const value of oddValues) {
        const res = await app.get(`${route.path}?${name}=${value === '%00' ? value : encodeURIComponent(value)}`, asKey());
        const seen = `${route.path}?${name}=${value}: ${res.status} ${JSON.stringify(res.body)}`;
        expect([200, 400, 404], seen).toContain(res.status);
        expectNoZodWording(res.body);
        if (res.status === 400) {
          for (const key of Object.keys(res.body.error.details)) expect(names, seen).toContain(key);
        }
      }
    }
  });
});

describe('integer parameters: plain decimal digits only', () => {
  // A sign, a leading zero, an encoded newline, a trailing space, a thin space or another script's
  // digits do not make an integer: each is a 400 naming the parameter, on every integer parameter.
  // Around 1, which every integer parameter (page, limit, rating) takes as it is.
  const loose = ['+1', '01', '\n1', '1 ', '\u20091', '\u0661', '1_', ' 1', '1.0'];

  it.each(queryRoutes.flatMap((route) =>
    Object.entries(route.querySchema.shape)
      .filter(([, parser]) => restParamForm.get(unwrap(parser as z.ZodType))?.type === 'integer')
      .map(([name]) => [`${route.path}?${name}`, route.path, name] as const),
  ))('%s', async (_, path, name) => {
    for (const value of loose) {
      const res = await app.get(`${path.replace(/:\w+/g, 'x')}?${name}=${encodeURIComponent(value)}`, asKey());
      expect([400, 404], `${name}=${JSON.stringify(value)}: ${res.status}`).toContain(res.status);
      if (res.status === 400) expect(Object.keys(res.body.error.details)).toEqual([name]);
    }
    const plain = await app.get(`${path.replace(/:\w+/g, 'x')}?${name}=1`, asKey());
    expect([200, 404]).toContain(plain.status);
  });

  it('GraphQL takes integers as numbers, so the rule is REST\'s; the page still reads "10" as 10', async () => {
    const res = await app.get('/api/products?limit=10&page=1');
    expect(res.status).toBe(200);
    expect(res.body.meta).toMatchObject({ limit: 10, page: 1 });
  });
});

describe('GraphQL input objects and variables', () => {
  it('refuses input fields named like members, and ignores no variable', async () => {
    for (const word of PROTOTYPE_NAMES) {
      const res = await app.get('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': admin.key },
        body: `{"query": "mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }",
                "variables": {"input": {"supplierId": "s", "items": [{"productId": "p", "quantity": 1}], ${JSON.stringify(word)}: 1}}}`,
      });
      expect(res.status, word).toBeLessThan(500);
      expect(res.body.errors[0].message, word).toContain(`Field "${word}" is not defined by type "CreateOrderInput"`);
      expect(res.body.errors[0].extensions.code, word).not.toBe('INTERNAL_ERROR');
    }
  });
});

describe('strings that are not well-formed Unicode', () => {
  // JSON can spell a lone surrogate ("\ud800"); no argument means one and the database cannot
  // store one. Each is refused by name, as a VALIDATION_ERROR, never an internal error.
  const gql = (query: string, variables: object) =>
    app.get('/graphql', { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': admin.key }, body: JSON.stringify({ query, variables }) });

  it.each([
    ['a search term', 'query($s: String) { products(search: $s, limit: 1) { items { id } } }', { s: '\ud800' }, 's'],
    ['a trailing half of a pair', 'query($s: String) { products(search: $s, limit: 1) { items { id } } }', { s: 'ab\udc00' }, 's'],
    ['a slug', 'query($s: String!) { product(slug: $s) { id } }', { s: 'x\ud800y' }, 's'],
    [
      'a field deep in an input object',
      'mutation($input: CreateOrderInput!) { createOrder(input: $input) { id } }',
      { input: { supplierId: 's', items: [{ productId: 'p', quantity: 1 }], shippingAddress: { fullName: '\udc00', phone: '1', address: 'a', city: 'c', county: 'c', postalCode: '1' } } },
      'input.shippingAddress.fullName',
    ],
  ])('GraphQL: %s', async (_, query, variables, at) => {
    const res = await gql(query, variables);
    // As every refusal of an operation over application/json: 200, no data, the error.
    expect(res.status).toBe(200);
    expect(res.body.data).toBeUndefined();
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { [at]: expect.stringMatching(/well-formed Unicode/) } });
    expect(JSON.stringify(res.body)).not.toMatch(/INTERNAL_ERROR|\bat \w/);
  });

  it('a well-formed pair (an emoji) is a string like any other', async () => {
    const res = await gql('query($s: String) { products(search: $s, limit: 1) { items { id } } }', { s: '\ud83d\ude00' });
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
  });

  it.each([
    ['POST /api/orders', '/api/orders', 'POST', { supplierId: 's', items: [{ productId: 'p', quantity: 1 }], notes: 'ok \ud800' }, 'notes'],
    ['POST /api/webhooks', '/api/webhooks', 'POST', { url: 'https://example.com/hook', events: ['order.created'], description: '\udfff' }, 'description'],
    ['a key of the body', '/api/orders', 'POST', { ['\ud800']: 1 }, '\ufffd'],
  ])('REST: %s', async (_, path, method, body, at) => {
    const res = await app.get(path, { method, headers: { 'content-type': 'application/json', 'x-api-key': admin.key }, body: JSON.stringify(body) });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { [at]: expect.stringMatching(/well-formed Unicode/) } });
  });
});

describe('query parameters whose percent-encoded bytes are not UTF-8', () => {
  // Read by the URL parser as U+FFFD, they were once searched for and answered 200.
  const badValues = ['%FF', '%ED%A0%80', 'ab%C3', '%C0%AF', '%F4%90%80%80'];

  it.each(['/api/products?search=', '/api/categories?search=', '/api/orders?status=', '/dashboard?page=', '/?x='])('%s…: 400 VALIDATION_ERROR naming the parameter', async (prefix) => {
    const name = prefix.slice(prefix.indexOf('?') + 1, -1);
    for (const value of badValues) {
      const res = await app.get(`${prefix}${value}`, asKey());
      const seen = `${prefix}${value}: ${res.status} ${JSON.stringify(res.body)}`;
      expect(res.status, seen).toBe(400);
      expect(res.body.error, seen).toMatchObject({ code: 'VALIDATION_ERROR', details: { [name]: 'is not valid UTF-8' } });
    }
  });

  it('on /graphql too, in GraphQL\'s shape; and a parameter name that is not UTF-8', async () => {
    const res = await app.get('/graphql?query=%7B__typename%7D&operationName=%FF');
    expect(res.status).toBe(400);
    expect(res.body.errors[0].extensions).toMatchObject({ code: 'VALIDATION_ERROR', details: { operationName: 'is not valid UTF-8' } });
    const named = await app.get('/api/products?%FF=1');
    expect(named.status).toBe(400);
    expect(named.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { query: expect.stringMatching(/not valid UTF-8/) } });
  });

  it('well-formed text, a + for a space and a % that starts no escape are read as before', async () => {
    const search = await app.get('/api/products?search=p%C4%83r%C8%9Bi+%F0%9F%98%80', asKey());
    expect(search.status).toBe(200);
    const percent = await app.get('/api/products?search=100%', asKey());
    expect(percent.status).toBe(200);
  });
});
