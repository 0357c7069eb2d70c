import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, type ExpectStatic } from 'vitest';
import { setPasswordWithToken, signIn } from '../src/accounts/credentials.js';
import { authenticateKey } from '../src/auth/key-check.js';
import { EMBEDDED_DATABASE_NAME } from '../src/db/database.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { createPrisma, type PrismaClient } from '../src/db/prisma.js';
import { MemoryRateLimitStore } from '../src/ratelimit/memory-store.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { runKeysCli } from './helpers/keys-cli.js';
import { asOperator } from './helpers/context.js';
import { groupAlive, killGroup, listeningPort, npmStart, type Service } from './helpers/npm-start.js';
import { unusedPort } from './helpers/processes.js';

// `npm run keys` as a real process: what an operator types, what a script parses.

const cli = runKeysCli;

const databases: TestDatabase[] = [];
let db: TestDatabase;
let prisma: PrismaClient;
const env = () => ({ DATABASE_URL: db.url });

beforeAll(async () => {
  db = await createTestDatabase('migrated');
  databases.push(db);
  prisma = createPrisma({ url: db.url, poolMax: 1 });
});

afterAll(async () => {
  await prisma?.$disconnect();
  await Promise.all(databases.map((d) => d.drop()));
});

interface CreatedJson {
  id: string;
  key: string;
  plan: string;
  scopes: string[];
  owner: string;
  accountId: string;
  limit: number;
  window: number;
  prefix: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

describe('keys CLI with DATABASE_URL', () => {
  // Each CLI run is a process of its own, so tests that depend on no other run at once (two cores
  // at work, not one); 'list --json' reads the enterprise key made before it, so it runs alone.
  let created: CreatedJson;

  beforeAll(async () => {
    const run = await cli(
      ['create', '--owner', 'cli@example.com', '--plan', 'pro', '--scopes', 'read:orders,write:orders', '--name', 'from the CLI', '--json'],
      env(),
    );
    expect(run.stderr).not.toMatch(/Error/);
    expect(run.code).toBe(0);
    created = JSON.parse(run.stdout) as CreatedJson;
    expect(run.stderr).not.toContain(created.key);
  });

  it.concurrent('create --json prints exactly one JSON object with the key, and the key works', async ({ expect }) => {
    expect(created).toMatchObject({ plan: 'pro', scopes: ['read:orders', 'write:orders'], owner: 'cli@example.com', limit: 5000, window: 3600 });
    expect(created.id).toEqual(expect.any(String));
    expect(created.key).toMatch(/^mk_[A-Za-z0-9_-]{43}$/);
    expect(created.prefix).toBe(created.key.slice(0, 12));
    expect(created).not.toHaveProperty('hash');
    const caller = await authenticateKey(prisma, created.key, '127.0.0.1');
    expect(caller).toMatchObject({ keyId: created.id, accountId: created.accountId, plan: 'PRO' });
  });

  it.concurrent('creates enterprise keys with their own limit, window and expiry', async ({ expect }) => {
    const run = await cli(
      ['create', '--owner', 'Big@Example.com', '--plan', 'enterprise', '--limit', '20000', '--window', '15m', '--scopes', 'read:stock,read:prices', '--expires', '30d', '--json'],
      env(),
    );
    expect(run.code).toBe(0);
    const key = JSON.parse(run.stdout) as CreatedJson;
    expect(key).toMatchObject({ plan: 'enterprise', limit: 20000, window: 900, owner: 'big@example.com', scopes: ['read:stock', 'read:prices'] });
    const days = (Date.parse(key.expiresAt!) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(29.9);
    expect(days).toBeLessThanOrEqual(30);
    expect(await authenticateKey(prisma, key.key, '::1')).toMatchObject({ plan: 'ENTERPRISE', rateLimit: 20000, rateWindowSeconds: 900 });
  });

  it.concurrent('without --json shows the key once with a warning to store it', async ({ expect }) => {
    const run = await cli(['create', '--owner', 'cli@example.com', '--plan', 'basic', '--scopes', 'read:products'], env());
    expect(run.code).toBe(0);
    const key = /\b(mk_[A-Za-z0-9_-]{43})\b/.exec(run.stdout)?.[1];
    expect(key).toBeDefined();
    expect(run.stdout.split(key!)).toHaveLength(2);
    expect(run.stdout).toMatch(/shown only this once/);
    expect(run.stdout).toMatch(/basic \(1000 requests per 1h\)/);
  });

  it.concurrent('grants write:webhooks when asked, and only then', async ({ expect }) => {
    const run = await cli(['create', '--owner', 'cli@example.com', '--plan', 'pro', '--scopes', 'read:orders,write:webhooks', '--json'], env());
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { scopes: string[] }).scopes).toEqual(['read:orders', 'write:webhooks']);
    expect((await cli(['create', '--help'], env())).stdout + (await cli(['--help'], env())).stdout).toContain('write:webhooks');
  });

  it.concurrent('create --publishable makes a pk_ key bound to its origins, with the catalogue scopes only', async ({ expect }) => {
    const run = await cli(
      ['create', '--publishable', '--origins', 'https://Shop.Example,http://localhost:3000', '--allow-server', '--owner', 'shop@example.com', '--plan', 'basic', '--json'],
      env(),
    );
    expect(run.code, run.stderr).toBe(0);
    const made = JSON.parse(run.stdout) as CreatedJson & { kind: string; origins: string[]; allowServer: boolean };
    expect(made.key).toMatch(/^pk_[A-Za-z0-9_-]{43}$/);
    expect(made).toMatchObject({ kind: 'publishable', origins: ['https://shop.example', 'http://localhost:3000'], allowServer: true, prefix: made.key.slice(0, 12) });
    expect(made.scopes).toEqual(['read:products', 'read:categories', 'read:suppliers', 'read:reviews', 'read:prices']);
    const caller = await authenticateKey(prisma, made.key, '127.0.0.1');
    expect(caller).toMatchObject({ keyId: made.id, publishable: { origins: made.origins, allowServer: true } });
    const text = await cli(['create', '--publishable', '--origins', 'https://shop.example', '--allow-stock', '--owner', 'shop@example.com', '--plan', 'basic'], env());
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^Created a publishable API key for shop@example\.com:\n\n {4}pk_/);
    expect(text.stdout).toContain('read:stock');
    expect(text.stdout).toMatch(/origins\s+https:\/\/shop\.example/);
    const list = await cli(['list', '--owner', 'shop@example.com'], env());
    expect(list.stdout).toContain('publishable https://shop.example,http://localhost:3000 +server');
  });

  it('list --json prints an array of keys, never the keys themselves', async () => {
    const run = await cli(['list', '--json'], env());
    expect(run.code).toBe(0);
    const list = JSON.parse(run.stdout) as Record<string, unknown>[];
    expect(Array.isArray(list)).toBe(true);
    expect(list.find((k) => k.id === created.id)).toMatchObject({ owner: 'cli@example.com', plan: 'pro', prefix: created.prefix, revokedAt: null });
    for (const k of list) {
      expect(k).not.toHaveProperty('key');
      expect(k).not.toHaveProperty('hash');
    }
    expect(run.stdout).not.toContain(created.key);

    const mine = JSON.parse((await cli(['list', '--owner', 'big@example.com', '--json'], env())).stdout) as { owner: string }[];
    expect(mine.length).toBe(1);
    expect(mine[0]!.owner).toBe('big@example.com');
  });

  it.concurrent('list without --json prints a table', async ({ expect }) => {
    const run = await cli(['list'], env());
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^ID\s+PREFIX\s+OWNER\s+PLAN/);
    expect(run.stdout).toContain(created.id);
    expect(run.stdout).not.toContain(created.key);
  });

  it.concurrent('revoke ends the key; revoking again is harmless', async ({ expect }) => {
    const victim = JSON.parse(
      (await cli(['create', '--owner', 'cli@example.com', '--plan', 'pro', '--scopes', 'read:orders', '--json'], env())).stdout,
    ) as CreatedJson;
    const first = await cli(['revoke', victim.id, '--json'], env());
    expect(first.code).toBe(0);
    const revoked = JSON.parse(first.stdout) as CreatedJson;
    expect(revoked).toMatchObject({ id: victim.id, revokedAt: expect.any(String) });
    expect(await authenticateKey(prisma, victim.key, '::1')).toBeNull();

    const second = await cli(['revoke', victim.id], env());
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/already revoked/);
    expect(second.stdout).toContain(revoked.revokedAt!);
  });

  // One refusal of each kind, as a process: the arguments, the key rules (both before a database
  // is opened; every such refusal is in test/unit/keys-cli-arguments.test.ts) and the database's.
  const bad: [string, string[], RegExp][] = [
    ['an unknown plan', ['create', '--owner', 'a@example.com', '--plan', 'gold', '--scopes', 'read:orders'], /--plan must be basic, pro or enterprise/],
    ['an unknown scope', ['create', '--owner', 'a@example.com', '--plan', 'pro', '--scopes', 'read:orders,read:secrets', '--json'], /unknown scope "read:secrets"/],
    ['revoke of an unknown id', ['revoke', 'no-such-key', '--json'], /No API key has the id "no-such-key"/],
    ['plan of an unknown account', ['plan', 'nobody-here@example.com', 'pro', '--json'], /No account has the e-mail "nobody-here@example.com"/],
  ];

  // Concurrently: each is a separate process, and one after another they take a while.
  it.concurrent.for(bad)('refuses %s: message on stderr, nothing on stdout, exit code 1', async ([, args, message], { expect }) => {
    const run = await cli(args, env());
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
  });

  it.concurrent('keeps stdout pure JSON while migrations are applied and logged (LOG_LEVEL=info)', async ({ expect }) => {
    const empty = await createTestDatabase('empty');
    databases.push(empty);
    const run = await cli(['create', '--owner', 'fresh@example.com', '--plan', 'basic', '--scopes', 'read:orders', '--json'], {
      DATABASE_URL: empty.url,
    });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/Applied migration/);
    expect(JSON.parse(run.stdout)).toMatchObject({ owner: 'fresh@example.com', plan: 'basic' });
  });

  it.concurrent('invite --json prints a one-time link to set a password, at localhost:PORT by default', async ({ expect }) => {
    const run = await cli(['invite', 'Invited@Example.com', '--json'], { ...env(), PUBLIC_URL: '', PORT: '4321' });
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as { email: string; link: string; expiresAt: string };
    expect(Object.keys(out).sort()).toEqual(['email', 'expiresAt', 'link']);
    expect(out.email).toBe('invited@example.com');
    const match = /^http:\/\/localhost:4321\/dashboard\/set-password\?token=([A-Za-z0-9_-]{43})$/.exec(out.link);
    expect(match).not.toBeNull();
    const token = match![1]!;
    expect(run.stderr).not.toContain(token);
    const days = (Date.parse(out.expiresAt) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.99);
    expect(days).toBeLessThanOrEqual(7);

    const { accountId } = await setPasswordWithToken(asOperator(prisma), token, 'a passphrase from the invite');
    const store = new MemoryRateLimitStore();
    try {
      expect(await signIn(asOperator(prisma), store, { email: 'invited@example.com', password: 'a passphrase from the invite', ip: '::1' })).toEqual({ accountId });
    } finally {
      await store.close();
    }
    await expect(setPasswordWithToken(asOperator(prisma), token, 'another passphrase, later')).rejects.toMatchObject({ message: expect.stringMatching(/already been used/) });
  });

  it.concurrent('invite without --json shows the link once at PUBLIC_URL, and says nothing was e-mailed', async ({ expect }) => {
    const run = await cli(['invite', 'cli@example.com'], { ...env(), PUBLIC_URL: 'https://dev.example.com/' });
    expect(run.code).toBe(0);
    const link = /(https:\/\/dev\.example\.com\/dashboard\/set-password\?token=[A-Za-z0-9_-]{43})\s/.exec(run.stdout)?.[1];
    expect(link).toBeDefined();
    expect(run.stdout.split(link!)).toHaveLength(2);
    expect(run.stdout).toMatch(/shown only this once/);
    expect(run.stdout).toMatch(/7 days/);
    expect(run.stdout).toMatch(/No e-mail has been sent/);
    // The account the keys CLI made keeps its keys and has no password until the link is used.
    expect((await prisma.account.findUniqueOrThrow({ where: { email: 'cli@example.com' } })).passwordHash).toBeNull();
  });

  it.concurrent('plan sets the dashboard plan of an account', async ({ expect }) => {
    await cli(['invite', 'planned@example.com'], env());
    const run = await cli(['plan', 'Planned@Example.com', 'PRO', '--json'], env());
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ email: 'planned@example.com', plan: 'pro', previousPlan: 'basic' });
    expect((await prisma.account.findUniqueOrThrow({ where: { email: 'planned@example.com' } })).plan).toBe('PRO');

    const again = await cli(['plan', 'planned@example.com', 'pro'], env());
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/was already pro; nothing changed/);
    const back = await cli(['plan', 'planned@example.com', 'basic'], env());
    expect(back.stdout).toMatch(/is now basic \(was pro\)/);
  });

  it.concurrent('prints help', async ({ expect }) => {
    const run = await cli(['--help'], env());
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/Usage:/);
    expect(run.stdout).toMatch(/invite EMAIL/);
    expect(run.stdout).toMatch(/plan EMAIL basic\|pro/);
  });
});

describe('keys invite beside a running server (npm start, on the build)', () => {
  let dataDir: string;
  let running: Service | undefined;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mp-keys-invite-'));
  });

  afterAll(async () => {
    killGroup(running);
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  /** The link `invite --json` prints, run with the environment the server was not started with. */
  const inviteLink = async (extra: Record<string, string> = {}) => {
    const run = await cli(['invite', 'beside@example.com', '--json'], { ...env(), DATA_DIR: dataDir, PUBLIC_URL: '', PORT: '', ...extra });
    expect(run.code, run.stderr).toBe(0);
    return (JSON.parse(run.stdout) as { link: string }).link;
  };
  const startServer = async () => {
    running = npmStart({ ...env(), NODE_ENV: 'production', DATA_DIR: dataDir, PORT: '0', PUBLIC_URL: '' });
    return listeningPort(running);
  };

  it('links to the port the server listens on, not to PORT’s default; PUBLIC_URL still wins', async () => {
    const port = await startServer();
    expect(port).not.toBe(4000);
    expect(await inviteLink()).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/dashboard/set-password\\?token=[A-Za-z0-9_-]{43}$`));
    expect(await inviteLink({ PUBLIC_URL: 'https://api.example.com' })).toMatch(/^https:\/\/api\.example\.com\/dashboard\/set-password\?token=/);

    // Stopped, it no longer answers there: the link goes back to localhost:PORT.
    process.kill(running!.npm.pid!, 'SIGTERM');
    expect((await running!.exited).code).toBe(0);
    expect(await inviteLink()).toMatch(/^http:\/\/localhost:4000\/dashboard\/set-password\?token=/);
    expect(await inviteLink({ PORT: '4321' })).toMatch(/^http:\/\/localhost:4321\/dashboard\/set-password\?token=/);
  }, 120_000);

  it('a server that was killed (no shutdown) is not taken for a running one', async () => {
    const port = await startServer();
    expect(await inviteLink()).toContain(`:${port}/`);
    killGroup(running);
    // Gone for good: node too, not only npm (a killed child lingers until it is reaped).
    for (const deadline = Date.now() + 10_000; groupAlive(running!.npm.pid!) && Date.now() < deadline; ) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(groupAlive(running!.npm.pid!)).toBe(false);
    expect(await inviteLink()).toMatch(/^http:\/\/localhost:4000\/dashboard\/set-password\?token=/);
  }, 120_000);
});

describe('keys CLI with a DATABASE_URL it cannot use', () => {
  /** Exit code 1 and one line on stderr, nothing on stdout, no stack, no password (`expect`: the test's own). */
  function expectOneLine(expect: ExpectStatic, run: { code: number; stdout: string; stderr: string }, line: string, password: string) {
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(`${line}\n`);
    expect(run.stderr).not.toContain(password);
  }

  it.concurrent('an unreachable server: names DATABASE_URL (password hidden) and the cause', async ({ expect }) => {
    const port = await unusedPort();
    const run = await cli(['list', '--json'], { DATABASE_URL: `postgresql://ops:s3cret-pass@127.0.0.1:${port}/shop` });
    expectOneLine(expect, run, `Error: DATABASE_URL postgresql://ops:***@127.0.0.1:${port}/shop: connection refused`, 's3cret-pass');
  });

  it.concurrent('a refused password: PostgreSQL’s reason', async ({ expect }) => {
    const admin = new URL(inject('pgAdminUrl'));
    admin.password = 'not-the-password';
    const run = await cli(['list'], { DATABASE_URL: admin.toString() });
    admin.password = '***';
    expectOneLine(expect, run, `Error: DATABASE_URL ${admin.toString()}: password authentication failed for user "${admin.username}"`, 'not-the-password');
  });

  it.concurrent('a mysql:// URL is refused as configuration', async ({ expect }) => {
    const run = await cli(['invite', 'dev@example.com'], { DATABASE_URL: 'mysql://ops:s3cret-pass@127.0.0.1:3306/shop' });
    expectOneLine(
      expect,
      run,
      'Error: Invalid configuration: DATABASE_URL: must be a postgresql:// or postgres:// URL (postgresql://user:pass@host:5432/db), not mysql://',
      's3cret-pass',
    );
  });
});

describe('keys CLI without DATABASE_URL', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mp-keys-cli-'));
  });

  afterAll(async () => {
    if (dataDir) await fs.rm(dataDir, { recursive: true, force: true });
  });

  it('starts the embedded PostgreSQL under DATA_DIR itself, and stops it afterwards', async () => {
    const noServer = { DATABASE_URL: '', DATA_DIR: dataDir, EMBEDDED_PG_PORT: '' };
    const create = await cli(['create', '--owner', 'solo@example.com', '--plan', 'pro', '--scopes', 'read:stock', '--json'], noServer);
    expect(create.stderr).toMatch(/Initialised the embedded PostgreSQL cluster/);
    expect(create.code).toBe(0);
    const created = JSON.parse(create.stdout) as CreatedJson;
    expect(created).toMatchObject({ owner: 'solo@example.com', plan: 'pro', scopes: ['read:stock'] });
    // Stopped on exit: no postmaster is left behind.
    await expect(fs.access(path.join(dataDir, 'pg', 'postmaster.pid'))).rejects.toThrow();

    // The key was written to the cluster in DATA_DIR: a second run finds it there.
    const list = await cli(['list', '--json'], noServer);
    expect(list.code).toBe(0);
    expect((JSON.parse(list.stdout) as { id: string }[]).map((k) => k.id)).toEqual([created.id]);
    await expect(fs.access(path.join(dataDir, 'pg', 'postmaster.pid'))).rejects.toThrow();

    // And its key authenticates against that database (started here, briefly, to look).
    const server = await startEmbeddedPostgres({ dataDir, log: () => undefined });
    const client = createPrisma({ url: server.url(EMBEDDED_DATABASE_NAME), poolMax: 1 });
    try {
      expect(await authenticateKey(client, created.key, '::1')).toMatchObject({ keyId: created.id });
    } finally {
      await client.$disconnect();
      await server.stop();
    }
  });
});
