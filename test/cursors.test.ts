import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCursorSeal } from '../src/graphql/cursors.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestDatabase } from './helpers/db.js';
import { freePort } from './helpers/redis.js';

// The cursors a connection hands out are signed (src/graphql/cursors.ts): they page on, forwards
// and backwards, root and nested; anything else given as `after`/`before` (plugin-prisma's own
// cursor, an altered or cut one, one signed with a secret the service does not hold, garbage) is
// VALIDATION_ERROR "Invalid cursor" naming the argument. The secrets rotate (CURSOR_SECRETS: the
// first signs, all verify); unset, one generated secret kept in the database serves every instance.
// The seal itself and CURSOR_SECRETS' rules, without a database: test/unit/cursors.test.ts.

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');
/** plugin-prisma's own cursor of a row: what the service handed out before cursors were signed. */
const plain = (id: string) => b64(`GPC:S:${id}`);
/** The shape of a signed cursor: the raw cursor's bytes and a 128-bit tag, both base64url. */
const SEALED = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/;
const SECRET_A = 'a-cursor-secret-of-32-characters-at-least-A';
const SECRET_B = 'a-cursor-secret-of-32-characters-at-least-B';

interface Connection {
  edges: { cursor: string; node: { id: string } }[];
  pageInfo: { startCursor: string | null; endCursor: string | null; hasNextPage: boolean; hasPreviousPage: boolean };
}
type PageArgs = { first?: number; last?: number; after?: string; before?: string };
const CONNECTION = '{ edges { cursor node { id } } pageInfo { startCursor endCursor hasNextPage hasPreviousPage } }';
const PAGE_VARS = '$first: Int, $last: Int, $after: String, $before: String';
const PAGE_ARGS = 'first: $first, last: $last, after: $after, before: $before';

/** A connection of the schema, reached from Query, answered by `app`; `c` is its alias. */
interface Place {
  name: string;
  query: string;
  variables: Record<string, unknown>;
  at: (data: any) => Connection | null;
}

async function page(app: TestApp, place: Place, args: PageArgs) {
  const { status, body } = await app.graphql(place.query, { ...place.variables, ...args });
  expect(status, JSON.stringify(body)).toBe(200);
  return { body, connection: body.data ? place.at(body.data) : null };
}

async function pageOk(app: TestApp, place: Place, args: PageArgs): Promise<Connection> {
  const { body, connection } = await page(app, place, args);
  expect(body.errors, `${place.name} ${JSON.stringify(args)}`).toBeUndefined();
  expect(connection).not.toBeNull();
  return connection!;
}

const ids = (c: Connection) => c.edges.map((e) => e.node.id);

/** Every cursor the connection handed out, each checked to be signed and to agree with pageInfo. */
function cursorsOf(c: Connection): string[] {
  const cursors = c.edges.map((e) => e.cursor);
  for (const cursor of cursors) expect(cursor).toMatch(SEALED);
  expect(c.pageInfo.startCursor).toBe(cursors[0] ?? null);
  expect(c.pageInfo.endCursor).toBe(cursors.at(-1) ?? null);
  return cursors;
}

/** Three pages forwards, then back two with the cursors handed out: the same rows as one page of nine. */
async function roundTrip(app: TestApp, place: Place) {
  const all = ids(await pageOk(app, place, { first: 9 }));
  expect(all.length, `${place.name} has nine rows to page through`).toBe(9);
  const p1 = await pageOk(app, place, { first: 3 });
  const p2 = await pageOk(app, place, { first: 3, after: p1.pageInfo.endCursor! });
  const p3 = await pageOk(app, place, { first: 3, after: p2.pageInfo.endCursor! });
  expect([...ids(p1), ...ids(p2), ...ids(p3)]).toEqual(all);
  expect(p2.pageInfo.hasPreviousPage).toBe(true);
  const back2 = await pageOk(app, place, { last: 3, before: p3.pageInfo.startCursor! });
  expect(ids(back2)).toEqual(ids(p2));
  expect(back2.pageInfo.hasNextPage).toBe(true);
  const back1 = await pageOk(app, place, { last: 3, before: back2.pageInfo.startCursor! });
  expect(ids(back1)).toEqual(ids(p1));
  for (const c of [p1, p2, p3, back1, back2]) cursorsOf(c);
  return { p1, p2, p3 };
}

/** The refusal of a cursor given as `argument`: the field is null, the error names the argument. */
function expectInvalidCursor(result: { body: any; connection: Connection | null }, argument: 'after' | 'before', what: string) {
  expect(result.connection, what).toBeNull();
  expect(result.body.errors, what).toHaveLength(1);
  const [error] = result.body.errors;
  expect(error.message, what).toBe('Invalid cursor');
  expect(error.extensions, what).toEqual({ code: 'VALIDATION_ERROR', details: { [argument]: expect.stringMatching(/is not a cursor this API returned/) } });
  expect(error.path.at(-1), what).toBe('c');
}

/** Cursors that must be refused, made from one the service issued for row `id` and another it issued. */
function forgeries(issued: string, other: string, id: string): [string, string][] {
  const [body, tag] = issued.split('.') as [string, string];
  const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
  return [
    ['plugin-prisma’s own cursor of the same row', plain(id)],
    ['plugin-prisma’s own cursor of a row that does not exist', plain('not-a-real-product')],
    ['the tag altered', `${body}.${flip(tag, 5)}`],
    ['the tag’s last character altered', `${body}.${flip(tag, tag.length - 1)}`],
    ['the body altered', `${flip(body, 2)}.${tag}`],
    ['another row’s body under this tag', `${other.split('.')[0]}.${tag}`],
    ['cut short by one character', issued.slice(0, -1)],
    ['the tag cut off', body],
    ['the tag alone', `.${tag}`],
    ['half of it', issued.slice(0, Math.floor(issued.length / 2))],
    ['signed with a secret the service does not hold', createCursorSeal(['a-secret-nobody-configured-32-chars!']).sign(plain(id))],
    ['padded with a space', ` ${issued}`],
    ['with base64 padding added to the body', `${body}=.${tag}`],
    ['garbage', 'garbage!'],
    ['a dot', '.'],
    ['empty', ''],
    ['very long', `${body}${'A'.repeat(100_000)}.${tag}`],
  ];
}

/** Every forgery, as `after` (with first) and as `before` (with last): refused, never a 500. */
async function expectForgeriesRefused(app: TestApp, place: Place, issued: string, other: string, id: string) {
  for (const [what, cursor] of forgeries(issued, other, id)) {
    expectInvalidCursor(await page(app, place, { first: 3, after: cursor }), 'after', `${place.name} after: ${what}`);
    expectInvalidCursor(await page(app, place, { last: 3, before: cursor }), 'before', `${place.name} before: ${what}`);
  }
}

interface Fixture {
  /** An active product with at least nine reviews. */
  slug: string;
  /** A supplier with at least nine active products. */
  supplierId: string;
  inactiveProductId: string;
}

async function fixtureOf(app: TestApp): Promise<Fixture> {
  // The demo data has at most 4 reviews per product: one gets nine more, an hour apart.
  const product = await app.sql.query(`SELECT id, slug, "supplierId" FROM "Product" WHERE "isActive" ORDER BY id LIMIT 1`);
  await app.sql.query(
    `INSERT INTO "Review" (id, "productId", "supplierId", rating, images, "createdAt")
     SELECT 'cursor-review-' || n || '-' || $1, $1, $2, 1 + n % 5, '{}', now() - n * interval '1 hour' FROM generate_series(1, 9) AS n
     ON CONFLICT (id) DO NOTHING`,
    [product.rows[0].id, product.rows[0].supplierId],
  );
  const supplier = await app.sql.query(
    `SELECT s.id FROM "Supplier" s JOIN "Product" p ON p."supplierId" = s.id AND p."isActive" WHERE s."isActive" GROUP BY s.id HAVING count(*) >= 9 ORDER BY s.id LIMIT 1`,
  );
  let inactive = await app.sql.query(`SELECT id FROM "Product" WHERE NOT "isActive" ORDER BY id LIMIT 1`);
  if (!inactive.rowCount) inactive = await app.sql.query(`UPDATE "Product" SET "isActive" = false WHERE id = (SELECT id FROM "Product" ORDER BY id DESC LIMIT 1) RETURNING id`);
  expect(product.rowCount).toBe(1);
  expect(supplier.rowCount).toBe(1);
  return { slug: product.rows[0].slug, supplierId: supplier.rows[0].id, inactiveProductId: inactive.rows[0].id };
}

/** The three connections: the root one, and the two nested ones. */
function placesOf(fixture: Fixture): Place[] {
  return [
    {
      name: 'Query.productsConnection',
      query: `query(${PAGE_VARS}) { c: productsConnection(${PAGE_ARGS}) ${CONNECTION} }`,
      variables: {},
      at: (data) => data.c,
    },
    {
      name: 'Product.reviewsConnection',
      query: `query($slug: String!, ${PAGE_VARS}) { product(slug: $slug) { id c: reviewsConnection(${PAGE_ARGS}) ${CONNECTION} } }`,
      variables: { slug: fixture.slug },
      at: (data) => data.product.c,
    },
    {
      name: 'Supplier.productsConnection inside Query.productsConnection',
      query: `query($supplierId: ID, ${PAGE_VARS}) { productsConnection(first: 1, supplierId: $supplierId) { edges { cursor node { id supplier { id c: productsConnection(${PAGE_ARGS}) ${CONNECTION} } } } } }`,
      variables: { supplierId: fixture.supplierId },
      at: (data) => data.productsConnection.edges[0].node.supplier.c,
    },
  ];
}

describe('with the secret kept in the database (CURSOR_SECRETS unset)', () => {
  let app: TestApp;
  let fixture: Fixture;
  let places: Place[];
  let stored: ReturnType<typeof createCursorSeal>;
  beforeAll(async () => {
    app = await startTestApp();
    fixture = await fixtureOf(app);
    places = placesOf(fixture);
    // The first connection makes the secret; the test reads it to check what the cursors carry.
    await pageOk(app, places[0]!, { first: 1 });
    const { rows } = await app.sql.query(`SELECT value FROM "ServerSecret" WHERE name = 'cursor'`);
    expect(rows).toHaveLength(1);
    stored = createCursorSeal([rows[0].value]);
  });
  afterAll(() => app?.close());

  it.each([0, 1, 2])('pages forwards and backwards with the cursors it hands out (connection %i)', async (index) => {
    const place = places[index]!;
    const { p1 } = await roundTrip(app, place);
    // Each cursor is plugin-prisma's cursor of its row, signed with the stored secret.
    for (const edge of p1.edges) expect(stored.open(edge.cursor)).toBe(plain(edge.node.id));
  });

  it.each([0, 1, 2])('refuses every cursor it did not hand out as "Invalid cursor" naming the argument (connection %i)', async (index) => {
    const place = places[index]!;
    const first = await pageOk(app, place, { first: 2 });
    const [issued, other] = cursorsOf(first) as [string, string];
    await expectForgeriesRefused(app, place, issued, other, first.edges[0]!.node.id);
  });

  it('refuses a cursor naming an inactive product: the answer says nothing of the product', async () => {
    // No list shows inactive products, so no such cursor is ever handed out.
    const forged = plain(fixture.inactiveProductId);
    expectInvalidCursor(await page(app, places[0]!, { first: 3, after: forged }), 'after', 'after');
    expectInvalidCursor(await page(app, places[0]!, { last: 3, before: forged }), 'before', 'before');
    expect((await page(app, places[0]!, { first: 3, after: plain('not-a-real-product') })).body).toEqual((await page(app, places[0]!, { first: 3, after: forged })).body);
  });

  it('refuses a signed cursor of another form than plugin-prisma issues here, should a secret leak', async () => {
    for (const raw of [b64('GPC:N:5'), b64('GPC:J:"x"'), b64("GPC:S:' OR 1=1 --"), b64('garbage')]) {
      expectInvalidCursor(await page(app, places[0]!, { first: 3, after: stored.sign(raw) }), 'after', Buffer.from(raw, 'base64').toString());
    }
  });

  it('a forged cursor beside a good one: only the forged field fails, its sibling answers', async () => {
    const { body } = await page(app, places[0]!, {});
    const good = body.data.c.edges[0].cursor;
    const { body: both } = await app.graphql(
      `query($good: String, $bad: String) { ok: productsConnection(first: 1, after: $good) { edges { node { id } } } c: productsConnection(first: 1, after: $bad) { edges { node { id } } } }`,
      { good, bad: plain('not-a-real-product') },
    );
    expect(both.data.ok.edges).toHaveLength(1);
    expect(both.data.c).toBeNull();
    expect(both.errors).toEqual([expect.objectContaining({ message: 'Invalid cursor', path: ['c'] })]);
  });
});

describe('rotation (CURSOR_SECRETS)', () => {
  let oldApp: TestApp;
  let rotated: TestApp;
  let places: Place[];
  beforeAll(async () => {
    oldApp = await startTestApp({ env: { CURSOR_SECRETS: SECRET_A } });
    rotated = await startTestApp({ url: oldApp.url, env: { CURSOR_SECRETS: `${SECRET_B},${SECRET_A}` } });
    places = placesOf(await fixtureOf(oldApp));
  });
  afterAll(async () => {
    await rotated?.close();
    await oldApp?.close();
  });

  it.each([0, 1, 2])('a cursor issued under A still pages on under "B,A", and new cursors are signed with B (connection %i)', async (index) => {
    const place = places[index]!;
    const underA = await pageOk(oldApp, place, { first: 3 });
    const cursorA = underA.pageInfo.endCursor!;
    expect(createCursorSeal([SECRET_A]).open(cursorA)).toBe(plain(underA.edges[2]!.node.id));

    const nextOnOld = await pageOk(oldApp, place, { first: 3, after: cursorA });
    const nextOnRotated = await pageOk(rotated, place, { first: 3, after: cursorA });
    expect(ids(nextOnRotated)).toEqual(ids(nextOnOld));
    expect(ids(await pageOk(rotated, place, { last: 2, before: cursorA }))).toEqual(ids(underA).slice(0, 2));

    for (const edge of nextOnRotated.edges) {
      expect(createCursorSeal([SECRET_B]).open(edge.cursor)).toBe(plain(edge.node.id));
      expect(createCursorSeal([SECRET_A]).open(edge.cursor)).toBeUndefined();
    }
    // An instance that holds only A does not take B's: B signs, A no longer does.
    expectInvalidCursor(await page(oldApp, place, { first: 3, after: nextOnRotated.pageInfo.endCursor! }), 'after', 'B on an A-only instance');
    // Rotated again, to B alone: A's cursors are done with.
  });

  it('with A dropped, A’s cursors are refused', async () => {
    const onlyB = await startTestApp({ url: oldApp.url, env: { CURSOR_SECRETS: SECRET_B } });
    try {
      const underA = await pageOk(oldApp, places[0]!, { first: 1 });
      expectInvalidCursor(await page(onlyB, places[0]!, { first: 1, after: underA.pageInfo.endCursor! }), 'after', 'A on a B-only instance');
      // And no secret was generated: the setting is the only source.
      const { rows } = await onlyB.sql.query(`SELECT count(*)::int AS n FROM "ServerSecret"`);
      expect(rows[0].n).toBe(0);
    } finally {
      await onlyB.close();
    }
  });
});

describe('several instances, CURSOR_SECRETS unset', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let logs = '';
  const logger = () => pino({ level: 'debug' }, new Writable({ write: (chunk, _encoding, done) => ((logs += String(chunk)), done()) }));
  beforeAll(async () => {
    db = await createTestDatabase('seeded');
  });
  afterAll(() => db?.drop());

  it('two instances starting together make one secret and take each other’s cursors; a later one takes them too', async () => {
    const [a, b] = await Promise.all([startTestApp({ url: db.url, logger: logger() }), startTestApp({ url: db.url, logger: logger() })]);
    let aClosed = false;
    let c: TestApp | undefined;
    try {
      const fixture = await fixtureOf(a);
      const places = placesOf(fixture);
      // Both need the secret at once, for their first connection: insert-if-absent, one row wins.
      const [fromA, fromB] = await Promise.all([pageOk(a, places[0]!, { first: 3 }), pageOk(b, places[0]!, { first: 3 })]);
      expect(cursorsOf(fromB)).toEqual(cursorsOf(fromA));
      const { rows } = await a.sql.query(`SELECT value FROM "ServerSecret"`);
      expect(rows).toHaveLength(1);

      for (const place of places) {
        const onA = await pageOk(a, place, { first: 3 });
        const onB = await pageOk(b, place, { first: 3, after: onA.pageInfo.endCursor! });
        expect(ids(onB)).toEqual(ids(await pageOk(a, place, { first: 3, after: onA.pageInfo.endCursor! })));
        expect(ids(await pageOk(a, place, { last: 3, before: onB.pageInfo.startCursor! }))).toEqual(ids(onA));
      }

      // A restart: an instance started after A keeps A's cursors. Its very first request is a
      // nested connection paging on from A's cursor, read with its parent's query while its own
      // seal is still being read from the database.
      const supplierPlace: Place = {
        name: 'Query.supplier.productsConnection',
        query: `query($id: ID!, ${PAGE_VARS}) { supplier(id: $id) { id c: productsConnection(${PAGE_ARGS}) ${CONNECTION} } }`,
        variables: { id: fixture.supplierId },
        at: (data) => data.supplier.c,
      };
      const firstOnA = await pageOk(a, supplierPlace, { first: 2 });
      const secondOnA = await pageOk(a, supplierPlace, { first: 2, after: firstOnA.pageInfo.endCursor! });
      await a.close();
      aClosed = true;
      c = await startTestApp({ url: db.url, logger: logger() });
      const secondOnC = await pageOk(c, supplierPlace, { first: 2, after: firstOnA.pageInfo.endCursor! });
      expect(secondOnC).toEqual(secondOnA);
      expect(secondOnC.edges).toHaveLength(2);

      // The secret never reaches a log line.
      expect(logs.length).toBeGreaterThan(0);
      expect(logs).not.toContain(rows[0].value);
    } finally {
      await c?.close();
      await b.close();
      if (!aClosed) await a.close();
    }
  });
});

describe('with the database away when a connection first needs the secret', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ url: `postgresql://postgres:none@127.0.0.1:${await freePort()}/gone` });
  });
  afterAll(() => app?.close());

  it('the app started; the connection is 503 SERVICE_UNAVAILABLE like any read, not a 500', async () => {
    const { status, body } = await app.graphql('{ productsConnection(first: 1) { edges { cursor } } }');
    expect(status).toBe(503);
    expect(body.errors[0].extensions.code).toBe('SERVICE_UNAVAILABLE');
  });
});
