import type pg from 'pg';

// A browser, as far as the dashboard can tell: it keeps cookies, sends the Origin of the page it
// is on with each form, and fills in the form's CSRF token and one-time form token (a create
// form's) from the page it last loaded.

export interface Page {
  status: number;
  headers: Headers;
  /** Where a redirect pointed (303), or null. */
  location: string | null;
  html: string;
}

export interface DashboardClient {
  cookies: Map<string, string>;
  /** The Set-Cookie lines of the last response. */
  lastSetCookies: string[];
  get(path: string, headers?: Record<string, string>): Promise<Page>;
  /**
   * Posts a form as the browser would from the page it last loaded (its _csrf and the last create
   * form's _form_token, this origin); `formToken` another one, null none.
   */
  post(path: string, fields: Record<string, string | string[]>, opts?: { headers?: Record<string, string>; csrf?: string | null; formToken?: string | null }): Promise<Page>;
  /** Follows a redirect answer with a GET, as the browser would. */
  follow(page: Page): Promise<Page>;
  csrf: string;
  /** The one-time token of the last create form loaded. */
  formToken: string;
}

export function dashboardClient(base: string, ip = randomIp()): DashboardClient {
  const cookies = new Map<string, string>();
  const client: DashboardClient = {
    cookies,
    lastSetCookies: [],
    csrf: '',
    formToken: '',
    async get(path, headers = {}) {
      return remember(await send(path, { method: 'GET', headers }));
    },
    async post(path, fields, opts = {}) {
      const body = new URLSearchParams();
      const csrf = opts.csrf === undefined ? client.csrf : opts.csrf;
      if (csrf !== null) body.append('_csrf', csrf);
      const formToken = opts.formToken === undefined ? client.formToken || null : opts.formToken;
      if (formToken !== null) body.append('_form_token', formToken);
      for (const [name, value] of Object.entries(fields)) for (const v of [value].flat()) body.append(name, v);
      return remember(
        await send(path, {
          method: 'POST',
          headers: { origin: base, 'content-type': 'application/x-www-form-urlencoded', ...opts.headers },
          body: body.toString(),
        }),
      );
    },
    async follow(page) {
      if (!page.location) throw new Error(`not a redirect: ${page.status}`);
      return client.get(page.location);
    },
  };

  async function send(path: string, init: { method: string; headers: Record<string, string>; body?: string }): Promise<Page> {
    const headers = new Headers(init.headers);
    if (!headers.has('x-forwarded-for')) headers.set('x-forwarded-for', ip);
    const jar = [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (jar && !headers.has('cookie')) headers.set('cookie', jar);
    const res = await fetch(base + path, { ...init, headers, redirect: 'manual' });
    client.lastSetCookies = res.headers.getSetCookie();
    for (const line of client.lastSetCookies) {
      const [pair, ...attributes] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (attributes.some((a) => /^\s*max-age=0\s*$/i.test(a))) cookies.delete(name);
      else cookies.set(name, value);
    }
    return { status: res.status, headers: res.headers, location: res.headers.get('location'), html: await res.text() };
  }

  function remember(page: Page): Page {
    const token = /name="_csrf" value="([^"]*)"/.exec(page.html)?.[1];
    if (token) client.csrf = token;
    const formToken = formTokenIn(page.html);
    if (formToken) client.formToken = formToken;
    return page;
  }
  return client;
}

let ipSeq = 0;
/** Each client its own address, so sign-in throttling by IP is per test unless a test shares one. */
export function randomIp(): string {
  const n = ++ipSeq + Math.floor(Math.random() * 1000) * 1000;
  return `10.${200 + ((n >> 16) & 31)}.${(n >> 8) & 255}.${n & 255}`;
}

/** The page's text content, roughly as read: tags dropped, entities decoded, whitespace collapsed. */
export function textOf(html: string): string {
  return html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** The one-time token of the create form on the page. */
export const formTokenIn = (html: string) => /name="_form_token" value="([^"]*)"/.exec(html)?.[1];

export const keyIn = (html: string) => /value="(mk_[A-Za-z0-9_-]{43})"/.exec(html)?.[1];

/** Registers and signs in a new account (from its own client address unless `ip` is given); returns the client, signed in. */
export async function signedIn(base: string, opts: { email?: string; password?: string; name?: string; ip?: string } = {}): Promise<{ client: DashboardClient; email: string; password: string }> {
  const email = opts.email ?? `dev-${Date.now()}-${Math.floor(Math.random() * 1e6)}@example.com`;
  const password = opts.password ?? 'correct horse battery staple';
  const client = dashboardClient(base, opts.ip);
  await client.get('/dashboard/register');
  const registered = await client.post('/dashboard/register', { name: opts.name ?? 'Dev Eloper', email, password });
  // Registering signs the new account in.
  if (registered.status !== 303 || registered.location !== '/dashboard/keys?done=registered') {
    throw new Error(`register answered ${registered.status} ${registered.location ?? ''}: ${textOf(registered.html).slice(0, 300)}`);
  }
  await client.get('/dashboard/keys');
  return { client, email, password };
}

export interface OrderEventRow {
  status: string;
  actor: 'BUYER' | 'SUPPLIER';
  accountId?: string | null;
  note?: string | null;
  at: Date;
}

export interface InsertedOrder {
  id: string;
  orderNumber: string;
}

let orderSeq = 0;

/**
 * An order written with SQL, as the API's lifecycle would have left it: `history` oldest first
 * (default: its placing, PENDING by the buyer); its status is the last entry's. No items.
 */
export async function insertOrder(
  sql: pg.Pool,
  o: { buyerId: string; supplierId: string; total?: string; createdAt?: Date; history?: OrderEventRow[]; tracking?: { number: string; carrier: string; url?: string | null } },
): Promise<InsertedOrder> {
  const createdAt = o.createdAt ?? new Date();
  const history = o.history ?? [{ status: 'PENDING', actor: 'BUYER', accountId: o.buyerId, at: createdAt }];
  const n = ++orderSeq;
  const id = `testorder${process.pid}x${n}x${Math.floor(Math.random() * 1e9)}`;
  const orderNumber = `ORD-${createdAt.getTime()}-T${n}${Math.random().toString(36).slice(2, 6).toUpperCase()}`;
  const total = o.total ?? '100.00';
  await sql.query(
    `INSERT INTO "Order" (id, "orderNumber", status, subtotal, total, "buyerId", "supplierId", "createdAt", "updatedAt", "trackingNumber", "trackingCarrier", "trackingUrl")
     VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [id, orderNumber, history[history.length - 1]!.status, total, o.buyerId, o.supplierId, createdAt, history[history.length - 1]!.at, o.tracking?.number ?? null, o.tracking?.carrier ?? null, o.tracking?.url ?? null],
  );
  for (const [i, e] of history.entries()) {
    await sql.query(`INSERT INTO "OrderEvent" (id, "orderId", status, actor, "accountId", note, at) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
      `${id}e${i}`,
      id,
      e.status,
      e.actor,
      e.accountId ?? null,
      e.note ?? null,
      e.at,
    ]);
  }
  return { id, orderNumber };
}

/** The id of the account with this e-mail. */
export async function accountIdOf(sql: pg.Pool, email: string): Promise<string> {
  const { rows } = await sql.query<{ id: string }>(`SELECT id FROM "Account" WHERE email = $1`, [email.toLowerCase()]);
  if (!rows[0]) throw new Error(`no account ${email}`);
  return rows[0].id;
}
