import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { keyIn, signedIn, textOf, type DashboardClient } from './helpers/dashboard.js';
import { startReceiver, type Receiver } from './helpers/receiver.js';

// Whose a webhook endpoint is, as the account's owner sees it in the dashboard: endpoints a key
// registered over the API are listed with their key, a key's page lists its endpoints, revoking
// the key warns of them and silences them at once, for good; endpoints made in the dashboard are
// the account's and outlive every key. Real HTTP, a real database, the app's own worker.

let app: TestApp;
const receivers: Receiver[] = [];

beforeAll(async () => {
  app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0.2' } });
});
afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await app?.close();
});

async function receiver() {
  const r = await startReceiver();
  receivers.push(r);
  return r;
}

/** Creates a key in the dashboard with `scopes`; answers the key and its id. */
async function dashboardKey(client: DashboardClient, name: string, scopes: string[]) {
  await client.get('/dashboard/keys');
  const answer = await client.post('/dashboard/keys', { name, scopes, expires: '' });
  expect(answer.status, textOf(answer.html).slice(0, 300)).toBe(303);
  const page = await client.follow(answer);
  return { key: keyIn(page.html)!, id: /\/dashboard\/keys\/([^/"?]+)/.exec(answer.location!)![1]! };
}

const api = (path: string, key: string, method = 'GET', body?: unknown) =>
  app.get(path, { method, headers: { 'x-api-key': key, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });

/** The rows of the page's table labelled by `labelledBy`, as text. */
function rowsOf(html: string, labelledBy: string): string[] {
  const table = new RegExp(`<table aria-labelledby="${labelledBy}">([\\s\\S]*?)</table>`).exec(html)?.[1] ?? '';
  return (/<tbody>([\s\S]*)<\/tbody>/.exec(table)?.[1] ?? '').split('</tr>').map(textOf).filter(Boolean);
}

describe('webhook endpoints and the keys that registered them', () => {
  it('offers write:webhooks on the key form, never checked by default', async () => {
    const { client } = await signedIn(app.base);
    const page = await client.get('/dashboard/keys');
    expect(page.html).toContain('name="scopes" value="write:webhooks">');
  });

  it('lists each endpoint with its key, lists a key’s endpoints on its page, warns before revoking it, and silences them at once when it is revoked', async () => {
    const { client } = await signedIn(app.base);
    const { key, id: keyId } = await dashboardKey(client, 'shop backend', ['read:orders', 'write:orders', 'write:webhooks']);
    const viaKey = await receiver();
    const viaDashboard = await receiver();
    const registered = await api('/api/webhooks', key, 'POST', { url: viaKey.url, events: ['order.created'] });
    expect(registered.status).toBe(201);
    const endpointId = registered.body.data.id as string;
    await client.get('/dashboard/webhooks');
    expect((await client.post('/dashboard/webhooks', { url: viaDashboard.url, events: ['order.created'], description: '' })).status).toBe(303);

    const listed = rowsOf((await client.get('/dashboard/webhooks')).html, 'your-endpoints');
    expect(listed).toHaveLength(2);
    expect(listed[0]).toMatch(new RegExp(`^${viaKey.url} order.created key shop backend \\( mk_[A-Za-z0-9_-]+… \\) .* Active$`));
    expect(listed[1]).toContain('this account');

    const keyPage = await client.get(`/dashboard/keys/${keyId}`);
    expect(rowsOf(keyPage.html, 'key-endpoints')).toEqual([`${viaKey.url} Active`]);
    expect(textOf((await client.get(`/dashboard/keys/${keyId}/revoke`)).html)).toContain(`The webhook endpoint it registered stops receiving events at once, for good: ${viaKey.url} .`);
    expect((await client.post(`/dashboard/keys/${keyId}/revoke`, {})).status).toBe(303);

    // The very next event reaches the account's endpoint and not the revoked key's.
    const [product] = (
      await app.sql.query(`SELECT p.id, p."supplierId" FROM "Product" p JOIN "Supplier" s ON s.id = p."supplierId" WHERE p."isActive" AND s."isActive" AND p.stock > 100 AND p."minOrder" = 1 LIMIT 1`)
    ).rows;
    const order = await api('/api/orders', (await dashboardKey(client, 'orders', ['read:orders', 'write:orders'])).key, 'POST', {
      supplierId: product.supplierId,
      items: [{ productId: product.id, quantity: 1 }],
      shippingAddress: { fullName: 'Ana Pop', phone: '0700000000', address: 'Str. 1', city: 'Cluj-Napoca', county: 'Cluj', postalCode: '400001' },
    });
    expect(order.status, JSON.stringify(order.body)).toBe(201);
    // The worker sends it on its own time (on the outbox's NOTIFY, or its poll every 2 s).
    await viaDashboard.waitFor((r) => r.json?.type === 'order.created', 1, 10_000);
    // The order wrote its deliveries in its own transaction (src/domain/webhooks/outbox.ts), and
    // the worker sends only those: none for the key's endpoint, so nothing reaches it, ever.
    const { rows: forKey } = await app.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM "WebhookDelivery" WHERE "endpointId" = $1`, [endpointId]);
    expect(forKey[0]!.n).toBe(0);
    expect(viaKey.received).toHaveLength(0);

    const after = rowsOf((await client.get('/dashboard/webhooks')).html, 'your-endpoints');
    expect(after[0]).toMatch(/Disabled since .*: the API key that registered it was revoked$/);
    expect(after[1]).toMatch(/Active$/);
    const endpointPage = await client.get(`/dashboard/webhooks/${endpointId}`);
    expect(textOf(endpointPage.html)).toContain('It cannot be enabled again: add the endpoint anew');
    expect(endpointPage.html).not.toContain(`action="/dashboard/webhooks/${endpointId}/enable"`);
    expect(endpointPage.html).not.toContain(`action="/dashboard/webhooks/${endpointId}/test"`);

    // A hand-made form is refused as the service refuses it: nothing is queued, nothing enabled.
    for (const action of ['enable', 'test']) {
      const refused = await client.post(`/dashboard/webhooks/${endpointId}/${action}`, {});
      expect(refused.status, action).toBe(409);
      expect(textOf(refused.html)).toContain('The API key that registered this endpoint was revoked');
    }
    expect((await app.sql.query(`SELECT count(*)::int AS n FROM "WebhookDelivery" WHERE "endpointId" = $1`, [endpointId])).rows[0].n).toBe(0);

    // Disabled for failing before the key was revoked: still never enabled again.
    await app.sql.query(`UPDATE "WebhookEndpoint" SET "disabledAt" = now() - interval '1 hour' WHERE id = $1`, [endpointId]);
    expect(textOf((await client.get(`/dashboard/webhooks/${endpointId}`)).html)).toContain('the API key that registered it was revoked');
    expect((await client.post(`/dashboard/webhooks/${endpointId}/enable`, {})).status).toBe(409);
    expect((await app.sql.query(`SELECT "disabledAt" IS NOT NULL AS disabled FROM "WebhookEndpoint" WHERE id = $1`, [endpointId])).rows[0].disabled).toBe(true);

    // The owner can still delete it.
    await client.get(`/dashboard/webhooks/${endpointId}/delete`);
    expect((await client.post(`/dashboard/webhooks/${endpointId}/delete`, {})).status).toBe(303);
    expect((await app.sql.query(`SELECT count(*)::int AS n FROM "WebhookEndpoint" WHERE id = $1`, [endpointId])).rows[0].n).toBe(0);
  });
});
