import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';
import { Webhook } from 'standardwebhooks';
import { usageChart } from '../src/dashboard/chart.js';
import { accountIdOf, insertOrder, signedIn } from './helpers/dashboard.js';
import { startReceiver } from './helpers/receiver.js';

// The whole journey of a developer with only a browser, in Debian's Chromium: from the landing page
// to a working key and back to a revoked one. axe-core checks every page on the way (no serious or
// critical violation), and a screenshot of each is left in the temporary directory.
// Without /usr/bin/chromium the file reports itself skipped.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The dashboard's --accent and --bad: the primary action's background, and the one of an action that destroys. */
const PRIMARY = 'rgb(29, 78, 216)';
const DANGER = 'rgb(164, 0, 29)';
const background = (element: Locator) => element.evaluate((node) => getComputedStyle(node).backgroundColor);

const screenshot = (name: string) => path.join(tmpdir(), `marketplace-dashboard-${name}.png`);

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

describe.skipIf(!existsSync(CHROMIUM))('the developer dashboard in a browser (Debian Chromium)', () => {
  let app: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  const offsite: string[] = [];
  const problems: string[] = [];
  const checked: string[] = [];

  beforeAll(async () => {
    app = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout: 60_000 });
    // The pages' CSP allows scripts of their own origin only: axe is injected past it.
    context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: app.base });
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(app.base) || url.startsWith('data:')) return route.continue();
      offsite.push(url);
      return route.abort('blockedbyclient');
    });
  });

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await app?.close();
  });

  /** axe-core on the page as it stands: serious and critical violations fail the test. */
  async function audit(page: Page, name: string): Promise<void> {
    await page.addScriptTag({ path: AXE });
    const violations = await page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
      return (await axe.run()).violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
    });
    const grave = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(grave, `${name}: ${JSON.stringify(grave, null, 1)}`).toEqual([]);
    expect(await page.getAttribute('html', 'lang'), name).toBe('en');
    expect(await page.title(), name).not.toBe('');
    await page.screenshot({ path: screenshot(name), fullPage: true });
    // A phone's width and a laptop's: nothing scrolls the page sideways, the nav and the header
    // fit, and text is not drawn smaller than 11 px (a chart scaled down to fit).
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 900 });
      const fit = await page.evaluate(() => {
        const root = document.documentElement;
        // Inside a box that scrolls sideways on its own (a wide table, the chart) is not outside the page.
        const inScroller = (element: Element) => {
          for (let up = element.parentElement; up; up = up.parentElement) if (['auto', 'scroll'].includes(getComputedStyle(up).overflowX)) return true;
          return false;
        };
        const outside = [...document.querySelectorAll('body *')]
          .filter((element) => element.getBoundingClientRect().right > root.clientWidth + 0.5 && getComputedStyle(element).position !== 'absolute' && !inScroller(element))
          .map((element) => `${element.tagName.toLowerCase()}.${element.className}`);
        const tiny = [...document.querySelectorAll('svg text')]
          .filter((text) => text.getBoundingClientRect().height > 0 && text.getBoundingClientRect().height < 11)
          .map((text) => text.textContent);
        return { sideways: root.scrollWidth - root.clientWidth, outside: outside.slice(0, 5), tiny: tiny.slice(0, 5) };
      });
      expect(fit, `${name} at ${width} px`).toEqual({ sideways: 0, outside: [], tiny: [] });
      if (width === 390) await page.screenshot({ path: screenshot(`${name}-390`), fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 900 });
    checked.push(name);
  }

  it('goes from nothing to a working key and back to a revoked one', async () => {
    const page = await context.newPage();
    page.on('pageerror', (error) => problems.push(error.message));
    // A refused form is answered 400, 401 or 429 on purpose (Chromium logs those as failed
    // loads); what must never fail is a page's own stylesheet or script, or its script itself.
    page.on('console', (message) => message.type() === 'error' && !message.text().startsWith('Failed to load resource') && problems.push(message.text()));
    page.on('response', (response) => response.url().includes('/dashboard/assets/') && response.status() >= 400 && problems.push(`${response.status()} ${response.url()}`));
    page.on('requestfailed', (request) => problems.push(`failed ${request.url()}`));
    const email = `journey-${Date.now()}@example.com`;
    const password = 'a journey of a thousand miles';

    await page.goto(`${app.base}/`);
    await audit(page, 'landing');
    await page.getByRole('link', { name: 'Open the dashboard' }).click();
    await expect.poll(() => page.url()).toBe(`${app.base}/dashboard/sign-in`);
    await audit(page, 'sign-in');

    // Register
    await page.getByRole('link', { name: 'Register' }).click();
    await audit(page, 'register');
    await page.getByLabel('Your name').fill('Dana Developer');
    await page.getByLabel('Company (optional)').fill('Dana <Dev> SRL');
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    // A refused form: the error summary has the focus, and the field says what is wrong.
    await expect.poll(() => page.evaluate(() => document.activeElement?.className)).toBe('error-summary');
    await audit(page, 'register-error');
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Create account' }).click();
    // Registering signs in: the keys page, saying so.
    await page.getByText('Your account is ready and you are signed in').waitFor();
    expect(page.url()).toBe(`${app.base}/dashboard/keys?done=registered`);
    await audit(page, 'registered');

    // Out, and in again with the keyboard alone: type, Tab to the password, Enter submits.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out').waitFor();
    await page.getByLabel('E-mail address').focus();
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).name)).toBe('password');
    await page.keyboard.type(password);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.url()).toBe(`${app.base}/dashboard/keys`);
    await audit(page, 'keys-empty');

    // Create a key, copy it
    await page.getByLabel('Key name').fill('journey key');
    await page.getByLabel('read:orders').check();
    expect(await background(page.getByRole('button', { name: 'Create key' }))).toBe(PRIMARY);
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('Copy this key now').waitFor();
    await audit(page, 'new-key');
    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    const key = await page.evaluate(() => navigator.clipboard.readText());
    expect(key).toMatch(/^mk_[A-Za-z0-9_-]{43}$/);
    expect(await page.getByLabel(/API key/).inputValue()).toBe(key);
    // Created with a redirect: a reload creates nothing and shows the key no more.
    expect(page.url()).toMatch(/\/dashboard\/keys\/[^/]+\/created$/);
    await page.reload();
    await page.getByText('was shown once, right after it was created').waitFor();
    expect(await page.locator('main').innerText()).not.toContain(key);
    await audit(page, 'new-key-reloaded');

    // Use it
    for (let i = 0; i < 2; i++) expect((await fetch(`${app.base}/api/orders`, { headers: { 'x-api-key': key } })).status).toBe(200);

    // See the usage: the live count and the chart
    await page.getByRole('link', { name: "See this key's usage" }).click();
    expect(await page.locator('#window-usage').innerText()).toMatch(/^2 of 1000 requests used, 998 left/);
    expect(await page.locator('svg.chart title').textContent()).toContain('2 requests, 0 refused with 429');
    expect(await page.locator('svg.chart rect.req').count()).toBeGreaterThan(0);
    expect(await page.getByRole('row', { name: /Last used/ }).innerText()).not.toContain('Never');
    await audit(page, 'key-usage');

    // Revoke it, with confirmation
    // Revoking is no primary action: the link to it and its button are in the danger style (axe checks their contrast).
    expect(await background(page.getByRole('link', { name: 'Revoke this key…' }))).toBe(DANGER);
    await page.getByRole('link', { name: 'Revoke this key…' }).click();
    await audit(page, 'revoke-confirm');
    expect(await background(page.getByRole('button', { name: 'Revoke key' }))).toBe(DANGER);
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await page.getByText('The key is revoked').waitFor();
    await audit(page, 'keys-revoked');
    expect((await fetch(`${app.base}/api/orders`, { headers: { 'x-api-key': key } })).status).toBe(401);

    // The other pages
    await page.getByRole('link', { name: 'Addresses' }).click();
    await audit(page, 'addresses');
    await page.getByRole('link', { name: 'Add an address' }).click();
    await page.getByLabel('Full name').fill('Dana Developer');
    await page.getByLabel('Phone').fill('+40 721 000 000');
    await page.getByLabel('Street address').fill('Str. Lunga 1');
    await page.getByLabel('City').fill('Cluj-Napoca');
    await page.getByLabel('County').fill('Cluj');
    await page.getByLabel('Postal code').fill('400001');
    await audit(page, 'address-form');
    await page.getByRole('button', { name: 'Save address' }).click();
    await page.getByText('The address is saved.').waitFor();
    await page.getByRole('link', { name: 'Delete Str. Lunga 1' }).click();
    expect(await background(page.getByRole('button', { name: 'Delete address' }))).toBe(DANGER);
    await audit(page, 'address-delete-confirm');
    await page.getByRole('link', { name: 'Cancel' }).click();

    // Orders: one shipped, its history with who made each change and the notes, and its tracking
    const accountId = await accountIdOf(app.sql, email);
    const [supplier, other] = (await app.sql.query<{ id: string; companyName: string }>(`SELECT id, "companyName" FROM "Supplier" ORDER BY id LIMIT 2`)).rows;
    const ago = (m: number) => new Date(Date.now() - m * 60_000);
    const note = '<script>document.title = "owned"</script> Left the depot';
    const shipped = await insertOrder(app.sql, {
      buyerId: accountId,
      supplierId: supplier!.id,
      createdAt: ago(90),
      history: [
        { status: 'PENDING', actor: 'BUYER', accountId, at: ago(90) },
        { status: 'CONFIRMED', actor: 'SUPPLIER', note: 'Confirmed, thank you', at: ago(60) },
        { status: 'PROCESSING', actor: 'SUPPLIER', at: ago(45) },
        { status: 'SHIPPED', actor: 'SUPPLIER', note, at: ago(30) },
      ],
      tracking: { number: 'AWB-1001', carrier: 'Cargus', url: `${app.base}/dashboard/keys` },
    });
    await page.getByRole('link', { name: 'Orders', exact: true }).click();
    await audit(page, 'orders');
    await page.getByRole('link', { name: shipped.orderNumber }).click();
    await page.getByRole('heading', { name: `Order ${shipped.orderNumber}` }).waitFor();
    expect(await page.locator('main').innerText()).toContain('Status: Shipped since');
    const history = page.getByRole('table', { name: 'History' }).getByRole('row');
    expect(await history.count()).toBe(5);
    expect(await history.nth(2).innerText()).toMatch(/^Confirmed\t.*UTC\tThe supplier\tConfirmed, thank you$/);
    expect(await history.nth(4).innerText()).toMatch(/^Shipped\t.*UTC\tThe supplier\t<script>document\.title = "owned"<\/script> Left the depot$/);
    expect(await page.title()).toBe(`Order ${shipped.orderNumber} · Marketplace API`);
    expect(await page.getByRole('link', { name: 'Track the parcel at Cargus' }).getAttribute('href')).toBe(`${app.base}/dashboard/keys`);
    await audit(page, 'order');

    // Made a member of a supplier: its orders get a navigation entry, with the same history view
    const placed = await insertOrder(app.sql, { buyerId: accountId, supplierId: other!.id, createdAt: ago(5) });
    await app.sql.query(`INSERT INTO "SupplierMember" ("accountId", "supplierId") VALUES ($1, $2)`, [accountId, other!.id]);
    await page.reload();
    await page.getByRole('link', { name: 'Supplier orders', exact: true }).click();
    await page.getByRole('heading', { name: `Orders of ${other!.companyName}` }).waitFor();
    expect(await page.getByRole('row', { name: new RegExp(placed.orderNumber) }).innerText()).toContain('Pending');
    expect(await page.getByRole('link', { name: shipped.orderNumber }).count()).toBe(0);
    await audit(page, 'supplier-orders');
    await page.getByRole('link', { name: placed.orderNumber }).click();
    expect(await page.getByRole('table', { name: 'History' }).getByRole('row').nth(1).innerText()).toMatch(/^Pending\t.*UTC\tThe buyer/);
    expect(await page.locator('main').innerText()).toContain(`POST /api/supplier/orders/${placed.id}/status`);
    await audit(page, 'supplier-order');
    await page.getByRole('link', { name: 'Account' }).click();
    await audit(page, 'account');
    // The security log, from the account page: this journey's sign-in, keys and revocation.
    await page.getByRole('link', { name: 'security log' }).click();
    const log = page.getByRole('table', { name: /Security log/ });
    await log.waitFor();
    expect(await log.innerText()).toMatch(/API key revoked/);
    await audit(page, 'security-log');

    // Webhooks: an endpoint added (its secret shown once), sent a test event by a real receiver's
    // address, and its delivery log showing the delivery made
    const receiver = await startReceiver();
    try {
      await page.getByRole('link', { name: 'Webhooks' }).click();
      await page.getByRole('heading', { name: 'Add an endpoint' }).waitFor();
      await audit(page, 'webhooks');
      await page.getByLabel('Endpoint URL').fill(receiver.url);
      await page.getByRole('checkbox', { name: /order\.created/ }).check();
      await page.getByRole('checkbox', { name: /stock\.low/ }).check();
      await page.getByRole('button', { name: 'Add endpoint' }).click();
      const secret = await page.locator('#new-secret').inputValue();
      expect(secret).toMatch(/^whsec_/);
      await audit(page, 'new-webhook');
      await page.reload();
      await page.getByText('was shown once, right after the endpoint was added').waitFor();
      expect(await page.locator('main').innerText()).not.toContain(secret);
      await page.getByRole('link', { name: 'See this endpoint and send it a test event' }).click();
      await page.getByRole('button', { name: 'Send test event' }).click();
      await page.getByText('A test event is on its way').waitFor();
      // The worker sends it on its own time (on the outbox's NOTIFY, or its poll every 2 s).
      const [received] = await receiver.waitFor((r) => r.json?.type === 'webhook.test', 1, 10_000);
      expect(new Webhook(secret).verify(received!.body, received!.headers as Record<string, string>)).toMatchObject({ type: 'webhook.test' });
      for (let i = 0; i < 50 && !/Delivered/.test(await page.getByRole('table', { name: 'Deliveries' }).innerText()); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        await page.reload();
      }
      expect(await page.getByRole('table', { name: 'Deliveries' }).innerText()).toMatch(/webhook\.test[\s\S]*Delivered/);
      expect(await page.locator('main').innerText()).not.toContain(secret);
      expect(await background(page.getByRole('link', { name: 'Delete this endpoint…' }))).toBe(DANGER);
      await audit(page, 'webhook');
    } finally {
      await receiver.close();
    }

    // Sign out; a wrong password is refused; repeated guesses are throttled
    // Signing out destroys nothing: not the danger style.
    expect(await background(page.getByRole('button', { name: 'Sign out' }))).toBe(PRIMARY);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    await page.getByLabel('E-mail address').fill(email);
    await page.getByLabel('Password').fill('not my password at all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Wrong e-mail or password').waitFor();
    await audit(page, 'sign-in-wrong');
    let throttled = false;
    for (let i = 0; i < 30 && !throttled; i++) {
      await page.getByLabel('Password').fill(`guess number ${i}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForLoadState('load');
      throttled = /try again in \d+ s/i.test(await page.locator('main').innerText());
    }
    expect(throttled).toBe(true);
    await audit(page, 'sign-in-throttled');

    expect(problems).toEqual([]);
    expect(offsite).toEqual([]);
    expect(checked).toHaveLength(25);
  }, 180_000);

  it('creates one key for a create form double-clicked, or sent twice at once by the page', async () => {
    const { client, email } = await signedIn(app.base);
    const own = await browser.newContext();
    try {
      await own.addCookies([{ name: 'mp_session', value: client.cookies.get('mp_session')!, url: app.base }]);
      const page = await own.newPage();
      const keys = async () => (await app.sql.query(`SELECT k.id FROM "ApiKey" k JOIN "Account" a ON a.id = k."accountId" WHERE a.email = $1`, [email])).rows;

      await page.goto(`${app.base}/dashboard/keys`);
      await page.getByLabel('Key name').fill('double-clicked');
      await page.getByRole('checkbox', { name: /^read:products/ }).check();
      // However many times the browser sends it, one key, and its page.
      await page.getByRole('button', { name: 'Create key' }).dblclick();
      await expect.poll(() => page.url()).toMatch(/\/dashboard\/keys\/[^/]+\/created$/);
      await page.waitForLoadState('load');
      expect(await keys()).toHaveLength(1);

      // The same form sent twice at once from the page itself (its cookies, its Origin): what a retry does.
      await page.goto(`${app.base}/dashboard/keys`);
      await page.getByLabel('Key name').fill('sent twice');
      await page.getByRole('checkbox', { name: /^read:products/ }).check();
      const statuses = await page.evaluate(async () => {
        const form = document.querySelector<HTMLFormElement>('form[action="/dashboard/keys"]')!;
        const body = () => new URLSearchParams(new FormData(form) as unknown as Record<string, string>);
        const send = () => fetch(form.action, { method: 'POST', body: body(), redirect: 'manual' }).then((res) => res.type);
        return Promise.all([send(), send()]);
      });
      expect(statuses).toEqual(['opaqueredirect', 'opaqueredirect']);
      expect(await keys()).toHaveLength(2);
    } finally {
      await own.close();
    }
  }, 60_000);

  it("draws the usage chart's day labels whole and inside the chart, the last one too when the last hour is a midnight", async () => {
    const page = await context.newPage();
    // The week ending with the first hour of Wednesday 15 January 2025 (UTC): "Wed 15" is the chart's last label, at its right edge.
    const end = Date.UTC(2025, 0, 15);
    const hours = Array.from({ length: 168 }, (_, i) => ({ hour: new Date(end - (167 - i) * 3_600_000), requests: (i % 5) * 3, limited: i % 11 === 0 ? 1 : 0 }));
    await page.setContent(
      `<!doctype html><html lang="en"><head><title>Chart</title><link rel="stylesheet" href="${app.base}/dashboard/assets/dashboard.css"></head><body><main>${usageChart(hours).markup}</main></body></html>`,
      { waitUntil: 'load' },
    );
    const labels = await page.locator('svg.chart text').evaluateAll((nodes) =>
      (nodes as SVGTextElement[]).map((node) => {
        const box = node.getBBox();
        return { text: node.textContent ?? '', left: box.x, right: box.x + box.width, chartWidth: node.ownerSVGElement!.viewBox.baseVal.width };
      }),
    );
    const days = labels.filter((label) => /^[A-Z][a-z]{2} \d{1,2}$/.test(label.text));
    expect(days.map((day) => day.text)).toEqual(['Thu 9', 'Fri 10', 'Sat 11', 'Sun 12', 'Mon 13', 'Tue 14', 'Wed 15']);
    for (const label of labels) {
      expect(label.left, label.text).toBeGreaterThanOrEqual(0);
      expect(label.right, label.text).toBeLessThanOrEqual(label.chartWidth);
    }
    await page.screenshot({ path: screenshot('usage-chart'), fullPage: true });
    await page.close();
  }, 60_000);
});
