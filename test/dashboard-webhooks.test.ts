import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ENDPOINTS } from '../src/domain/webhooks/events.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { accountIdOf, signedIn, textOf, type DashboardClient } from './helpers/dashboard.js';

// The dashboard's webhook pages over real HTTP on a real database, as a browser uses them, with
// the app's own worker delivering to real local receivers. Private targets are allowed (the
// receivers listen on 127.0.0.1) and a failed delivery is retried once, 0.2 s later, so an
// endpoint that keeps failing is disabled within seconds. Each test registers its own account.

let app: TestApp;
const receivers: http.Server[] = [];

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0.2' } });
});
afterAll(async () => {
  for (const server of receivers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  await app?.close();
});

interface Received {
  method: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A webhook receiver on 127.0.0.1 answering every request `status` (with `answer` as its body). */
async function receiver(status: number, answer = ''): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      received.push({ method: req.method ?? '', headers: req.headers, body });
      res.writeHead(status, answer ? { 'content-type': 'text/html' } : {});
      res.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receivers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, received };
}

/** Posts the add-endpoint form from the webhooks page, as a browser would. */
async function addEndpoint(client: DashboardClient, fields: { url: string; events?: string[]; description?: string }) {
  await client.get('/dashboard/webhooks');
  return client.post('/dashboard/webhooks', { events: ['order.created'], description: '', ...fields });
}

const secretIn = (html: string) => /value="(whsec_[A-Za-z0-9+/=]+)"/.exec(html)?.[1];
const endpointIdIn = (html: string) => /href="\/dashboard\/webhooks\/([A-Za-z0-9_-]+)"/.exec(html)?.[1];

/** Adds an endpoint that must be accepted and follows the redirect; answers its id, its secret and the page that showed it. */
async function createdEndpoint(client: DashboardClient, fields: { url: string; events?: string[]; description?: string }) {
  const answer = await addEndpoint(client, fields);
  if (answer.status !== 303) throw new Error(`adding an endpoint answered ${answer.status}: ${textOf(answer.html).slice(0, 400)}`);
  const page = await client.follow(answer);
  return { id: endpointIdIn(page.html)!, secret: secretIn(page.html)!, page, location: answer.location! };
}

const endpointRows = async (email: string) =>
  (
    await app.sql.query<{ id: string; url: string; events: string[]; description: string | null; secret: string; disabledAt: Date | null; failingSince: Date | null }>(
      `SELECT e.id, e.url, e.events, e.description, e.secret, e."disabledAt", e."failingSince" FROM "WebhookEndpoint" e JOIN "Account" a ON a.id = e."accountId" WHERE a.email = $1 ORDER BY e."createdAt"`,
      [email],
    )
  ).rows;

/** The rows of the page's table labelled by `labelledBy`, as text. */
function rowsOf(html: string, labelledBy: string): string[] {
  const table = new RegExp(`<table aria-labelledby="${labelledBy}">([\\s\\S]*?)</table>`).exec(html)?.[1] ?? '';
  const body = /<tbody>([\s\S]*)<\/tbody>/.exec(table)?.[1] ?? '';
  return body.split('</tr>').map(textOf).filter(Boolean);
}

describe('the webhooks page', () => {
  it('is in the navigation; an account without endpoints sees so, and the form with the event types it may choose', async () => {
    const { client } = await signedIn(app.base);
    const keys = await client.get('/dashboard/keys');
    expect(keys.html).toContain('<a href="/dashboard/webhooks">Webhooks</a>');
    const page = await client.get('/dashboard/webhooks');
    expect(page.status).toBe(200);
    expect(page.html).toContain('<a href="/dashboard/webhooks" aria-current="page">Webhooks</a>');
    const text = textOf(page.html);
    expect(text).toContain('You have no webhook endpoints yet.');
    expect(text).toContain(`You have 0 of at most ${MAX_ENDPOINTS} endpoints.`);
    expect(page.html).toContain('<label for="field-url">Endpoint URL</label>');
    expect(page.html).toContain('value="order.created"');
    expect(page.html).toContain('value="order.status_changed"');
    expect(text).toContain('order.created : An order was placed');
    // Not a supplier's member: stock.low is not offered.
    expect(page.html).not.toContain('value="stock.low"');
    expect((await signedOut('/dashboard/webhooks')).location).toBe('/dashboard/sign-in');
  });
});

async function signedOut(path: string) {
  const res = await fetch(app.base + path, { redirect: 'manual' });
  return { status: res.status, location: res.headers.get('location') };
}

describe('adding an endpoint', () => {
  it('answers with a redirect to a page that shows the secret once: a reload adds nothing and says it was shown', async () => {
    const { client, email } = await signedIn(app.base);
    const answer = await addEndpoint(client, { url: 'http://127.0.0.1:9/hooks/once', description: 'once' });
    expect(answer.status).toBe(303);
    const carrier = answer.headers.getSetCookie().find((line) => line.startsWith('mp_shown_once='))!;
    // Sent to that one page only, never to another site's request, for five minutes.
    expect(carrier.split('; ').slice(1)).toEqual([`Path=${answer.location}`, 'HttpOnly', 'SameSite=Strict', 'Max-Age=300']);
    const shown = await client.follow(answer);
    const secret = secretIn(shown.html)!;
    expect(secret).toMatch(/^whsec_/);
    // Neither the address nor the cookie carries the secret as it is.
    expect(answer.location).not.toContain('whsec_');
    expect(carrier).not.toContain(secret.slice(6, 30));

    const reload = await client.get(answer.location!);
    expect(reload.status).toBe(200);
    expect(reload.html).not.toContain('whsec_');
    expect(textOf(reload.html)).toContain('The signing secret of http://127.0.0.1:9/hooks/once was shown once, right after the endpoint was added, and cannot be shown again.');
    expect(await endpointRows(email)).toHaveLength(1);
  });

  it('shows the signing secret once, with how to verify it; the list then shows the endpoint, never the secret', async () => {
    const { client, email } = await signedIn(app.base);
    const answer = await addEndpoint(client, { url: 'http://127.0.0.1:9/hooks/orders', events: ['order.created', 'order.status_changed'], description: 'shop backend' });
    expect(answer.status).toBe(303);
    const page = await client.follow(answer);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    const secret = secretIn(page.html);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const text = textOf(page.html);
    expect(text).toContain('Copy this signing secret now. It is shown only this once');
    expect(text).toContain("import { Webhook } from 'standardwebhooks'");
    const id = endpointIdIn(page.html)!;
    expect(page.html).toContain(`<a href="/dashboard/webhooks/${id}">See this endpoint and send it a test event</a>`);

    expect(answer.location).toBe(`/dashboard/webhooks/${id}/created`);
    const [row, ...more] = await endpointRows(email);
    expect(more).toEqual([]);
    expect(row).toMatchObject({ id, url: 'http://127.0.0.1:9/hooks/orders', events: ['order.created', 'order.status_changed'], description: 'shop backend', secret, disabledAt: null });

    const list = await client.get('/dashboard/webhooks');
    expect(rowsOf(list.html, 'your-endpoints')).toEqual([expect.stringMatching(/^http:\/\/127\.0\.0\.1:9\/hooks\/orders order\.created , order\.status_changed shop backend .+ UTC Active$/)]);
    expect(list.html).toContain(`href="/dashboard/webhooks/${id}"`);
    expect(textOf(list.html)).toContain(`You have 1 of at most ${MAX_ENDPOINTS} endpoints.`);
    const detail = await client.get(`/dashboard/webhooks/${id}`);
    expect(detail.status).toBe(200);
    for (const shown of [list, detail, await client.get(`/dashboard/webhooks/${id}/delete`)]) {
      expect(shown.html).not.toContain(secret);
      expect(shown.html).not.toContain('whsec_');
    }

    // An empty description is none.
    await createdEndpoint(client, { url: 'http://127.0.0.1:9/second', description: '   ' });
    expect((await endpointRows(email))[1]).toMatchObject({ url: 'http://127.0.0.1:9/second', events: ['order.created'], description: null });
  });

  it('refuses a bad URL, no event, an unknown event or a long description: the form comes back with each message and its values; nothing is created', async () => {
    const { client, email } = await signedIn(app.base);
    const ftp = await addEndpoint(client, { url: 'ftp://x', events: ['order.status_changed'], description: 'keep me' });
    expect(ftp.status).toBe(400);
    expect(textOf(ftp.html)).toContain('Endpoint URL must be an http or https URL');
    expect(ftp.html).toContain('value="ftp://x"');
    expect(ftp.html).toContain('value="keep me"');
    expect(ftp.html).toContain('value="order.status_changed" checked');
    expect(ftp.html).not.toContain('value="order.created" checked');
    expect(ftp.html).toContain('aria-invalid="true"');
    expect(ftp.html).toContain('<a href="#field-url">');

    const none = await addEndpoint(client, { url: 'http://127.0.0.1:9/hooks', events: [] });
    expect(none.status).toBe(400);
    expect(textOf(none.html)).toContain('Events must name at least one event type');
    expect(none.html).toContain('value="http://127.0.0.1:9/hooks"');
    expect(none.html).toContain('<a href="#field-events">');

    const both = await addEndpoint(client, { url: '  ', events: [] });
    expect(both.status).toBe(400);
    expect(textOf(both.html)).toContain('Endpoint URL must not be empty');
    expect(textOf(both.html)).toContain('Events must name at least one event type');

    const unknown = await addEndpoint(client, { url: 'http://127.0.0.1:9/hooks', events: ['order.deleted'] });
    expect(unknown.status).toBe(400);
    expect(textOf(unknown.html)).toContain('Events must be one of order.created, order.status_changed, stock.low');

    for (const url of ['not a url', 'http://user:pw@127.0.0.1/', 'http://127.0.0.1/#top']) {
      const bad = await addEndpoint(client, { url });
      expect(bad.status, url).toBe(400);
      expect(textOf(bad.html), url).toMatch(/Endpoint URL must (be an absolute URL|not contain)/);
    }

    const long = await addEndpoint(client, { url: 'http://127.0.0.1:9/hooks', description: 'x'.repeat(501) });
    expect(long.status).toBe(400);
    expect(textOf(long.html)).toContain('Description must be at most 500 characters');

    expect(await endpointRows(email)).toEqual([]);
  });

  it('refuses private, loopback and link-local targets where they are not allowed (the default)', async () => {
    const strict = await startTestApp();
    try {
      const { client, email } = await signedIn(strict.base);
      for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://127.0.0.1:9/hooks', 'http://[::1]/hooks', 'http://localhost/hooks']) {
        await client.get('/dashboard/webhooks');
        const page = await client.post('/dashboard/webhooks', { url, events: 'order.created' });
        expect(page.status, url).toBe(400);
        expect(textOf(page.html), url).toContain('Endpoint URL must not point to a private, loopback or link-local address');
      }
      const { rows } = await strict.sql.query(`SELECT e.id FROM "WebhookEndpoint" e JOIN "Account" a ON a.id = e."accountId" WHERE a.email = $1`, [email]);
      expect(rows).toEqual([]);
    } finally {
      await strict.close();
    }
  });

  it("offers and accepts stock.low only to an account acting for a supplier", async () => {
    const { client, email } = await signedIn(app.base);
    const refused = await addEndpoint(client, { url: 'http://127.0.0.1:9/stock', events: ['order.created', 'stock.low'] });
    expect(refused.status).toBe(400);
    expect(textOf(refused.html)).toContain('stock.low is sent to accounts acting for a supplier only');
    expect(refused.html).not.toContain('value="stock.low"');
    expect(await endpointRows(email)).toEqual([]);

    const supplier = (await app.sql.query<{ id: string }>(`SELECT id FROM "Supplier" ORDER BY id LIMIT 1`)).rows[0]!;
    await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [await accountIdOf(app.sql, email), supplier.id]);
    const form = await client.get('/dashboard/webhooks');
    expect(form.html).toContain('value="stock.low"');
    expect(textOf(form.html)).toContain("stock.low : A tracked product's stock fell");
    await createdEndpoint(client, { url: 'http://127.0.0.1:9/stock', events: ['stock.low'] });
    expect((await endpointRows(email)).map((e) => e.events)).toEqual([['stock.low']]);
  });

  it(`allows at most ${MAX_ENDPOINTS} endpoints, says so, and deleting one makes room`, async () => {
    const { client, email } = await signedIn(app.base);
    for (let i = 0; i < MAX_ENDPOINTS; i++) await createdEndpoint(client, { url: `http://127.0.0.1:9/hooks/${i}` });
    const full = await client.get('/dashboard/webhooks');
    expect(textOf(full.html)).toContain(`You have ${MAX_ENDPOINTS} of at most ${MAX_ENDPOINTS} endpoints.`);
    expect(textOf(full.html)).toContain(`You have reached the limit of ${MAX_ENDPOINTS} endpoints: delete one before adding another.`);
    expect(rowsOf(full.html, 'your-endpoints')).toHaveLength(MAX_ENDPOINTS);

    const over = await client.post('/dashboard/webhooks', { url: 'http://127.0.0.1:9/one-more', events: 'order.created', description: 'eleventh' });
    expect(over.status).toBe(409);
    expect(textOf(over.html)).toContain(`An account can have at most ${MAX_ENDPOINTS} webhook endpoints: delete one first`);
    expect(over.html).toContain('value="http://127.0.0.1:9/one-more"');
    expect(over.html).toContain('value="eleventh"');
    expect(await endpointRows(email)).toHaveLength(MAX_ENDPOINTS);

    const [first] = await endpointRows(email);
    await client.get(`/dashboard/webhooks/${first!.id}/delete`);
    expect((await client.post(`/dashboard/webhooks/${first!.id}/delete`, {})).status).toBe(303);
    await createdEndpoint(client, { url: 'http://127.0.0.1:9/one-more' });
    expect(await endpointRows(email)).toHaveLength(MAX_ENDPOINTS);
  });
});

describe('an endpoint', () => {
  it("answers another account's endpoint 404, exactly like one that does not exist: it cannot be seen, tested, enabled or deleted", async () => {
    const owner = await signedIn(app.base);
    const { id } = await createdEndpoint(owner.client, { url: 'http://127.0.0.1:9/owner', description: 'the owner’s' });
    const { client } = await signedIn(app.base);
    const missing = await client.get('/dashboard/webhooks/no-such-endpoint');
    expect(missing.status).toBe(404);
    const theirs = await client.get(`/dashboard/webhooks/${id}`);
    expect(theirs.status).toBe(404);
    expect(textOf(theirs.html)).toBe(textOf(missing.html));
    expect(textOf(theirs.html)).toContain('There is no such webhook endpoint among yours.');
    expect(theirs.html).not.toContain('http://127.0.0.1:9/owner');
    expect((await client.get(`/dashboard/webhooks/${id}/delete`)).status).toBe(404);
    expect((await client.get('/dashboard/webhooks/a.b')).status).toBe(404);
    expect((await client.get(`/dashboard/webhooks/${'x'.repeat(65)}`)).status).toBe(404);
    for (const action of ['test', 'enable', 'delete']) expect((await client.post(`/dashboard/webhooks/${id}/${action}`, {})).status, action).toBe(404);
    expect(textOf((await client.get('/dashboard/webhooks')).html)).toContain('You have no webhook endpoints yet.');

    expect(await endpointRows(owner.email)).toHaveLength(1);
    expect((await app.sql.query(`SELECT id FROM "WebhookDelivery" WHERE "endpointId" = $1`, [id])).rows).toEqual([]);
  });

  it('sends a signed test event to a real receiver, and its page shows the delivery as delivered with its attempt', async () => {
    const { url, received } = await receiver(204);
    const { client } = await signedIn(app.base);
    const { id, secret } = await createdEndpoint(client, { url, events: ['order.status_changed'], description: 'test receiver' });

    const before = await client.get(`/dashboard/webhooks/${id}`);
    expect(before.status).toBe(200);
    const text = textOf(before.html);
    expect(text).toMatch(/Status: Active ?\./);
    expect(text).toContain(url);
    expect(text).toContain('No deliveries yet.');
    expect(before.html).toContain('<button type="submit">Send test event</button>');
    expect(before.html).not.toContain('Enable again');

    const sent = await client.post(`/dashboard/webhooks/${id}/test`, {});
    expect(sent.status).toBe(303);
    expect(sent.location).toBe(`/dashboard/webhooks/${id}?done=webhook-test-sent`);
    expect(textOf((await client.follow(sent)).html)).toContain('A test event is on its way');

    await expect.poll(() => received.length, { timeout: 10_000 }).toBe(1);
    const [request] = received;
    expect(request!.method).toBe('POST');
    expect(request!.headers['webhook-id']).toMatch(/^msg_/);
    expect(request!.headers['webhook-timestamp']).toMatch(/^\d+$/);
    expect(request!.headers['webhook-signature']).toMatch(/^v1,/);
    const event = new Webhook(secret).verify(request!.body, {
      'webhook-id': String(request!.headers['webhook-id']),
      'webhook-timestamp': String(request!.headers['webhook-timestamp']),
      'webhook-signature': String(request!.headers['webhook-signature']),
    }) as { type: string; data: { endpointId: string } };
    expect(event.type).toBe('webhook.test');
    expect(event.data.endpointId).toBe(id);

    const deliveries = async () => rowsOf((await client.get(`/dashboard/webhooks/${id}`)).html, 'deliveries');
    await expect.poll(async () => (await deliveries())[0] ?? '', { timeout: 10_000 }).toContain('Delivered');
    const [row, ...others] = await deliveries();
    expect(others).toEqual([]);
    expect(row).toMatch(new RegExp(`^webhook\\.test ${request!.headers['webhook-id']} .+ UTC Delivered .+ UTC 1 .*Delivered, HTTP 204, \\d+ ms HTTP 204 —$`));
    const page = await client.get(`/dashboard/webhooks/${id}`);
    expect(textOf(page.html)).toContain('Newest first: 1 in all.');
    expect(page.html).toContain('<details><summary>1<span class="skip-label"> attempts of');
    expect(page.html).not.toContain(secret);

    const { rows } = await app.sql.query(`SELECT status, attempts, "lastStatus" FROM "WebhookDelivery" WHERE "endpointId" = $1`, [id]);
    expect(rows).toEqual([{ status: 'DELIVERED', attempts: 1, lastStatus: 204 }]);
  });

  it('is disabled once it failed for the whole retry schedule, shown so, with the answers escaped; "Enable again" makes it active', async () => {
    const { url, received } = await receiver(500, '<b>down</b> for maintenance');
    const { client, email } = await signedIn(app.base);
    const { id } = await createdEndpoint(client, { url, description: 'flaky' });
    await client.get(`/dashboard/webhooks/${id}`);
    expect((await client.post(`/dashboard/webhooks/${id}/test`, {})).status).toBe(303);

    // One attempt and one retry (WEBHOOK_RETRY_SCHEDULE=0.2): both fail, and the endpoint is disabled.
    await expect.poll(async () => (await endpointRows(email))[0]!.disabledAt, { timeout: 15_000 }).not.toBeNull();
    expect(received).toHaveLength(2);

    const list = await client.get('/dashboard/webhooks');
    expect(rowsOf(list.html, 'your-endpoints')[0]).toMatch(/ flaky .+ UTC Disabled since .+ UTC ?: it failed for the whole retry schedule$/);
    const page = await client.get(`/dashboard/webhooks/${id}`);
    const text = textOf(page.html);
    expect(text).toMatch(/Disabled since .+ UTC ?: it failed for the whole retry schedule, so no events are sent to it\./);
    expect(page.html).toContain('<button type="submit">Enable again</button>');
    const [failed] = rowsOf(page.html, 'deliveries');
    expect(failed).toMatch(/^webhook\.test msg_\S+ .+ UTC Failed 2 .+ UTC ?: Error answer, HTTP 500, \d+ ms Answer: <b>down<\/b> for maintenance .+ UTC ?: Error answer, HTTP 500, \d+ ms Answer: <b>down<\/b> for maintenance HTTP 500 —$/);
    expect(page.html).toContain('&lt;b&gt;down&lt;/b&gt; for maintenance');
    expect(page.html).not.toContain('<b>down</b>');

    const enabled = await client.post(`/dashboard/webhooks/${id}/enable`, {});
    expect(enabled.status).toBe(303);
    expect(enabled.location).toBe(`/dashboard/webhooks/${id}?done=webhook-enabled`);
    const after = await client.follow(enabled);
    expect(textOf(after.html)).toContain('The endpoint is enabled: new events are sent to it again.');
    expect(textOf(after.html)).toMatch(/Status: Active ?\./);
    expect(after.html).not.toContain('Enable again');
    expect((await endpointRows(email))[0]).toMatchObject({ disabledAt: null, failingSince: null });
    // The delivery that failed stays failed.
    expect(rowsOf(after.html, 'deliveries')[0]).toContain(' Failed ');
  });

  it('shows an endpoint disabled in the database as disabled, since when and why; "Enable again" makes it active', async () => {
    const { client, email } = await signedIn(app.base);
    const { id } = await createdEndpoint(client, { url: 'http://127.0.0.1:9/down' });
    await app.sql.query(`UPDATE "WebhookEndpoint" SET "disabledAt" = now(), "failingSince" = now() - interval '3 days' WHERE id = $1`, [id]);
    expect(rowsOf((await client.get('/dashboard/webhooks')).html, 'your-endpoints')[0]).toContain('Disabled since');
    const page = await client.get(`/dashboard/webhooks/${id}`);
    expect(textOf(page.html)).toContain('it failed for the whole retry schedule');
    expect(textOf(page.html)).not.toContain('Status: Active');
    const enabled = await client.post(`/dashboard/webhooks/${id}/enable`, {});
    expect(enabled.status).toBe(303);
    expect(rowsOf((await client.get('/dashboard/webhooks')).html, 'your-endpoints')[0]).toMatch(/ Active$/);
    expect((await endpointRows(email))[0]).toMatchObject({ disabledAt: null });
  });

  it('pages its delivery log 20 at a time, newest first', async () => {
    const { client } = await signedIn(app.base);
    const { id } = await createdEndpoint(client, { url: 'http://127.0.0.1:9/busy' });
    const start = Date.now() - 3_600_000;
    for (let i = 0; i < 25; i++) {
      const at = new Date(start + i * 60_000);
      const eventId = `msg_page${i}x${id}`;
      await app.sql.query(`INSERT INTO "WebhookEvent" (id, type, payload, "createdAt") VALUES ($1, 'order.created', '{}', $2)`, [eventId, at]);
      await app.sql.query(
        `INSERT INTO "WebhookDelivery" (id, "eventId", "endpointId", status, attempts, "nextAttemptAt", "lastStatus", "deliveredAt", "createdAt") VALUES ($1, $2, $3, 'DELIVERED', 1, NULL, 200, $4, $4)`,
        [`del${i}x${id}`, eventId, id, at],
      );
    }
    const first = await client.get(`/dashboard/webhooks/${id}`);
    const rows = rowsOf(first.html, 'deliveries');
    expect(rows).toHaveLength(20);
    expect(rows[0]).toContain(`msg_page24x${id}`);
    expect(textOf(first.html)).toContain('Newest first: 25 in all.');
    expect(first.html).toContain(`<a href="/dashboard/webhooks/${id}?page=2">Older deliveries</a>`);
    expect(first.html).not.toContain('Newer deliveries');
    const second = await client.get(`/dashboard/webhooks/${id}?page=2`);
    expect(rowsOf(second.html, 'deliveries')).toHaveLength(5);
    expect(rowsOf(second.html, 'deliveries')[4]).toContain(`msg_page0x${id}`);
    expect(second.html).toContain(`<a href="/dashboard/webhooks/${id}?page=1">Newer deliveries</a>`);
    expect(second.html).not.toContain('Older deliveries');
    expect(textOf((await client.get(`/dashboard/webhooks/${id}?page=9`)).html)).toContain('No deliveries on this page.');
    expect(rowsOf((await client.get(`/dashboard/webhooks/${id}?page=nonsense`)).html, 'deliveries')).toHaveLength(20);
  });

  it('is deleted after a confirmation, with its deliveries', async () => {
    const { client, email } = await signedIn(app.base);
    const { id } = await createdEndpoint(client, { url: 'http://127.0.0.1:9/gone', description: 'old shop' });
    await client.get(`/dashboard/webhooks/${id}`);
    expect((await client.post(`/dashboard/webhooks/${id}/test`, {})).status).toBe(303);
    const page = await client.get(`/dashboard/webhooks/${id}`);
    expect(page.html).toContain(`<a class="button danger" href="/dashboard/webhooks/${id}/delete">Delete this endpoint…</a>`);
    const confirm = await client.get(`/dashboard/webhooks/${id}/delete`);
    expect(confirm.status).toBe(200);
    expect(textOf(confirm.html)).toContain('Delete the webhook endpoint http://127.0.0.1:9/gone (“old shop”)?');
    expect(confirm.html).toContain('<button type="submit" class="danger">Delete endpoint</button>');
    const deleted = await client.post(`/dashboard/webhooks/${id}/delete`, {});
    expect(deleted.status).toBe(303);
    expect(deleted.location).toBe('/dashboard/webhooks?done=webhook-deleted');
    const list = await client.follow(deleted);
    expect(textOf(list.html)).toContain('The endpoint is deleted: nothing more is sent to it.');
    expect(textOf(list.html)).toContain('You have no webhook endpoints yet.');
    expect(await endpointRows(email)).toEqual([]);
    expect((await app.sql.query(`SELECT id FROM "WebhookDelivery" WHERE "endpointId" = $1`, [id])).rows).toEqual([]);
    expect((await client.get(`/dashboard/webhooks/${id}`)).status).toBe(404);
    expect((await client.post(`/dashboard/webhooks/${id}/delete`, {})).status).toBe(404);
  });

  it('shows its URL and description as text, on every page', async () => {
    const { client } = await signedIn(app.base);
    const url = 'http://127.0.0.1:9/hook?q=<i>x</i>&r="y"';
    const description = '<script>alert("owned")</script> & more';
    const created = await createdEndpoint(client, { url, description });
    const pages = [
      created.page,
      await client.get(created.location),
      await client.get('/dashboard/webhooks'),
      await client.get(`/dashboard/webhooks/${created.id}`),
      await client.get(`/dashboard/webhooks/${created.id}/delete`),
    ];
    for (const page of pages) {
      expect(page.html).not.toContain('<script>alert');
      expect(page.html).not.toContain('<i>x</i>');
      expect(textOf(page.html)).toContain(url);
    }
    // The pages that show the secret (or say it was shown) name the endpoint by its URL only.
    for (const page of pages.slice(2)) expect(textOf(page.html)).toContain(description);
  });
});

describe('an add-endpoint form sent twice', () => {
  const fields = { url: 'http://127.0.0.1:9/hooks/twice', events: ['order.created'], description: 'twice' };
  const carriesSecret = (page: { headers: Headers }) => page.headers.getSetCookie().some((line) => line.startsWith('mp_shown_once='));

  it("adds one endpoint, sent one after the other or at once: a sending again is answered with the first's page, without its secret", async () => {
    const { client, email } = await signedIn(app.base);
    await client.get('/dashboard/webhooks');
    const first = await client.post('/dashboard/webhooks', fields);
    expect(first.status).toBe(303);
    expect(secretIn((await client.follow(first)).html)).toMatch(/^whsec_/);
    const again = await client.post('/dashboard/webhooks', fields);
    expect(again.status).toBe(303);
    expect(again.location).toBe(first.location);
    expect(carriesSecret(again)).toBe(false);
    const page = await client.follow(again);
    expect(page.status).toBe(200);
    expect(secretIn(page.html)).toBeUndefined();
    expect(await endpointRows(email)).toHaveLength(1);

    await client.get('/dashboard/webhooks');
    const atOnce = await Promise.all(Array.from({ length: 4 }, () => client.post('/dashboard/webhooks', { ...fields, url: 'http://127.0.0.1:9/hooks/at-once' })));
    expect(atOnce.map((a) => a.status)).toEqual([303, 303, 303, 303]);
    expect(new Set(atOnce.map((a) => a.location)).size).toBe(1);
    expect(atOnce.filter(carriesSecret)).toHaveLength(1);
    expect((await endpointRows(email)).map((e) => e.url)).toEqual(['http://127.0.0.1:9/hooks/twice', 'http://127.0.0.1:9/hooks/at-once']);
  });

  it(`sent again for the last endpoint allowed (${MAX_ENDPOINTS}), leads to it rather than to "at most ${MAX_ENDPOINTS}"`, async () => {
    const { client, email } = await signedIn(app.base);
    for (let i = 1; i < MAX_ENDPOINTS; i++) await createdEndpoint(client, { url: `http://127.0.0.1:9/hooks/${i}` });
    await client.get('/dashboard/webhooks');
    const answers = await Promise.all([client.post('/dashboard/webhooks', fields), client.post('/dashboard/webhooks', fields)]);
    expect(answers.map((a) => a.status)).toEqual([303, 303]);
    expect(answers[1]!.location).toBe(answers[0]!.location);
    expect(await endpointRows(email)).toHaveLength(MAX_ENDPOINTS);
    expect((await client.post('/dashboard/webhooks', fields)).location).toBe(answers[0]!.location);
  });

  it('refused, claims nothing, so the corrected form adds it; without its token it is a 400 showing the form again', async () => {
    const { client, email } = await signedIn(app.base);
    await client.get('/dashboard/webhooks');
    const token = client.formToken;
    const refused = await client.post('/dashboard/webhooks', { ...fields, url: 'ftp://x' });
    expect(refused.status).toBe(400);
    expect((await client.post('/dashboard/webhooks', fields, { formToken: token })).status).toBe(303);
    expect(await endpointRows(email)).toHaveLength(1);

    const stale = await client.post('/dashboard/webhooks', { ...fields, url: 'http://127.0.0.1:9/hooks/stale' }, { formToken: null });
    expect(stale.status).toBe(400);
    expect(textOf(stale.html)).toContain('This form is out of date: check it and send it again.');
    expect(stale.html).toContain('value="http://127.0.0.1:9/hooks/stale"');
    expect(await endpointRows(email)).toHaveLength(1);
    expect((await client.post('/dashboard/webhooks', { ...fields, url: 'http://127.0.0.1:9/hooks/stale' })).status).toBe(303);
    expect(await endpointRows(email)).toHaveLength(2);
  });
});

describe('CSRF', () => {
  it('refuses every webhook form without the token or from another origin: nothing changes', async () => {
    const { client, email } = await signedIn(app.base);
    await client.get('/dashboard/webhooks');
    const fields = { url: 'http://127.0.0.1:9/csrf', events: ['order.created'] };
    expect((await client.post('/dashboard/webhooks', fields, { csrf: null })).status).toBe(403);
    expect((await client.post('/dashboard/webhooks', fields, { csrf: 'x'.repeat(43) })).status).toBe(403);
    expect((await client.post('/dashboard/webhooks', fields, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
    expect(await endpointRows(email)).toEqual([]);

    const { id } = await createdEndpoint(client, fields);
    await app.sql.query(`UPDATE "WebhookEndpoint" SET "disabledAt" = now() WHERE id = $1`, [id]);
    await client.get(`/dashboard/webhooks/${id}`);
    for (const action of ['test', 'enable', 'delete']) {
      expect((await client.post(`/dashboard/webhooks/${id}/${action}`, {}, { csrf: null })).status, action).toBe(403);
      expect((await client.post(`/dashboard/webhooks/${id}/${action}`, {}, { headers: { origin: 'https://evil.example' } })).status, action).toBe(403);
    }
    const [row] = await endpointRows(email);
    expect(row!.id).toBe(id);
    expect(row!.disabledAt).not.toBeNull();
    expect((await app.sql.query(`SELECT id FROM "WebhookDelivery" WHERE "endpointId" = $1`, [id])).rows).toEqual([]);
    // With the token, from the page itself, the same form works.
    expect((await client.post(`/dashboard/webhooks/${id}/enable`, {})).status).toBe(303);
  });
});
