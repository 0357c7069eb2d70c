import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIVE_KEYS_PER_ACCOUNT } from '../src/accounts/api-keys.js';
import { createPasswordLink } from '../src/accounts/credentials.js';
import { LIMITS } from '../src/config/limits.js';
import { SCOPE_USES, SELF_SERVICE_SCOPES } from '../src/auth/scopes.js';
import { createPrisma } from '../src/db/prisma.js';
import { hashToken } from '../src/shared/tokens.js';
import { createTestKey } from './helpers/keys.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { accountIdOf, dashboardClient, formTokenIn, insertOrder, keyIn, randomIp, signedIn, textOf, type DashboardClient, type Page } from './helpers/dashboard.js';
import { byTable, without } from './helpers/statements.js';
import { asOperator } from './helpers/context.js';

// The developer dashboard over real HTTP on a real database, as a browser uses it: cookies, forms,
// CSRF tokens, redirects. Each test registers its own account.

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

/** Posts the create-key form and, when it is accepted (a redirect), opens the page that shows the new key. */
async function createKey(client: DashboardClient, fields: Record<string, string | string[]> = {}) {
  await client.get('/dashboard/keys');
  const answer = await client.post('/dashboard/keys', { name: 'shop backend', scopes: ['read:orders', 'read:products'], expires: '', ...fields });
  const page = answer.status === 303 ? await client.follow(answer) : answer;
  return { answer, page, key: keyIn(page.html) };
}

/** The first row of the keys page's table, each cell's text by its column's heading. */
function firstKeyRow(html: string): Record<string, string> {
  const table = /<table aria-labelledby="your-keys">([\s\S]*?)<\/table>/.exec(html)?.[1] ?? '';
  const headings = [...table.matchAll(/<th scope="col">([^<]*)<\/th>/g)].map((m) => m[1]!);
  const row = /<tbody>\s*<tr>([\s\S]*?)<\/tr>/.exec(table)?.[1] ?? '';
  const cells = [...row.matchAll(/<td>([\s\S]*?)<\/td>/g)].map((m) => textOf(m[1]!));
  return Object.fromEntries(headings.map((heading, i) => [heading, cells[i] ?? '']));
}

const keyCount = async (email: string) =>
  Number((await app.sql.query<{ n: string }>(`SELECT count(*) AS n FROM "ApiKey" k JOIN "Account" a ON a.id = k."accountId" WHERE a.email = $1`, [email])).rows[0]!.n);

describe('landing page and pages', () => {
  it('/ links the dashboard, GraphiQL and the REST docs; pages set lang, a title and a strict CSP', async () => {
    const res = await fetch(`${app.base}/`);
    expect(res.status).toBe(200);
    const html = await res.text();
    for (const href of ['/dashboard', '/graphql', '/api/docs']) expect(html).toContain(`href="${href}"`);
    expect(html).toMatch(/<html lang="en">/);
    expect(html).toMatch(/<title>[^<]+<\/title>/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
  });

  it('has an icon: every page links one that answers, and /favicon.ico answers an icon too, free of any rate limit', async () => {
    const signIn = await fetch(`${app.base}/dashboard/sign-in`);
    const href = /<link rel="icon" href="([^"]+)" type="image\/svg\+xml">/.exec(await signIn.text())?.[1];
    expect(href).toBe('/dashboard/assets/favicon.svg');
    const linked = await fetch(`${app.base}${href}`);
    expect(linked.status).toBe(200);
    expect(linked.headers.get('content-type')).toBe('image/svg+xml');
    expect(await linked.text()).toMatch(/^<svg [^>]*viewBox="0 0 32 32"/);
    const landing = await (await fetch(`${app.base}/`)).text();
    expect(landing).toContain(`<link rel="icon" href="${href}"`);

    const ico = await fetch(`${app.base}/favicon.ico`);
    expect(ico.status).toBe(200);
    expect(ico.headers.get('content-type')).toBe('image/x-icon');
    expect(ico.headers.get('x-ratelimit-limit')).toBeNull();
    const bytes = Buffer.from(await ico.arrayBuffer());
    // An ICO of one 32×32 image, a PNG.
    expect([bytes.readUInt16LE(0), bytes.readUInt16LE(2), bytes.readUInt16LE(4), bytes[6], bytes[7]]).toEqual([0, 1, 1, 32, 32]);
    expect(bytes.subarray(bytes.readUInt32LE(18), bytes.readUInt32LE(18) + 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect((await fetch(`${app.base}/favicon.ico`, { method: 'POST' })).status).toBe(404);
  });

  it('sends /dashboard to sign in, and a member page too when signed out', async () => {
    const client = dashboardClient(app.base);
    expect((await client.get('/dashboard')).location).toBe('/dashboard/sign-in');
    expect((await client.get('/dashboard/keys')).location).toBe('/dashboard/sign-in');
    const signIn = await client.get('/dashboard/sign-in');
    expect(signIn.status).toBe(200);
    expect(signIn.html).toContain('<label for="field-email">');
  });

  it('answers an unknown page 404, a wrong method 405 with Allow, JSON 415, a huge form 413: as pages, never 500', async () => {
    const { client } = await signedIn(app.base);
    expect((await client.get('/dashboard/nothing-here')).status).toBe(404);
    const put = await fetch(`${app.base}/dashboard/keys`, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, POST');
    const json = await client.post('/dashboard/keys', {}, { headers: { 'content-type': 'application/json' } });
    expect(json.status).toBe(415);
    const huge = await client.post('/dashboard/keys', { name: 'x'.repeat(20_000), scopes: 'read:orders' });
    expect(huge.status).toBe(413);
    for (const page of [json, huge]) expect(page.headers.get('content-type')).toContain('text/html');
  });
});

describe('registration and sign-in', () => {
  it('registers and is signed in at once, then signs in again with a fresh HttpOnly SameSite=Lax session cookie (not Secure over plain HTTP)', async () => {
    const client = dashboardClient(app.base);
    await client.get('/dashboard/register');
    const email = `Reg-${Date.now()}@Example.com`;
    const registered = await client.post('/dashboard/register', { name: 'Ana', companyName: 'Ana SRL', email, password: 'a long and unusual passphrase' });
    expect(registered.status).toBe(303);
    expect(registered.location).toBe('/dashboard/keys?done=registered');
    const { rows } = await app.sql.query(`SELECT email, "passwordHash", plan FROM "Account" WHERE email = $1`, [email.toLowerCase()]);
    expect(rows).toHaveLength(1);
    expect(rows[0].passwordHash).toMatch(/^\$argon2id\$/);
    expect(rows[0].plan).toBe('BASIC');
    // Registering signed the account in: its keys page, with a session of its own.
    const first = client.lastSetCookies.find((c) => c.startsWith('mp_session='))!;
    expect(first).toMatch(/; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    const welcome = await client.follow(registered);
    expect(welcome.status).toBe(200);
    expect(textOf(welcome.html)).toContain(email.toLowerCase());
    expect(textOf(welcome.html)).toContain('you are signed in');

    await client.get('/dashboard/sign-in');
    const signed = await client.post('/dashboard/sign-in', { email, password: 'a long and unusual passphrase' });
    expect(signed.status).toBe(303);
    const session = client.lastSetCookies.find((c) => c.startsWith('mp_session='))!;
    expect(session).toMatch(/; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/);
    expect(session).not.toContain('Secure');
    const keys = await client.follow(signed);
    expect(keys.status).toBe(200);
    expect(textOf(keys.html)).toContain(email.toLowerCase());
  });

  it('marks the cookie Secure when a trusted proxy says the request came over HTTPS', async () => {
    const { email, password } = await signedIn(app.base);
    const client = dashboardClient(app.base);
    await client.get('/dashboard/sign-in', { 'x-forwarded-proto': 'https' });
    await client.post('/dashboard/sign-in', { email, password }, { headers: { 'x-forwarded-proto': 'https', origin: app.base.replace('http:', 'https:') } });
    expect(client.lastSetCookies.find((c) => c.startsWith('mp_session='))).toMatch(/; Secure$/);
  });

  it('refuses weak passwords and a taken e-mail, showing each error next to its field', async () => {
    const { email } = await signedIn(app.base);
    const client = dashboardClient(app.base);
    await client.get('/dashboard/register');
    const weak = await client.post('/dashboard/register', { name: 'B', email: `weak-${Date.now()}@example.com`, password: 'password123' });
    expect(weak.status).toBe(400);
    expect(weak.html).toContain('aria-invalid="true"');
    expect(textOf(weak.html)).toMatch(/common/i);
    const short = await client.post('/dashboard/register', { name: 'B', email: `short-${Date.now()}@example.com`, password: 'Sh0rt!x' });
    expect(short.status).toBe(400);
    expect(textOf(short.html)).toMatch(/10 characters/);
    const taken = await client.post('/dashboard/register', { name: 'B', email: email.toUpperCase(), password: 'another fine passphrase' });
    expect(taken.status).toBe(400);
    expect(textOf(taken.html)).toMatch(/already registered/i);
    // The password is never sent back in the page.
    expect(taken.html).not.toContain('another fine passphrase');
  });

  it('answers an unknown e-mail and a wrong password alike', async () => {
    const { email } = await signedIn(app.base);
    const client = dashboardClient(app.base);
    await client.get('/dashboard/sign-in');
    const wrong = await client.post('/dashboard/sign-in', { email, password: 'not the password at all' });
    const unknown = await client.post('/dashboard/sign-in', { email: `nobody-${Date.now()}@example.com`, password: 'not the password at all' });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    const message = (page: { html: string }) => /<div class="error-summary"[\s\S]*?<\/div>/.exec(page.html)?.[0];
    expect(message(wrong)).toBeDefined();
    expect(message(wrong)).toBe(message(unknown));
  });

  it('throttles repeated guesses at one account, from any address, with "try again in N s"', async () => {
    const { email } = await signedIn(app.base);
    let last;
    for (let i = 0; i < 30; i++) {
      const guesser = dashboardClient(app.base); // a new address each time: the account's limit applies
      await guesser.get('/dashboard/sign-in');
      last = await guesser.post('/dashboard/sign-in', { email, password: `guess number ${i} here` });
      if (last.status === 429) break;
    }
    expect(last!.status).toBe(429);
    expect(Number(last!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(textOf(last!.html)).toMatch(/try again in \d+ s/i);
  });

  it('never keeps a session id the browser brought (fixation): sign-in sets a new one, and the planted one is no session', async () => {
    const { email, password } = await signedIn(app.base);
    const victim = dashboardClient(app.base);
    const planted = 'A'.repeat(43);
    victim.cookies.set('mp_session', planted);
    await victim.get('/dashboard/sign-in');
    await victim.post('/dashboard/sign-in', { email, password });
    expect(victim.cookies.get('mp_session')).toBeDefined();
    expect(victim.cookies.get('mp_session')).not.toBe(planted);
    const attacker = dashboardClient(app.base);
    attacker.cookies.set('mp_session', planted);
    expect((await attacker.get('/dashboard/keys')).location).toBe('/dashboard/sign-in');
  });

  it('signs out: the session ends in the database, not only in the browser', async () => {
    const { client } = await signedIn(app.base);
    const token = client.cookies.get('mp_session')!;
    const out = await client.post('/dashboard/sign-out', {});
    expect(out.location).toBe('/dashboard/sign-in?done=signed-out');
    const replay = dashboardClient(app.base);
    replay.cookies.set('mp_session', token);
    expect((await replay.get('/dashboard/keys')).location).toBe('/dashboard/sign-in');
  });

  it('ends a session idle for over 2 hours', async () => {
    const { client, email } = await signedIn(app.base);
    await app.sql.query(`UPDATE "Session" s SET "lastSeenAt" = now() - interval '3 hours' FROM "Account" a WHERE a.id = s."accountId" AND a.email = $1`, [email]);
    expect((await client.get('/dashboard/keys')).location).toBe('/dashboard/sign-in');
  });

  it('throttles guesses at the current password on the account page like sign-in guesses', async () => {
    const { client } = await signedIn(app.base);
    await client.get('/dashboard/account');
    let page;
    for (let i = 0; i < 15; i++) {
      page = await client.post('/dashboard/account/password', { current: `guess ${i} at it`, next: 'a brand new passphrase' });
      if (page.status === 429) break;
      expect(page.status).toBe(400);
    }
    expect(page!.status).toBe(429);
    expect(Number(page!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(textOf(page!.html)).toMatch(/try again in \d+ s/);
  });

  it('a password change ends every other session and keeps this browser signed in', async () => {
    const { client, email, password } = await signedIn(app.base);
    const other = dashboardClient(app.base);
    await other.get('/dashboard/sign-in');
    await other.post('/dashboard/sign-in', { email, password });
    expect((await other.get('/dashboard/keys')).status).toBe(200);

    await client.get('/dashboard/account');
    const wrongCurrent = await client.post('/dashboard/account/password', { current: 'not it at all, no', next: 'a brand new passphrase' });
    expect(wrongCurrent.status).toBe(400);
    const changed = await client.post('/dashboard/account/password', { current: password, next: 'a brand new passphrase' });
    expect(changed.location).toBe('/dashboard/account?done=password-changed');
    expect((await client.get('/dashboard/keys')).status).toBe(200);
    expect((await other.get('/dashboard/keys')).location).toBe('/dashboard/sign-in');
    await other.get('/dashboard/sign-in');
    expect((await other.post('/dashboard/sign-in', { email, password })).status).toBe(401);
    expect((await other.post('/dashboard/sign-in', { email, password: 'a brand new passphrase' })).status).toBe(303);
  });
});

describe('accounts made by the keys command line', () => {
  it('cannot be registered again; the invite link sets a password once, and then the owner signs in', async () => {
    const email = `cli-${Date.now()}@example.com`;
    await createTestKey(app.url, { owner: email, scopes: ['read:orders'] });
    const client = dashboardClient(app.base);
    await client.get('/dashboard/register');
    const taken = await client.post('/dashboard/register', { name: 'C', email, password: 'a fine long passphrase' });
    expect(taken.status).toBe(400);
    expect(textOf(taken.html)).toMatch(/already registered/i);

    const prisma = createPrisma({ url: app.url, poolMax: 1 });
    const { token } = await createPasswordLink(asOperator(prisma), email).finally(() => prisma.$disconnect());
    const form = await client.get(`/dashboard/set-password?token=${token}`);
    expect(form.status).toBe(200);
    const set = await client.post('/dashboard/set-password', { token, password: 'a fine long passphrase' });
    expect(set.location).toBe('/dashboard/sign-in?done=password-set');
    const again = await client.post('/dashboard/set-password', { token, password: 'another long passphrase' });
    expect(again.status).toBe(401);
    await client.get('/dashboard/sign-in');
    expect((await client.post('/dashboard/sign-in', { email, password: 'a fine long passphrase' })).status).toBe(303);
    // The key the operator made is there, with the account's others.
    expect(textOf((await client.get('/dashboard/keys')).html)).toContain('Active');
  });
});

describe('CSRF', () => {
  it('refuses a form from another origin, without Origin and Referer, or without the token: nothing is created', async () => {
    const { client, email } = await signedIn(app.base);
    const fields = { name: 'csrf', scopes: 'read:orders', expires: '' };
    const foreign = await client.post('/dashboard/keys', fields, { headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    const nullOrigin = await client.post('/dashboard/keys', fields, { headers: { origin: 'null' } });
    expect(nullOrigin.status).toBe(403);
    const noToken = await client.post('/dashboard/keys', fields, { csrf: null });
    expect(noToken.status).toBe(403);
    const wrongToken = await client.post('/dashboard/keys', fields, { csrf: 'x'.repeat(43) });
    expect(wrongToken.status).toBe(403);
    // No Origin: the Referer must be a page of this site.
    const res = await fetch(`${app.base}/dashboard/keys`, {
      method: 'POST',
      headers: { cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; '), 'content-type': 'application/x-www-form-urlencoded', referer: 'https://evil.example/page' },
      body: new URLSearchParams({ _csrf: client.csrf, ...fields }).toString(),
      redirect: 'manual',
    });
    expect(res.status).toBe(403);
    expect(await keyCount(email)).toBe(0);
    // The same form from the page itself works.
    expect((await client.post('/dashboard/keys', fields)).status).toBe(303);
    expect(await keyCount(email)).toBe(1);
  });

  it('protects sign-in too (login CSRF): a foreign origin cannot sign a browser in', async () => {
    const { email, password } = await signedIn(app.base);
    const client = dashboardClient(app.base);
    await client.get('/dashboard/sign-in');
    const foreign = await client.post('/dashboard/sign-in', { email, password }, { headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(client.cookies.has('mp_session')).toBe(false);
  });
});

describe('keys', () => {
  it('the form ticks no scope for you, says what each allows, and refuses a key with none', async () => {
    const { client } = await signedIn(app.base);
    const form = await client.get('/dashboard/keys');
    const boxes = [...form.html.matchAll(/<input type="checkbox" name="scopes" value="([^"]+)"( checked)?>/g)];
    expect(boxes.map((b) => b[1])).toEqual([...SELF_SERVICE_SCOPES]);
    expect(boxes.filter((b) => b[2])).toEqual([]);
    const text = textOf(form.html);
    for (const scope of SELF_SERVICE_SCOPES) expect(text).toContain(`${scope} ${SCOPE_USES[scope]}`);
    const none = await client.post('/dashboard/keys', { name: 'no scopes', kind: 'secret', expires: '' });
    expect(none.status).toBe(400);
    expect(textOf(none.html)).toMatch(/scope/i);
  });

  it('creates a key shown once, which works at once on /api; lists it by prefix; revokes it: 401 on the next request', async () => {
    const { client } = await signedIn(app.base);
    const { answer, page, key } = await createKey(client);
    expect(answer.status).toBe(303);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(key).toMatch(/^mk_/);
    expect(page.html).toContain('data-copy="new-key"');
    const orders = await fetch(`${app.base}/api/orders`, { headers: { 'x-api-key': key! } });
    expect(orders.status).toBe(200);

    const list = await client.get('/dashboard/keys');
    expect(list.html).toContain(key!.slice(0, 12));
    expect(list.html).not.toContain(key!);
    expect(textOf(list.html)).toContain('shop backend');
    const id = /href="\/dashboard\/keys\/([^"/]+)"/.exec(list.html)![1]!;

    await client.get(`/dashboard/keys/${id}/revoke`);
    const revoked = await client.post(`/dashboard/keys/${id}/revoke`, {});
    expect(revoked.location).toBe('/dashboard/keys?done=revoked');
    expect((await fetch(`${app.base}/api/orders`, { headers: { 'x-api-key': key! } })).status).toBe(401);
    expect(textOf((await client.get('/dashboard/keys')).html)).toContain('Revoked');
  });

  it('answers creating a key with a redirect: the key on the first GET only, never in a URL; a reload creates nothing and says it was shown once', async () => {
    const { client, email, password } = await signedIn(app.base);
    const { answer, page, key } = await createKey(client);
    const id = /^\/dashboard\/keys\/([A-Za-z0-9_-]+)\/created$/.exec(answer.location ?? '')?.[1];
    expect(id).toBeDefined();
    const carrier = answer.headers.getSetCookie().find((line) => line.startsWith('mp_shown_once='))!;
    // Sent to that one page only, never to another site's request, for five minutes; not Secure over plain HTTP.
    expect(carrier.split('; ').slice(1)).toEqual([`Path=${answer.location}`, 'HttpOnly', 'SameSite=Strict', 'Max-Age=300']);
    expect(answer.location).not.toContain('mk_');
    expect(carrier).not.toContain(key!.slice(3));
    expect(keyIn(page.html)).toBe(key);

    const reload = await client.get(answer.location!);
    expect(reload.status).toBe(200);
    expect(keyIn(reload.html)).toBeUndefined();
    expect(textOf(reload.html)).toContain('was shown once, right after it was created, and cannot be shown again');
    expect(reload.html).toContain(`href="/dashboard/keys/${id}"`);
    expect(await keyCount(email)).toBe(1);

    // The cookie opens for the session it was made in only: another session of the same account gets nothing from it.
    await client.get('/dashboard/keys');
    const second = await client.post('/dashboard/keys', { name: 'second', scopes: 'read:products', expires: '' });
    const other = dashboardClient(app.base);
    await other.get('/dashboard/sign-in');
    await other.post('/dashboard/sign-in', { email, password });
    other.cookies.set('mp_shown_once', client.cookies.get('mp_shown_once')!);
    const elsewhere = await other.get(second.location!);
    expect(elsewhere.status).toBe(200);
    expect(keyIn(elsewhere.html)).toBeUndefined();
    expect(keyIn((await client.follow(second)).html)).toMatch(/^mk_/);
  });

  it('prints a "Try it" command that runs as pasted: this origin, or the HTTPS one a trusted proxy reports', async () => {
    const { client } = await signedIn(app.base);
    const { page, key } = await createKey(client);
    const command = /Try it[^:]*: curl -H 'X-API-Key: (mk_[A-Za-z0-9_-]{43})' (\S+)/.exec(textOf(page.html));
    expect(command?.[1]).toBe(key);
    expect(command?.[2]).toBe(`${app.base}/api/me`);
    const run = await fetch(command![2]!, { headers: { 'x-api-key': command![1]! } });
    expect(run.status).toBe(200);
    expect((await run.json()).data.key.prefix).toBe(key!.slice(0, 12));

    const https = { 'x-forwarded-proto': 'https' };
    await client.get('/dashboard/keys', https);
    const answer = await client.post('/dashboard/keys', { name: 'behind the proxy', scopes: 'read:products', expires: '' }, { headers: { ...https, origin: app.base.replace('http:', 'https:') } });
    const shown = await client.get(answer.location!, https);
    expect(textOf(shown.html)).toMatch(new RegExp(`curl -H 'X-API-Key: mk_\\S+' ${app.base.replace('http:', 'https:')}/api/me`));
  });

  it('says when a key was last used in the list right after its use, not "never"', async () => {
    const { client } = await signedIn(app.base);
    const { key } = await createKey(client);
    const lastUsed = async () => firstKeyRow((await client.get('/dashboard/keys')).html)['Last used'];
    expect(await lastUsed()).toBe('Never');
    expect((await fetch(`${app.base}/api/products?limit=1`, { headers: { 'x-api-key': key! } })).status).toBe(200);
    expect(await lastUsed()).toMatch(/^\d{1,2} \w{3,4} \d{4}, \d{2}:\d{2} UTC$/);
  });

  it('gives self-service keys the account plan and only self-service scopes', async () => {
    const { client, email } = await signedIn(app.base);
    const admin = await createKey(client, { scopes: ['admin:all'] });
    expect(admin.page.status).toBe(400);
    expect(admin.key).toBeUndefined();
    const write = await createKey(client, { scopes: ['write:products', 'read:orders'] });
    expect(write.page.status).toBe(400);
    expect(await keyCount(email)).toBe(0);

    await app.sql.query(`UPDATE "Account" SET plan = 'PRO' WHERE email = $1`, [email]);
    const { key } = await createKey(client, { scopes: ['write:orders'] });
    const res = await fetch(`${app.base}/api/orders`, { headers: { 'x-api-key': key! } });
    expect(res.status).toBe(403); // write:orders does not read orders
    expect(res.headers.get('x-ratelimit-limit')).toBe('5000');
  });

  it(`allows at most ${ACTIVE_KEYS_PER_ACCOUNT} active keys; revoking one makes room`, async () => {
    const { client } = await signedIn(app.base);
    // Each sending from its own rendering of the form (its own one-time token), all at once.
    const forms: string[] = [];
    for (let i = 0; i < ACTIVE_KEYS_PER_ACCOUNT + 3; i++) forms.push(formTokenIn((await client.get('/dashboard/keys')).html)!);
    const made = await Promise.all(forms.map((formToken, i) => client.post('/dashboard/keys', { name: `k${i}`, scopes: 'read:products', expires: '30' }, { formToken })));
    expect(made.filter((p) => p.status === 303)).toHaveLength(ACTIVE_KEYS_PER_ACCOUNT);
    const refused = made.find((p) => p.status === 400)!;
    expect(textOf(refused.html)).toContain(`at most ${ACTIVE_KEYS_PER_ACCOUNT} active keys`);
    const id = /href="\/dashboard\/keys\/([^"/]+)"/.exec((await client.get('/dashboard/keys')).html)![1]!;
    await client.post(`/dashboard/keys/${id}/revoke`, {});
    expect((await client.post('/dashboard/keys', { name: 'one more', scopes: 'read:products', expires: '' })).status).toBe(303);
  });

  it("answers another account's key 404, and cannot revoke it", async () => {
    const owner = await signedIn(app.base);
    const { key } = await createKey(owner.client);
    const id = /href="\/dashboard\/keys\/([^"/]+)"/.exec((await owner.client.get('/dashboard/keys')).html)![1]!;
    const intruder = await signedIn(app.base);
    expect((await intruder.client.get(`/dashboard/keys/${id}`)).status).toBe(404);
    expect((await intruder.client.get(`/dashboard/keys/${id}/revoke`)).status).toBe(404);
    expect((await intruder.client.post(`/dashboard/keys/${id}/revoke`, {})).status).toBe(404);
    expect((await fetch(`${app.base}/api/orders`, { headers: { 'x-api-key': key! } })).status).toBe(200);
  });

  it('shows live usage in the current window and the requests in the chart', async () => {
    const { client } = await signedIn(app.base);
    const { key } = await createKey(client);
    for (let i = 0; i < 3; i++) expect((await fetch(`${app.base}/api/products?limit=1`, { headers: { 'x-api-key': key! } })).status).toBe(200);
    const id = /href="\/dashboard\/keys\/([^"/]+)"/.exec((await client.get('/dashboard/keys')).html)![1]!;
    const page = await client.get(`/dashboard/keys/${id}`);
    expect(page.status).toBe(200);
    expect(textOf(/<p class="meter"[\s\S]*?<\/p>/.exec(page.html)![0])).toMatch(/^3 of 1000 requests used, 997 left/);
    expect(page.html).toMatch(/<title id="usage-title">[^<]*: 3 requests, 0 refused with 429<\/title>/);
  });
});

describe('a create form sent twice creates one thing', () => {
  const keyForm = { name: 'twice', scopes: 'read:products', expires: '' };
  const shownOnceCookie = (page: Page) => page.headers.getSetCookie().some((line) => line.startsWith('mp_shown_once='));
  const addressCount = async (email: string) =>
    Number((await app.sql.query<{ n: string }>(`SELECT count(*) AS n FROM "Address" d JOIN "Account" a ON a.id = d."accountId" WHERE a.email = $1`, [email])).rows[0]!.n);

  it("sent again, the key form is answered with the first sending's page: one key, shown once", async () => {
    const { client, email } = await signedIn(app.base);
    await client.get('/dashboard/keys');
    const first = await client.post('/dashboard/keys', keyForm);
    const again = await client.post('/dashboard/keys', keyForm);
    expect(first.status).toBe(303);
    expect(again.status).toBe(303);
    expect(again.location).toBe(first.location);
    // Only the first answer carries the key (sealed in its cookie); the second carries nothing.
    expect(shownOnceCookie(first)).toBe(true);
    expect(shownOnceCookie(again)).toBe(false);
    expect(await keyCount(email)).toBe(1);
    // The browser that sent it twice follows the second redirect and sees its key, once.
    expect(keyIn((await client.follow(again)).html)).toMatch(/^mk_/);
    const later = await client.post('/dashboard/keys', keyForm);
    expect(later.location).toBe(first.location);
    const page = await client.follow(later);
    expect(page.status).toBe(200);
    expect(keyIn(page.html)).toBeUndefined();
    expect(textOf(page.html)).toContain('was shown once, right after it was created');
    expect(await keyCount(email)).toBe(1);
  });

  it('sent four times at once, the key form creates one key, and every answer leads to it', async () => {
    const { client, email } = await signedIn(app.base);
    await client.get('/dashboard/keys');
    const answers = await Promise.all(Array.from({ length: 4 }, () => client.post('/dashboard/keys', keyForm)));
    expect(answers.map((a) => a.status)).toEqual([303, 303, 303, 303]);
    expect(new Set(answers.map((a) => a.location)).size).toBe(1);
    expect(answers.filter(shownOnceCookie)).toHaveLength(1);
    expect(await keyCount(email)).toBe(1);
  });

  it('sent at once to two instances on one database, the key form creates one key', async () => {
    const other = await startTestApp({ url: app.url });
    try {
      const { client, email } = await signedIn(app.base);
      await client.get('/dashboard/keys');
      // The same browser, its request going to the other instance (the session and its CSRF token are the database's).
      const there = dashboardClient(other.base);
      for (const [name, value] of client.cookies) there.cookies.set(name, value);
      there.csrf = client.csrf;
      const answers = await Promise.all([client.post('/dashboard/keys', keyForm), there.post('/dashboard/keys', keyForm, { formToken: client.formToken })]);
      expect(answers.map((a) => a.status)).toEqual([303, 303]);
      expect(answers[1]!.location).toBe(answers[0]!.location);
      expect(await keyCount(email)).toBe(1);
    } finally {
      await other.close();
    }
  });

  it('a refused form claims nothing: corrected and sent again, it creates; the form shown again has a fresh token', async () => {
    const { client, email } = await signedIn(app.base);
    const token = formTokenIn((await client.get('/dashboard/keys')).html)!;
    const refused = await client.post('/dashboard/keys', { ...keyForm, name: '' });
    expect(refused.status).toBe(400);
    expect(formTokenIn(refused.html)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(formTokenIn(refused.html)).not.toBe(token);
    expect((await app.sql.query(`SELECT 1 FROM "FormClaim" WHERE "tokenHash" = $1`, [hashToken(token)])).rows).toEqual([]);
    // The page sent again as it was, corrected (its token still free), creates; then it is claimed.
    const corrected = await client.post('/dashboard/keys', keyForm, { formToken: token });
    expect(corrected.status).toBe(303);
    expect((await client.post('/dashboard/keys', keyForm, { formToken: token })).location).toBe(corrected.location);
    expect(await keyCount(email)).toBe(1);
  });

  it("is never answered with what another account's sending of the token created", async () => {
    const owner = await signedIn(app.base);
    await owner.client.get('/dashboard/keys');
    const token = owner.client.formToken;
    const created = await owner.client.post('/dashboard/keys', keyForm);
    expect(created.status).toBe(303);
    const intruder = await signedIn(app.base);
    const refused = await intruder.client.post('/dashboard/keys', keyForm, { formToken: token });
    expect(refused.status).toBe(400);
    expect(refused.location).toBeNull();
    expect(textOf(refused.html)).toContain('This form was sent already from another account: check it and send it again.');
    expect(refused.html).not.toContain(created.location!);
    expect(await keyCount(intruder.email)).toBe(0);
    // Shown again with a token of its own, the form creates the intruder's own key.
    const own = await intruder.client.post('/dashboard/keys', keyForm);
    expect(own.status).toBe(303);
    expect(own.location).not.toBe(created.location);
    expect(await keyCount(intruder.email)).toBe(1);
    expect(await keyCount(owner.email)).toBe(1);
  });

  it('a form without a well-formed token (a page cached from before) is a 400 showing the form again, never a 500', async () => {
    const { client, email } = await signedIn(app.base);
    for (const formToken of [null, '', 'not-a-token', 'x'.repeat(43)]) {
      const page = await client.post('/dashboard/keys', keyForm, { formToken });
      expect(page.status, String(formToken)).toBe(400);
      expect(textOf(page.html)).toContain('This form is out of date: check it and send it again.');
      expect(page.html).toContain('value="twice"');
    }
    expect(await keyCount(email)).toBe(0);
    // The form shown again carries a token: sent, it creates.
    expect((await client.post('/dashboard/keys', keyForm)).status).toBe(303);
    expect(await keyCount(email)).toBe(1);
  });

  it("saves one address for a new address's form sent twice, or three times at once; a key form's token is not an address form's", async () => {
    const { client, email } = await signedIn(app.base);
    const address = { fullName: 'Ion Pop', phone: '+40 721 000 000', address: 'Str. Lunga 1', city: 'Cluj', county: 'Cluj', postalCode: '400001' };
    await client.get('/dashboard/addresses/new');
    const first = await client.post('/dashboard/addresses', address);
    const again = await client.post('/dashboard/addresses', address);
    expect([first.location, again.location]).toEqual(['/dashboard/addresses?done=address-saved', '/dashboard/addresses?done=address-saved']);
    expect(await addressCount(email)).toBe(1);
    await client.get('/dashboard/addresses/new');
    const atOnce = await Promise.all(Array.from({ length: 3 }, () => client.post('/dashboard/addresses', address)));
    expect(atOnce.map((a) => a.status)).toEqual([303, 303, 303]);
    expect(await addressCount(email)).toBe(2);
    // An edit saves the same address however often it is sent: its form carries no token.
    const id = /<code>([a-z0-9]{20,})<\/code>/.exec((await client.get('/dashboard/addresses')).html)![1]!;
    expect(formTokenIn((await client.get(`/dashboard/addresses/${id}`)).html)).toBeUndefined();

    await client.get('/dashboard/keys');
    const keyToken = client.formToken;
    expect((await client.post('/dashboard/keys', keyForm)).status).toBe(303);
    const crossed = await client.post('/dashboard/addresses', address, { formToken: keyToken });
    expect(crossed.status).toBe(400);
    expect(await addressCount(email)).toBe(2);
  });

  it('deletes claims older than any session when a form creates, and keeps the others', async () => {
    const { client, email } = await signedIn(app.base);
    const accountId = await accountIdOf(app.sql, email);
    const [old, recent] = [`old-${Date.now()}`, `recent-${Date.now()}`];
    await app.sql.query(
      `INSERT INTO "FormClaim" ("tokenHash", "accountId", kind, "createdId", "createdAt") VALUES ($1, $3, 'key', 'x', now() - interval '3 days'), ($2, $3, 'key', 'y', now() - interval '1 hour')`,
      [old, recent, accountId],
    );
    await client.get('/dashboard/keys');
    expect((await client.post('/dashboard/keys', keyForm)).status).toBe(303);
    const { rows } = await app.sql.query(`SELECT "tokenHash" FROM "FormClaim" WHERE "tokenHash" IN ($1, $2)`, [old, recent]);
    expect(rows).toEqual([{ tokenHash: recent }]);
  });
});

describe('a session is not a key', () => {
  it('/api and /graphql ignore the session cookie: 401 without a key', async () => {
    const { client } = await signedIn(app.base);
    const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    expect((await fetch(`${app.base}/api/orders`, { headers: { cookie } })).status).toBe(401);
    const gql = await fetch(`${app.base}/graphql`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ me { email } }' }) });
    expect((await gql.json()).errors[0].extensions.code).toBe('UNAUTHORIZED');
  });
});

describe('escaping', () => {
  it('shows user text as text: a name, a key name and an address with markup in them', async () => {
    // 45 characters: within every field's bound, the address label's (50) included.
    const evil = `<img src=x onerror="alert(1)">&<script>x</s>`;
    const { client } = await signedIn(app.base, { name: evil });
    await createKey(client, { name: evil });
    const keys = await client.get('/dashboard/keys');
    await client.get('/dashboard/addresses/new');
    const saved = await client.post('/dashboard/addresses', { label: evil, fullName: 'Ion Pop', phone: '+40 721 000 000', address: 'Str. Lunga 1', city: 'Cluj', county: 'Cluj', postalCode: '400001' });
    expect(saved.status).toBe(303);
    const account = await client.get('/dashboard/account');
    const addresses = await client.get('/dashboard/addresses');
    for (const page of [keys, account, addresses]) {
      expect(page.html).not.toContain('<img src=x');
      expect(page.html).not.toContain('<script>x');
      expect(page.html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;&lt;script&gt;x&lt;/s&gt;');
    }
  });
});

describe('account, addresses and orders', () => {
  it('edits the profile, and keeps addresses the API lists for the key', async () => {
    const { client } = await signedIn(app.base);
    await client.get('/dashboard/account');
    const saved = await client.post('/dashboard/account', { name: 'New Name', companyName: 'Firma SRL', phone: '+40 700 000 000' });
    expect(saved.location).toBe('/dashboard/account?done=profile-saved');
    const account = textOf((await client.follow(saved)).html);
    expect(account).toContain('Your profile is saved.');
    expect((await app.sql.query(`SELECT name, "companyName", phone FROM "Account" WHERE name = 'New Name'`)).rows).toEqual([{ name: 'New Name', companyName: 'Firma SRL', phone: '+40 700 000 000' }]);

    await client.get('/dashboard/addresses/new');
    const bad = await client.post('/dashboard/addresses', { fullName: '', phone: '', address: '', city: '', county: '', postalCode: '' });
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('aria-invalid="true"');
    await client.post('/dashboard/addresses', { label: 'HQ', fullName: 'Ion Pop', phone: '+40 721 000 000', address: 'Str. Lunga 1', city: 'Cluj-Napoca', county: 'Cluj', postalCode: '400001', isDefault: 'true' });
    const list = await client.get('/dashboard/addresses');
    const addressId = /<code>([a-z0-9]{20,})<\/code>/.exec(list.html)![1]!;
    expect(list.html).toContain(`<a href="/dashboard/addresses/${addressId}">Edit<span class="skip-label"> HQ</span></a>`);
    expect(list.html).toContain(`<a href="/dashboard/addresses/${addressId}/delete">Delete<span class="skip-label"> HQ</span></a>`);

    const { key } = await createKey(client);
    const me = await (await fetch(`${app.base}/api/me/addresses`, { headers: { 'x-api-key': key! } })).json();
    expect(me.data.map((a: { id: string }) => a.id)).toEqual([addressId]);

    await client.get(`/dashboard/addresses/${addressId}`);
    expect((await client.post(`/dashboard/addresses/${addressId}`, { label: 'Office', fullName: 'Ion Pop', phone: '+40 721 000 000', address: 'Str. Scurta 2', city: 'Cluj-Napoca', county: 'Cluj', postalCode: '400002' })).status).toBe(303);
    expect(textOf((await client.get('/dashboard/addresses')).html)).toContain('Str. Scurta 2');

    const intruder = await signedIn(app.base);
    expect((await intruder.client.get(`/dashboard/addresses/${addressId}`)).status).toBe(404);
    expect((await intruder.client.post(`/dashboard/addresses/${addressId}/delete`, {})).status).toBe(404);

    await client.get(`/dashboard/addresses/${addressId}/delete`);
    expect((await client.post(`/dashboard/addresses/${addressId}/delete`, {})).location).toBe('/dashboard/addresses?done=address-deleted');
    expect(textOf((await client.get('/dashboard/addresses')).html)).toContain('No saved addresses yet.');
  });

  it("lists the account's orders, read-only", async () => {
    const { client } = await signedIn(app.base);
    const { key } = await createKey(client, { scopes: ['write:orders', 'read:products'] });
    const products = await (await fetch(`${app.base}/api/products?limit=50&sortBy=popular`, { headers: { 'x-api-key': key! } })).json();
    const product = products.data.find((p: { stock: number; minOrder: number }) => p.stock >= p.minOrder);
    const order = await fetch(`${app.base}/api/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key! },
      body: JSON.stringify({ supplierId: product.supplier.id, items: [{ productId: product.id, quantity: product.minOrder }] }),
    });
    expect(order.status).toBe(201);
    const { data } = await order.json();
    const page = await client.get('/dashboard/orders');
    expect(textOf(page.html)).toContain(data.orderNumber);
    expect(textOf(page.html)).toContain(`${data.total} RON`);
    expect(page.html).toContain(`href="/dashboard/orders/${data.orderNumber}"`);
    // Its page: placed by the API, so its history starts with its placing, and it can be cancelled.
    const details = await client.get(`/dashboard/orders/${data.orderNumber}`);
    expect(details.status).toBe(200);
    expect(textOf(details.html)).toContain('Status: Pending since');
    expect(historyRows(details)).toEqual([expect.stringMatching(/^Pending \d.* UTC You$/)]);
    expect(textOf(details.html)).toContain(`You can still cancel it: POST /api/orders/${data.id}/cancel`);
    expect(textOf(details.html)).toContain(`${product.name}`);
  });
});

/** The rows of an order page's history table, each as its text: status, time, who, note. */
function historyRows(page: Page): string[] {
  const table = /<table aria-labelledby="history"[\s\S]*?<\/table>/.exec(page.html)?.[0] ?? '';
  return [...table.matchAll(/<tbody>([\s\S]*)<\/tbody>/g)].flatMap(([, body]) => body!.split('</tr>').map(textOf).filter(Boolean));
}

/** The main content's text: the part of a page that differs from one answer to another. */
const mainText = (page: Page) => textOf(/<main[\s\S]*<\/main>/.exec(page.html)![0]);

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

describe('orders and their history', () => {
  let suppliers: Array<{ id: string; companyName: string }>;
  beforeAll(async () => {
    // Suppliers of their own for these tests (the order placed through the API above takes a popular one).
    suppliers = (await app.sql.query(`SELECT id, "companyName" FROM "Supplier" ORDER BY id DESC LIMIT 4`)).rows;
  });

  it("shows the buyer each order's status and whole history, who made each change and its note, and the tracking", async () => {
    const { client, email } = await signedIn(app.base);
    const buyerId = await accountIdOf(app.sql, email);
    const supplier = suppliers[0]!;
    const note = `<script>alert("x")</script> & handle with care`;
    const shipped = await insertOrder(app.sql, {
      buyerId,
      supplierId: supplier.id,
      total: '138.67',
      createdAt: minutesAgo(60),
      history: [
        { status: 'PENDING', actor: 'BUYER', accountId: buyerId, at: minutesAgo(60) },
        { status: 'CONFIRMED', actor: 'SUPPLIER', note: 'Confirmed by phone', at: minutesAgo(50) },
        { status: 'PROCESSING', actor: 'SUPPLIER', at: minutesAgo(40) },
        { status: 'SHIPPED', actor: 'SUPPLIER', note, at: minutesAgo(30) },
      ],
      tracking: { number: 'AWB 123 <b>', carrier: 'Fan <Courier>', url: 'https://track.example/awb?n=123&x="y"' },
    });
    const cancelled = await insertOrder(app.sql, {
      buyerId,
      supplierId: supplier.id,
      createdAt: minutesAgo(20),
      history: [
        { status: 'PENDING', actor: 'BUYER', accountId: buyerId, at: minutesAgo(20) },
        { status: 'CANCELLED', actor: 'BUYER', accountId: buyerId, note: 'Ordered the wrong size', at: minutesAgo(10) },
      ],
    });

    const list = await client.get('/dashboard/orders');
    const rows = textOf(list.html);
    expect(rows).toMatch(new RegExp(`${cancelled.orderNumber} .* Cancelled since`));
    expect(rows).toMatch(new RegExp(`${shipped.orderNumber} .* 138\\.67 RON Shipped since`));
    expect(rows).toContain('POST /api/supplier/orders/{id}/status');
    expect(rows).toContain('POST /api/orders/{id}/cancel');

    const page = await client.get(`/dashboard/orders/${shipped.orderNumber}`);
    expect(page.status).toBe(200);
    const text = textOf(page.html);
    expect(text).toContain(`Order ${shipped.orderNumber}`);
    expect(text).toContain('Status: Shipped since');
    expect(text).toContain(`Supplier ${supplier.companyName}`);
    expect(historyRows(page)).toEqual([
      expect.stringMatching(/^Pending .* UTC You$/),
      expect.stringMatching(/^Confirmed .* UTC The supplier Confirmed by phone$/),
      expect.stringMatching(/^Processing .* UTC The supplier$/),
      expect.stringMatching(/^Shipped .* UTC The supplier <script>alert\("x"\)<\/script> & handle with care$/),
    ]);
    // The note is text, never markup; so are the supplier's tracking values.
    expect(page.html).not.toContain('<script>alert');
    expect(page.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; handle with care');
    expect(page.html).not.toContain('<b>');
    expect(text).toContain('Tracking number AWB 123 <b> Carrier Fan <Courier>');
    expect(page.html).toContain('<a href="https://track.example/awb?n=123&amp;x=&quot;y&quot;" rel="noreferrer">Track the parcel at Fan &lt;Courier&gt;</a>');
    // Shipped: past what a buyer may cancel; the page says which call would, and what moves it.
    expect(text).toMatch(/It can no longer be cancelled by you: a buyer cancels a pending or confirmed order only \( ?POST \/api\/orders\/\{id\}\/cancel ?\)/);
    expect(text).toContain('POST /api/supplier/orders/{id}/status');

    const other = await client.get(`/dashboard/orders/${cancelled.orderNumber}`);
    expect(historyRows(other)).toEqual([expect.stringMatching(/^Pending .* You$/), expect.stringMatching(/^Cancelled .* You Ordered the wrong size$/)]);
    expect(textOf(other.html)).not.toContain('Tracking');
  });

  it('links a tracking address only when it is a web address', async () => {
    const { client, email } = await signedIn(app.base);
    const buyerId = await accountIdOf(app.sql, email);
    const order = await insertOrder(app.sql, {
      buyerId,
      supplierId: suppliers[0]!.id,
      history: [
        { status: 'PENDING', actor: 'BUYER', accountId: buyerId, at: minutesAgo(5) },
        { status: 'SHIPPED', actor: 'SUPPLIER', at: minutesAgo(1) },
      ],
      tracking: { number: 'X1', carrier: 'Post', url: 'javascript:alert(1)' },
    });
    const page = await client.get(`/dashboard/orders/${order.orderNumber}`);
    expect(page.html).not.toMatch(/href="javascript/i);
    expect(textOf(page.html)).toContain('javascript:alert(1) (not a web address)');
  });

  it("answers another account's order 404, exactly like one that does not exist", async () => {
    const owner = await signedIn(app.base);
    const order = await insertOrder(app.sql, { buyerId: await accountIdOf(app.sql, owner.email), supplierId: suppliers[0]!.id });
    expect((await owner.client.get(`/dashboard/orders/${order.orderNumber}`)).status).toBe(200);
    const intruder = await signedIn(app.base);
    const theirs = await intruder.client.get(`/dashboard/orders/${order.orderNumber}`);
    const none = await intruder.client.get(`/dashboard/orders/ORD-1-NOSUCHORDER`);
    expect(theirs.status).toBe(404);
    expect(none.status).toBe(404);
    expect(mainText(theirs)).toBe(mainText(none));
    expect(theirs.html).not.toContain(order.orderNumber);
    // The id is no way in either, and the order is not in their list.
    expect((await intruder.client.get(`/dashboard/orders/${order.id}`)).status).toBe(404);
    expect(textOf((await intruder.client.get('/dashboard/orders')).html)).not.toContain(order.orderNumber);
  });

  it("shows a member of a supplier its supplier's orders, paginated, with their history; never another supplier's", async () => {
    const [mine, theirs] = [suppliers[1]!, suppliers[2]!];
    const buyer = await signedIn(app.base, { name: 'Ana <Buyer>' });
    const buyerId = await accountIdOf(app.sql, buyer.email);
    await app.sql.query(`UPDATE "Account" SET "companyName" = 'Ana & Co SRL' WHERE id = $1`, [buyerId]);
    const { client, email } = await signedIn(app.base);
    const memberId = await accountIdOf(app.sql, email);

    // Not a member yet: no navigation entry, and the pages refuse.
    const before = await client.get('/dashboard/orders');
    expect(before.html).not.toContain('href="/dashboard/supplier-orders"');
    expect((await client.get('/dashboard/supplier-orders')).status).toBe(403);

    await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [memberId, mine.id]);
    const placed = await insertOrder(app.sql, {
      buyerId,
      supplierId: mine.id,
      total: '42.50',
      createdAt: minutesAgo(30),
      history: [
        { status: 'PENDING', actor: 'BUYER', accountId: buyerId, at: minutesAgo(30) },
        { status: 'CONFIRMED', actor: 'SUPPLIER', accountId: memberId, note: 'In stock', at: minutesAgo(20) },
        { status: 'CANCELLED', actor: 'BUYER', accountId: buyerId, note: 'No longer needed', at: minutesAgo(10) },
      ],
    });
    const elsewhere = await insertOrder(app.sql, { buyerId, supplierId: theirs.id });

    const keys = await client.get('/dashboard/keys');
    expect(keys.html).toContain('<a href="/dashboard/supplier-orders">Supplier orders</a>');
    const list = await client.get('/dashboard/supplier-orders');
    expect(list.status).toBe(200);
    expect(list.html).toContain('<a href="/dashboard/supplier-orders" aria-current="page">Supplier orders</a>');
    const text = textOf(list.html);
    expect(text).toContain(`Orders of ${mine.companyName}`);
    expect(text).toMatch(new RegExp(`${placed.orderNumber} .* Ana & Co SRL · Ana <Buyer> 0 42\\.50 RON Cancelled since`));
    expect(text).toContain('POST /api/supplier/orders/{id}/status');
    expect(text).not.toContain(elsewhere.orderNumber);
    expect(list.html).not.toContain('<Buyer>');

    const page = await client.get(`/dashboard/supplier-orders/${placed.orderNumber}`);
    expect(page.status).toBe(200);
    expect(textOf(page.html)).toContain('Buyer Ana & Co SRL · Ana <Buyer>');
    expect(historyRows(page)).toEqual([
      expect.stringMatching(/^Pending .* UTC The buyer$/),
      expect.stringMatching(/^Confirmed .* UTC You In stock$/),
      expect.stringMatching(/^Cancelled .* UTC The buyer No longer needed$/),
    ]);
    expect(textOf(page.html)).toContain('Its status is final');
    // Another supplier's order is as absent as none; the member is not the buyer of either.
    const foreign = await client.get(`/dashboard/supplier-orders/${elsewhere.orderNumber}`);
    const none = await client.get('/dashboard/supplier-orders/ORD-1-NOSUCHORDER');
    expect(foreign.status).toBe(404);
    expect(mainText(foreign)).toBe(mainText(none));
    expect((await client.get(`/dashboard/orders/${placed.orderNumber}`)).status).toBe(404);
    // The buyer is no member: the supplier's pages refuse them, their own order included.
    expect((await buyer.client.get(`/dashboard/supplier-orders/${placed.orderNumber}`)).status).toBe(403);

    // A page of 20, newest first, and the rest on the next; one statement reads the history
    // however many orders a page shows.
    const statementsOf = async (path: string) => {
      const from = app.statements.length;
      const answer = await client.get(path);
      expect(answer.status).toBe(200);
      // Without the session's: its last-seen time is written at most once a minute, whenever that falls.
      return without(byTable(app.statements.slice(from)), 'Session');
    };
    const one = await statementsOf('/dashboard/supplier-orders');
    for (let i = 0; i < 21; i++) await insertOrder(app.sql, { buyerId, supplierId: mine.id, createdAt: minutesAgo(29 - i) });
    const total = Number((await app.sql.query(`SELECT count(*) AS n FROM "Order" WHERE "supplierId" = $1`, [mine.id])).rows[0].n);
    const full = await statementsOf('/dashboard/supplier-orders');
    expect(full).toEqual(one);
    expect(full.OrderEvent).toBe(1);
    const first = await client.get('/dashboard/supplier-orders');
    expect(first.html.match(/<a href="\/dashboard\/supplier-orders\/ORD-/g)).toHaveLength(20);
    expect(first.html).toContain('<a href="/dashboard/supplier-orders?page=2">Older orders</a>');
    const second = await client.get('/dashboard/supplier-orders?page=2');
    expect(second.html.match(/<a href="\/dashboard\/supplier-orders\/ORD-/g)).toHaveLength(total - 20);
    expect(textOf(second.html)).toContain(placed.orderNumber);
    expect(second.html).toContain('<a href="/dashboard/supplier-orders?page=1">Newer orders</a>');
    expect((await statementsOf(`/dashboard/supplier-orders/${placed.orderNumber}`)).OrderEvent).toBe(1);

    // Membership ended (keys CLI member remove): the very next page has no entry and refuses.
    await app.sql.query(`DELETE FROM "SupplierMember" WHERE "accountId" = $1`, [memberId]);
    const after = await client.get('/dashboard/supplier-orders');
    expect(after.status).toBe(403);
    expect(after.html).not.toContain('href="/dashboard/supplier-orders"');
    expect(textOf(after.html)).toContain('does not act for a supplier');
  });
});

describe('careless and hostile requests', () => {
  it('never answers 500 or leaks a stack: odd cookies, paths, methods and forms', async () => {
    const { client } = await signedIn(app.base);
    const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const requests: Array<[string, RequestInit]> = [
      ['/dashboard/keys', { headers: { cookie: 'mp_session=' + 'x'.repeat(4000) } }],
      ['/dashboard/keys', { headers: { cookie: "mp_session='; DROP TABLE \"Session\"; --" } }],
      ['/dashboard/keys', { headers: { cookie: 'mp_session=%00%ff; mp_session=a' } }],
      ['/dashboard/keys/' + 'a'.repeat(500), { headers: { cookie } }],
      ['/dashboard/keys/%00', { headers: { cookie } }],
      ['/dashboard/keys/..%2F..%2Fadmin', { headers: { cookie } }],
      ['/dashboard/addresses/%E0%A4%A', { headers: { cookie } }],
      ['/dashboard/orders?page=-1', { headers: { cookie } }],
      ['/dashboard/orders?page=1e309', { headers: { cookie } }],
      ['/dashboard/orders/%3Cscript%3E', { headers: { cookie } }],
      ['/dashboard/orders/' + 'O'.repeat(500), { headers: { cookie } }],
      ['/dashboard/supplier-orders?page=x', { headers: { cookie } }],
      ['/dashboard/supplier-orders/%00', { headers: { cookie } }],
      ['/dashboard/set-password?token=<script>', {}],
      ['/dashboard/assets/../../package.json', {}],
      ['/dashboard/keys', { method: 'DELETE', headers: { cookie } }],
    ];
    for (const [path, init] of requests) {
      const res = await fetch(app.base + path, { ...init, redirect: 'manual' });
      const text = await res.text();
      expect(res.status, path).toBeLessThan(500);
      expect(text, path).not.toMatch(/\bat .*\.(ts|js):\d+/);
      expect(text, path).not.toContain('<script>');
    }
    await client.get('/dashboard/keys');
    const forms: Array<Record<string, string | string[]>> = [
      { name: 'x', scopes: 'read:orders', expires: 'abc' },
      { name: 'x', scopes: 'read:orders', expires: '99999999999999999999' },
      { name: '\u0000\u0007', scopes: ['read:orders', 'read:orders'], expires: '' },
      { name: 'x'.repeat(101), scopes: 'nonsense', expires: '-7' },
      { _csrf: 'another', name: 'y' },
    ];
    for (const form of forms) {
      const page = await client.post('/dashboard/keys', form);
      expect([400, 403]).toContain(page.status);
    }
    const setPassword = await client.post('/dashboard/set-password', { token: 'mk_not-a-token', password: 'a fine long passphrase' });
    expect(setPassword.status).toBe(401);
    expect(textOf(setPassword.html)).not.toContain('mk_not-a-token');
  });
});

describe('an instance with PUBLIC_URL set, whose usage counts cannot be written', () => {
  let other: TestApp;
  let logs = '';
  beforeAll(async () => {
    const sink = new Writable({ write: (chunk, _encoding, done) => ((logs += chunk), done()) });
    // Counts in memory that never reach the database: the pages show what is stored, and say why in the log.
    const usage = { count: () => undefined, flush: () => Promise.reject(new Error('usage table unreachable')), stop: async () => undefined };
    // info: the access lines too, to match each request's lines by id.
    other = await startTestApp({ env: { PUBLIC_URL: 'https://market.example.com/' }, usage, logger: pino({ level: 'info' }, sink) });
  });
  afterAll(() => other?.close());

  it('prints the "Try it" command with PUBLIC_URL', async () => {
    const { client } = await signedIn(other.base);
    const { page, key } = await createKey(client);
    expect(textOf(page.html)).toContain(`curl -H 'X-API-Key: ${key}' https://market.example.com/api/me`);
  });

  it('still lists the keys and shows a key when the counts cannot be written, with a warning in the log', async () => {
    const { client } = await signedIn(other.base);
    const { key } = await createKey(client);
    expect((await fetch(`${other.base}/api/products?limit=1`, { headers: { 'x-api-key': key! } })).status).toBe(200);
    const list = await client.get('/dashboard/keys');
    expect(list.status).toBe(200);
    // The last use is written by its own recorder, which works here.
    expect(firstKeyRow(list.html)['Last used']).not.toBe('Never');
    const id = /href="\/dashboard\/keys\/([^"/]+)"/.exec(list.html)![1]!;
    expect((await client.get(`/dashboard/keys/${id}`)).status).toBe(200);
    const warnings = logs.split('\n').filter(Boolean).map((line) => JSON.parse(line)).filter((line) => line.msg === 'writing key counts before showing keys failed');
    expect(warnings.length).toBeGreaterThanOrEqual(2);
    expect(warnings[0]).toMatchObject({ level: 40, err: { message: 'usage table unreachable' } });
  });

  it('logs a page under the request id its answer names in X-Request-ID: one made up, or the client\'s own', async () => {
    const { client } = await signedIn(other.base);
    for (const given of [undefined, `dashboard-trace-${Date.now()}`]) {
      const page = await client.get('/dashboard/keys', given ? { 'x-request-id': given } : {});
      expect(page.status).toBe(200);
      const requestId = page.headers.get('x-request-id');
      if (given) expect(requestId).toBe(given);
      else expect(requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      // The page's own line (its context's logger) and the access line, under one id.
      const lines = logs.split('\n').filter(Boolean).map((line) => JSON.parse(line)).filter((line) => line.requestId === requestId);
      expect(lines.map((line) => line.msg).sort()).toEqual(['request', 'writing key counts before showing keys failed']);
    }
  });
});

describe('forms that make or unlock something are throttled per client address', () => {
  // What the hostile client did: 200 registrations from one address in a few seconds.
  it('registration: 30 from one address in 15 minutes, then 429 with Retry-After; another address is unaffected', async () => {
    // A fresh browser for each (registering signs the browser in), all from one address.
    const address = '203.0.113.77';
    const statuses: number[] = [];
    for (let i = 0; i < 32; i++) {
      const client = dashboardClient(app.base, address);
      await client.get('/dashboard/register');
      const res = await client.post('/dashboard/register', { name: 'Bot', email: `bot-${i}-${Date.now()}@example.com`, password: 'correct horse battery staple' });
      statuses.push(res.status);
      if (res.status === 429) {
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(textOf(res.html)).toMatch(/Too many forms sent from your address; try again in \d+ s/);
      }
    }
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(303));
    expect(statuses.slice(30)).toEqual([429, 429]);
    expect((await app.sql.query(`SELECT count(*)::int AS n FROM "Account" WHERE email LIKE 'bot-%'`)).rows[0].n).toBe(30);
    // The same form from another address still works.
    const other = dashboardClient(app.base);
    await other.get('/dashboard/register');
    expect((await other.post('/dashboard/register', { name: 'Person', email: `person-${Date.now()}@example.com`, password: 'correct horse battery staple' })).status).toBe(303);
  });

  it('a signed-in client creating keys is counted too', async () => {
    const { client } = await signedIn(app.base);
    let last = 0;
    // Registration counted 1 already; 29 more forms fit.
    for (let i = 0; i < 30; i++) last = (await client.post('/dashboard/keys', { name: `k${i}`, scopes: 'read:products', expires: '30' })).status;
    expect(last).toBe(429);
  });
});


describe("edits of the account's own data (profile, addresses) are throttled per account", () => {
  const { max: SAVES } = LIMITS.forms.savesPerAccount;
  const ADDRESS = { fullName: 'Ion Pop', phone: '+40 721 000 000', address: 'Str. Lunga 1', city: 'Cluj', county: 'Cluj', postalCode: '400001' };

  /** Saves an address through the new-address form; its id, from the list. */
  async function addAddress(client: DashboardClient, fields: Record<string, string> = {}): Promise<string> {
    await client.get('/dashboard/addresses/new');
    const saved = await client.post('/dashboard/addresses', { ...ADDRESS, ...fields });
    expect(saved.status).toBe(303);
    const ids = [...(await client.get('/dashboard/addresses')).html.matchAll(/<code>([a-z0-9]{20,})<\/code>/g)].map((m) => m[1]!);
    const { rows } = await app.sql.query<{ id: string }>(`SELECT id FROM "Address" WHERE id = ANY($1) ORDER BY "createdAt" DESC, id DESC LIMIT 1`, [ids]);
    return rows[0]!.id;
  }

  /** The 429 a throttled form is answered with: status, Retry-After, and the page saying how long to wait. */
  function expectRefusal(page: Page, sender: 'address' | 'account') {
    expect(page.status).toBe(429);
    const wait = Number(page.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    expect(page.html).toMatch(/<h1>Too many attempts<\/h1>/);
    expect(textOf(page.html)).toContain(`Too many forms sent from your ${sender}; try again in ${wait} s`);
  }

  // What the flooding client did: one signed-in account, 518 saves in 15 s. Each form is sent
  // as that script sent it, the same one over and over; every one counts, whatever its outcome.
  const floods: Array<{ form: string; send: (client: DashboardClient, i: number) => Promise<Page> }> = [
    { form: 'the profile', send: (client, i) => client.post('/dashboard/account', { name: `Name ${i}`, companyName: '', phone: '' }) },
    { form: 'a new address', send: (client) => client.post('/dashboard/addresses', ADDRESS) },
    {
      form: 'an address edit',
      send: async (client, i) => client.post(`/dashboard/addresses/${(floodAddress ??= await addAddress(client))}`, { ...ADDRESS, label: `L${i}` }),
    },
    { form: 'an address deletion', send: async (client) => client.post(`/dashboard/addresses/${(floodAddress ??= await addAddress(client))}/delete`, {}) },
  ];
  let floodAddress: string | undefined;

  /** How registration, a form throttled per client address, is refused once its address is over LIMITS.forms.perIp. */
  let registrationRefusal: Promise<Page> | undefined;
  const perIpRefusal = () =>
    (registrationRefusal ??= (async () => {
      const flooded = dashboardClient(app.base);
      await flooded.get('/dashboard/register');
      for (let i = 0; i <= LIMITS.forms.perIp.max; i++) {
        const page = await flooded.post('/dashboard/register', { name: 'Bot', email: `saves-bot-${i}-${Date.now()}@example.com`, password: 'correct horse battery staple' });
        if (page.status === 429) return page;
      }
      throw new Error(`registration was not refused after ${LIMITS.forms.perIp.max + 1} forms`);
    })());

  it.each(floods)(`$form: ${SAVES} from one account in 15 minutes, then 429 with Retry-After, as the other throttled forms answer`, async ({ form, send }) => {
    floodAddress = undefined;
    const { client, email } = await signedIn(app.base);
    await client.get(form === 'a new address' ? '/dashboard/addresses/new' : '/dashboard/account');
    const statuses: number[] = [];
    let refused: Page | undefined;
    // An address added to edit or delete is one of the account's saves too.
    const budget = SAVES - (form.startsWith('an address') ? 1 : 0);
    for (let i = 0; i < budget + 2; i++) {
      const page = await send(client, i);
      statuses.push(page.status);
      if (page.status === 429) refused ??= page;
    }
    expect(statuses.slice(0, budget)).not.toContain(429);
    expect(statuses.slice(budget)).toEqual([429, 429]);
    expectRefusal(refused!, 'account');
    // The same page as the other throttled forms', but for whose forms were counted.
    const other = await perIpRefusal();
    expectRefusal(other, 'address');
    for (const header of ['content-type', 'cache-control', 'content-security-policy']) expect(refused!.headers.get(header)).toBe(other.headers.get(header));

    if (form === 'the profile') {
      // The refused saves changed nothing: the name is the last accepted one's.
      expect((await app.sql.query(`SELECT name FROM "Account" WHERE email = $1`, [email])).rows).toEqual([{ name: `Name ${SAVES - 1}` }]);
    }
  });

  it('normal use is not refused: a flooding account keeps its key form, and another account at the same address saves as usual', async () => {
    const ip = randomIp();
    const { client } = await signedIn(app.base, { ip });
    await client.get('/dashboard/account');
    for (let i = 0; i < SAVES; i++) expect((await client.post('/dashboard/account', { name: `Busy ${i}` })).status).toBe(303);
    expectRefusal(await client.post('/dashboard/account', { name: 'One more' }), 'account');
    // The account's saves are not its address's make-or-unlock forms: a key is still made.
    const { answer, key } = await createKey(client);
    expect(answer.status).toBe(303);
    expect(key).toBeDefined();

    // A colleague behind the same address (the same client IP) fills in a profile and a few
    // addresses, edits one, makes another the default and deletes one: every form is saved.
    const colleague = await signedIn(app.base, { ip });
    const sameAddress = colleague.client;
    await sameAddress.get('/dashboard/account');
    expect((await sameAddress.post('/dashboard/account', { name: 'Colleague', companyName: 'Firma SRL', phone: '+40 700 000 000' })).status).toBe(303);
    const first = await addAddress(sameAddress, { label: 'HQ' });
    const second = await addAddress(sameAddress, { label: 'Depot' });
    await addAddress(sameAddress, { label: 'Shop' });
    await sameAddress.get(`/dashboard/addresses/${first}`);
    expect((await sameAddress.post(`/dashboard/addresses/${first}`, { ...ADDRESS, label: 'Head office' })).status).toBe(303);
    expect((await sameAddress.post(`/dashboard/addresses/${second}`, { ...ADDRESS, label: 'Depot', isDefault: 'true' })).status).toBe(303);
    await sameAddress.get(`/dashboard/addresses/${first}/delete`);
    expect((await sameAddress.post(`/dashboard/addresses/${first}/delete`, {})).status).toBe(303);
    const labels = await app.sql.query(`SELECT label, "isDefault" FROM "Address" WHERE "accountId" = $1 ORDER BY label`, [await accountIdOf(app.sql, colleague.email)]);
    expect(labels.rows).toEqual([{ label: 'Depot', isDefault: true }, { label: 'Shop', isDefault: false }]);
  });

  it('a save that changes nothing writes nothing: the row keeps its updatedAt, and kept answers stay fresh', async () => {
    const { client, email } = await signedIn(app.base);
    const profile = { name: 'Same Name', companyName: 'Firma SRL', phone: '+40 700 000 000' };
    await client.get('/dashboard/account');
    expect((await client.post('/dashboard/account', profile)).status).toBe(303);
    const account = async () => (await app.sql.query(`SELECT name, "companyName", phone, "updatedAt" FROM "Account" WHERE email = $1`, [email])).rows[0];
    const revision = async () => (await app.sql.query(`SELECT revision::text FROM "DataRevision"`)).rows[0].revision as string;
    const before = await account();
    const revisionBefore = await revision();

    // The same values again, and with the spaces and the empty fields a form sends: saved, unchanged.
    const again = await client.post('/dashboard/account', profile);
    expect(again.location).toBe('/dashboard/account?done=profile-saved');
    expect((await client.post('/dashboard/account', { name: ' Same Name ', companyName: 'Firma SRL', phone: '+40 700 000 000' })).status).toBe(303);
    expect(await account()).toEqual(before);
    expect(await revision()).toBe(revisionBefore);

    // A change, even from a value to none, is written.
    expect((await client.post('/dashboard/account', { ...profile, phone: '' })).status).toBe(303);
    const changed = await account();
    expect(changed).toMatchObject({ name: 'Same Name', companyName: 'Firma SRL', phone: null });
    expect(changed.updatedAt.getTime()).toBeGreaterThan(before.updatedAt.getTime());
    expect(await revision()).not.toBe(revisionBefore);
    // …and from none back to a value.
    expect((await client.post('/dashboard/account', profile)).status).toBe(303);
    expect(await account()).toMatchObject({ phone: '+40 700 000 000' });

    // An address has no updatedAt: its row version (xmin, the transaction that wrote it) tells.
    const id = await addAddress(client, { label: 'HQ', isDefault: 'true' });
    const row = async () => (await app.sql.query(`SELECT xmin::text AS version, label, email, "isDefault" FROM "Address" WHERE id = $1`, [id])).rows[0];
    const saved = await row();
    const revisionOfAddress = await revision();
    await client.get(`/dashboard/addresses/${id}`);
    expect((await client.post(`/dashboard/addresses/${id}`, { ...ADDRESS, label: 'HQ', email: '', isDefault: 'true' })).location).toBe('/dashboard/addresses?done=address-saved');
    expect(await row()).toEqual(saved);
    expect(await revision()).toBe(revisionOfAddress);
    expect((await client.post(`/dashboard/addresses/${id}`, { ...ADDRESS, label: 'HQ', email: 'hq@example.com', isDefault: 'true' })).status).toBe(303);
    expect(await row()).toMatchObject({ label: 'HQ', email: 'hq@example.com', isDefault: true });
    expect((await row()).version).not.toBe(saved.version);
    // Another account's address is still not found, changed or not.
    const intruder = await signedIn(app.base);
    await intruder.client.get('/dashboard/account');
    expect((await intruder.client.post(`/dashboard/addresses/${id}`, { ...ADDRESS, label: 'HQ', email: 'hq@example.com', isDefault: 'true' })).status).toBe(404);
  });
});
