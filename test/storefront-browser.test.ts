import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey, type TestKey } from './helpers/keys.js';

// The storefront example (examples/storefront: a static page and a script, no build step) in a
// real browser, served from origins of its own: with a publishable key that lists the page's
// origin it lists products and shows a price changed through the API a moment later (the
// productChanged subscription over SSE read with fetch); from an origin the key does not list, it
// is refused. Debian's Chromium driven by playwright-core, as test/browser.test.ts; without
// /usr/bin/chromium the file reports itself skipped.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`storefront-browser: skipped, no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

const EXAMPLE = fileURLToPath(new URL('../examples/storefront/', import.meta.url));

/** A static server of the example's files, its config.js written for `api` and the key given later. */
async function staticSite(api: string): Promise<{ origin: string; server: Server; setKey(key: string): void }> {
  let key = '';
  const server = createServer((req, res) => {
    const name = new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/$/, '/index.html').slice(1);
    if (name === 'config.js') {
      res.writeHead(200, { 'content-type': 'text/javascript' }).end(`window.STOREFRONT = ${JSON.stringify({ api, key })};`);
      return;
    }
    if (!['index.html', 'storefront.js'].includes(name)) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': name.endsWith('.html') ? 'text/html' : 'text/javascript' }).end(readFileSync(path.join(EXAMPLE, name)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, setKey: (k) => void (key = k) };
}

describe.skipIf(!hasChromium)('the storefront example in a browser', () => {
  let app: TestApp;
  let shop: Awaited<ReturnType<typeof staticSite>>;
  let elsewhere: Awaited<ReturnType<typeof staticSite>>;
  let publishable: TestKey;
  let supplierKey: TestKey;
  let context: BrowserContext;
  let userDataDir: string;

  beforeAll(async () => {
    app = await startTestApp();
    [shop, elsewhere] = await Promise.all([staticSite(app.base), staticSite(app.base)]);
    publishable = await createTestKey(app.url, { owner: 'storefront@example.com', scopes: [], publishable: { origins: [shop.origin] } });
    shop.setKey(publishable.key);
    elsewhere.setKey(publishable.key);
    supplierKey = await createTestKey(app.url, { owner: 'prices@supplier.example', scopes: ['write:products'] });
    userDataDir = mkdtempSync(path.join(tmpdir(), 'mp-storefront-'));
    context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
  });

  afterAll(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    for (const site of [shop, elsewhere]) await new Promise((resolve) => (site ? site.server.close(resolve) : resolve(undefined)));
    await app?.close();
  });

  async function textOf(page: Page, selector: string, ok: (text: string) => boolean, timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let text = '';
    while (Date.now() < deadline) {
      text = (await page.locator(selector).first().innerText().catch(() => '')).replace(/\s+/g, ' ').trim();
      if (ok(text)) return text;
      await page.waitForTimeout(100);
    }
    throw new Error(`${selector} never as expected within ${timeoutMs} ms: ${JSON.stringify(text)}`);
  }

  it('lists products with the publishable key and shows a price changed through the API', async () => {
    const page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    await page.goto(`${shop.origin}/`, { waitUntil: 'load' });
    await textOf(page, '#status', (t) => t.includes('prices live'));
    const first = page.locator('#products li').first();
    const productId = await first.getAttribute('data-id');
    expect(productId).toBeTruthy();
    const { rows } = await app.sql.query(`SELECT name, price::text, "supplierId" FROM "Product" WHERE id = $1`, [productId]);
    expect(await first.locator('.name').innerText()).toBe(rows[0].name);
    expect(await first.locator('.price').innerText()).toBe(`${Number(rows[0].price).toFixed(2)} RON`);

    // The supplier changes the price through the API with its secret key.
    await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2) ON CONFLICT DO NOTHING`, [supplierKey.accountId, rows[0].supplierId]);
    const newPrice = (Math.round(Number(rows[0].price) * 100) + 137) / 100;
    // The page's streams open as it shows "prices live", a moment after; a change before one is
    // open would not reach it, so the price is changed until the page shows it (each change a new price).
    let shown = '';
    for (let attempt = 0; attempt < 5 && !shown; attempt++) {
      const price = (newPrice + attempt).toFixed(2);
      const res = await app.get(`/api/v1/prices/${productId}`, { method: 'PATCH', headers: { 'content-type': 'application/json', 'x-api-key': supplierKey.key }, body: JSON.stringify({ price: Number(price) }) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      shown = await textOf(page, `#products li[data-id="${productId}"] .price`, (t) => t === `${price} RON`, 10_000).catch(() => '');
    }
    expect(shown).toMatch(/^\d+\.\d{2} RON$/);
    expect(pageErrors).toEqual([]);
    await page.close();
  });

  it('is refused from an origin the key does not list, and says why', async () => {
    const page = await context.newPage();
    await page.goto(`${elsewhere.origin}/`, { waitUntil: 'load' });
    // The refusal carries no CORS allowance for that origin, so the page cannot read its message:
    // it sees a failed fetch, as a browser must.
    const status = await textOf(page, '#status', (t) => t.startsWith('The catalogue could not be loaded'));
    expect(status).toMatch(/could not be loaded/);
    expect(await page.locator('#products li').count()).toBe(0);
    await page.close();
  });
});
