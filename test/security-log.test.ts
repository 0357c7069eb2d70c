import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMember, removeMember } from '../src/accounts/members.js';
import { pruneSecurityLog } from '../src/accounts/security-log.js';
import { createPrisma } from '../src/db/prisma.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { asOperator } from './helpers/context.js';
import { accountIdOf, dashboardClient, keyIn, signedIn, textOf, type DashboardClient } from './helpers/dashboard.js';
import { eventually } from './helpers/eventually.js';
import { runKeysCli } from './helpers/keys-cli.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

// The account's security log (src/accounts/security-log.ts, /dashboard/security): each event with
// who did it, from where, with what browser; written with the change it records (a refused
// change writes none); no secret in it; an account sees its own only.

let app: TestApp;
let hooks: Receiver;
beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0.2' } });
  hooks = await startReceiver();
});
afterAll(async () => {
  await hooks?.close();
  await app?.close();
});

interface EventRow {
  kind: string;
  actorKind: string;
  actorId: string | null;
  ip: string | null;
  userAgent: string | null;
  details: Record<string, unknown>;
}

const eventsOf = async (accountId: string): Promise<EventRow[]> =>
  (await app.sql.query<EventRow>(`SELECT kind, "actorKind", "actorId", ip, "userAgent", details FROM "SecurityEvent" WHERE "accountId" = $1 ORDER BY "createdAt", id`, [accountId])).rows;
const kinds = (rows: EventRow[]) => rows.map((r) => r.kind);

const BROWSER = 'SecurityLogTest/1.0 <script>alert(1)</script>';
const IP = '10.250.1.7';

describe('the security log', () => {
  let client: DashboardClient;
  let email: string;
  let password: string;
  let accountId: string;
  let apiKey: string;

  beforeAll(async () => {
    ({ client, email, password } = await signedIn(app.base, { ip: IP }));
    accountId = await accountIdOf(app.sql, email);
  });

  it('records a sign-in (failed and succeeded) with the address and the browser, and a sign-out', async () => {
    const ua = { 'user-agent': BROWSER };
    await client.post('/dashboard/sign-out', {});
    const browser = dashboardClient(app.base, IP);
    await browser.get('/dashboard/sign-in', ua);
    expect((await browser.post('/dashboard/sign-in', { email, password: 'not the password at all' }, { headers: ua })).status).toBe(401);
    const signedInAgain = await browser.post('/dashboard/sign-in', { email, password }, { headers: ua });
    expect(signedInAgain.location).toBe('/dashboard/keys');
    client = browser;
    // The failed attempt is written beside its answer: waited for.
    const rows = await eventually('the failed sign-in', () => eventsOf(accountId), (r) => r.some((e) => e.kind === 'sign-in.failed'));
    expect(kinds(rows)).toEqual(['sign-in', 'session.ended', 'sign-in.failed', 'sign-in']);
    const [registered, ended, failed, signIn] = rows;
    expect(registered).toMatchObject({ actorKind: 'session', ip: IP, details: { how: 'registered' } });
    expect(ended).toMatchObject({ actorKind: 'session', actorId: registered!.actorId, ip: IP });
    expect(failed).toMatchObject({ actorKind: 'visitor', actorId: null, ip: IP, userAgent: BROWSER });
    expect(signIn).toMatchObject({ actorKind: 'session', ip: IP, userAgent: BROWSER, details: { how: 'password' } });
    expect(signIn!.actorId).not.toBe(registered!.actorId);
  });

  it('records keys created and revoked in the dashboard, and by the CLI (who: the session, the operator)', async () => {
    await client.get('/dashboard/keys');
    const made = await client.post('/dashboard/keys', { name: 'logged key', scopes: ['read:orders', 'write:orders', 'write:webhooks'], expires: '' });
    apiKey = keyIn((await client.follow(made)).html)!;
    expect(apiKey).toMatch(/^mk_/);
    const cli = await runKeysCli(['create', '--owner', email, '--plan', 'pro', '--scopes', 'read:orders', '--name', 'from the CLI', '--json'], { DATABASE_URL: app.url });
    expect(cli.code).toBe(0);
    const fromCli = JSON.parse(cli.stdout) as { id: string; prefix: string };
    await client.get(`/dashboard/keys/${fromCli.id}/revoke`);
    expect((await client.post(`/dashboard/keys/${fromCli.id}/revoke`, {})).location).toBe('/dashboard/keys?done=revoked');
    // Revoking again changes nothing, and says nothing more in the log.
    await client.post(`/dashboard/keys/${fromCli.id}/revoke`, {});

    const rows = (await eventsOf(accountId)).filter((r) => r.kind.startsWith('key.'));
    expect(rows.map((r) => [r.kind, r.actorKind, r.details.name])).toEqual([
      ['key.created', 'session', 'logged key'],
      ['key.created', 'cli', 'from the CLI'],
      ['key.revoked', 'session', 'from the CLI'],
    ]);
    expect(rows[1]).toMatchObject({ ip: null, userAgent: null, details: { keyId: fromCli.id, prefix: fromCli.prefix } });
  });

  it('records webhook endpoints created, deleted and disabled (who: the key, the service)', async () => {
    const api = (path: string, method = 'GET', body?: unknown) =>
      fetch(`${app.base}${path}`, { method, headers: { 'x-api-key': apiKey, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const keep = (await (await api('/api/webhooks', 'POST', { url: hooks.url, events: ['order.created'] })).json()).data as { id: string };
    const gone = (await (await api('/api/webhooks', 'POST', { url: `${hooks.url}/gone?token=receiver-secret-token`, events: ['order.created'] })).json()).data as { id: string };
    expect((await api(`/api/webhooks/${gone.id}`, 'DELETE')).status).toBe(200);
    // A receiver that fails every attempt of the (short) schedule: the worker disables the endpoint.
    hooks.answer = () => ({ status: 500 });
    expect((await api(`/api/webhooks/${keep.id}/test`, 'POST')).status).toBeLessThan(300);
    const rows = await eventually('the endpoint disabled', async () => (await eventsOf(accountId)).filter((r) => r.kind.startsWith('webhook.')), (r) => r.length === 4, 20_000);
    const keyId = (await app.sql.query(`SELECT id FROM "ApiKey" WHERE name = 'logged key'`)).rows[0].id as string;
    expect(rows.map((r) => [r.kind, r.actorKind, r.actorId, r.details.endpointId])).toEqual([
      ['webhook.created', 'key', keyId, keep.id],
      ['webhook.created', 'key', keyId, gone.id],
      ['webhook.deleted', 'key', keyId, gone.id],
      ['webhook.disabled', 'service', 'webhook worker', keep.id],
    ]);
  });

  it('records a password change, and none for a refused one', async () => {
    const before = (await eventsOf(accountId)).length;
    await client.get('/dashboard/account');
    const refused = await client.post('/dashboard/account/password', { current: 'a wrong current password', next: 'another long passphrase' });
    expect(refused.status).toBe(400);
    expect(await eventsOf(accountId)).toHaveLength(before);
    const changed = await client.post('/dashboard/account/password', { current: password, next: 'another long passphrase' });
    expect(changed.location).toBe('/dashboard/account?done=password-changed');
    const rows = (await eventsOf(accountId)).slice(before);
    expect(kinds(rows)).toEqual(['password.changed', 'sign-in']);
    expect(rows[0]).toMatchObject({ actorKind: 'session', ip: IP, details: { sessionsEnded: 1 } });
    password = 'another long passphrase';
  });

  it('records memberships added and removed by the operator', async () => {
    const supplierId = (await app.sql.query(`SELECT id FROM "Supplier" WHERE "isActive" ORDER BY id LIMIT 1`)).rows[0].id as string;
    const prisma = createPrisma({ url: app.url, poolMax: 1 });
    try {
      await addMember(asOperator(prisma), email, supplierId);
      await removeMember(asOperator(prisma), email);
    } finally {
      await prisma.$disconnect();
    }
    const rows = (await eventsOf(accountId)).filter((r) => r.kind.startsWith('member.'));
    expect(rows.map((r) => [r.kind, r.actorKind, r.details.supplierId])).toEqual([
      ['member.added', 'cli', supplierId],
      ['member.removed', 'cli', supplierId],
    ]);
  });

  it('holds no secret: no key, password, session cookie or webhook secret in any row', async () => {
    const { rows } = await app.sql.query(`SELECT row_to_json(e)::text AS text FROM "SecurityEvent" e WHERE "accountId" = $1`, [accountId]);
    const text = rows.map((r) => r.text as string).join('\n');
    const secrets = await app.sql.query(`SELECT secret FROM "WebhookEndpoint" WHERE "accountId" = $1`, [accountId]);
    // An endpoint's path and query may hold the receiver's token: only its host is kept.
    for (const secret of ['receiver-secret-token', '/hooks', apiKey, apiKey.slice(3), password, 'not the password at all', client.cookies.get('mp_session')!, ...secrets.rows.map((r) => r.secret as string)]) {
      expect(text).not.toContain(secret);
    }
  });

  it('shows the account its own events on /dashboard/security, newest first, with a key’s expiry read from the key; never another account’s', async () => {
    // A key whose expiry has passed: in the log at its expiry time, written by nobody.
    await app.sql.query(`UPDATE "ApiKey" SET "expiresAt" = now() - interval '1 minute' WHERE name = 'logged key'`);
    const page = await client.get('/dashboard/security');
    expect(page.status).toBe(200);
    const text = textOf(page.html);
    expect(text).toContain('API key expired: key');
    expect(text).toContain('Sign-in refused: wrong password');
    expect(text).toContain('Webhook endpoint disabled');
    expect(text).toContain('The operator (keys CLI)');
    expect(text).toContain(IP);
    // The browser as text, escaped: never markup.
    expect(page.html).not.toContain('<script>alert(1)</script>');
    expect(text).toContain(BROWSER);
    // Newest first; the expiry a minute ago is older than everything this test did.
    expect(text.indexOf('Password changed')).toBeLessThan(text.indexOf('API key created'));
    expect(text.indexOf('after registering')).toBeLessThan(text.indexOf('API key expired'));

    // Past 90 days: not shown, and deleted by the worker's hourly sweep (pruneSecurityLog).
    await app.sql.query(`INSERT INTO "SecurityEvent" (id, "accountId", kind, "actorKind", ip, "createdAt") VALUES ('old-event', $1, 'sign-in', 'session', '10.99.99.99', now() - interval '91 days')`, [accountId]);
    expect(textOf((await client.get('/dashboard/security')).html)).not.toContain('10.99.99.99');
    const prisma = createPrisma({ url: app.url, poolMax: 1 });
    try {
      expect(await pruneSecurityLog(prisma)).toBe(1);
    } finally {
      await prisma.$disconnect();
    }
    expect((await app.sql.query(`SELECT 1 FROM "SecurityEvent" WHERE id = 'old-event'`)).rowCount).toBe(0);

    const other = await signedIn(app.base);
    const theirs = textOf((await other.client.get('/dashboard/security')).html);
    expect(theirs).toContain('Signed in');
    expect(theirs).not.toContain(IP);
    expect(theirs).not.toContain('API key created');
    // Signed out: the sign-in page, no log.
    const stranger = await dashboardClient(app.base).get('/dashboard/security');
    expect(stranger.status).toBe(303);
    expect(stranger.location).toMatch(/^\/dashboard\/sign-in/);
  });
});
