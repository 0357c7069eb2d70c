import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { untilListening } from './helpers/live.js';
import { makeOrderFixture, workedExample } from './helpers/orders.js';
import { unusedPort } from './helpers/processes.js';

// examples/ holds a typed client per face (README, "Typed clients"). Their types are generated here
// from the committed openapi.json and schema.graphql (examples/generated/ is not committed: the
// same step a frontend runs, npm run examples:generate), the examples are type-checked against
// them, then run against the real app and their output compared with the database.

const root = path.resolve(import.meta.dirname, '..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', name);
const run = promisify(execFile);

async function example(file: string, env: Record<string, string>): Promise<string> {
  const { stdout } = await run(bin('tsx'), [path.join('examples', file)], {
    cwd: root,
    env: { ...process.env, MARKETPLACE_KEY: '', ...env },
    timeout: 60_000,
  });
  return stdout;
}

interface Listed {
  slug: string;
  price: number;
  name: string;
}

/** The product lines an example prints: `  <slug>  <price> RON  <name>`. */
const listed = (out: string): Listed[] =>
  [...out.matchAll(/^ {2}(\S+) {2}(\d+\.\d{2}) RON {2}(.+)$/gm)].map((m) => ({ slug: m[1]!, price: Number(m[2]), name: m[3]! }));

/** The five cheapest active products from 10 RON up, as an example lists them, checked against the database. */
async function expectCheapest(out: string): Promise<Listed[]> {
  const products = listed(out);
  expect(products).toHaveLength(5);
  const { rows } = await app.sql.query<{ slug: string; name: string; price: string; isActive: boolean }>(
    `SELECT slug, name, price::text, "isActive" FROM "Product" WHERE slug = ANY($1)`,
    [products.map((p) => p.slug)],
  );
  for (const p of products) {
    const row = rows.find((r) => r.slug === p.slug);
    expect(row, p.slug).toMatchObject({ name: p.name, isActive: true });
    expect(Number(row!.price)).toBe(p.price);
    expect(p.price).toBeGreaterThanOrEqual(10);
  }
  expect(products.map((p) => p.price)).toEqual([...products.map((p) => p.price)].sort((a, b) => a - b));
  const { rows: cheapest } = await app.sql.query<{ price: string }>(
    `SELECT min(p.price)::text AS price FROM "Product" p JOIN "Supplier" s ON s.id = p."supplierId"
     WHERE p."isActive" AND s."isActive" AND p.price >= 10`,
  );
  expect(products[0]!.price).toBe(Number(cheapest[0]!.price));
  return products;
}

/** The product an example fetched by slug: its line against the database. */
async function expectFetched(out: string, slug: string): Promise<void> {
  const one = /^product (\S+): (.+), (\d+\.\d{2}) RON, (\d+) in stock, by (.+)$/m.exec(out);
  expect(one, out).not.toBeNull();
  const { rows: fetched } = await app.sql.query<{ slug: string; name: string; stock: number; companyName: string }>(
    `SELECT p.slug, p.name, p.stock, s."companyName" FROM "Product" p JOIN "Supplier" s ON s.id = p."supplierId" WHERE p.slug = $1`,
    [one![1]],
  );
  expect(fetched[0]).toEqual({ slug, name: one![2], stock: Number(one![4]), companyName: one![5] });
}

let app: TestApp;
let key: TestKey;
let orderNumber: string;

beforeAll(async () => {
  // The clients' types, as npm run examples:generate writes them, then the examples' type check.
  await run(bin('openapi-typescript'), ['openapi.json', '--output', 'examples/generated/openapi.d.ts'], { cwd: root });
  await run(bin('graphql-codegen'), ['--config', 'examples/codegen.ts', '--silent'], { cwd: root });

  app = await startTestApp();
  key = await createTestKey(app.url, { owner: 'examples@example.com', scopes: ['read:orders', 'write:orders'] });
  const placed = await app.get('/api/orders', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key.key },
    body: JSON.stringify(workedExample(await makeOrderFixture(app.sql))),
  });
  expect(placed.status).toBe(201);
  orderNumber = placed.body.data.orderNumber;
}, 180_000);

afterAll(async () => {
  await app?.close();
});

describe('examples/', () => {
  it('type-check against the types generated from openapi.json and schema.graphql', async () => {
    const result = await run(bin('tsc'), ['--noEmit', '-p', 'examples'], { cwd: root }).catch((error: { stdout: string }) => error);
    expect('stdout' in result ? result.stdout : '').toBe('');
  }, 120_000);

  it.each(['rest-client.ts', 'graphql-client.ts'])('%s lists products by a filter, fetches one by slug and the caller\'s orders', async (file) => {
    const out = await example(file, { MARKETPLACE_URL: app.base, MARKETPLACE_KEY: key.key });

    // The five cheapest active products from 10 RON up, each as the database has it; the first
    // of them fetched by its slug: a real product's slug, name and supplier.
    const products = await expectCheapest(out);
    await expectFetched(out, products[0]!.slug);

    // The key's own orders: the one placed for it.
    expect(out).toMatch(/^orders: 1 of 1$/m);
    expect(out).toMatch(new RegExp(`^ {2}${orderNumber} {2}PENDING {2}138\\.67 RON {2}3 item\\(s\\)$`, 'm'));
  }, 120_000);

  it('say the same on both faces, and skip the orders without a key', async () => {
    const [rest, graph] = await Promise.all([
      example('rest-client.ts', { MARKETPLACE_URL: app.base }),
      example('graphql-client.ts', { MARKETPLACE_URL: app.base }),
    ]);
    expect(rest).toBe(graph);
    expect(rest).toMatch(/^orders: skipped/m);
  }, 120_000);
});

// The clients frontends use (README, "Typed clients"): Apollo Client 4 (its HTTP link, and
// graphql-sse's Apollo link for subscriptions) and urql (its fetch exchange, and a subscription
// exchange over graphql-sse), each running a query with @defer, a connection followed by its
// cursors, a mutation and a subscription that hears it.
describe('Apollo Client 4 and urql', () => {
  let clientKey: TestKey;
  beforeAll(async () => {
    // An account of their own: the orders they place are not the first examples' orders.
    clientKey = await createTestKey(app.url, { owner: 'clients@example.com', scopes: ['read:orders', 'write:orders'] });
    await untilListening(app);
  });

  it.each(['apollo-client.ts', 'urql-client.ts'])(
    '%s lists products, fetches one with @defer, follows a connection to its end, places an order and hears it on its subscription',
    async (file) => {
      const out = await example(file, { MARKETPLACE_URL: app.base, MARKETPLACE_KEY: clientKey.key });

      const products = await expectCheapest(out);
      // Its supplier came in a deferred part.
      await expectFetched(out, products[0]!.slug);

      // Every product of the catalogue once, by following the cursors (100 a page).
      const { rows: catalogue } = await app.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM "Product" p JOIN "Supplier" s ON s.id = p."supplierId" WHERE p."isActive" AND s."isActive"`,
      );
      const total = catalogue[0]!.n;
      expect(out).toMatch(new RegExp(`^productsConnection: ${Math.ceil(total / 100)} pages, ${total} distinct products of ${total}$`, 'm'));

      // The order placed by the mutation, as the database has it, and heard on the stream.
      const placed = /^order (ORD-\S+) placed: PENDING, (\d+\.\d{2}) RON$/m.exec(out);
      expect(placed, out).not.toBeNull();
      const { rows: orders } = await app.sql.query<{ status: string; total: string; buyerId: string }>(
        `SELECT status, total::text, "buyerId" FROM "Order" WHERE "orderNumber" = $1`,
        [placed![1]],
      );
      expect(orders).toEqual([{ status: 'PENDING', total: placed![2], buyerId: clientKey.accountId }]);
      expect(out).toMatch(new RegExp(`^heard: CREATED ${placed![1]} PENDING$`, 'm'));
    },
    120_000,
  );

  it('say the same without a key, and skip the orders', async () => {
    const [apollo, urql] = await Promise.all([example('apollo-client.ts', { MARKETPLACE_URL: app.base }), example('urql-client.ts', { MARKETPLACE_URL: app.base })]);
    expect(apollo).toBe(urql);
    expect(apollo).toMatch(/^orders: skipped/m);
    expect(apollo).toMatch(/^productsConnection: /m);
  }, 120_000);
});

describe('examples/ without the service', () => {
  it.each(['rest-client.ts', 'graphql-client.ts', 'apollo-client.ts', 'urql-client.ts'])('%s says in one line how to start it, with no stack trace', async (file) => {
    const port = await unusedPort();
    const failed = await example(file, { MARKETPLACE_URL: `http://127.0.0.1:${port}` }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(1);
    const said = (failed?.stderr ?? '').trim();
    expect(said).toBe(`No marketplace service answers at http://127.0.0.1:${port}. Start it with \`npm start\` in the repository (or set MARKETPLACE_URL to where it runs), then run this example again.`);
  });
});
