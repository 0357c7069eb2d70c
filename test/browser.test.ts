import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page, type Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey } from './helpers/keys.js';

// The two pages people open in a browser, in a real browser: GraphiQL at /graphql runs a query
// and shows the catalogue's data; /api/docs lists the REST endpoints. Fully offline: every
// request that is not to the app on 127.0.0.1 is blocked and recorded, and none may be made
// (a page that needs a CDN is broken wherever the CDN cannot be reached).
//
// Debian's Chromium (apt-get install chromium), driven by playwright-core; Playwright's own
// browser download does not work on these machines. Without /usr/bin/chromium the file reports
// itself skipped. Screenshots of both pages are left in the temporary directory, to look at.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);

/** Flags known to work headless as root on these machines, with no network beyond loopback. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const screenshot = (name: string) => path.join(tmpdir(), `marketplace-browser-${name}.png`);

/**
 * Text as a reader sees it: editors and Swagger UI put no-break and zero-width spaces in, and
 * the result pane wraps long lines (at spaces), so whitespace runs count as one space.
 */
const readable = (text: string) =>
  text
    .replace(/[\u200b\u200c\u200d\ufeff]/g, '')
    .replace(/\s+/g, ' ')
    .trim();

describe.skipIf(!hasChromium)('in a browser (Debian Chromium, offline)', () => {
  let app: TestApp;
  /** The same app with NODE_ENV=production, where GraphiQL once showed "Error fetching schema". */
  let production: TestApp;
  let context: BrowserContext;
  let userDataDir: string;
  /** Requests to anywhere but the app, blocked. */
  const offsite: string[] = [];
  /** Requests of the current page that failed or answered an error, with its console errors. */
  const problems: string[] = [];

  beforeAll(async () => {
    [app, production] = await Promise.all([startTestApp(), startTestApp({ env: { NODE_ENV: 'production' } })]);
    userDataDir = mkdtempSync(path.join(tmpdir(), 'mp-chromium-'));
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1400, height: 900 },
      // Starting Chromium on a loaded two-core machine can take a while.
      timeout: 60_000,
    });
    const origins = [new URL(app.base).origin, new URL(production.base).origin];
    const ours = (url: string) => origins.some((origin) => url.startsWith(origin));
    await context.route('**/*', async (route) => {
      const url = route.request().url();
      if (url.startsWith('data:') || url.startsWith('blob:') || origins.includes(new URL(url).origin)) return route.continue();
      offsite.push(url);
      return route.abort('blockedbyclient');
    });
    context.on('requestfailed', (request) => {
      if (ours(request.url())) problems.push(`failed ${request.method()} ${request.url()}: ${request.failure()?.errorText}`);
    });
    context.on('response', (response) => {
      if (ours(response.url()) && response.status() >= 400) problems.push(`${response.status()} ${response.url()}`);
    });
  });

  afterAll(async () => {
    await context?.close();
    if (userDataDir) rmSync(userDataDir, { recursive: true, force: true });
    await app?.close();
    await production?.close();
    // After both pages: nothing was fetched from anywhere else.
    expect(offsite).toEqual([]);
  });

  async function open(urlPath: string, target: TestApp = app): Promise<Page> {
    problems.length = 0;
    const page = await context.newPage();
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(`console on ${urlPath}: ${message.text()}`);
    });
    page.on('pageerror', (error) => problems.push(`page error on ${urlPath}: ${error.message}`));
    const response = await page.goto(target.base + urlPath, { waitUntil: 'load' });
    expect(response?.status(), `GET ${urlPath}`).toBe(200);
    return page;
  }

  /** Waits until the element's visible text contains every one of `parts`; returns that text. */
  async function waitForText(page: Page, selector: string, parts: string[], timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let text = '';
    while (Date.now() < deadline) {
      text = readable(await page.locator(selector).first().innerText().catch(() => ''));
      if (parts.every((part) => text.includes(readable(part)))) return text;
      await page.waitForTimeout(200);
    }
    throw new Error(`${selector} never showed ${JSON.stringify(parts)}; it shows:\n${text.slice(0, 2000)}`);
  }

  it('GraphiQL at /graphql runs the query it opens with, then a typed one, and shows the data', async () => {
    // What the page should show, asked directly.
    const featured = await app.graphql('{ products(featured: true, limit: 5, sortBy: POPULAR) { items { name } } }');
    const first: string = featured.body.data.products.items[0].name;
    const { rows } = await app.sql.query<{ slug: string; name: string }>(
      `SELECT slug, name FROM "Product" WHERE "isActive" AND NOT "isFeatured" ORDER BY id LIMIT 1`,
    );
    const typed = rows[0]!;

    const page = await open('/graphql');
    // Yoga's own page takes GraphiQL from unpkg.com: say so rather than time out on a blank page.
    expect(await page.content(), 'GraphiQL is to be served from node_modules (src/http/graphiql.ts), not a CDN').not.toContain('unpkg.com');
    await page.locator('.graphiql-container').first().waitFor({ state: 'visible' });
    // GraphiQL has loaded the schema (its own introspection request) and the default query.
    await waitForText(page, '.graphiql-query-editor', ['query FeaturedProducts']);

    const run = async () => {
      const answered = page.waitForResponse((r) => r.url() === `${app.base}/graphql` && r.request().method() === 'POST' && r.request().postData()?.includes('"query"') === true && !r.request().postData()!.includes('IntrospectionQuery'));
      await page.locator('.graphiql-execute-button').click();
      const response = await answered;
      expect(response.status()).toBe(200);
    };

    await run();
    await waitForText(page, '.graphiql-response', ['"products"', first]);
    await page.screenshot({ path: screenshot('graphiql') });

    // Type a query of our own over the default one, and run it.
    await page.locator('.graphiql-query-editor').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    // insertText types the whole string at once, without the editor's auto-closing of brackets.
    await page.keyboard.insertText(`query One { product(slug: "${typed.slug}") { name slug } }`);
    await waitForText(page, '.graphiql-query-editor', ['query One', typed.slug]);
    // GraphiQL reads the operation's name from the editor a moment after the edit; run before
    // that and it asks for the previous one ("Cannot infer operation FeaturedProducts"). The
    // tab's title is that name.
    await waitForText(page, '.graphiql-tab-active', ['One']);
    await run();
    const shown = await waitForText(page, '.graphiql-response', [typed.name, typed.slug]);
    expect(shown).not.toContain(first);
    await page.screenshot({ path: screenshot('graphiql-typed') });

    expect(problems).toEqual([]);
    expect(offsite).toEqual([]);
    await page.close();
  });

  it('GraphiQL at 1280 px: its schema loads spend no request limit, its Headers pane offers X-API-Key, its first query fits the editor', async () => {
    const remaining = async () => Number((await app.get('/api/categories')).headers.get('x-ratelimit-remaining'));
    const before = await remaining();
    const schemaLoads: string[] = [];
    const noteSchemaLoad = (request: Request) => {
      const body = request.postData() ?? '';
      if (request.url() === `${app.base}/graphiql/schema.json`) schemaLoads.push('file');
      else if (request.url().startsWith(`${app.base}/graphql`) && body.includes('__schema')) schemaLoads.push('graphql');
    };
    context.on('request', noteSchemaLoad);
    const page = await open('/graphql');
    await page.setViewportSize({ width: 1280, height: 800 });
    const loaded = async () => {
      await page.locator('.graphiql-container').first().waitFor({ state: 'visible' });
      await page.locator('button[aria-label="Show Documentation Explorer"]').click();
      await waitForText(page, '.graphiql-doc-explorer', ['Root Types', 'Query']);
    };
    await loaded();
    // Twice more, GraphiQL forgetting first what earlier tests typed, so that it opens with its first query.
    await page.addInitScript(() => localStorage.clear());
    for (let load = 0; load < 2; load++) {
      await page.reload({ waitUntil: 'load' });
      await loaded();
    }
    context.off('request', noteSchemaLoad);
    // A reload aborts what the page was still fetching (an editor's worker): not a problem of the page.
    const aborted = (problem: string) => problem.startsWith('failed GET') && problem.endsWith('net::ERR_ABORTED');
    const seen = problems.filter((problem) => !aborted(problem));
    problems.length = 0;
    problems.push(...seen);
    await waitForText(page, '.graphiql-query-editor', ['query FeaturedProducts']);
    expect(schemaLoads.filter((way) => way === 'file').length).toBeGreaterThanOrEqual(3);
    expect(schemaLoads.filter((way) => way === 'graphql')).toEqual([]);
    // Only the probe itself was counted (a window that started afresh meanwhile only adds room).
    expect(await remaining()).toBeGreaterThanOrEqual(before - 1);

    // The Headers pane is open with the key's header, and the first query says what to do with it.
    await waitForText(page, '.graphiql-editor-tool', ['{ "X-API-Key": "" }']);
    await waitForText(page, '.graphiql-query-editor', ['Headers below, as "X-API-Key"']);
    // Every line of the first query is within the editor's width, as the page opens (the docs
    // closed): nothing hides to the right.
    await page.locator('button[aria-label="Hide Documentation Explorer"]').click();
    await page.locator('.graphiql-doc-explorer').waitFor({ state: 'detached' });
    const overflow = await page.evaluate(() => {
      // The editor's visible width, less the toolbar (run, prettify, …) drawn over its right side.
      const editor = document.querySelector('.graphiql-query-editor .monaco-editor .overflow-guard') ?? document.querySelector('.graphiql-query-editor');
      const toolbar = document.querySelector('.graphiql-toolbar');
      const right = Math.min(editor!.getBoundingClientRect().right, toolbar?.getBoundingClientRect().left ?? Infinity);
      return [...document.querySelectorAll('.graphiql-query-editor .view-line > span')]
        .filter((line) => line.getBoundingClientRect().right > right)
        .map((line) => line.textContent);
    });
    await page.screenshot({ path: screenshot('graphiql-1280') });
    expect(overflow).toEqual([]);

    // A key typed into the Headers pane goes with the queries: `me` is the key's owner.
    const key = await createTestKey(app.url, { owner: 'graphiql-headers@example.com', scopes: ['read:products'] });
    const replace = async (selector: string, text: string) => {
      await page.locator(selector).first().click();
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.press('Delete');
      await page.keyboard.insertText(text);
    };
    await replace('.graphiql-editor-tool .monaco-editor[data-uri$="headers.json"]', JSON.stringify({ 'X-API-Key': key.key }));
    await replace('.graphiql-query-editor .monaco-editor', 'query Mine { me { email } }');
    await waitForText(page, '.graphiql-tab-active', ['Mine']);
    await page.locator('.graphiql-execute-button').click();
    await waitForText(page, '.graphiql-response', ['"email": "graphiql-headers@example.com"']);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('GraphiQL runs a subscription: the price written meanwhile appears in its result pane', async () => {
    const key = await createTestKey(app.url, { owner: 'graphiql-watcher@example.com', scopes: ['read:products', 'read:prices'] });
    const { rows } = await app.sql.query<{ id: string }>(`SELECT id FROM "Product" WHERE "isActive" ORDER BY id LIMIT 1`);
    const productId = rows[0]!.id;
    const page = await open('/graphql');
    // GraphiQL subscribes over a WebSocket (graphql-ws); what comes over it, as the page receives it.
    const frames: string[] = [];
    const sockets: string[] = [];
    page.on('websocket', (socket) => {
      sockets.push(socket.url());
      socket.on('framereceived', ({ payload }) => void frames.push(String(payload)));
    });
    // The key goes with GraphiQL's requests as a header would from its Headers pane.
    await page.setExtraHTTPHeaders({ 'x-api-key': key.key });
    await page.locator('.graphiql-container').first().waitFor({ state: 'visible' });
    // Whatever the editor holds (GraphiQL reopens the last query typed on this origin) is replaced.
    await page.locator('.graphiql-query-editor .view-lines').first().waitFor({ state: 'visible' });
    await page.locator('.graphiql-query-editor').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(`subscription Watch { productChanged(id: "${productId}") { id price { price } } }`);
    await waitForText(page, '.graphiql-tab-active', ['Watch']);
    await page.locator('.graphiql-execute-button').click();
    // Written until the open stream shows it (the stream may take a moment to open).
    let shown = '';
    for (let cents = 1; cents <= 40 && !shown.includes('777.'); cents++) {
      await app.sql.query(`UPDATE "Product" SET price = $2 WHERE id = $1`, [productId, `777.${String(cents).padStart(2, '0')}`]);
      await page.waitForTimeout(500);
      shown = readable(await page.locator('.graphiql-response').first().innerText().catch(() => ''));
    }
    expect(shown).toContain('"productChanged"');
    expect(shown).toMatch(/"price": 777\.\d+/);
    expect(sockets).toEqual([`${app.base.replace(/^http/, 'ws')}/graphql`]);
    expect(frames.map((frame) => JSON.parse(frame).type)).toEqual(expect.arrayContaining(['connection_ack', 'next']));
    await page.screenshot({ path: screenshot('graphiql-subscription') });
    expect(problems).toEqual([]);
    await page.close();
  });

  it('GraphiQL subscribes over its WebSocket with the key typed in its Headers pane', async () => {
    const key = await createTestKey(app.url, { owner: 'graphiql-watcher@example.com', scopes: ['read:products', 'read:prices'] });
    const { rows } = await app.sql.query<{ id: string }>(`SELECT id FROM "Product" WHERE "isActive" ORDER BY id OFFSET 1 LIMIT 1`);
    const productId = rows[0]!.id;
    const page = await open('/graphql');
    const sent: string[] = [];
    page.on('websocket', (socket) => socket.on('framesent', ({ payload }) => void sent.push(String(payload))));
    await page.locator('.graphiql-container').first().waitFor({ state: 'visible' });
    // Whatever the editor holds (the default query, or the last one typed on this origin).
    await waitForText(page, '.graphiql-query-editor', ['{']);
    // The Headers pane holds the key; nothing else sends it (no extra HTTP headers on this page).
    await page.locator('.graphiql-editor-tools button', { hasText: 'Headers' }).click();
    await page.locator('section.graphiql-editor-tool .graphiql-editor:not(.hidden)').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(JSON.stringify({ 'X-API-Key': key.key }));
    await page.locator('.graphiql-query-editor').click();
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(`subscription Typed { productChanged(id: "${productId}") { id price { price } } }`);
    await waitForText(page, '.graphiql-tab-active', ['Typed']);
    await page.locator('.graphiql-execute-button').click();
    let shown = '';
    for (let cents = 1; cents <= 40 && !shown.includes('555.'); cents++) {
      await app.sql.query(`UPDATE "Product" SET price = $2 WHERE id = $1`, [productId, `555.${String(cents).padStart(2, '0')}`]);
      await page.waitForTimeout(500);
      shown = readable(await page.locator('.graphiql-response').first().innerText().catch(() => ''));
    }
    expect(shown).toMatch(/"price": 555\.\d+/);
    // The key went with the operation (GraphiQL's extensions.headers), not in connection_init.
    const subscribe = sent.map((frame) => JSON.parse(frame)).find((message) => message.type === 'subscribe');
    expect(subscribe.payload.extensions.headers).toEqual({ 'X-API-Key': key.key });
    expect(problems).toEqual([]);
    // GraphiQL keeps its headers in the origin's storage: the next page starts without the key.
    await page.evaluate(() => localStorage.clear());
    await page.close();
  });

  it('GraphiQL in production loads the schema: its docs list the root fields and their arguments', async () => {
    const page = await open('/graphql', production);
    await page.locator('.graphiql-container').first().waitFor({ state: 'visible' });
    await waitForText(page, '.graphiql-query-editor', ['query FeaturedProducts']);
    await page.locator('button[aria-label="Show Documentation Explorer"]').click();
    await waitForText(page, '.graphiql-doc-explorer', ['Root Types', 'query', 'Query', 'mutation', 'Mutation']);
    await page.locator('.graphiql-doc-explorer a', { hasText: /^Query$/ }).first().click();
    await waitForText(page, '.graphiql-doc-explorer', ['productsConnection', 'product', 'slug: String!']);
    expect(readable(await page.locator('body').innerText())).not.toContain('Error fetching schema');
    await page.screenshot({ path: screenshot('graphiql-production-docs') });
    expect(problems).toEqual([]);
    expect(offsite).toEqual([]);
    await page.close();
  });

  it('/api/docs lists the REST endpoints', async () => {
    const page = await open('/api/docs');
    const endpoints = ['/api/products', '/api/products/{slug}', '/api/orders', '/api/v1/stock', '/api/v1/prices'];
    // In Swagger UI's own rendering (not the page's <noscript> list, which a browser with
    // JavaScript does not show): the script ran and read the OpenAPI document.
    await waitForText(page, '#swagger-ui', endpoints);
    expect(await page.locator('#swagger-ui .opblock').count()).toBeGreaterThanOrEqual(endpoints.length);
    await page.screenshot({ path: screenshot('api-docs'), fullPage: false });
    expect(problems).toEqual([]);
    expect(offsite).toEqual([]);
    await page.close();
  });

  it('/api/docs draws no padlock on the operations a key is optional for, and an open one where a key is needed', async () => {
    const page = await open('/api/docs');
    await waitForText(page, '#swagger-ui', ['/api/products', '/api/orders']);
    const padlocks = await page.locator('#swagger-ui .opblock').evaluateAll((blocks) =>
      Object.fromEntries(
        blocks.map((block) => [
          `${block.querySelector('.opblock-summary-method')?.textContent} ${block.querySelector('.opblock-summary-path')?.textContent?.replace(/\u200b/g, '')}`,
          block.querySelector('.authorization__btn')?.getAttribute('aria-label') ?? 'none',
        ]),
      ),
    );
    for (const op of ['GET /api/products', 'GET /api/products/{slug}', 'GET /api/categories', 'GET /api/suppliers/{id}', 'GET /api/products/{slug}/reviews']) {
      expect(padlocks[op], op).toBe('none');
    }
    for (const op of ['GET /api/orders', 'POST /api/orders', 'GET /api/me', 'GET /api/v1/stock', 'PATCH /api/v1/prices/{productId}', 'POST /api/webhooks']) {
      expect(padlocks[op], op).toBe('authorization button unlocked');
    }
    expect(problems).toEqual([]);
    await page.close();
  });
});
