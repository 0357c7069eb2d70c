import crypto from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  SESSION_TOUCH_INTERVAL_MS,
  createSession,
  csrfMatches,
  csrfTokenFor,
  deleteEndedSessions,
  endAllSessions,
  endSession,
  readSession,
} from '../src/accounts/sessions.js';
import { createPrisma, type PrismaClient } from '../src/db/prisma.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { asOperator } from './helpers/context.js';

let db: TestDatabase;
let prisma: PrismaClient;
const statements: string[] = [];
let accountId: string;
let n = 0;

beforeAll(async () => {
  db = await createTestDatabase('migrated');
  prisma = createPrisma({ url: db.url, poolMax: 2, onQuery: (sql) => statements.push(sql) });
  accountId = (await prisma.account.create({ data: { email: 'session@example.com', name: 'Sam', plan: 'PRO' } })).id;
});

afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

/** Statements sent while `fn` runs. */
async function counting<T>(fn: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
  const start = statements.length;
  const result = await fn();
  return { result, sql: statements.slice(start) };
}

/** The session table's rows, every column, as PostgreSQL has them. */
async function rawRows(): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query('SELECT * FROM "Session"')).rows;
  } finally {
    await client.end();
  }
}

const at = (base: Date, ms: number) => new Date(base.getTime() + ms);
const start = () => new Date(Date.UTC(2030, 0, 1, 9) + ++n * 86_400_000);

describe('sessions', () => {
  it('stores only the SHA-256 of the token, which is 32 random bytes', async () => {
    const now = start();
    const { token, expiresAt } = await createSession(asOperator(prisma, now), accountId);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    expect(expiresAt).toEqual(at(now, SESSION_ABSOLUTE_MS));
    const rows = await rawRows();
    const row = rows.find((r) => r.tokenHash === crypto.createHash('sha256').update(token).digest('hex'));
    expect(row).toBeDefined();
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('hands out a new token on every sign-in (no fixation)', async () => {
    const now = start();
    const tokens = await Promise.all(Array.from({ length: 20 }, () => createSession(asOperator(prisma, now), accountId).then((s) => s.token)));
    expect(new Set(tokens).size).toBe(tokens.length);
    for (const token of tokens.slice(0, 3)) expect(await readSession(asOperator(prisma, now), token)).toMatchObject({ accountId });
  });

  it('tells who the session belongs to', async () => {
    const now = start();
    const { token } = await createSession(asOperator(prisma, now), accountId);
    const view = await readSession(asOperator(prisma, at(now, 1000)), token);
    expect(view).toEqual({ sessionId: expect.any(String), accountId, email: 'session@example.com', name: 'Sam', plan: 'PRO' });
  });

  it('refuses malformed tokens without a query, and unknown ones', async () => {
    for (const bad of ['', 'x', 'a'.repeat(42), 'a'.repeat(44), `${'a'.repeat(42)}B`, ' '.repeat(43), 'x'.repeat(100_000)]) {
      const { result, sql } = await counting(() => readSession(asOperator(prisma), bad));
      expect(result).toBeNull();
      expect(sql).toEqual([]);
    }
    expect(await readSession(asOperator(prisma), crypto.randomBytes(32).toString('base64url'))).toBeNull();
  });

  it(`ends after ${SESSION_IDLE_MS / 3600_000} h without use, and deletes itself`, async () => {
    const now = start();
    const { token } = await createSession(asOperator(prisma, now), accountId);
    expect(await readSession(asOperator(prisma, at(now, SESSION_IDLE_MS - 1)), token)).not.toBeNull();
    // That read moved lastSeenAt: idle time counts from it.
    const later = at(now, SESSION_IDLE_MS - 1);
    expect(await readSession(asOperator(prisma, at(later, SESSION_IDLE_MS - 1)), token)).not.toBeNull();
    const idle = at(later, 2 * SESSION_IDLE_MS);
    expect(await readSession(asOperator(prisma, idle), token)).toBeNull();
    expect(await prisma.session.count({ where: { tokenHash: crypto.createHash('sha256').update(token).digest('hex') } })).toBe(0);
  });

  it(`ends ${SESSION_ABSOLUTE_MS / 3600_000} h after sign-in however busy, and deletes itself`, async () => {
    const now = start();
    const { token } = await createSession(asOperator(prisma, now), accountId);
    for (let t = 3600_000; t < SESSION_ABSOLUTE_MS; t += 3600_000) {
      expect(await readSession(asOperator(prisma, at(now, t)), token), `after ${t / 3600_000} h`).not.toBeNull();
    }
    expect(await readSession(asOperator(prisma, at(now, SESSION_ABSOLUTE_MS)), token)).toBeNull();
    expect(await prisma.session.count({ where: { tokenHash: crypto.createHash('sha256').update(token).digest('hex') } })).toBe(0);
  });

  it('writes lastSeenAt at most once a minute', async () => {
    const now = start();
    const { token } = await createSession(asOperator(prisma, now), accountId);
    const writes = (sql: string[]) => sql.filter((s) => /^\s*UPDATE/i.test(s)).length;
    expect(writes((await counting(() => readSession(asOperator(prisma, at(now, 1_000)), token))).sql)).toBe(0);
    expect(writes((await counting(() => readSession(asOperator(prisma, at(now, SESSION_TOUCH_INTERVAL_MS - 1)), token))).sql)).toBe(0);
    expect(writes((await counting(() => readSession(asOperator(prisma, at(now, SESSION_TOUCH_INTERVAL_MS)), token))).sql)).toBe(1);
    expect(writes((await counting(() => readSession(asOperator(prisma, at(now, SESSION_TOUCH_INTERVAL_MS + 1_000)), token))).sql)).toBe(0);
    const row = await prisma.session.findUniqueOrThrow({ where: { tokenHash: crypto.createHash('sha256').update(token).digest('hex') } });
    expect(row.lastSeenAt).toEqual(at(now, SESSION_TOUCH_INTERVAL_MS));
  });

  it('ends one session on sign-out, or all of an account', async () => {
    const other = (await prisma.account.create({ data: { email: 'other-session@example.com' } })).id;
    const now = start();
    const [a, b, c] = await Promise.all([createSession(asOperator(prisma, now), other), createSession(asOperator(prisma, now), other), createSession(asOperator(prisma, now), accountId)]);
    await endSession(asOperator(prisma), a!.token);
    await endSession(asOperator(prisma), 'malformed'); // nothing to do, no error
    expect(await readSession(asOperator(prisma, now), a!.token)).toBeNull();
    expect(await readSession(asOperator(prisma, now), b!.token)).not.toBeNull();
    expect(await endAllSessions(asOperator(prisma), other)).toBe(1);
    expect(await readSession(asOperator(prisma, now), b!.token)).toBeNull();
    expect(await readSession(asOperator(prisma, now), c!.token)).not.toBeNull();
  });

  it('sweeps sessions ended by either expiry', async () => {
    const other = (await prisma.account.create({ data: { email: 'sweep@example.com' } })).id;
    const now = start();
    await createSession(asOperator(prisma, now), other);
    await createSession(asOperator(prisma, at(now, SESSION_IDLE_MS)), other);
    // At now + idle + 1 ms the first is idle-expired, the second not.
    await deleteEndedSessions(asOperator(prisma, at(now, SESSION_IDLE_MS + 1)));
    expect(await prisma.session.count({ where: { accountId: other } })).toBe(1);
    await deleteEndedSessions(asOperator(prisma, at(now, SESSION_ABSOLUTE_MS + SESSION_IDLE_MS)));
    expect(await prisma.session.count({ where: { accountId: other } })).toBe(0);
  });
});

describe('CSRF tokens', () => {
  const token = crypto.randomBytes(32).toString('base64url');

  it('are derived from the session token, and lead back neither to it nor to its stored hash', () => {
    const csrf = csrfTokenFor(token);
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(csrfTokenFor(token)).toBe(csrf);
    expect(csrfTokenFor(`${token}x`)).not.toBe(csrf);
    expect(csrf).not.toBe(token);
    expect(csrf).not.toBe(crypto.createHash('sha256').update(token).digest('base64url'));
  });

  it('match only their own token', () => {
    const csrf = csrfTokenFor(token);
    expect(csrfMatches(token, csrf)).toBe(true);
    expect(csrfMatches(`${token}x`, csrf)).toBe(false);
    for (const wrong of ['', csrf.slice(0, -1), `${csrf}=`, csrf.toUpperCase(), undefined, null, 42, [csrf]]) {
      expect(csrfMatches(token, wrong)).toBe(false);
    }
    expect(csrfMatches('', csrfTokenFor(''))).toBe(false);
  });
});
