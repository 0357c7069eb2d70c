import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

describe('ETag and conditional GET', () => {
  it('answers If-None-Match with 304 and no body while nothing changed, 200 once it has', async () => {
    const first = await app.get('/api/categories?parentOnly=true');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^W\/".+"$/);
    const again = await fetch(`${app.base}/api/categories?parentOnly=true`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('x-ratelimit-remaining')).not.toBeNull();
    const listed = await fetch(`${app.base}/api/categories?parentOnly=true`, { headers: { 'if-none-match': `"other", ${etag}` } });
    expect(listed.status).toBe(304);

    await app.sql.query(`UPDATE "Category" SET name = name || ' (nou)' WHERE id = $1`, [first.body.data[0].id]);
    const changed = await fetch(`${app.base}/api/categories?parentOnly=true`, { headers: { 'if-none-match': etag! } });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
  });

  it('gives equal answers equal ETags', async () => {
    const a = await app.get('/api/products?limit=3&sortBy=price_asc');
    const b = await app.get('/api/products?sortBy=price_asc&limit=3');
    expect(a.headers.get('etag')).toBe(b.headers.get('etag'));
  });
});

describe('Cache-Control', () => {
  it('lets shared caches keep the anonymous catalogue a few minutes', async () => {
    for (const path of ['/api/categories', '/api/suppliers?limit=1']) {
      const res = await app.get(path);
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
      expect(res.headers.get('vary')).toMatch(/X-API-Key/i);
    }
    expect((await app.get('/api/products?limit=1')).headers.get('cache-control')).toBe('public, max-age=60');
  });

  it('keeps keyed answers private and errors uncached', async () => {
    const key = await createTestKey(app.url, { scopes: ['read:stock', 'write:orders'] });
    const keyed = await app.get('/api/categories', { headers: { 'x-api-key': key.key } });
    expect(keyed.headers.get('cache-control')).toBe('private, no-cache');
    const stock = await app.get('/api/v1/stock?limit=1', { headers: { 'x-api-key': key.key } });
    expect(stock.headers.get('cache-control')).toBe('private, no-cache');
    for (const res of [await app.get('/api/products?page=0'), await app.get('/api/nope'), await app.get('/api/orders')]) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
  });
});
