import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import formats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMIT_DEFAULT, LIMIT_MAX, PAGE_MAX } from '../src/shared/pagination.js';
import { orderStatuses } from '../src/domain/orders/orders.service.js';
import { productSorts } from '../src/domain/products/products.service.js';
import { supplierSorts } from '../src/domain/suppliers/suppliers.service.js';
import { buildOpenApiDocument, type OpenApiDocument } from '../src/openapi/document.js';
import { DOCS_CSP, openApiJson } from '../src/openapi/serve.js';
import { deriveRoute } from '../src/rest/derive.js';
import { restRoutes } from '../src/rest/routes.js';
import { schema } from '../src/domain/schema.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';
import { makeOrderFixture, type OrderFixture } from './helpers/orders.js';

// openapi.json is generated (npm run openapi:print) from the routes, their zod schemas and their
// GraphQL operations. Here: it is not stale, it is valid OpenAPI 3.1, it says what the
// validators accept, and what the running app answers fits the schemas it documents. The docs
// handler alone, without the app: test/unit/openapi-docs.test.ts.

const doc: OpenApiDocument = JSON.parse(openApiJson());

type Json = Record<string, unknown>;

/** Follows a local `#/…` reference inside the document. */
function resolve(ref: string): unknown {
  let node: unknown = doc;
  for (const part of ref.replace(/^#\//, '').split('/')) {
    node = (node as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

function eachRef(value: unknown, visit: (ref: string) => void): void {
  if (Array.isArray(value)) value.forEach((v) => eachRef(v, visit));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') visit(v);
      else eachRef(v, visit);
    }
  }
}

// Response schemas compiled with Ajv (JSON Schema 2020-12, OpenAPI 3.1's dialect), strict: a
// keyword Ajv does not know is an error, not silently ignored.
const ajv = new Ajv2020({ strict: true, allErrors: true });
formats.default(ajv);
ajv.addFormat('int32', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -(2 ** 31) && n < 2 ** 31 });
ajv.addFormat('double', { type: 'number', validate: () => true });
// #/components/schemas/X → one schema resource holding them all, so references resolve anywhere.
const COMPONENTS_ID = 'urn:marketplace:components';
const rebase = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value).replaceAll('"#/components/schemas/', `"${COMPONENTS_ID}#/$defs/`));
ajv.addSchema({ $id: COMPONENTS_ID, $defs: rebase(doc.components.schemas) as Json });

const compiled = new Map<string, ValidateFunction>();
function validator(schemaJson: unknown): ValidateFunction {
  const key = JSON.stringify(schemaJson);
  let fn = compiled.get(key);
  if (!fn) {
    fn = ajv.compile(rebase(schemaJson) as Json);
    compiled.set(key, fn);
  }
  return fn;
}

interface DocResponse {
  description: string;
  headers?: Record<string, { $ref?: string; required?: boolean; schema?: Json }>;
  content?: Record<string, { schema: Json }>;
}

/** The documented operation for a concrete request path, e.g. /api/products/abc → /api/products/{slug}. */
function operationFor(method: string, path: string) {
  const pathname = new URL(path, 'http://x').pathname;
  for (const [template, item] of Object.entries(doc.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(pathname)) return { template, operation: item[method.toLowerCase()] };
  }
  return { template: undefined, operation: undefined };
}

function documentedResponse(method: string, path: string, status: number): DocResponse {
  const { template, operation } = operationFor(method, path);
  expect(template, `${path} is documented`).toBeDefined();
  // A 405 is answered for a method the path does not take: it is documented on the path's operations.
  const op = operation ?? Object.values(doc.paths[template ?? ''] ?? {})[0];
  const response = op?.responses[String(status)] as (DocResponse & { $ref?: string }) | undefined;
  expect(response, `${method} ${template} documents ${status}`).toBeDefined();
  return (response?.$ref ? resolve(response.$ref) : response) as DocResponse;
}

/** The body and the headers fit what the document says of this response. */
function expectDocumented(method: string, path: string, res: { status: number; headers: Headers; body: unknown }) {
  const response = documentedResponse(method, path, res.status);
  const schemaJson = response.content?.['application/json']?.schema;
  if (schemaJson === undefined) {
    // A response documented without content has none (304).
    expect(res.body).toBe('');
  } else {
    const validate = validator(schemaJson);
    const ok = validate(res.body);
    expect(ok, `${method} ${path} → ${res.status}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body).slice(0, 500)}`).toBe(true);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  }
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    const definition = (header.$ref ? resolve(header.$ref) : header) as { required?: boolean; schema: Json };
    const value = res.headers.get(name);
    if (!definition.required) continue;
    expect(value, `${method} ${path} → ${res.status} carries ${name}`).not.toBeNull();
    const typed = definition.schema.type === 'integer' ? Number(value) : value;
    expect(validator(definition.schema)(typed), `${name}: ${value}`).toBe(true);
  }
}

describe('openapi.json', () => {
  it('is the document built from the routes (run `npm run openapi:print` after changing them)', () => {
    const committed = readFileSync(new URL('../openapi.json', import.meta.url), 'utf8');
    expect(committed).toBe(openApiJson());
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator31 = new Validator();
    const result = await validator31.validate(JSON.parse(openApiJson()) as Json);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator31.version).toBe('3.1');
  });

  it('has every reference resolve and every schema compile as JSON Schema 2020-12', () => {
    eachRef(doc, (ref) => expect(resolve(ref), ref).toBeDefined());
    for (const [name, s] of Object.entries(doc.components.schemas)) expect(() => validator(s), name).not.toThrow();
    for (const item of Object.values(doc.paths)) {
      for (const op of Object.values(item)) {
        for (const p of op.parameters) expect(() => validator(p.schema), p.name).not.toThrow();
        if (op.requestBody) expect(() => validator(op.requestBody?.content['application/json']?.schema)).not.toThrow();
      }
    }
  });

  it('lists the anonymous alternative ({}) beside the key schemes exactly where a key is optional', () => {
    const derived = new Map(restRoutes.map((r) => [`${r.method.toLowerCase()} ${r.path.replace(/:(\w+)/g, '{$1}')}`, deriveRoute(r, schema)]));
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const route = derived.get(`${method} ${path}`)!;
        const keys = [{ ApiKeyAuth: [...route.scopes] }, { BearerAuth: [...route.scopes] }];
        expect(op.security, `${method} ${path}`).toEqual(route.keyRequired ? keys : [{}, ...keys]);
      }
    }
    // The public catalogue: a key is optional (it only raises the rate limit).
    for (const path of ['/api/products', '/api/products/{slug}', '/api/categories', '/api/categories/{slug}', '/api/suppliers', '/api/suppliers/{id}']) {
      expect(doc.paths[path]?.get?.security, path).toEqual([{}, { ApiKeyAuth: [] }, { BearerAuth: [] }]);
    }
  });

  it('describes every REST route, with its scopes and security', () => {
    const documented = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
    expect(documented.sort()).toEqual(restRoutes.map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`).sort());
    expect(documented).toHaveLength(28);
    const op = (method: string, path: string) => doc.paths[path]?.[method];
    expect(op('get', '/api/products')?.security).toEqual([{}, { ApiKeyAuth: [] }, { BearerAuth: [] }]);
    expect(op('get', '/api/orders')?.['x-required-scopes']).toEqual(['read:orders']);
    expect(op('post', '/api/orders')?.security).toEqual([{ ApiKeyAuth: ['write:orders'] }, { BearerAuth: ['write:orders'] }]);
    expect(op('get', '/api/v1/stock')?.['x-required-scopes']).toEqual(['read:stock']);
    expect(op('get', '/api/v1/prices')?.['x-required-scopes']).toEqual(['read:prices']);
    // Any key, of any scopes: no anonymous alternative, no scope listed, never 403.
    expect(op('get', '/api/me')?.security).toEqual([{ ApiKeyAuth: [] }, { BearerAuth: [] }]);
    expect(op('get', '/api/me/addresses')?.security).toEqual([{ ApiKeyAuth: [] }, { BearerAuth: [] }]);
    expect(doc.components.securitySchemes.ApiKeyAuth).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    expect(doc.components.securitySchemes.BearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    // Error statuses each operation can answer.
    const statuses = (method: string, path: string) => Object.keys(op(method, path)?.responses ?? {});
    expect(statuses('get', '/api/products')).toEqual(['200', '304', '400', '401', '405', '429', '500', '503']);
    expect(statuses('get', '/api/products/{slug}')).toEqual(['200', '304', '400', '401', '404', '405', '429', '500', '503']);
    expect(statuses('post', '/api/orders')).toEqual(['201', '400', '401', '403', '405', '409', '413', '415', '429', '500', '503']);
    expect(statuses('get', '/api/v1/stock')).toEqual(['200', '304', '400', '401', '403', '404', '405', '429', '500', '503']);
    expect(statuses('get', '/api/me')).toEqual(['200', '304', '400', '401', '405', '429', '500', '503']);
    expect(statuses('post', '/api/orders/{id}/cancel')).toEqual(['200', '400', '401', '403', '404', '405', '409', '413', '415', '429', '500', '503']);
    expect(statuses('post', '/api/supplier/orders/{id}/status')).toEqual(['200', '400', '401', '403', '404', '405', '409', '413', '415', '429', '500', '503']);
    expect(statuses('patch', '/api/v1/prices/{productId}')).toEqual(['200', '400', '401', '403', '404', '405', '413', '415', '429', '500', '503']);
    expect(statuses('get', '/api/products/{slug}/reviews')).toEqual(['200', '304', '400', '401', '404', '405', '429', '500', '503']);
    expect(op('patch', '/api/v1/stock/{productId}')?.security).toEqual([{ ApiKeyAuth: ['write:products'] }, { BearerAuth: ['write:products'] }]);
    expect(op('get', '/api/supplier/orders')?.responses['403']).toMatchObject({ description: expect.stringContaining('requiredMembership') });
    // The cancellation's body may be left out; a status change's may not.
    expect(op('post', '/api/orders/{id}/cancel')?.requestBody?.required).toBe(false);
    expect(op('post', '/api/supplier/orders/{id}/status')?.requestBody?.required).toBe(true);
    expect(Object.keys(doc.components.headers)).toEqual(
      expect.arrayContaining(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'RateLimit-Policy', 'RateLimit', 'Retry-After']),
    );
    expect(doc.components.responses.RateLimitExceeded?.headers).toHaveProperty('Retry-After');
  });

  it('takes its parameters from the schemas that validate them', () => {
    const params = (path: string) =>
      Object.fromEntries((doc.paths[path]?.get?.parameters ?? []).filter((p) => p.in !== 'header').map((p) => [p.name, p]));
    const products = params('/api/products');
    expect(Object.keys(products)).toEqual(['page', 'limit', 'search', 'categoryId', 'supplierId', 'minPrice', 'maxPrice', 'featured', 'sortBy']);
    expect(products.page?.schema).toEqual({ type: 'integer', minimum: 1, maximum: PAGE_MAX, default: 1 });
    expect(products.limit?.schema).toEqual({ type: 'integer', minimum: 1, maximum: LIMIT_MAX, default: LIMIT_DEFAULT });
    expect(products.sortBy?.schema).toEqual({ type: 'string', enum: [...productSorts], default: 'newest' });
    expect(products.featured?.schema).toEqual({ type: 'boolean' });
    // A price is declared as the decimal text it is read as: at most 2 decimals, no float division.
    expect(products.minPrice?.schema).toMatchObject({ type: 'string', pattern: '^(?:0|[1-9][0-9]{0,9})(?:\\.[0-9]{1,2})?$' });
    expect(products.search?.schema).toMatchObject({ type: 'string', maxLength: 200 });
    expect(products.categoryId?.schema).toMatchObject({ type: 'string', pattern: '^[A-Za-z0-9_-]{1,100}$' });
    expect(params('/api/suppliers').sortBy?.schema).toEqual({ type: 'string', enum: [...supplierSorts], default: 'rating' });
    expect(params('/api/orders').status?.schema).toEqual({ type: 'string', enum: [...orderStatuses] });
    // Categories are paginated only when asked: no defaults.
    expect(params('/api/categories').page?.schema).toEqual({ type: 'integer', minimum: 1, maximum: PAGE_MAX });
    expect(params('/api/products/{slug}').slug).toMatchObject({ in: 'path', required: true, schema: { type: 'string' } });
    expect(Object.keys(params('/api/v1/stock'))).toEqual(['productId', 'sku', 'page', 'limit']);

    const body = doc.paths['/api/orders']?.post?.requestBody?.content['application/json']?.schema as Json & {
      properties: Record<string, Json & { items?: Json & { properties: Record<string, Json> } }>;
    };
    expect(body.required).toEqual(['supplierId', 'items']);
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.items).toMatchObject({ type: 'array', minItems: 1, maxItems: 100 });
    expect(body.properties.items?.items?.properties.quantity).toMatchObject({ type: 'integer', minimum: 1, maximum: 1_000_000 });
    // Descriptions of the GraphQL input type the body becomes.
    expect(body.properties.supplierId?.description).toMatch(/active supplier/);
  });

  it('is the same document however often it is built', () => {
    expect(buildOpenApiDocument({ schema, routes: restRoutes })).toEqual(doc);
  });
});

// One app for the describes that call it: they read, and write only rows of their own keys.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

describe('the running app answers as documented', () => {
  let adminKey: string;
  let adminAccountId: string;
  let catalogueKey: string;

  beforeAll(async () => {
    const admin = await createTestKey(app.url, { scopes: ['admin:all'] });
    adminKey = admin.key;
    adminAccountId = admin.accountId;
    // Acting for a supplier, the key reaches the supplier side's parameters too.
    await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") SELECT $1, id FROM "Supplier" WHERE "isActive" ORDER BY id LIMIT 1`, [admin.accountId]);
    catalogueKey = (await createTestKey(app.url, { scopes: ['read:products'] })).key;
  });

  let fixture: Promise<OrderFixture> | undefined;
  /** The order fixture, made once per database. */
  const orderFixture = () => (fixture ??= makeOrderFixture(app.sql));

  const get = async (path: string, key?: string, init: RequestInit = {}) => {
    const res = await app.get(path, { ...init, headers: { ...(key ? { 'x-api-key': key } : {}), ...(init.headers as Record<string, string>) } });
    expectDocumented(init.method ?? 'GET', path, res);
    return res;
  };

  it('catalogue lists and records', async () => {
    const products = await get('/api/products?limit=5&sortBy=price_desc&featured=true');
    expect(products.status).toBe(200);
    expect(products.body.data.length).toBeGreaterThan(0);
    const product = await get(`/api/products/${products.body.data[0].slug}`);
    expect(product.status).toBe(200);
    const unchanged = await get(`/api/products/${products.body.data[0].slug}`, undefined, { headers: { 'if-none-match': product.headers.get('etag') ?? '' } });
    expect(unchanged.status).toBe(304);
    // The schemas are exact: a field the document does not name, or a missing one, fails them.
    const productSchema = documentedResponse('GET', '/api/products/x', 200).content?.['application/json']?.schema;
    expect(validator(productSchema)({ ...product.body, data: { ...product.body.data, extra: 1 } })).toBe(false);
    const { price: _price, ...withoutPrice } = product.body.data;
    expect(validator(productSchema)({ ...product.body, data: withoutPrice })).toBe(false);
    expect(validator(productSchema)({ ...product.body, data: { ...product.body.data, price: '12.00' } })).toBe(false);

    const all = await get('/api/categories');
    expect(all.status).toBe(200);
    expect(all.body.meta).toBeUndefined();
    const paged = await get('/api/categories?includeProducts=true&parentOnly=1&limit=3');
    expect(paged.body.meta).toBeDefined();
    expect(paged.body.data[0].products).toBeDefined();
    expect((await get(`/api/categories/${all.body.data[0].slug}`)).status).toBe(200);

    const suppliers = await get('/api/suppliers?sortBy=products&limit=4', catalogueKey);
    expect(suppliers.status).toBe(200);
    expect((await get(`/api/suppliers/${suppliers.body.data[0].id}`)).status).toBe(200);
  });

  it('errors: 400, 401, 403, 404, 405, 415', async () => {
    expect((await get('/api/products?limit=0&colour=red')).status).toBe(400);
    expect((await get('/api/products/no-such-product')).status).toBe(404);
    expect((await get('/api/orders')).status).toBe(401);
    expect((await get('/api/products', 'mk_not-a-real-key')).status).toBe(401);
    expect((await get('/api/v1/stock', catalogueKey)).status).toBe(403);
    expect((await get('/api/v1/prices?sku=NO-SUCH-SKU', adminKey)).status).toBe(404);
    expect((await get('/api/products', undefined, { method: 'DELETE' })).status).toBe(405);
    expect((await get('/api/orders', adminKey, { method: 'POST', body: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
  });

  it('orders, stock and prices', async () => {
    const f = await orderFixture();
    const created = await get('/api/orders', adminKey, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 2 }], notes: null, couponCode: 'TEST10' }),
    });
    expect(created.status).toBe(201);
    expect((await get('/api/orders?status=PENDING', adminKey)).status).toBe(200);
    expect((await get(`/api/orders/${created.body.data.id}`, adminKey)).status).toBe(200);
    expect((await get('/api/v1/stock?limit=3', adminKey)).status).toBe(200);
    expect((await get(`/api/v1/stock?productId=${f.a.id}`, adminKey)).status).toBe(200);
    expect((await get(`/api/v1/prices?sku=${encodeURIComponent(f.b.sku)}`, adminKey)).status).toBe(200);
    expect((await get('/api/v1/prices', adminKey)).status).toBe(200);
  });

  it('the order lifecycle, the supplier side, and stock and price writes', async () => {
    const f = await orderFixture();
    await app.sql.query(`UPDATE "SupplierMember" SET "supplierId" = $2 WHERE "accountId" = $1`, [adminAccountId, f.supplierId]);
    const post = (path: string, body?: unknown, method = 'POST') =>
      get(path, adminKey, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
    const order = async () => (await post('/api/orders', { supplierId: f.supplierId, items: [{ productId: f.a.id, quantity: 1 }] })).body.data.id as string;
    const first = await order();
    expect((await post(`/api/orders/${first}/cancel`)).status).toBe(200);
    expect((await post(`/api/orders/${first}/cancel`, { reason: 'again' })).status).toBe(409);
    expect((await post('/api/orders/c000000000000000000000000/cancel')).status).toBe(404);
    const second = await order();
    expect((await get('/api/supplier/orders?status=PENDING', adminKey)).status).toBe(200);
    expect((await get(`/api/supplier/orders/${second}`, adminKey)).status).toBe(200);
    expect((await post(`/api/supplier/orders/${second}/status`, { status: 'CONFIRMED', note: 'ok' })).status).toBe(200);
    // Not a move from CONFIRMED (409), then one without the tracking it needs (400).
    expect((await post(`/api/supplier/orders/${second}/status`, { status: 'SHIPPED' })).status).toBe(409);
    expect((await post(`/api/supplier/orders/${second}/status`, { status: 'PROCESSING' })).status).toBe(200);
    expect((await post(`/api/supplier/orders/${second}/status`, { status: 'SHIPPED' })).status).toBe(400);
    expect((await post(`/api/v1/stock/${f.b.id}`, { lowStockThreshold: 3 }, 'PATCH')).status).toBe(200);
    expect((await post(`/api/v1/prices/${f.b.id}`, { compareAtPrice: 99.99 }, 'PATCH')).status).toBe(200);
    expect((await post(`/api/v1/prices/${f.foreign.id}`, { price: 1 }, 'PATCH')).status).toBe(404);
    expect((await get(`/api/products/${f.a.slug}/reviews?sortBy=rating_desc`)).status).toBe(200);
    expect((await get(`/api/suppliers/${f.supplierId}/reviews?rating=5`)).status).toBe(200);
    // 403 for an account acting for no supplier, as documented.
    expect((await get('/api/supplier/orders', catalogueKey)).status).toBe(403);
  });

  it('the caller’s account and addresses', async () => {
    const me = await get('/api/me', catalogueKey);
    expect(me.status).toBe(200);
    await app.sql.query(
      `INSERT INTO "Address" (id, "accountId", "fullName", phone, address, city, county, "postalCode", "isDefault")
       VALUES ('doc-address', $1, 'Ana Pop', '+40 721 000 000', 'Str. Mare 1', 'Timișoara', 'Timiș', '300001', true)`,
      [me.body.data.id],
    );
    const addresses = await get('/api/me/addresses', catalogueKey);
    expect(addresses.body.data.map((a: { id: string }) => a.id)).toContain('doc-address');
    expect((await get('/api/me')).status).toBe(401);
  });

  it('accepts each documented parameter at its bounds and refuses it past them', async () => {
    const sample = (s: Json): string | undefined => {
      if (Array.isArray(s.enum)) return String(s.enum.at(-1));
      if (Array.isArray(s.examples)) return String(s.examples[0]);
      if (s.type === 'integer' || s.type === 'number') return String(s.maximum ?? s.minimum ?? 1);
      if (s.type === 'boolean') return 'false';
      if (s.type === 'string') return 'abc';
      return undefined;
    };
    const beyond = (s: Json): string | undefined => {
      if (Array.isArray(s.enum)) return 'not-a-value';
      if (s.type === 'integer') return typeof s.maximum === 'number' ? String(s.maximum + 1) : String(Number(s.minimum) - 1);
      if (s.type === 'number') return typeof s.exclusiveMaximum === 'number' ? String(s.exclusiveMaximum) : String(Number(s.minimum) - 1);
      if (s.type === 'boolean') return 'maybe';
      if (typeof s.maxLength === 'number') return 'x'.repeat(s.maxLength + 1);
      return undefined;
    };
    for (const [template, item] of Object.entries(doc.paths)) {
      const op = item.get;
      if (!op || template.includes('{')) continue;
      for (const p of op.parameters.filter((x) => x.in === 'query')) {
        const good = sample(p.schema);
        const bad = beyond(p.schema);
        if (good !== undefined) {
          const res = await app.get(`${template}?${p.name}=${encodeURIComponent(good)}`, { headers: { 'x-api-key': adminKey } });
          expect(res.status, `${template}?${p.name}=${good}: ${JSON.stringify(res.body.error)}`).not.toBe(400);
        }
        if (bad !== undefined) {
          const res = await app.get(`${template}?${p.name}=${encodeURIComponent(bad)}`, { headers: { 'x-api-key': adminKey } });
          expect(res.status, `${template}?${p.name}=${bad.slice(0, 20)}`).toBe(400);
          expect(res.body.error.details).toHaveProperty(p.name);
        }
      }
      const unknown = await app.get(`${template}?undocumented=1`, { headers: { 'x-api-key': adminKey } });
      expect(unknown.status).toBe(400);
    }
  });
});

describe('the documentation through the app', () => {
  it('serves /api/openapi.json and /api/docs, unmetered', async () => {
    const json = await app.get('/api/openapi.json');
    expect(json.status).toBe(200);
    expect(json.body).toEqual(doc);
    // The documentation does not count against the caller's limit.
    expect(json.headers.get('x-ratelimit-limit')).toBeNull();

    const page = await app.get('/api/docs');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toBe(DOCS_CSP);
    expect(page.body).toContain('/api/docs/swagger-ui-bundle.js');
    const bundle = await fetch(`${app.base}/api/docs/swagger-ui-bundle.js`);
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    // Not a documentation path: the REST adapter's 404.
    expect((await app.get('/api/docs/nothing-here')).body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
  });
});
