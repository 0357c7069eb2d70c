import {
  getNamedType,
  isCompositeType,
  isNonNullType,
  isObjectType,
  type GraphQLField,
  type GraphQLObjectType,
} from 'graphql';
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../src/domain/schema.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';

// List arguments on every field of the schema, found by walking it (so that a field added later is
// covered): sizes (`limit`, `first`, `last`) are validated like REST's `limit`, never clamped;
// cursors (`after`, `before`) that this API did not issue and sign (test/cursors.test.ts) are
// "Invalid cursor"; either way the error is VALIDATION_ERROR at the field's own path, naming the
// argument, and its siblings answer.

let app: TestApp;
let key: string;
/** What the app logged: a refused argument is the caller's mistake, never an "unexpected error" with a stack. */
let logs = '';
beforeAll(async () => {
  const sink = new Writable({ write: (chunk, _encoding, done) => ((logs += String(chunk)), done()) });
  app = await startTestApp({ logger: pino({ level: 'info' }, sink) });
  const created = await createTestKey(app.url, { plan: 'enterprise', limit: 100_000, windowSeconds: 60, scopes: ['admin:all'] });
  key = created.key;
  // Acting for the supplier whose id the sweep passes: the supplier-side lists are swept too.
  const { rows } = await app.sql.query(
    `SELECT s.id, (SELECT p.slug FROM "Product" p WHERE p."supplierId" = s.id AND p."isActive" ORDER BY p.id LIMIT 1) AS slug
     FROM "Supplier" s WHERE s."isActive" ORDER BY s.id LIMIT 1`,
  );
  requiredValues.id = rows[0].id;
  requiredValues.slug = rows[0].slug;
  await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [created.accountId, rows[0].id]);
  // Orders of the key's account from that supplier: both sides of the orders' connections have pages to sweep.
  const product = await app.sql.query(
    `UPDATE "Product" SET stock = 1000, "minOrder" = 1 WHERE id = (SELECT id FROM "Product" WHERE "supplierId" = $1 AND "isActive" ORDER BY id LIMIT 1) RETURNING id`,
    [rows[0].id],
  );
  for (let i = 0; i < 3; i++) {
    const placed = await app.getInProcess('/api/orders', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ supplierId: rows[0].id, items: [{ productId: product.rows[0].id, quantity: 1 }] }),
    });
    expect(placed.status, JSON.stringify(placed.body)).toBe(201);
  }
  // And a webhook endpoint of the key's under the same id: its delivery log is swept too.
  await app.sql.query(`INSERT INTO "WebhookEndpoint" (id, "accountId", "keyId", url, events, secret) VALUES ($1, $2, $3, 'https://example.com/hooks', ARRAY['order.created'], 'whsec_c3dlZXA=')`, [
    rows[0].id,
    created.accountId,
    created.id,
  ]);
});

/** Values for a root field's required arguments (a product's slug, a supplier's id), set before the sweep. */
const requiredValues: Record<string, string> = {};
afterAll(() => app?.close());

const SIZE_ARGUMENTS = ['limit', 'first', 'last'];
const CURSOR_ARGUMENTS = ['after', 'before'];

interface Step {
  type: GraphQLObjectType;
  field: GraphQLField<unknown, unknown>;
}

/** Fields a query can go through without arguments it would have to invent (ids, slugs). */
const reachable = (field: GraphQLField<unknown, unknown>) => field.args.every((a) => !isNonNullType(a.type) || a.defaultValue !== undefined);

/** The shortest way from Query to every object type, through fields with no required argument. */
function pathsFromQuery(): Map<string, Step[]> {
  const query = schema.getQueryType()!;
  const paths = new Map<string, Step[]>([[query.name, []]]);
  const queue: GraphQLObjectType[] = [query];
  while (queue.length) {
    const type = queue.shift()!;
    for (const field of Object.values(type.getFields())) {
      const target = getNamedType(field.type);
      if (!isObjectType(target) || paths.has(target.name) || !reachable(field)) continue;
      paths.set(target.name, [...paths.get(type.name)!, { type, field }]);
      queue.push(target);
    }
  }
  return paths;
}

/** Every field with one of `names` as an argument, with the way to reach its type. */
function fieldsWithArgument(names: string[]) {
  const paths = pathsFromQuery();
  const found: { type: GraphQLObjectType; field: GraphQLField<unknown, unknown>; argument: string; path: Step[] }[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__') || type === schema.getMutationType()) continue;
    for (const field of Object.values(type.getFields())) {
      for (const arg of field.args) {
        if (!names.includes(arg.name)) continue;
        const path = paths.get(type.name);
        if (!path) throw new Error(`${type.name}.${field.name}(${arg.name}): no way to reach ${type.name} from Query`);
        found.push({ type, field, argument: arg.name, path });
      }
    }
  }
  return found;
}

/** A selection of `field` with `args`, asking for as little as possible below it. */
const select = (field: GraphQLField<unknown, unknown>, given: string, alias: string) => {
  const required = field.args.filter((a) => isNonNullType(a.type) && a.defaultValue === undefined && !given.includes(`${a.name}:`));
  const args = [given, ...required.map((a) => `${a.name}: ${JSON.stringify(requiredValues[a.name])}`)].filter(Boolean).join(', ');
  const target = getNamedType(field.type);
  const below = isCompositeType(target) ? (field.name.endsWith('Connection') ? '{ edges { cursor } pageInfo { endCursor } }' : '{ __typename }') : '';
  return `${alias}: ${field.name}${args ? `(${args})` : ''} ${below}`;
};

/** The query that reaches `path` (a few items per list on the way) and selects `inner` there, beside `id` when there is one. */
function queryAt(path: Step[], inner: string, variables = ''): string {
  let body = inner;
  const last = path[path.length - 1];
  if (last && isObjectType(getNamedType(last.field.type)) && 'id' in (getNamedType(last.field.type) as GraphQLObjectType).getFields()) body = `id ${body}`;
  for (const { field } of [...path].reverse()) {
    const size = field.args.find((a) => SIZE_ARGUMENTS.includes(a.name) && a.name !== 'last');
    body = `${field.name}${size ? `(${size.name}: 3)` : ''} { ${body} }`;
  }
  return `query Sweep${variables} { ${body} }`;
}

// In process (app.fetch, no socket): these are rules of the schema, and the key's bucket is charged.
async function graphql(query: string, variables?: Record<string, unknown>) {
  const res = await app.getInProcess('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ query, variables }),
  });
  expect(res.status, query).toBe(200);
  return res.body as { data?: Record<string, unknown> | null; errors?: { message: string; path?: (string | number)[]; extensions: Record<string, unknown> }[] };
}

/** The values at the end of `path` (field names and aliases), through lists and connections. */
function valuesAt(data: unknown, path: string[]): unknown[] {
  let values: unknown[] = [data];
  for (const key of path) {
    values = values.flatMap((v) => (Array.isArray(v) ? v : [v])).flatMap((v) => (v && typeof v === 'object' && key in v ? [(v as Record<string, unknown>)[key]] : []));
  }
  return values.flatMap((v) => (Array.isArray(v) ? v : [v]));
}

const sizeFields = fieldsWithArgument(SIZE_ARGUMENTS);
const cursorFields = fieldsWithArgument(CURSOR_ARGUMENTS);

describe('list sizes on every field', () => {
  it('finds the list fields of the schema, root and nested', () => {
    const names = sizeFields.map(({ type, field, argument }) => `${type.name}.${field.name}(${argument})`);
    // Not the whole list (the sweep below takes whatever the schema has), just proof that the walk sees both kinds.
    expect(names).toEqual(
      expect.arrayContaining([
        'Query.products(limit)',
        'Query.productsConnection(first)',
        'Query.productsConnection(last)',
        'Supplier.products(limit)',
        'Supplier.productsConnection(first)',
        'Product.reviews(limit)',
        'Product.reviewsConnection(last)',
        'Category.products(limit)',
      ]),
    );
  });

  it.each(sizeFields.map((f) => [`${f.type.name}.${f.field.name}(${f.argument})`, f] as const))('%s: 1 and 100 are served, 0, -1, 101 and 100000 refused', async (_name, { field, argument, path }) => {
    const at = path.map((s) => s.field.name);
    const root = path.length === 0;
    for (const good of [1, 100]) {
      const body = await graphql(queryAt(path, select(field, `${argument}: ${good}`, 'target')));
      expect(body.errors, `${argument}: ${good}`).toBeUndefined();
      const values = valuesAt(body.data, [...at, 'target']);
      expect(values.length, `${argument}: ${good} reached the field`).toBeGreaterThan(0);
      expect(values.every((v) => v !== null)).toBe(true);
    }
    for (const bad of [0, -1, 101, 100_000]) {
      // Beside the bad field, the same field with a good value: it still answers.
      const body = await graphql(queryAt(path, `${select(field, `${argument}: ${bad}`, 'target')} ${select(field, `${argument}: 2`, 'sibling')}`));
      expect(body.errors?.length, `${argument}: ${bad}`).toBeGreaterThan(0);
      for (const error of body.errors ?? []) {
        expect(error.extensions, `${argument}: ${bad}`).toMatchObject({ code: 'VALIDATION_ERROR', details: { [argument]: 'must be an integer between 1 and 100' } });
        expect(error.path?.at(-1)).toBe('target');
      }
      expect(valuesAt(body.data, [...at, 'target']).every((v) => v === null)).toBe(true);
      expect(valuesAt(body.data, [...at, 'sibling']).length, root ? 'a root sibling survives' : 'the parent survives').toBeGreaterThan(0);
      expect(valuesAt(body.data, [...at, 'sibling']).every((v) => v !== null)).toBe(true);
    }
  });

  it.each(cursorFields.filter((f) => f.argument === 'after').map((f) => [`${f.type.name}.${f.field.name}`, f] as const))(
    '%s: first with last, after with before, first with before and last with after are refused',
    async (_name, { field, path }) => {
      const page = await graphql(queryAt(path, select(field, 'first: 1', 'target')));
      const cursor = valuesAt(page.data, [...path.map((s) => s.field.name), 'target', 'pageInfo', 'endCursor']).find((c) => typeof c === 'string');
      expect(cursor).toEqual(expect.any(String));
      for (const args of ['first: 1, last: 1', 'after: $c, before: $c', 'first: 1, before: $c', 'last: 1, after: $c']) {
        const body = args.includes('$c') ? await graphql(queryAt(path, select(field, args, 'target'), '($c: String)'), { c: cursor }) : await graphql(queryAt(path, select(field, args, 'target')));
        const error = body.errors?.[0];
        expect(error?.extensions.code, args).toBe('VALIDATION_ERROR');
        const names = args.split(', ').map((a) => a.split(':')[0]!);
        expect(Object.keys(error?.extensions.details as object).sort(), args).toEqual(names.sort());
      }
    },
  );
});

describe('cursors on every connection', () => {
  it('finds every connection, root and nested', () => {
    const names = cursorFields.map(({ type, field, argument }) => `${type.name}.${field.name}(${argument})`);
    expect(names).toEqual(expect.arrayContaining(['Query.productsConnection(after)', 'Supplier.productsConnection(before)', 'Product.reviewsConnection(after)']));
  });

  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
  const forged: [string, string][] = [
    ['not base64', 'not a cursor!'],
    ['empty', ''],
    ['base64 of garbage', b64('garbage')],
    ['the prefix with a number', b64('GPC:N:5')],
    ['the prefix with a date', b64('GPC:D:1700000000000')],
    ['the prefix with JSON', b64('GPC:O:{"id":1}')],
    ['the prefix with a JSON string', b64('GPC:J:"x"')],
    ['the prefix with a JSON string that could be an id', b64(`GPC:J:${JSON.stringify('cat-1')}`)],
    ['the prefix with a compound key', b64('GPC:T:["S:a","S:b"]')],
    ['the prefix with a bigint', b64('GPC:I:12345678901234567890')],
    ['the prefix with an unknown tag', b64('GPC:Q:x')],
    ['a string with a NUL', b64('GPC:S:ab\u0000c')],
    ['a string that cannot be an id', b64("GPC:S:' OR 1=1 --")],
    ['a huge string', b64(`GPC:S:${'x'.repeat(200_000)}`)],
    ['huge garbage', 'A'.repeat(300_000)],
    ['a number', '12345'],
  ];

  it.each(cursorFields.map((f) => [`${f.type.name}.${f.field.name}(${f.argument})`, f] as const))('%s: a cursor it issued pages on; forged ones are "Invalid cursor"', async (_name, { field, argument, path }) => {
    const at = path.map((s) => s.field.name);
    const size = argument === 'after' ? 'first' : 'last';
    const first = await graphql(queryAt(path, select(field, `${size}: 2`, 'target')));
    expect(first.errors).toBeUndefined();
    const cursor = valuesAt(first.data, [...at, 'target', 'pageInfo', 'endCursor']).find((c) => typeof c === 'string');
    expect(cursor, 'the connection has a page to start from').toEqual(expect.any(String));
    const next = await graphql(queryAt(path, select(field, `${size}: 2, ${argument}: $c`, 'target'), '($c: String)'), { c: cursor });
    expect(next.errors).toBeUndefined();

    // The issued cursor carries plugin-prisma's own before its signature: neither alone is a cursor.
    const [body, tag] = (cursor as string).split('.') as [string, string];
    const fromIssued: [string, string][] = [
      ['plugin-prisma’s own cursor of the row the issued one names', Buffer.from(body, 'base64url').toString('base64')],
      ['the issued cursor without its signature', body],
      ['the issued cursor with its signature altered', `${body}.${tag.slice(0, -2)}${tag.endsWith('AA') ? 'BB' : 'AA'}`],
    ];
    for (const [what, value] of [...forged, ...fromIssued]) {
      const body = await graphql(queryAt(path, `${select(field, `${size}: 2, ${argument}: $c`, 'target')} ${select(field, `${size}: 2`, 'sibling')}`, '($c: String)'), { c: value });
      expect(body.errors?.length, what).toBeGreaterThan(0);
      for (const error of body.errors ?? []) {
        expect(error.message, what).toBe('Invalid cursor');
        expect(error.extensions, what).toEqual({ code: 'VALIDATION_ERROR', details: { [argument]: expect.stringMatching(/is not a cursor this API returned/) } });
        expect(error.path?.at(-1), what).toBe('target');
      }
      expect(valuesAt(body.data, [...at, 'sibling']).every((v) => v !== null), what).toBe(true);
      expect(valuesAt(body.data, [...at, 'sibling']).length, what).toBeGreaterThan(0);
    }
  });

  it('a forged cursor written in the document (not a variable) is refused the same way', async () => {
    const body = await graphql(`{ productsConnection(first: 2, after: "${b64('GPC:N:5')}") { edges { cursor } } }`);
    expect(body).toEqual({
      data: { productsConnection: null },
      extensions: { cost: expect.any(Object) },
      errors: [expect.objectContaining({ message: 'Invalid cursor', path: ['productsConnection'], extensions: { code: 'VALIDATION_ERROR', details: { after: expect.any(String) } } })],
    });
  });
});

// Runs last: every refusal above was the caller's mistake.
it('logged none of these refusals as an unexpected error with a stack', () => {
  expect(logs).not.toMatch(/unexpected error|"stack"/);
});
