import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { schema } from '../src/domain/schema.js';
import { deriveRoute } from '../src/rest/derive.js';
import { pathPattern, withoutTrailingSlash } from '../src/shared/paths.js';
import { restRoutes, type RestMethod } from '../src/rest/routes.js';
import { errorStatus } from '../src/shared/errors.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';

// Thousands of generated malformed requests against the real app over loopback: odd query
// strings, paths, methods, headers, order bodies and GraphQL documents. Whatever arrives, the
// answer is never a 5xx, /api always answers in the envelope with a contract code, and /graphql
// always answers GraphQL's JSON. Every case is a pure function of (FUZZ_SEED, its index), so a
// failure printed as `#1234` is replayed alone with FUZZ_SEED=<seed> FUZZ_ONLY=1234.

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_122);
const DEFAULT_COUNT = 10_000;
const COUNT = Number(process.env.FUZZ_COUNT ?? DEFAULT_COUNT);
const ONLY = process.env.FUZZ_ONLY === undefined ? undefined : Number(process.env.FUZZ_ONLY);
const CONCURRENCY = 8;
/** Catches a request the app never answers; the slowest answer took 9.8 s on a 2-CPU machine at load 13. */
const REQUEST_TIMEOUT_MS = 30_000;
/**
 * A 503 with Retry-After is the service shedding load (SERVICE_UNAVAILABLE: a connection not
 * opened or checked out in time, a statement cut off; /readyz not ready): on a loaded machine it
 * answers any request so, most often while the pool opens its connections at the start. Such a
 * case is sent again after its Retry-After (at most 5 s), up to this many times; a 503 it keeps
 * answering is a failure.
 */
const UNAVAILABLE_RETRIES = 3;
/** Node's default limit on a request's header block is 16 KiB; the fuzz stays below it. */
const HEADER_BUDGET = 12_000;
/** The REST body limit (MAX_BODY_BYTES); generated bodies stay within it. */
const BODY_BUDGET = 1024 * 1024 - 1024;

const CONTRACT_CODES = new Set(Object.keys(errorStatus));

// ---------------------------------------------------------------------------------------------
// A small seeded PRNG (mulberry32) and helpers

type Rng = () => number;

function mulberry32(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const caseRng = (index: number) => mulberry32(Math.imul(SEED ^ 0x9e3779b9, 31) + Math.imul(index + 1, 0x85ebca6b));
const int = (r: Rng, min: number, max: number) => min + Math.floor(r() * (max - min + 1));
const pick = <T>(r: Rng, items: readonly T[]): T => items[Math.floor(r() * items.length)]!;
const chance = (r: Rng, p: number) => r() < p;
/** Picks a generator by weight. */
function weighted<T>(r: Rng, options: ReadonlyArray<readonly [number, () => T]>): T {
  const total = options.reduce((sum, [w]) => sum + w, 0);
  let x = r() * total;
  for (const [w, make] of options) {
    if ((x -= w) < 0) return make();
  }
  return options[options.length - 1]![1]();
}

const CHAR_POOLS = [
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_',
  ' !"#$%&\'()*+,./:;<=>?@[\\]^`{|}~',
  'ăâîșțĂÂÎȘȚşţéèüößçñ',
  '中文字符日本語한국어',
  '😀🎉👍🏽👨‍👩‍👧‍👦🇷🇴',
  '\u0301\u0308\u200b\u200c\u200d\u2060\ufeff\u202e\u202d\u00ad',
  '\u0000\u0001\u0007\b\t\n\u000b\f\r\u001b\u001f\u007f\u0085\u2028\u2029',
  '\ud800\udc00\udfff\ud83d', // lone and odd surrogates
];

function text(r: Rng, maxLength = 40): string {
  const length = chance(r, 0.1) ? 0 : int(r, 1, maxLength);
  const pools = [pick(r, CHAR_POOLS), pick(r, CHAR_POOLS)];
  let out = '';
  for (let i = 0; i < length; i++) out += pick(r, [...pick(r, pools)]);
  return out;
}

const SPECIAL_STRINGS = [
  '', ' ', '%', '_', '\\', "'", '"', "' OR 1=1 --", '"; DROP TABLE "Product"; --', '${jndi:ldap://x}', '{{7*7}}',
  '../../etc/passwd', '<script>alert(1)</script>', 'null', 'undefined', 'NaN', '__proto__', 'constructor', 'toString',
  'mașină', 'MASINA', 'ciment portland', '\u0000', 'a\u0000b', '\r\nX-Injected: 1', 'ﬀ', 'İ', 'ß', 'Ω',
];

const NUMBERISH = [
  '0', '1', '-1', '2', '12', '99', '100', '101', '2147483647', '2147483648', '-2147483649', '9007199254740993', '9'.repeat(400),
  '1e3', '1e308', '1e309', '-1e309', '1e-400', '1.5', '0.001', '.5', '5.', '-0', '+5', '0x10', '0b11', '0o7', '00012', ' 1', '1 ',
  '1,5', '1_000', 'NaN', 'Infinity', '-Infinity', '١٢', '１２', '½', 'true', '',
];

const ENUMISH = ['newest', 'price_asc', 'price_desc', 'popular', 'PRICE_ASC', 'rating', 'name', 'products', 'rating_desc', 'rating_asc', 'RATING_DESC', 'PENDING', 'pending', 'SHIPPED', 'REFUNDED', 'true', 'false', '1', '0', 'TRUE', 'yes', 'on'];

function queryValue(r: Rng): string {
  return weighted(r, [
    [3, () => pick(r, NUMBERISH)],
    [2, () => pick(r, ENUMISH)],
    [2, () => pick(r, SPECIAL_STRINGS)],
    [3, () => text(r)],
    [1, () => text(r, 400)],
    [0.5, () => 'x'.repeat(int(r, 200, 6_000))],
    [1, () => pick(r, FIXTURE_VALUES())],
  ]);
}

// ---------------------------------------------------------------------------------------------
// URL pieces: UTF-8 percent-encoding, and deliberate encoding errors

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Percent-encodes the UTF-8 bytes of `s` (lone surrogates become U+FFFD), keeping unreserved characters. */
function encode(s: string): string {
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += byte < 0x80 && UNRESERVED.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const BAD_ENCODINGS = ['%', '%%', '%g1', '%zz', '%C3', '%E0%A4', '%C0%AF', '%ED%A0%80', '%FF%FE', '%00', '%0A', '%2', '+', '%u0041', '%25', '%F4%90%80%80'];

function encodedValue(r: Rng, value: string): string {
  return weighted(r, [
    [8, () => encode(value)],
    [1, () => encode(value).replace(/%20/g, '+')],
    [1, () => encode(value) + pick(r, BAD_ENCODINGS)],
    [1, () => pick(r, BAD_ENCODINGS) + encode(value)],
    // Printable ASCII left as is (what a sloppy client sends): `&`, `=`, `#` and `?` change the parse.
    [0.5, () => [...value].map((c) => (/[!-~]/.test(c) ? c : encode(c))).join('')],
  ]);
}

/** Every REST route's query parameters, and GraphQL's over GET. */
const KNOWN_PARAMS = [
  ...new Set([...restRoutes.flatMap((route) => Object.keys(deriveRoute(route, schema).querySchema.shape)), 'query', 'variables', 'operationName', 'extensions']),
];

/** A query string; `own`, when given, is the route's parameters, sent more often than the others. */
function queryString(r: Rng, own: readonly string[] = []): string {
  if (chance(r, 0.15)) return '';
  const parts: string[] = [];
  const n = chance(r, 0.05) ? int(r, 20, 300) : int(r, 1, 6);
  for (let i = 0; i < n; i++) {
    const name = weighted(r, [
      [8, () => pick(r, own.length && chance(r, 0.5) ? own : KNOWN_PARAMS)],
      [1, () => text(r, 12)],
      [1, () => pick(r, ['__proto__', 'constructor', 'page[]', 'limit[0]', 'a.b', '', 'PAGE', 'Limit', 'sort_by'])],
    ]);
    parts.push(
      weighted(r, [
        [10, () => `${encodedValue(r, name)}=${encodedValue(r, queryValue(r))}`],
        [1, () => encodedValue(r, name)], // no '='
        [1, () => `${encodedValue(r, name)}=`],
        [0.5, () => `=${encodedValue(r, queryValue(r))}`],
        [0.5, () => `${encodedValue(r, name)}==${encodedValue(r, queryValue(r))}`],
      ]),
    );
    // The same parameter again.
    if (chance(r, 0.08)) parts.push(parts[parts.length - 1]!);
  }
  const separator = chance(r, 0.05) ? pick(r, [';', '&&', '&amp;']) : '&';
  return `?${parts.join(separator)}${chance(r, 0.03) ? '#fragment' : ''}`;
}

// ---------------------------------------------------------------------------------------------
// Real ids and slugs from the database, so some requests reach deep into the handlers

interface Fixtures {
  productIds: string[];
  productSlugs: string[];
  skus: string[];
  categorySlugs: string[];
  categoryIds: string[];
  supplierIds: string[];
  /** A supplier with some of its active products (for order bodies). */
  supplier: { id: string; productIds: string[] };
  addressIds: string[];
  orderIds: string[];
  /** The key's account's webhook endpoints. */
  webhookIds: string[];
  coupons: string[];
}

let fixtures: Fixtures;
const FIXTURE_VALUES = () => [
  ...fixtures.productIds.slice(0, 3),
  ...fixtures.productSlugs.slice(0, 3),
  ...fixtures.skus.slice(0, 3),
  ...fixtures.categoryIds.slice(0, 3),
  ...fixtures.categorySlugs.slice(0, 3),
  ...fixtures.supplierIds.slice(0, 3),
];

function segmentValue(r: Rng): string {
  return weighted(r, [
    [3, () => encode(pick(r, [...FIXTURE_VALUES(), ...fixtures.orderIds]))],
    [2, () => encode(text(r, 30))],
    [1, () => encode(pick(r, SPECIAL_STRINGS)) || 'x'],
    [1, () => pick(r, BAD_ENCODINGS)],
    [1, () => pick(r, ['%2F', 'a%2Fb', '%2e%2e', '%2E', '..', '.', '%5C', 'a;b', 'a,b', '*', '~', '%20', 'null', '0', '-1'])],
    [0.5, () => 'a'.repeat(int(r, 101, 8_000))],
  ]);
}

/** A path of `template` (its segments filled, a real value's share of the time), or a variation on it. */
function restPath(r: Rng, template: RestTemplate, realShare = 0.3): string {
  const p = fillPath(r, template, realShare);
  return weighted(r, [
    [10, () => p],
    [1, () => `${p}/`],
    [0.5, () => `${p}//`],
    [1, () => p.replace('/api/', pick(r, ['/api/./', '/api/../api/', '/api//', '/api/%2e/', '/api/%2e%2e/api/', '/api\\', '/API/', '/Api/']))],
    [1, () => `${p}/${segmentValue(r)}`],
    [0.5, () => p.replace(/\//g, pick(r, ['%2F', '%2f']))],
    [0.5, () => p.toUpperCase()],
    [1, () => pick(r, ['/api', '/api/', '/api/v1', '/api/v2/stock', '/api/openapi.json', '/api/docs', '/api/products/../../etc/passwd', '/api/%00', '/api/produse', '/api/' + 'x/'.repeat(int(r, 50, 2_000))])],
    [0.5, () => `/api/${encode(text(r, 20))}`],
  ]);
}

function otherPath(r: Rng): string {
  return pick(r, ['/', '/graphql/', '/graphql/x', '/GRAPHQL', '/favicon.ico', '/metrics', '/healthz', '/readyz', '/%2e%2e/%2e%2e/etc/passwd', '/..%2f..%2f', '*', '/' + encode(text(r, 20)), '//api/products', '/apix', '/api.json']);
}

// ---------------------------------------------------------------------------------------------
// Headers

const BAD_KEYS = [
  'mk_' + 'A'.repeat(43), 'mk_', 'mk_x', 'not a key', '', ' ', 'null', 'Bearer', 'mk_\u00e9\u00e9', 'mk_' + 'A'.repeat(4_000),
];

function authHeaders(r: Rng, valid: string): Record<string, string | string[]> {
  const bad = () => weighted(r, [
    [3, () => pick(r, BAD_KEYS)],
    [2, () => 'mk_' + [...Array(43)].map(() => pick(r, [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'])).join('')],
    [1, () => latin1(text(r, 60))],
    [1, () => valid.slice(0, int(r, 0, valid.length - 1))],
    [1, () => valid + pick(r, ['x', ' ', '=', '\t'])],
  ]);
  return weighted<Record<string, string | string[]>>(r, [
    [10, () => ({})],
    [3, () => ({ 'x-api-key': valid })],
    [2, () => ({ authorization: `${pick(r, ['Bearer', 'bearer', 'BEARER'])} ${valid}` })],
    [3, () => ({ 'x-api-key': bad() })],
    [2, () => ({ authorization: `${pick(r, ['Bearer ', 'Bearer  ', 'Basic ', 'Token ', '', 'Bearer\t', 'Digest '])}${bad()}` })],
    [1, () => ({ 'x-api-key': valid, authorization: `Bearer ${bad()}` })],
    [1, () => ({ 'x-api-key': valid, authorization: `Bearer ${valid}` })],
    [0.5, () => ({ 'x-api-key': [valid, bad()] })],
    [0.5, () => ({ 'x-api-key': [valid, valid] })],
    [0.5, () => ({ authorization: [`Bearer ${valid}`, `Bearer ${bad()}`] })],
  ]);
}

/** A header value Node will send: latin-1 only, no CR/LF/NUL. */
function latin1(s: string): string {
  return [...s].map((c) => (c.charCodeAt(0) <= 0xff && c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f ? c : '?')).join('');
}

const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json;charset=latin1', 'application/json; charset=utf-16',
  'application/jsonx', 'application/json-patch+json', 'application/graphql', 'application/graphql+json', 'text/plain', 'text/json',
  'application/x-www-form-urlencoded', 'multipart/form-data; boundary=xyz', 'multipart/form-data', '', ';', 'application/', '*/*',
  'application/json; boundary=', 'application/json; charset="utf-8"; x=' + 'y'.repeat(2_000),
];

const ACCEPTS = ['*/*', 'application/json', 'application/graphql-response+json', 'application/json, */*;q=0.5', 'text/plain', 'image/png', 'application/xml', '', 'garbage;;;q=x', 'application/*'];

function extraHeaders(r: Rng, budget: number): Record<string, string> {
  const headers: Record<string, string> = {};
  const n = weighted(r, [[8, () => 0], [2, () => int(r, 1, 5)], [0.5, () => int(r, 20, 80)]]);
  let used = 0;
  for (let i = 0; i < n && used < budget; i++) {
    const name = pick(r, ['x-', 'x-custom-', 'if-none-match', 'if-modified-since', 'origin', 'referer', 'cookie', 'x-request-id', 'accept-language', 'range', 'forwarded', 'idempotency-key', 'user-agent', 'cache-control', 'pragma', 'x-http-method-override', 'content-encoding', 'expect']) + (chance(r, 0.3) ? `${i}` : '');
    if (name === 'expect' || name === 'content-encoding') continue; // change how Node itself transfers the body
    let value = latin1(weighted(r, [[3, () => text(r, 40)], [1, () => queryValue(r)], [0.3, () => 'v'.repeat(int(r, 500, 4_000))]]));
    if (name.startsWith('x-request-id')) value = value.slice(0, 200);
    if (used + name.length + value.length > budget) break;
    used += name.length + value.length;
    headers[name] = value;
  }
  return headers;
}

/** A client address of its own per request (the app trusts loopback's X-Forwarded-For), sometimes garbage. */
function forwardedFor(r: Rng, index: number): string {
  const clientSeq = index + 1;
  return weighted(r, [
    [20, () => `10.${(clientSeq >> 16) & 255}.${(clientSeq >> 8) & 255}.${clientSeq & 255}`],
    [1, () => `${latin1(text(r, 20))}, 10.9.${(clientSeq >> 8) & 255}.${clientSeq & 255}`],
    [0.5, () => pick(r, ['garbage', '999.1.1.1', '::1', 'fe80::1%eth0', '[::1]:80', 'unknown', ', ,', `2001:db8::${(clientSeq & 0xffff).toString(16)}`])],
  ]);
}

// ---------------------------------------------------------------------------------------------
// Order bodies

function jsonValue(r: Rng, depth = 0): unknown {
  return weighted<unknown>(r, [
    [2, () => null],
    [2, () => pick(r, [true, false])],
    [3, () => pick(r, [0, 1, -1, 1.5, 10, 100, 1_000_000, 1_000_001, 2 ** 31, 2 ** 53 + 2, -0, 1e21, 1e-7, Number.MAX_VALUE])],
    [3, () => text(r, 30)],
    [1, () => pick(r, SPECIAL_STRINGS)],
    [1, () => (depth > 3 ? [] : Array.from({ length: int(r, 0, 4) }, () => jsonValue(r, depth + 1)))],
    [1, () => (depth > 3 ? {} : Object.fromEntries(Array.from({ length: int(r, 0, 4) }, () => [text(r, 10), jsonValue(r, depth + 1)])))],
    [0.5, () => 'x'.repeat(int(r, 1_000, 20_000))],
  ]);
}

function orderObject(r: Rng): Record<string, unknown> {
  const { supplier, addressIds, coupons } = fixtures;
  const items = Array.from({ length: int(r, 1, 3) }, () => ({ productId: pick(r, supplier.productIds), quantity: int(r, 1, 20) }));
  const order: Record<string, unknown> = { supplierId: supplier.id, items };
  if (chance(r, 0.3) && addressIds.length) order.addressId = pick(r, addressIds);
  if (chance(r, 0.2)) {
    order.shippingAddress = { fullName: text(r, 30), phone: '0722000000', address: text(r, 30), city: 'Cluj-Napoca', county: 'Cluj', postalCode: '400001', email: text(r, 20), companyName: text(r, 20) };
  }
  if (chance(r, 0.3)) order.notes = text(r, 200);
  if (chance(r, 0.3)) order.couponCode = chance(r, 0.5) && coupons.length ? pick(r, coupons) : text(r, 15);
  // Mutations: wrong types, unknown or missing fields, odd values.
  const mutations = int(r, 0, 4);
  for (let i = 0; i < mutations; i++) {
    const first: unknown = Array.isArray(order.items) ? order.items[0] : undefined;
    const target = chance(r, 0.5) && typeof first === 'object' && first !== null && !Array.isArray(first) ? (first as Record<string, unknown>) : order;
    const keys = Object.keys(target);
    weighted(r, [
      [3, () => keys.length && (target[pick(r, keys)] = jsonValue(r))],
      [1, () => keys.length && delete target[pick(r, keys)]],
      [1, () => (target[pick(r, ['variantId', 'extra', '__proto__', 'constructor', 'price', 'total', 'status', text(r, 8)])] = jsonValue(r))],
      [1, () => (target.quantity = pick(r, [0, -1, 1.5, '5', 1e21, 2 ** 53, 1_000_001, null, true, [], {}, 'NaN']))],
    ]);
  }
  return order;
}

/** The body bytes of a POST /api/orders. */
function orderBody(r: Rng): Buffer {
  const valid = () => JSON.stringify(orderObject(r));
  return weighted<Buffer>(r, [
    [6, () => Buffer.from(valid())],
    // Malformed JSON: truncated, extra characters, JSON5-isms, other encodings.
    [1, () => Buffer.from(valid().slice(0, int(r, 0, 60)))],
    [1, () => Buffer.from(valid().replace(/}$/, ',}'))],
    [1, () => Buffer.from(pick(r, ['', ' ', 'null', '[]', '"order"', '123', 'true', 'NaN', 'undefined', '{', '}', "{'a':1}", '{"a":1}{"b":2}', '{"items": [1,2,]}', '{"supplierId": 1e999}', '{"__proto__": {"polluted": true}, "items": []}']))],
    [0.5, () => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(valid())])],
    [0.5, () => Buffer.from(valid(), 'utf16le')],
    [0.5, () => Buffer.concat([Buffer.from('{"notes": "'), Buffer.from([0xc3, 0x28, 0xff, 0xfe]), Buffer.from('"}')])],
    [0.5, () => Buffer.from(valid().replace('"supplierId"', '"supplierId":"x","supplierId"'))],
    // Deep nesting, as the body and inside a field.
    [0.7, () => { const n = int(r, 1_000, 200_000); return Buffer.from('['.repeat(n) + ']'.repeat(n)); }],
    [0.7, () => { const n = int(r, 100, 50_000); return Buffer.from(`{"supplierId":"${fixtures.supplier.id}","items":[{"productId":"${fixtures.supplier.productIds[0]}","quantity":1}],"notes":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`); }],
    // Huge arrays within the body limit.
    [0.7, () => {
      const item = JSON.stringify({ productId: pick(r, fixtures.supplier.productIds), quantity: 1 });
      const n = Math.min(int(r, 101, 100_000), Math.floor(BODY_BUDGET / (item.length + 1)) - 10);
      return Buffer.from(`{"supplierId":"${fixtures.supplier.id}","items":[${Array(n).fill(item).join(',')}]}`);
    }],
    [0.3, () => Buffer.from(`{"supplierId":"${fixtures.supplier.id}","items":[${Array(int(r, 1_000, 150_000)).fill('1').join(',')}]}`)],
    [0.3, () => Buffer.from(JSON.stringify({ ...orderObject(r), notes: 'ș'.repeat(int(r, 1_000, 400_000)) }))],
    [0.5, () => Buffer.from(JSON.stringify(jsonValue(r)))],
  ]);
}

/**
 * What the fuzz sends in the body of a route taking one (keyed `METHOD path`): an object of the
 * body's shape, with the values that reach deep into its handler; writeRequest then mutates it.
 */
const BODIES: Readonly<Record<string, (r: Rng) => Record<string, unknown>>> = {
  'POST /api/orders': orderObject,
  'POST /api/orders/:id/cancel': (r) => (chance(r, 0.5) ? { reason: text(r, 600) } : {}),
  'POST /api/supplier/orders/:id/status': (r) => ({
    status: pick(r, ['CONFIRMED', 'PROCESSING', 'SHIPPED', 'DELIVERED', 'REFUNDED', 'CANCELLED', 'PENDING', 'shipped', '', 'LOST']),
    ...(chance(r, 0.5) ? { trackingNumber: text(r, 120), trackingCarrier: text(r, 30) } : {}),
    ...(chance(r, 0.3) ? { trackingUrl: pick(r, ['https://t.example/1', 'http://t.example/?a=b#c', 'javascript:alert(1)', 'ftp://x', text(r, 40), 'https://' + 'x'.repeat(600)]) } : {}),
    ...(chance(r, 0.3) ? { note: text(r, 600) } : {}),
  }),
  'PATCH /api/v1/stock/:productId': (r) => ({
    stock: int(r, -5, 1_000),
    ...(chance(r, 0.3) ? { lowStockThreshold: Number(pick(r, NUMBERISH)) } : {}),
    ...(chance(r, 0.3) ? { trackInventory: chance(r, 0.5) } : {}),
  }),
  'PATCH /api/v1/prices/:productId': (r) => ({
    price: chance(r, 0.5) ? pick(r, NUMBERISH) : Number(pick(r, NUMBERISH)),
    ...(chance(r, 0.3) ? { compareAtPrice: chance(r, 0.3) ? null : pick(r, NUMBERISH) } : {}),
    ...(chance(r, 0.3) ? { vatRate: pick(r, [0.21, 0.11, 0, '0.21', 0.19, -1, 21, '1e-400', 'x']) } : {}),
  }),
  'POST /api/webhooks': (r) => ({
    url: pick(r, [
      'https://hooks.example/x',
      'http://127.0.0.1/x',
      'http://localhost/x',
      'http://169.254.169.254/latest/meta-data/',
      'http://[::ffff:7f00:1]/',
      'http://0x7f.1/',
      'https://user:pw@hooks.example/',
      'javascript:alert(1)',
      'file:///etc/passwd',
      'gopher://x:70/_',
      text(r, 40),
      'https://' + 'x'.repeat(3000),
    ]),
    events: chance(r, 0.8) ? [pick(r, ['order.created', 'order.status_changed', 'stock.low', 'webhook.test', '', 'ORDER.CREATED'])] : pick(r, [[], 'order.created', null, {}]),
    ...(chance(r, 0.3) ? { description: text(r, 600) } : {}),
  }),
};

/** Real values of a `:name` segment, by the collection it follows (/api/orders/:id: an order's id). */
const REAL_SEGMENTS: Readonly<Record<string, () => string[]>> = {
  products: () => fixtures.productSlugs,
  categories: () => fixtures.categorySlugs,
  suppliers: () => fixtures.supplierIds,
  orders: () => fixtures.orderIds,
  stock: () => fixtures.supplier.productIds,
  prices: () => fixtures.supplier.productIds,
  webhooks: () => fixtures.webhookIds,
};

interface RestTemplate {
  method: RestMethod;
  path: string;
  /** Real values of each `:name` segment of the path, in order (none known: only generated ones). */
  segments: Array<() => string[]>;
  /** The route's own query parameters. */
  query: string[];
  /** An object of the body's shape; absent: the route takes no body. */
  body?: (r: Rng) => Record<string, unknown>;
}

/**
 * Every REST route, read from the route table: a new route is fuzzed as it is added. A body the
 * fuzz has no maker for gets its members (from the route's body schema) with random JSON values.
 */
const REST_TEMPLATES: RestTemplate[] = restRoutes.map((route) => {
  const derived = deriveRoute(route, schema);
  const parts = route.path.split('/');
  const members = derived.body?.schema instanceof z.ZodObject ? Object.keys(derived.body.schema.shape) : [];
  return {
    method: route.method,
    path: route.path,
    segments: parts.flatMap((part, i) => (part.startsWith(':') ? [REAL_SEGMENTS[parts[i - 1]!] ?? (() => [])] : [])),
    query: Object.keys(derived.querySchema.shape),
    ...(derived.body ? { body: BODIES[`${route.method} ${route.path}`] ?? ((r: Rng) => Object.fromEntries(members.map((m) => [m, jsonValue(r)]))) } : {}),
  };
});

/** The routes that change something; writeRequest sends them bodies. */
const WRITE_TEMPLATES = REST_TEMPLATES.filter((t) => t.method !== 'GET');

/** The template's path, each segment a real value `realShare` of the time, else a generated one. */
function fillPath(r: Rng, template: RestTemplate, realShare: number): string {
  let i = 0;
  return template.path.replace(/:\w+/g, () => {
    const real = template.segments[i++]!();
    return real.length && chance(r, realShare) ? encode(pick(r, real)) : segmentValue(r);
  });
}

/** A request to one of WRITE_TEMPLATES: its path (a real id, mostly), its method (mostly), and its body, mutated or malformed. */
function writeRequest(r: Rng): { method: string; path: string; body: Buffer } {
  const endpoint = pick(r, WRITE_TEMPLATES);
  const path = fillPath(r, endpoint, 0.8);
  // A route that takes no body (DELETE /api/webhooks/:id) is sent one all the same.
  const bodyOf = endpoint.body ?? ((): Record<string, unknown> => ({}));
  const valid = () => {
    const target = bodyOf(r);
    for (let i = int(r, 0, 3); i > 0; i--) {
      const keys = Object.keys(target);
      weighted(r, [
        [3, () => keys.length && (target[pick(r, keys)] = jsonValue(r))],
        [1, () => keys.length && delete target[pick(r, keys)]],
        [1, () => (target[pick(r, ['extra', '__proto__', 'constructor', 'id', 'sku', 'supplierId', text(r, 8)])] = jsonValue(r))],
      ]);
    }
    return JSON.stringify(target);
  };
  const body = weighted<Buffer>(r, [
    [6, () => Buffer.from(valid())],
    [1, () => Buffer.from(valid().slice(0, int(r, 0, 40)))],
    [1, () => Buffer.from(pick(r, ['', ' ', 'null', '[]', '"x"', '123', '{', "{'a':1}", '{"a":1}{"b":2}', '{"stock": 1e999}', '{"price": 1e999}', '{"__proto__": {"status": "CANCELLED"}}']))],
    [0.5, () => Buffer.from(valid(), 'utf16le')],
    [0.5, () => { const n = int(r, 1_000, 100_000); return Buffer.from('{"note":' + '['.repeat(n) + ']'.repeat(n) + '}'); }],
    [0.3, () => Buffer.from(JSON.stringify({ ...bodyOf(r), note: 'ș'.repeat(int(r, 1_000, 300_000)) }))],
  ]);
  return { method: chance(r, 0.9) ? endpoint.method : pick(r, METHODS), path, body };
}

// ---------------------------------------------------------------------------------------------
// GraphQL documents

const GQL_TOKENS = [
  '{', '}', '(', ')', '[', ']', ':', '$', '!', '@', '...', '=', '|', '&', ',', 'query', 'mutation', 'subscription', 'fragment', 'on',
  'products', 'product', 'categories', 'suppliers', 'supplier', 'orders', 'order', 'stock', 'prices', 'productsConnection', 'createOrder',
  'productReviews', 'supplierReviews', 'reviewSummary', 'histogram', 'rating', 'RATING_DESC',
  'items', 'name', 'meta', 'total', 'limit', 'page', 'first', 'after', 'edges', 'node', 'id', 'slug', '__typename', '__schema', '__type',
  'true', 'false', 'null', '"str"', '"""block"""', '"\\u00e9"', '"\\uD800"', '"\\x"', '123', '-1.5e3', '1e999', '0x1', '#c\n', '\u0000', 'é', 'ș', '😀',
  'Int', 'String!', '[ID!]!', 'sortBy', 'PRICE_ASC', 'search', '@skip(if: true)', '@include(if: $v)', '@deprecated',
];

const VALID_QUERIES = [
  '{ products(limit: 2) { items { name price supplier { companyName } } meta { total } } }',
  '{ categories(parentOnly: true) { items { name children { name } } } }',
  '{ suppliers(limit: 2, sortBy: NAME) { items { companyName city } } }',
  'query Q($s: String, $l: Int) { products(search: $s, limit: $l) { items { slug } } }',
  '{ productsConnection(first: 2) { totalCount edges { cursor node { slug } } pageInfo { hasNextPage endCursor } } }',
  '{ orders { meta { total } } }',
  '{ stock(limit: 1) { items { sku stock } } }',
  '{ product(slug: "x") { name } }',
  'query Q($s: String!, $l: Int) { productReviews(slug: $s, limit: $l, sortBy: RATING_DESC) { items { rating title } meta { total } } }',
  'query Q($s: ID!, $v: Int) { supplierReviews(id: $s, rating: $v) { items { id } } supplier(id: $s) { reviewSummary { average histogram { count } } } }',
  'mutation M($input: CreateOrderInput!) { createOrder(input: $input) { id total } }',
  '{ __schema { types { name } } }',
];

function mutateText(r: Rng, source: string): string {
  let s = source;
  for (let i = int(r, 1, 4); i > 0; i--) {
    const at = int(r, 0, s.length);
    s = weighted(r, [
      [2, () => s.slice(0, at) + s.slice(at + int(r, 1, 5))],
      [2, () => s.slice(0, at) + ' ' + pick(r, GQL_TOKENS) + ' ' + s.slice(at)],
      [1, () => s.slice(0, at) + s.slice(at, at + int(r, 1, 30)).repeat(int(r, 2, 20)) + s.slice(at)],
      [1, () => s.slice(0, at) + text(r, 5) + s.slice(at)],
    ]);
  }
  return s;
}

function gqlDocument(r: Rng): string {
  return weighted(r, [
    [3, () => Array.from({ length: int(r, 1, 120) }, () => pick(r, GQL_TOKENS)).join(pick(r, [' ', '', '\n', ',']))],
    [4, () => mutateText(r, pick(r, VALID_QUERIES))],
    [1, () => pick(r, VALID_QUERIES)],
    // Deep selections: a real relation cycle, and an unknown field.
    [1, () => { const n = int(r, 3, 400); return `{ products(limit: 1) { items { ${'category { parent { '.repeat(n)}id${' } }'.repeat(n)} } } }`; }],
    [1, () => { const n = int(r, 10, 5_000); return '{ a'.repeat(n) + ' }'.repeat(n); }],
    [0.5, () => { const n = int(r, 10, 3_000); return `{ products(search: ${'['.repeat(n)}"x"${']'.repeat(n)}) { meta { total } } }`; }],
    // Unknown fields and arguments.
    [1, () => `{ ${text(r, 10).replace(/\W/g, '') || 'x'} products(${pick(r, ['colour: RED', 'limit: "5"', 'limit: 1e3', 'limit: -1', 'page: 0', 'limit: 2147483648', 'sortBy: price_asc', 'search: null'])}) { nope items { name } } }`],
    // Many aliases: cheap fields in bulk, a few costly ones.
    [0.7, () => `{ ${Array.from({ length: int(r, 100, 5_000) }, (_, i) => `a${i}: __typename`).join(' ')} }`],
    [0.5, () => `{ ${Array.from({ length: int(r, 2, 40) }, (_, i) => `p${i}: products(limit: ${int(r, 1, 100)}) { meta { total } }`).join(' ')} }`],
    [0.5, () => `{ products(limit: 1) { items { ${'name '.repeat(int(r, 100, 10_000))} } } }`],
    // Fragments: cycles, spreads on the wrong type, unknown ones.
    [0.5, () => pick(r, ['fragment A on Query { ...B } fragment B on Query { ...A } { ...A }', '{ ...X }', 'fragment F on Product { name } { ...F }', '{ ... on Product { name } }', 'query { ...on Query { __typename } }'])],
    [0.5, () => `{ products(limit: 1) ${Array.from({ length: int(r, 1, 500) }, () => pick(r, ['@skip(if: false)', '@include(if: true)', '@foo', '@skip(if: "x")', '@deprecated'])).join(' ')} { meta { total } } }`],
    [0.3, () => 'subscription { products { items { name } } }'],
    [0.3, () => pick(r, ['', ' ', '#only a comment', 'query', '{}', '{ }', 'query Q { __typename } query Q { __typename }', 'query A { __typename } query B { __typename }'])],
  ]);
}

function gqlVariables(r: Rng): unknown {
  return weighted<unknown>(r, [
    [4, () => undefined],
    [3, () => ({ s: jsonValue(r), l: jsonValue(r), v: jsonValue(r), input: chance(r, 0.5) ? orderObject(r) : jsonValue(r) })],
    [1, () => jsonValue(r)],
    [0.5, () => ({ l: 'x'.repeat(int(r, 1_000, 100_000)) })],
    [0.5, () => ({ input: { ...orderObject(r), items: Array.from({ length: int(r, 101, 5_000) }, () => ({ productId: pick(r, fixtures.supplier.productIds), quantity: 1 })) } })],
  ]);
}

interface GqlRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

function gqlRequest(r: Rng): GqlRequest {
  const document = gqlDocument(r);
  const variables = gqlVariables(r);
  const payload = () => {
    const body: Record<string, unknown> = { query: document };
    if (variables !== undefined) body.variables = variables;
    if (chance(r, 0.1)) body.operationName = pick(r, ['Q', 'M', 'A', 'nope', '', null, 1]);
    if (chance(r, 0.05)) body.extensions = jsonValue(r);
    return body;
  };
  return weighted<GqlRequest>(r, [
    [10, () => ({ method: 'POST', path: '/graphql', headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(payload())) })],
    [1, () => ({ method: 'POST', path: '/graphql', headers: { 'content-type': pick(r, CONTENT_TYPES) }, body: Buffer.from(JSON.stringify(payload())) })],
    [1, () => ({ method: 'POST', path: '/graphql', headers: { 'content-type': 'application/json' }, body: Buffer.from(pick(r, ['', '{', 'null', '[]', '[{"query":"{__typename}"}]', '"{ __typename }"', '{"query": 1}', '{"query": ["{__typename}"]}', '{"query": null}', '{"variables": "x", "query": "{__typename}"}', '{"query":"{__typename}","variables":[]}', JSON.stringify(payload()).slice(0, 20)])) })],
    [1, () => ({ method: 'POST', path: '/graphql', headers: { 'content-type': 'application/graphql' }, body: Buffer.from(document) })],
    [2, () => {
      const params = [`query=${encodedValue(r, document)}`];
      if (variables !== undefined) params.push(`variables=${encodedValue(r, JSON.stringify(variables) ?? 'x')}`);
      if (chance(r, 0.1)) params.push(`variables=${encodedValue(r, text(r, 20))}`);
      const path = `/graphql?${params.join('&')}`;
      // GET carries the whole document in the request line: keep it under the header limit.
      return { method: pick(r, ['GET', 'GET', 'HEAD']), path: path.length > HEADER_BUDGET ? `/graphql?query=${encode('{ __typename }')}` : path, headers: {} };
    }],
    [0.5, () => ({ method: pick(r, ['PUT', 'PATCH', 'DELETE']), path: '/graphql', headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(payload())) })],
  ]);
}

// ---------------------------------------------------------------------------------------------
// One generated request

interface FuzzCase {
  index: number;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: Buffer;
}

const METHODS = ['GET', 'GET', 'GET', 'GET', 'POST', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'PURGE', 'SEARCH', 'QUERY', 'REPORT'];

let validKey = '';

const ODD_TARGETS = ['*', 'http://example.com', 'HTTP://EXAMPLE.COM:80', 'http://[::1', 'http:/x', 'ftp://x', 'mailto:x', 'x', 'api/products', 'http://user:pass@h:1'];
const ODD_HOSTS = ['a b', '[::1', '[::1]:80', 'x:99999', 'x:abc', '%', '@', 'u@h', 'h/api/orders?', 'h?x', 'h#x', 'a|b', '', ':80', 'example.com', '127.0.0.1:1', 'xn--mnchen-3ya.de', 'ü'];

function generate(index: number): FuzzCase {
  const r = caseRng(index);
  const base: Record<string, string | string[]> = { 'x-forwarded-for': forwardedFor(r, index) };
  const kind = weighted(r, [
    [5, () => 'rest'],
    [2, () => 'order'],
    [1.5, () => 'write'],
    [3, () => 'graphql'],
    [0.5, () => 'other'],
  ]);
  let c: Omit<FuzzCase, 'index'>;
  if (kind === 'graphql') {
    const g = gqlRequest(r);
    c = { ...g, headers: { ...base, ...g.headers, ...authHeaders(r, validKey) } };
    if (chance(r, 0.3)) c.headers.accept = pick(r, ACCEPTS);
  } else if (kind === 'order') {
    c = {
      method: chance(r, 0.9) ? 'POST' : pick(r, METHODS),
      path: chance(r, 0.9) ? '/api/orders' : restPath(r, pick(r, REST_TEMPLATES)),
      headers: {
        ...base,
        'content-type': chance(r, 0.85) ? 'application/json' : pick(r, CONTENT_TYPES),
        ...(chance(r, 0.9) ? { 'x-api-key': validKey } : authHeaders(r, validKey)),
        ...(chance(r, 0.3) ? { 'idempotency-key': latin1(chance(r, 0.5) ? `fuzz-${int(r, 1, 30)}` : text(r, 300)) } : {}),
      },
      body: orderBody(r),
    };
  } else if (kind === 'write') {
    const write = writeRequest(r);
    c = {
      ...write,
      headers: {
        ...base,
        'content-type': chance(r, 0.85) ? 'application/json' : pick(r, CONTENT_TYPES),
        ...(chance(r, 0.9) ? { 'x-api-key': validKey } : authHeaders(r, validKey)),
        ...(chance(r, 0.2) ? { 'idempotency-key': latin1(chance(r, 0.5) ? `fuzz-${int(r, 1, 30)}` : text(r, 300)) } : {}),
      },
    };
  } else {
    // A REST route's own method half the time: every route is reached, not only refused with 405.
    const template = kind === 'rest' ? pick(r, REST_TEMPLATES) : undefined;
    const method = template && chance(r, 0.5) ? template.method : pick(r, METHODS);
    c = {
      method,
      path: template ? restPath(r, template) + queryString(r, template.query) : otherPath(r) + queryString(r),
      headers: { ...base, ...authHeaders(r, validKey) },
    };
    if (method !== 'GET' && method !== 'HEAD' && chance(r, 0.5)) {
      c.headers['content-type'] = pick(r, CONTENT_TYPES);
      c.body = chance(r, 0.5) ? orderBody(r) : Buffer.from(latin1(text(r, 200)));
    }
    if (chance(r, 0.2)) c.headers.accept = pick(r, ACCEPTS);
  }
  // Request targets and Host headers that Node's parser lets through but that are no URL path.
  if (chance(r, 0.02)) c.path = pick(r, ODD_TARGETS) + (chance(r, 0.5) ? c.path : '');
  if (chance(r, 0.03)) c.headers.host = pick(r, ODD_HOSTS);
  const used = JSON.stringify(c.headers).length + c.path.length;
  c.headers = { ...extraHeaders(r, Math.max(0, HEADER_BUDGET - used)), ...c.headers };
  // Long paths and headers together must still fit Node's header limit (else Node, not the app, answers 431).
  if (JSON.stringify(c.headers).length + c.path.length > HEADER_BUDGET + 2_000) c.path = c.path.slice(0, 2_000);
  return { index, ...c };
}

// ---------------------------------------------------------------------------------------------
// Sending and judging

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

function send(base: URL, agent: http.Agent, c: FuzzCase): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: base.hostname, port: base.port, method: c.method, path: c.path, headers: c.body ? { ...c.headers, 'content-length': String(c.body.length) } : c.headers, agent, timeout: REQUEST_TIMEOUT_MS },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(c.body);
  });
}

/** What is wrong with an answer, or null. */
function judge(c: FuzzCase, answer: Answer): string | null {
  if (answer.status >= 500) return `status ${answer.status}`;
  // The path as the app sees it (URL parsing resolves dot segments and backslashes).
  let pathname: string;
  try {
    pathname = new URL(c.path, 'http://127.0.0.1').pathname;
  } catch {
    return null;
  }
  const bodyless = c.method === 'HEAD' || answer.status === 204 || answer.status === 304;
  if (bodyless) return null;
  // Node's HTTP parser refusing a request it cannot read ('GET api/products') is answered in the
  // envelope (createHttpServer) when the method is known and not HEAD; a request split across
  // packets whose refused part does not start with the method gets a bare 400, as from Node.
  if (answer.status === 400 && answer.body.length === 0 && answer.headers['content-type'] === undefined) return null;
  const type = String(answer.headers['content-type'] ?? '');
  const isApi = pathname === '/api' || pathname.startsWith('/api/');
  if (isApi && /^\/api\/(openapi\.json|docs)(\/|$)/.test(pathname)) return null; // the API's documentation pages: HTML and OpenAPI
  if (!isApi && pathname !== '/graphql') return null; // health, metrics, the 404 of other paths: not the subject here
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body.toString('utf8'));
  } catch {
    // GraphiQL: a browser's GET of /graphql without a query.
    if (pathname === '/graphql' && c.method === 'GET' && type.startsWith('text/html')) return null;
    return `body is not JSON (${type})`;
  }
  if (!type.includes('json')) return `JSON sent as ${type}`;
  if (isApi) {
    const envelope = parsed as { success?: unknown; data?: unknown; error?: { code?: unknown; message?: unknown } };
    if (envelope.success === true) return 'data' in envelope && answer.status < 400 ? null : `success envelope with status ${answer.status}`;
    if (envelope.success !== false || typeof envelope.error !== 'object' || envelope.error === null) return 'not an envelope';
    const { code, message } = envelope.error;
    if (typeof code !== 'string' || !CONTRACT_CODES.has(code)) return `error code ${String(code)} is not the contract's`;
    if (typeof message !== 'string' || !message) return 'error without a message';
    if (errorStatus[code as keyof typeof errorStatus] !== answer.status) return `${code} sent with status ${answer.status}`;
    return null;
  }
  const results = Array.isArray(parsed) ? parsed : [parsed];
  for (const result of results) {
    if (typeof result !== 'object' || result === null || (!('data' in result) && !('errors' in result))) return 'GraphQL answer without data or errors';
    const errors = (result as { errors?: Array<{ extensions?: { code?: unknown } }> }).errors ?? [];
    for (const error of errors) {
      const code = error.extensions?.code;
      if (typeof code !== 'string' || !CONTRACT_CODES.has(code)) return `GraphQL error code ${String(code)} is not the contract's`;
    }
  }
  return null;
}

const ROUTE_PATTERNS = restRoutes.map((route) => ({ name: `${route.method} ${route.path}`, method: route.method, ...pathPattern(route.path) }));

/** The REST route the router dispatches a case to (HEAD as GET), as `METHOD path`, if any. */
function routeOfCase(c: FuzzCase): string | undefined {
  let pathname: string;
  try {
    pathname = withoutTrailingSlash(new URL(c.path, 'http://127.0.0.1').pathname);
  } catch {
    return undefined;
  }
  const method = c.method === 'HEAD' ? 'GET' : c.method;
  return ROUTE_PATTERNS.find((p) => p.method === method && p.pattern.test(pathname))?.name;
}

function describeCase(c: FuzzCase): string {
  const headers = Object.fromEntries(Object.entries(c.headers).map(([k, v]) => [k, String(v).slice(0, 80)]));
  return `#${c.index} ${c.method} ${c.path.slice(0, 300)} ${JSON.stringify(headers)} body=${c.body ? JSON.stringify(c.body.subarray(0, 300).toString('utf8')) + ` (${c.body.length} bytes)` : '-'}`;
}

// ---------------------------------------------------------------------------------------------

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ env: { ORDER_CREATE_LIMIT: '100000' } });
  const key = await createTestKey(app.url, { plan: 'enterprise', limit: 1_000_000, windowSeconds: 3600, scopes: ['read:orders', 'write:orders', 'read:stock', 'read:prices', 'write:products'] });
  validKey = key.key;
  const rows = async (sql: string, params: unknown[] = []) => (await app.sql.query(sql, params)).rows as Record<string, string>[];
  const products = await rows(`SELECT id, slug, sku FROM "Product" ORDER BY id LIMIT 20`);
  const supplier = (await rows(`SELECT "supplierId" AS id FROM "Product" WHERE "isActive" GROUP BY "supplierId" HAVING count(*) >= 3 ORDER BY "supplierId" LIMIT 1`))[0]!;
  const supplierProducts = await rows(`SELECT id FROM "Product" WHERE "supplierId" = $1 AND "isActive" ORDER BY id LIMIT 5`, [supplier.id]);
  // The key's account acts for that supplier and has orders with it: the supplier side and the
  // cancellations reach real rows.
  await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [key.accountId, supplier.id]);
  await app.sql.query(`UPDATE "Product" SET stock = 1000000, "minOrder" = 1 WHERE "supplierId" = $1`, [supplier.id]);
  // Endpoints of the key's account (a private address, which the worker refuses without a connection):
  // the webhook routes reach real records, until the fuzz deletes them.
  for (let i = 0; i < 5; i++) {
    await app.sql.query(
      `INSERT INTO "WebhookEndpoint" (id, "accountId", url, events, secret) VALUES ($1, $2, 'https://127.0.0.1/hooks', ARRAY['order.status_changed'], 'whsec_c3dlZXA=')`,
      [`fuzzhook${i}`, key.accountId],
    );
  }
  for (let i = 0; i < 5; i++) {
    const placed = await app.get('/api/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key },
      body: JSON.stringify({ supplierId: supplier.id, items: [{ productId: supplierProducts[i % supplierProducts.length]!.id, quantity: 1 }] }),
    });
    if (placed.status !== 201) throw new Error(`fixture order: ${placed.status} ${JSON.stringify(placed.body)}`);
  }
  fixtures = {
    productIds: products.map((p) => p.id!),
    productSlugs: products.map((p) => p.slug!),
    skus: products.map((p) => p.sku!),
    categorySlugs: (await rows(`SELECT slug FROM "Category" ORDER BY id LIMIT 5`)).map((c) => c.slug!),
    categoryIds: (await rows(`SELECT id FROM "Category" ORDER BY id LIMIT 5`)).map((c) => c.id!),
    supplierIds: (await rows(`SELECT id FROM "Supplier" ORDER BY id LIMIT 5`)).map((s) => s.id!),
    supplier: { id: supplier.id!, productIds: supplierProducts.map((p) => p.id!) },
    addressIds: (await rows(`SELECT id FROM "Address" WHERE "accountId" = $1`, [key.accountId])).map((a) => a.id!),
    orderIds: (await rows(`SELECT id FROM "Order" ORDER BY id LIMIT 3`)).map((o) => o.id!),
    webhookIds: (await rows(`SELECT id FROM "WebhookEndpoint" WHERE "accountId" = $1`, [key.accountId])).map((w) => w.id!),
    coupons: (await rows(`SELECT code FROM "Coupon" ORDER BY code LIMIT 5`)).map((c) => c.code!),
  };
});
afterAll(() => app?.close());

describe('fuzzing', () => {
  it('draws its REST requests from every route of the table, /api/me* included', () => {
    const drawn = REST_TEMPLATES.map((t) => `${t.method} ${t.path}`);
    expect(drawn).toEqual(restRoutes.map((r) => `${r.method} ${r.path}`));
    expect(drawn).toEqual(expect.arrayContaining(['GET /api/me', 'GET /api/me/addresses']));
    // A body maker for a route that takes no body (or no longer exists) would never be used.
    const withBody = REST_TEMPLATES.filter((t) => t.body).map((t) => `${t.method} ${t.path}`);
    expect(withBody).toEqual(expect.arrayContaining(Object.keys(BODIES)));
  });

  it(`answers ${ONLY === undefined ? COUNT : 1} generated malformed requests (seed ${SEED}) without a 5xx, always in the contract's shapes`, async () => {
    const base = new URL(app.base);
    const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    const indexes = ONLY === undefined ? Array.from({ length: COUNT }, (_, i) => i) : [ONLY];
    const failures: string[] = [];
    const statuses: Record<number, number> = {};
    const reached = new Set<string>();
    let retried = 0;
    let next = 0;
    const started = Date.now();
    const worker = async () => {
      while (next < indexes.length && failures.length < 25) {
        const c = generate(indexes[next++]!);
        const route = routeOfCase(c);
        if (route) reached.add(route);
        let problem: string | null;
        let answer: Answer | undefined;
        try {
          answer = await send(base, agent, c);
          for (let retry = 0; retry < UNAVAILABLE_RETRIES && answer.status === 503 && answer.headers['retry-after'] !== undefined; retry++) {
            // As the answer tells a client to (Retry-After): the protocol's wait, not a guess.
            const wait = Math.min(Number(answer.headers['retry-after']) || 1, 5) * 1000;
            await new Promise((resolve) => setTimeout(resolve, wait));
            retried++;
            answer = await send(base, agent, c);
          }
          statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
          problem = judge(c, answer);
        } catch (error) {
          problem = `request failed: ${error instanceof Error ? error.message : String(error)}`;
        }
        if (problem) failures.push(`${problem}\n  ${describeCase(c)}\n  → ${answer ? `${answer.status} ${answer.body.subarray(0, 400).toString('utf8')}` : 'no answer'}`);
      }
    };
    try {
      await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    } finally {
      agent.destroy();
    }
    process.stderr.write(`fuzz: ${indexes.length} requests in ${Date.now() - started} ms, statuses ${JSON.stringify(statuses)}, ${retried} sent again after a 503\n`);
    expect(failures, `seed ${SEED}`).toEqual([]);
    // A whole run sends every route its own method at least once.
    if (indexes.length >= DEFAULT_COUNT) expect(ROUTE_PATTERNS.map((p) => p.name).filter((name) => !reached.has(name)), 'routes never reached').toEqual([]);
    // A budget, not a bound under test: 10,000 requests took 105 s, and 370 s at load 13, on a 2-CPU machine.
  }, 600_000);
});

// Found by this fuzzing: Yoga's Node adapter answered 500 with the exception's stack (file paths
// included) to a request target or Host header it could not make a URL of, and a Host header with
// a path in it changed the path the app routed. guardRequestTarget (src/pipeline/request-target.ts)
// wraps the app's Node listener, in src/server.ts and in test/helpers/app.ts alike.
describe('request targets and Host headers that are no URL', () => {
  const raw = (method: string, path: string, headers: Record<string, string> = {}) => {
    const agent = new http.Agent({ keepAlive: false });
    return send(new URL(app.base), agent, { index: -1, method, path, headers: { 'x-forwarded-for': '10.200.0.1', ...headers } }).finally(() => agent.destroy());
  };
  const json = (answer: Answer) => JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>;

  it.each([
    ['GET', '*', {}],
    ['OPTIONS', '*', {}],
    ['GET', 'http://[::1/api/products', {}],
    ['GET', '/api/products', { host: 'a b' }],
    ['GET', '/api/products', { host: '[::1' }],
    ['GET', '/api/products', { host: 'x:99999' }],
    ['GET', '/api/products?limit=1', { host: 'h/api/orders?' }],
    ['POST', '/graphql', { host: '%', 'content-type': 'application/json' }],
  ])('%s %s %j → 400 VALIDATION_ERROR, not a 500 with a stack', async (method, path, headers: Record<string, string>) => {
    const answer = await raw(method, path, headers);
    expect(answer.status).toBe(400);
    const body = json(answer);
    const code = path === '/graphql' ? (body.errors as Array<{ extensions: { code: string } }>)[0]!.extensions.code : (body.error as { code: string }).code;
    expect(code).toBe('VALIDATION_ERROR');
    expect(answer.body.toString('utf8')).not.toMatch(/node_modules|\bat \w|TypeError/);
  });

  it('serves the absolute form (which HTTP/1.1 servers must accept) as its path, and an empty Host as none', async () => {
    const absolute = await raw('GET', 'http://example.com/api/products?limit=1');
    expect(absolute.status).toBe(200);
    expect((json(absolute).data as unknown[]).length).toBe(1);
    const noHost = await raw('GET', '/api/products?limit=1', { host: '' });
    expect(noHost.status).toBe(200);
  });
});
