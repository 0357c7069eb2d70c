import crypto from 'node:crypto';
import pg from 'pg';
import { PLAN_LIMITS } from '../src/ratelimit/plans.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DISPLAY_PREFIX_LENGTH, authenticateKey, generateApiKey, hashApiKey, looksLikeApiKey } from '../src/auth/key-check.js';
import { describeError } from '../src/cli/run.js';
import { asAppError } from '../src/shared/errors.js';
import { createApiKey, listApiKeys, revokeApiKey, type CreateApiKeyInput } from '../src/accounts/api-keys.js';
import { createLastUsedRecorder } from '../src/auth/last-used.js';
import { createPrisma, type PrismaClient } from '../src/db/prisma.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { createTestKey } from './helpers/keys.js';
import { byTable, classify } from './helpers/statements.js';
import { asOperator } from './helpers/context.js';

let db: TestDatabase;
let prisma: PrismaClient;
// Every SQL statement the client sends, so tests can assert how many a call cost.
const statements: string[] = [];

async function query<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** Statements sent while `fn` runs. */
async function counting<T>(fn: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
  const start = statements.length;
  const result = await fn();
  return { result, sql: statements.slice(start) };
}

beforeAll(async () => {
  db = await createTestDatabase('migrated');
  prisma = createPrisma({ url: db.url, poolMax: 4, onQuery: (sql) => statements.push(sql) });
});

afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

const base: CreateApiKeyInput = { owner: 'buyer@example.com', plan: 'PRO', scopes: ['read:orders'] };

describe('key format', () => {
  const keys = Array.from({ length: 2000 }, () => generateApiKey());

  it('is mk_ and 43 base64url characters holding 32 bytes, with a 12-character display prefix', () => {
    for (const { key, hash, prefix } of keys) {
      expect(key).toMatch(/^mk_[A-Za-z0-9_-]{43}$/);
      expect(key).toHaveLength(46);
      expect(Buffer.from(key.slice(3), 'base64url')).toHaveLength(32);
      expect(Buffer.from(key.slice(3), 'base64url').toString('base64url')).toBe(key.slice(3));
      expect(prefix).toBe(key.slice(0, DISPLAY_PREFIX_LENGTH));
      expect(prefix).toHaveLength(12);
      expect(hash).toBe(crypto.createHash('sha256').update(key).digest('hex'));
      expect(hashApiKey(key)).toBe(hash);
      expect(looksLikeApiKey(key)).toBe(true);
    }
  });

  it('draws every bit at random: no repeats, all 64 characters, half the bits set', () => {
    expect(new Set(keys.map((k) => k.key)).size).toBe(keys.length);
    expect(new Set(keys.map((k) => k.prefix)).size).toBe(keys.length);
    const chars = new Set(keys.flatMap((k) => [...k.key.slice(3, -1)]));
    expect(chars.size).toBe(64);
    let ones = 0;
    for (const { key } of keys) for (const byte of Buffer.from(key.slice(3), 'base64url')) ones += byte.toString(2).replaceAll('0', '').length;
    const bits = keys.length * 256;
    // 512,000 fair coin flips: 6 standard deviations is about 0.4 %.
    expect(Math.abs(ones / bits - 0.5)).toBeLessThan(0.005);
  });

  it('refuses anything else without looking it up', () => {
    const { key } = keys[0]!;
    const body = key.slice(3);
    const lastBad = body.slice(0, -1) + (body.endsWith('B') ? 'C' : 'B'); // a last character 32 bytes cannot produce
    for (const token of ['', 'mk_', key.slice(0, -1), `${key}A`, `xx_${body}`, `MK_${body}`, ` ${key}`, `${key}\n`, `mk_${body.slice(0, -2)}+/`, `mk_${lastBad}`, 'x'.repeat(10_000)]) {
      expect(looksLikeApiKey(token), JSON.stringify(token.slice(0, 60))).toBe(false);
    }
  });
});

describe('createApiKey', () => {
  it('stores the hash and the display prefix, and the key itself nowhere in the database', async () => {
    const { key, record } = await createApiKey(asOperator(prisma), { ...base, name: 'storage check' });
    const [row] = await query<{ hash: string; prefix: string }>('SELECT hash, prefix FROM "ApiKey" WHERE id = $1', [record.id]);
    expect(row).toEqual({ hash: hashApiKey(key), prefix: key.slice(0, 12) });
    expect(record.prefix).toBe(key.slice(0, 12));

    // Every text column of every table (each row cast to text), for the key and for its secret
    // part without the fixed "mk_" and without the displayed prefix.
    const tables = await query<{ name: string }>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()`);
    expect(tables.map((t) => t.name)).toEqual(expect.arrayContaining(['ApiKey', 'Account']));
    for (const needle of [key, key.slice(3), key.slice(12)]) {
      for (const { name } of tables) {
        const [hit] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM "${name}" t WHERE strpos(t::text, $1) > 0`, [needle]);
        expect(hit!.n, `${name} contains the key`).toBe(0);
      }
    }
    const [apiKeyText] = await query<{ n: number }>(`SELECT count(*)::int AS n FROM "ApiKey" t WHERE strpos(t::text, $1) > 0`, [hashApiKey(key)]);
    expect(apiKeyText!.n).toBe(1);
  });

  it('returns the public view with the plan defaults or the enterprise key’s own allowance', async () => {
    const pro = await createApiKey(asOperator(prisma), base);
    expect(pro.record).toMatchObject({ plan: 'pro', scopes: ['read:orders'], owner: 'buyer@example.com', limit: 5000, window: 3600, name: '' });
    expect(pro.record).toMatchObject({ revokedAt: null, lastUsedAt: null, expiresAt: null });
    const basic = await createApiKey(asOperator(prisma), { ...base, plan: 'BASIC' });
    expect(basic.record).toMatchObject({ plan: 'basic', limit: PLAN_LIMITS.BASIC.limit, window: PLAN_LIMITS.BASIC.windowSeconds });
    expect(PLAN_LIMITS.BASIC).toEqual({ limit: 1000, windowSeconds: 3600 });
    expect(PLAN_LIMITS.PRO).toEqual({ limit: 5000, windowSeconds: 3600 });
    const expiresAt = new Date(Date.now() + 86_400_000);
    const ent = await createApiKey(asOperator(prisma), { ...base, plan: 'ENTERPRISE', rateLimit: 250, rateWindowSeconds: 60, expiresAt, name: '  ci  ' });
    expect(ent.record).toMatchObject({ plan: 'enterprise', limit: 250, window: 60, expiresAt, name: 'ci' });
  });

  it('deduplicates scopes, keeping their order', async () => {
    const { record } = await createApiKey(asOperator(prisma), { ...base, scopes: ['read:stock', ' read:prices', 'read:stock', 'read:prices '] });
    expect(record.scopes).toEqual(['read:stock', 'read:prices']);
  });

  it('stores admin:all as given, without expanding it', async () => {
    const { key, record } = await createApiKey(asOperator(prisma), { ...base, scopes: ['admin:all'] });
    expect(record.scopes).toEqual(['admin:all']);
    const [row] = await query<{ scopes: string[] }>('SELECT scopes FROM "ApiKey" WHERE id = $1', [record.id]);
    expect(row!.scopes).toEqual(['admin:all']);
    expect((await authenticateKey(prisma, key, '127.0.0.1'))?.scopes).toEqual(['admin:all']);
  });

  const soon = () => new Date(Date.now() + 3_600_000);
  const invalid: [string, Partial<CreateApiKeyInput>, RegExp][] = [
    ['no scopes', { scopes: [] }, /at least one scope/],
    ['only blank scopes', { scopes: [' ', ''] }, /at least one scope/],
    ['an unknown scope', { scopes: ['read:orders', 'delete:everything'] }, /scopes: has the unknown scope "delete:everything".*valid scopes: read:products/],
    ['an owner that is no e-mail', { owner: 'buyer' }, /e-mail/],
    ['an owner with spaces', { owner: 'a b@example.com' }, /e-mail/],
    ['an empty owner', { owner: '' }, /e-mail/],
    ['an unknown plan', { plan: 'GOLD' as CreateApiKeyInput['plan'] }, /plan: must be basic, pro or enterprise/],
    ['enterprise without limit or window', { plan: 'ENTERPRISE' }, /enterprise key needs its own rate limit and window/],
    ['enterprise without window', { plan: 'ENTERPRISE', rateLimit: 10 }, /enterprise key needs/],
    ['enterprise limit 0', { plan: 'ENTERPRISE', rateLimit: 0, rateWindowSeconds: 60 }, /limit: must be a whole number of requests from 1 to 10000000/],
    ['enterprise limit above 10,000,000', { plan: 'ENTERPRISE', rateLimit: 10_000_001, rateWindowSeconds: 60 }, /limit: must be/],
    ['enterprise fractional limit', { plan: 'ENTERPRISE', rateLimit: 1.5, rateWindowSeconds: 60 }, /limit: must be/],
    ['enterprise window 0', { plan: 'ENTERPRISE', rateLimit: 10, rateWindowSeconds: 0 }, /window: must be .* 1 s to 30 days/],
    ['enterprise window over 30 days', { plan: 'ENTERPRISE', rateLimit: 10, rateWindowSeconds: 30 * 86_400 + 1 }, /window: must be/],
    ['basic with a limit', { plan: 'BASIC', rateLimit: 10 }, /only enterprise keys take a custom rate limit.*basic plan allows 1000/],
    ['pro with a window', { plan: 'PRO', rateWindowSeconds: 60 }, /only enterprise keys/],
    ['an expiry in the past', { expiresAt: new Date(Date.now() - 1000) }, /expires: must be in the future/],
    ['an invalid expiry', { expiresAt: new Date(Number.NaN) }, /not a valid date/],
    ['a name too long', { name: 'x'.repeat(101) }, /name: must be at most 100/],
    ['a name with a control character', { name: 'a\u0007b' }, /control characters/],
  ];

  it.each(invalid)('refuses %s, writing nothing', async (_, change, message) => {
    const owner = change.owner ?? `refused-${crypto.randomUUID()}@example.com`;
    const [before] = await query<{ keys: number; accounts: number }>(
      'SELECT (SELECT count(*) FROM "ApiKey")::int AS keys, (SELECT count(*) FROM "Account")::int AS accounts',
    );
    const attempt = createApiKey(asOperator(prisma), { ...base, owner, expiresAt: soon(), ...change });
    const refused = asAppError(await attempt.catch((error: unknown) => error));
    expect(refused?.code).toBe('VALIDATION_ERROR');
    expect(describeError(refused!)).toMatch(message);
    const [after] = await query<{ keys: number; accounts: number }>(
      'SELECT (SELECT count(*) FROM "ApiKey")::int AS keys, (SELECT count(*) FROM "Account")::int AS accounts',
    );
    expect(after).toEqual(before);
  });

  it('creates the owner’s account once and reuses it, whatever the e-mail’s case', async () => {
    const first = await createApiKey(asOperator(prisma), { ...base, owner: 'New.Buyer@Example.COM' });
    const second = await createApiKey(asOperator(prisma), { ...base, owner: ' new.buyer@example.com ' });
    expect(first.record.owner).toBe('new.buyer@example.com');
    expect(second.record.accountId).toBe(first.record.accountId);
    const accounts = await query<{ id: string }>('SELECT id FROM "Account" WHERE lower(email) = $1', ['new.buyer@example.com']);
    expect(accounts).toEqual([{ id: first.record.accountId }]);
  });

  it('gives concurrent first keys of one owner one account', async () => {
    // Separate clients, so the transactions really run side by side and both find no account.
    const clients = Array.from({ length: 4 }, () => createPrisma({ url: db.url, poolMax: 1 }));
    try {
      await Promise.all(clients.map((c) => c.$queryRaw`SELECT 1`));
      for (let round = 0; round < 5; round++) {
        const owner = `race-${round}-${crypto.randomUUID()}@example.com`;
        const results = await Promise.all(clients.map((c) => createApiKey(asOperator(c), { ...base, owner })));
        expect(new Set(results.map((r) => r.record.accountId)).size).toBe(1);
        const [row] = await query<{ n: number }>('SELECT count(*)::int AS n FROM "Account" WHERE email = $1', [owner]);
        expect(row!.n).toBe(1);
      }
    } finally {
      await Promise.all(clients.map((c) => c.$disconnect()));
    }
  });

  it('is what createTestKey uses', async () => {
    const made = await createTestKey(db.url, { scopes: ['read:stock'], plan: 'enterprise', limit: 3, windowSeconds: 10, owner: 'helper@example.com' });
    const caller = await authenticateKey(prisma, made.key, '10.0.0.1');
    expect(caller).toEqual({
      kind: 'key',
      ip: '10.0.0.1',
      keyId: made.id,
      accountId: made.accountId,
      plan: 'ENTERPRISE',
      scopes: ['read:stock'],
      rateLimit: 3,
      rateWindowSeconds: 10,
    });
    expect(made.prefix).toBe(made.key.slice(0, 12));
  });
});

describe('listApiKeys', () => {
  it('lists newest first, filters by owner, and never shows a key or a hash', async () => {
    const owner = `lister-${crypto.randomUUID()}@example.com`;
    const made = [];
    for (let i = 0; i < 3; i++) made.push(await createApiKey(asOperator(prisma), { ...base, owner, name: `k${i}` }));
    const mine = await listApiKeys(asOperator(prisma), { owner: owner.toUpperCase() });
    expect(mine.map((k) => k.name)).toEqual(['k2', 'k1', 'k0']);
    const all = await listApiKeys(asOperator(prisma));
    expect(all.length).toBeGreaterThan(mine.length);
    const times = all.map((k) => k.createdAt.getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
    const fields = ['id', 'prefix', 'name', 'plan', 'scopes', 'owner', 'accountId', 'limit', 'window', 'expiresAt', 'revokedAt', 'lastUsedAt', 'createdAt', 'kind', 'origins', 'allowServer'];
    for (const view of all) expect(Object.keys(view).sort()).toEqual([...fields].sort());
    const text = JSON.stringify(all);
    for (const { key } of made) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(hashApiKey(key));
    }
    expect(await listApiKeys(asOperator(prisma), { owner: `nobody-${crypto.randomUUID()}@example.com` })).toEqual([]);
  });
});

describe('revokeApiKey and authenticateKey', () => {
  it('authenticates a live key as its account, then not once revoked; revoking again keeps the first time', async () => {
    const { key, record } = await createApiKey(asOperator(prisma), { ...base, scopes: ['read:orders', 'write:orders'] });
    expect(await authenticateKey(prisma, key, '192.0.2.1')).toEqual({
      kind: 'key',
      ip: '192.0.2.1',
      keyId: record.id,
      accountId: record.accountId,
      plan: 'PRO',
      scopes: ['read:orders', 'write:orders'],
      rateLimit: null,
      rateWindowSeconds: null,
    });
    const revoked = await revokeApiKey(asOperator(prisma), record.id);
    expect(revoked.revokedAt).toBeInstanceOf(Date);
    expect(await authenticateKey(prisma, key, '192.0.2.1')).toBeNull();
    // Later on the real clock: a second revocation would stamp another time.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const again = await revokeApiKey(asOperator(prisma), record.id);
    expect(again.revokedAt).toEqual(revoked.revokedAt);
    expect(await authenticateKey(prisma, key, '192.0.2.1')).toBeNull();
  });

  it('refuses an unknown id', async () => {
    await expect(revokeApiKey(asOperator(prisma), 'no-such-key')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('does not authenticate an expired key', async () => {
    const { key, record } = await createApiKey(asOperator(prisma), { ...base, expiresAt: new Date(Date.now() + 60_000) });
    expect(await authenticateKey(prisma, key, '::1')).not.toBeNull();
    await query('UPDATE "ApiKey" SET "expiresAt" = now() - interval \'1 second\' WHERE id = $1', [record.id]);
    expect(await authenticateKey(prisma, key, '::1')).toBeNull();
  });

  it('answers garbage without SQL and an unknown well-formed key with one indexed lookup', async () => {
    const { key } = await createApiKey(asOperator(prisma), base);
    await authenticateKey(prisma, key, '::1'); // connection warmed up
    const garbage = ['', 'hello', 'Bearer x', 'mk_', key.slice(0, -1), `${key}x`, key.replace('mk_', 'mk-'), `'; DROP TABLE "ApiKey"; --`, 'ü'.repeat(46), 'x'.repeat(100_000)];
    const { result, sql } = await counting(() => Promise.all(garbage.map((token) => authenticateKey(prisma, token, '::1'))));
    expect(result).toEqual(garbage.map(() => null));
    expect(sql).toEqual([]);

    const unknown = await counting(() => authenticateKey(prisma, generateApiKey().key, '::1'));
    expect(unknown.result).toBeNull();
    expect(byTable(unknown.sql)).toEqual({ ApiKey: 1 });
    expect(unknown.sql).toHaveLength(1);
    expect(unknown.sql[0]).toMatch(/"hash" = \$1/);
  });
});

describe('createLastUsedRecorder', () => {
  const lastUsed = async (ids: string[]) =>
    Object.fromEntries(
      (await query<{ id: string; at: Date | null }>('SELECT id, "lastUsedAt" AS at FROM "ApiKey" WHERE id = ANY($1)', [ids])).map((r) => [
        r.id,
        r.at?.toISOString() ?? null,
      ]),
    );

  it('writes many touches of many keys in one statement, keeping each key’s latest time', async () => {
    const keys = await Promise.all([1, 2, 3].map(() => createApiKey(asOperator(prisma), base)));
    const ids = keys.map((k) => k.record.id);
    const recorder = createLastUsedRecorder(prisma, { intervalMs: 3_600_000 });
    const t0 = Date.UTC(2030, 0, 1);
    // Out of order on purpose: the latest wins, not the last noted.
    for (let i = 0; i < 300; i++) recorder.touch(ids[i % 3]!, new Date(t0 + ((i * 7919) % 300) * 1000));
    const latest = (k: number) => Math.max(...Array.from({ length: 100 }, (_, j) => ((k + 3 * j) * 7919) % 300));
    expect(await lastUsed(ids)).toEqual({ [ids[0]!]: null, [ids[1]!]: null, [ids[2]!]: null }); // nothing written per touch

    const { sql } = await counting(() => recorder.flush());
    expect(sql).toHaveLength(1);
    expect(classify(sql[0]!)).toMatchObject({ reads: [], writes: ['ApiKey'] });
    expect(await lastUsed(ids)).toEqual(Object.fromEntries(ids.map((id, k) => [id, new Date(t0 + latest(k) * 1000).toISOString()])));

    const empty = await counting(() => recorder.flush());
    expect(empty.sql).toEqual([]);
    await recorder.stop();
  });

  it('never moves lastUsedAt backwards', async () => {
    const { record } = await createApiKey(asOperator(prisma), base);
    await query(`UPDATE "ApiKey" SET "lastUsedAt" = '2031-01-01T00:00:00Z' WHERE id = $1`, [record.id]);
    const recorder = createLastUsedRecorder(prisma);
    recorder.touch(record.id, new Date('2030-06-01T00:00:00Z'));
    await recorder.flush();
    expect(await lastUsed([record.id])).toEqual({ [record.id]: '2031-01-01T00:00:00.000Z' });
    recorder.touch(record.id, new Date('2032-01-01T00:00:00Z'));
    await recorder.stop(); // stop() writes what is left
    expect(await lastUsed([record.id])).toEqual({ [record.id]: '2032-01-01T00:00:00.000Z' });
    recorder.touch(record.id, new Date('2033-01-01T00:00:00Z')); // after stop: ignored
    await recorder.flush();
    expect(await lastUsed([record.id])).toEqual({ [record.id]: '2032-01-01T00:00:00.000Z' });
  });

  it('flushes on its timer', async () => {
    const { record } = await createApiKey(asOperator(prisma), base);
    const recorder = createLastUsedRecorder(prisma, { intervalMs: 20 });
    recorder.touch(record.id, new Date('2030-01-01T00:00:00Z'));
    await vi.waitFor(async () => expect(await lastUsed([record.id])).toEqual({ [record.id]: '2030-01-01T00:00:00.000Z' }), { timeout: 5000 });
    await recorder.stop();
  });

  it('reports a failed timed flush to onError, keeps the entries, and rejects an explicit flush', async () => {
    const broken = createPrisma({ url: 'postgresql://nobody:secret@127.0.0.1:1/none', poolMax: 1 });
    const errors: unknown[] = [];
    const recorder = createLastUsedRecorder(broken, { intervalMs: 20, onError: (e) => errors.push(e) });
    try {
      recorder.touch('some-key');
      await vi.waitFor(() => expect(errors.length).toBeGreaterThan(0), { timeout: 10_000 });
      // Still pending: an explicit flush tries (and fails) again rather than finding nothing to do.
      await expect(recorder.flush()).rejects.toBeDefined();
    } finally {
      await recorder.stop();
      await broken.$disconnect();
    }
  });
});
