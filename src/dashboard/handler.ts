import crypto from 'node:crypto';
import { ACTIVE_KEYS_PER_ACCOUNT, createOwnKey, listOwnKeys, ownKey, revokeOwnKey } from '../accounts/api-keys.js';
import { changePassword, registerAccount, setPasswordWithToken, signIn } from '../accounts/credentials.js';
import { accountProfile, addressOf, createAddress, deleteAddress, listAddresses, updateProfile, updateAddress } from '../accounts/profile.js';
import { createSession, csrfMatches, csrfTokenFor, deleteEndedSessions, endSession, readSession, SESSION_ABSOLUTE_MS } from '../accounts/sessions.js';
import type { ContextFactory, RequestContext } from '../context/context.js';
import { membershipOf } from '../auth/membership.js';
import type { Prisma } from '../generated/prisma/client.js';
import { MAX_ENDPOINTS } from '../modules/webhooks/events.js';
import {
  countDeliveries,
  createEndpoint,
  deleteEndpoint,
  deliveryPage,
  enableEndpoint,
  endpointById,
  endpointInput,
  listDeliveries,
  listEndpoints,
  sendTestEvent,
} from '../modules/webhooks/webhooks.service.js';
import type { RateLimitStore } from '../ratelimit/store.js';
import { readLimited } from '../shared/request-body.js';
import { withoutTrailingSlash } from '../shared/paths.js';
import type { Logger } from '../runtime/logger.js';
import { AppError, asAppError } from '../shared/errors.js';
import { looksLikeToken, randomToken } from '../shared/tokens.js';
import { currentWindow, hourlyUsage } from '../usage/read.js';
import type { Plan } from '../context/actor.js';
import { serveAsset } from './assets.js';
import { ASSET_PATH, BRAND, page, type PageOptions } from './layout.js';
import * as pages from './pages.js';
import { Response } from '../shared/fetch-api.js';

// The developer dashboard at /dashboard: server-rendered pages and plain HTML forms (they work
// without JavaScript). A visit is recognised by its session cookie, which nothing but this
// handler reads: /api and /graphql accept API keys only, so a session is never a key.
//
// Every POST is checked three ways before it changes anything: it must come from a page of this
// origin (Origin, or Referer when a browser sends no Origin), carry the visit's CSRF token (derived
// from the session token, or before sign-in from a pre-session cookie), and be a small form.

export interface DashboardDeps {
  /** The one context factory: each visit's context (the signed-in owner, or a visitor). */
  contexts: ContextFactory;
  /** The rate-limit store the gate counts in: sign-in throttling and each key's live window. */
  store: RateLimitStore;
  /** Told of a key revoked here, so the gate stops it on the very next request. */
  onKeyRevoked: (keyId: string) => void;
  /** Writes what is still counted in memory (key usage, last use) before a key's page reads it. */
  flushCounts: () => Promise<void>;
  logger: Logger;
  clientIp: (request: Request, server: unknown) => string;
  isHttps: (request: Request, server: unknown) => boolean;
  now?: () => number;
}

const SESSION_COOKIE = 'mp_session';
const PRESESSION_COOKIE = 'mp_presession';
/** Forms are a few hundred bytes; nothing a person types here comes near this. */
const FORM_MAX_BYTES = 16 * 1024;
const ORDERS_PER_PAGE = 20;
const DELIVERIES_PER_PAGE = 20;
/** Ended sessions are deleted at a sign-in, at most this often per process. */
const SESSION_SWEEP_MS = 10 * 60_000;

/** What the handler knows of one request. */
interface Visit {
  /** Who visits, for the services: the signed-in owner once the session is read, a visitor before. */
  ctx: RequestContext;
  request: Request;
  url: URL;
  server: unknown;
  secure: boolean;
  session: Awaited<ReturnType<typeof readSession>>;
  sessionToken: string | null;
  /** The supplier the signed-in account acts for (SupplierMember), or null. */
  member: { supplierId: string; companyName: string } | null;
  /** The token the CSRF token is derived from: the session's, or the pre-session cookie's. */
  csrf: string;
  setCookies: string[];
  now: Date;
}

type Handler = (visit: Visit, params: string[]) => Promise<Response>;

interface DashboardRoute {
  method: 'GET' | 'POST';
  pattern: RegExp;
  /** guest: signed-in visitors go to their keys; member: others go to sign in. */
  who: 'guest' | 'member' | 'anyone';
  handle: Handler;
}

/** Fixed notices a redirect can ask for (`?done=…`): no text from the URL reaches the page. */
const NOTICES: Record<string, string> = {
  registered: 'Your account is ready. Sign in to create your first key.',
  'signed-out': 'You are signed out.',
  'password-set': 'Your password is set. Sign in with it.',
  'password-changed': 'Your password is changed, and every other session is signed out.',
  revoked: 'The key is revoked: requests with it are refused from now on.',
  'profile-saved': 'Your profile is saved.',
  'address-saved': 'The address is saved.',
  'address-deleted': 'The address is deleted.',
  'webhook-test-sent': 'A test event is on its way: its delivery is listed below (reload to follow it).',
  'webhook-enabled': 'The endpoint is enabled: new events are sent to it again.',
  'webhook-deleted': 'The endpoint is deleted: nothing more is sent to it.',
};

const ID = '([A-Za-z0-9_-]{1,64})';

export function createDashboard(deps: DashboardDeps) {
  const { contexts } = deps;
  const clock = deps.now ?? Date.now;
  let lastSweep = 0;

  const routes: DashboardRoute[] = [
    { method: 'GET', pattern: /^\/dashboard$/, who: 'anyone', handle: async (v) => redirect(v, v.session ? '/dashboard/keys' : '/dashboard/sign-in') },
    { method: 'GET', pattern: /^\/dashboard\/sign-in$/, who: 'guest', handle: async (v) => show(v, 200, { title: 'Sign in', body: pages.signInPage(csrfOf(v)) }) },
    { method: 'POST', pattern: /^\/dashboard\/sign-in$/, who: 'anyone', handle: postSignIn },
    { method: 'GET', pattern: /^\/dashboard\/register$/, who: 'guest', handle: async (v) => show(v, 200, { title: 'Create an account', body: pages.registerPage(csrfOf(v)) }) },
    { method: 'POST', pattern: /^\/dashboard\/register$/, who: 'guest', handle: postRegister },
    { method: 'POST', pattern: /^\/dashboard\/sign-out$/, who: 'anyone', handle: postSignOut },
    { method: 'GET', pattern: /^\/dashboard\/set-password$/, who: 'anyone', handle: getSetPassword },
    { method: 'POST', pattern: /^\/dashboard\/set-password$/, who: 'anyone', handle: postSetPassword },
    { method: 'GET', pattern: /^\/dashboard\/keys$/, who: 'member', handle: (v) => showKeys(v, 200) },
    { method: 'POST', pattern: /^\/dashboard\/keys$/, who: 'member', handle: postKey },
    { method: 'GET', pattern: new RegExp(`^/dashboard/keys/${ID}$`), who: 'member', handle: getKey },
    { method: 'GET', pattern: new RegExp(`^/dashboard/keys/${ID}/revoke$`), who: 'member', handle: getRevoke },
    { method: 'POST', pattern: new RegExp(`^/dashboard/keys/${ID}/revoke$`), who: 'member', handle: postRevoke },
    { method: 'GET', pattern: /^\/dashboard\/webhooks$/, who: 'member', handle: (v) => showWebhooks(v, 200) },
    { method: 'POST', pattern: /^\/dashboard\/webhooks$/, who: 'member', handle: postWebhook },
    { method: 'GET', pattern: new RegExp(`^/dashboard/webhooks/${ID}$`), who: 'member', handle: getWebhook },
    { method: 'POST', pattern: new RegExp(`^/dashboard/webhooks/${ID}/test$`), who: 'member', handle: postWebhookTest },
    { method: 'POST', pattern: new RegExp(`^/dashboard/webhooks/${ID}/enable$`), who: 'member', handle: postWebhookEnable },
    { method: 'GET', pattern: new RegExp(`^/dashboard/webhooks/${ID}/delete$`), who: 'member', handle: getDeleteWebhook },
    { method: 'POST', pattern: new RegExp(`^/dashboard/webhooks/${ID}/delete$`), who: 'member', handle: postDeleteWebhook },
    { method: 'GET', pattern: /^\/dashboard\/account$/, who: 'member', handle: (v) => showAccount(v, 200) },
    { method: 'POST', pattern: /^\/dashboard\/account$/, who: 'member', handle: postProfile },
    { method: 'POST', pattern: /^\/dashboard\/account\/password$/, who: 'member', handle: postPassword },
    { method: 'GET', pattern: /^\/dashboard\/addresses$/, who: 'member', handle: getAddresses },
    { method: 'GET', pattern: /^\/dashboard\/addresses\/new$/, who: 'member', handle: async (v) => showAddressForm(v, 200, '/dashboard/addresses', {}) },
    { method: 'POST', pattern: /^\/dashboard\/addresses$/, who: 'member', handle: postAddress },
    { method: 'GET', pattern: new RegExp(`^/dashboard/addresses/${ID}$`), who: 'member', handle: getAddress },
    { method: 'POST', pattern: new RegExp(`^/dashboard/addresses/${ID}$`), who: 'member', handle: postAddress },
    { method: 'GET', pattern: new RegExp(`^/dashboard/addresses/${ID}/delete$`), who: 'member', handle: getDeleteAddress },
    { method: 'POST', pattern: new RegExp(`^/dashboard/addresses/${ID}/delete$`), who: 'member', handle: postDeleteAddress },
    { method: 'GET', pattern: /^\/dashboard\/orders$/, who: 'member', handle: getOrders },
    { method: 'GET', pattern: new RegExp(`^/dashboard/orders/${ID}$`), who: 'member', handle: getOrder },
    { method: 'GET', pattern: /^\/dashboard\/supplier-orders$/, who: 'member', handle: getSupplierOrders },
    { method: 'GET', pattern: new RegExp(`^/dashboard/supplier-orders/${ID}$`), who: 'member', handle: getSupplierOrder },
  ];

  // ---- the visit: cookies, session, CSRF ----

  async function begin(request: Request, url: URL, server: unknown): Promise<Visit> {
    const jar = parseCookies(request.headers.get('cookie'));
    const ip = deps.clientIp(request, server);
    const requestId = crypto.randomUUID();
    const visit: Visit = {
      ctx: contexts.forDashboard({ requestId, ip, accountId: null }),
      request, url, server, secure: deps.isHttps(request, server), session: null, sessionToken: null, member: null, csrf: '', setCookies: [], now: new Date(clock()),
    };
    const token = jar.get(SESSION_COOKIE);
    if (token) {
      visit.session = await readSession(visit.ctx, token, visit.now);
      if (visit.session) visit.sessionToken = token;
      else visit.setCookies.push(cookie(visit, SESSION_COOKIE, '', { path: '/', maxAge: 0 }));
    }
    if (visit.session) {
      visit.ctx = contexts.forDashboard({ requestId, ip, accountId: visit.session.accountId });
      // Every signed-in page needs it (the navigation shows supplier orders to members only); read
      // per request, so a membership the CLI removes holds on the next page.
      visit.member = await membershipOf(visit.ctx);
    }
    let pre = jar.get(PRESESSION_COOKIE);
    if (!visit.session && !looksLikeToken(pre)) {
      pre = randomToken();
      visit.setCookies.push(cookie(visit, PRESESSION_COOKIE, pre, { path: '/dashboard' }));
    }
    visit.csrf = visit.sessionToken ?? pre ?? '';
    return visit;
  }

  const csrfOf = (v: Visit) => csrfTokenFor(v.csrf);

  /** The origin this request was addressed to, as a browser on it would write it. */
  const ownOrigin = (v: Visit) => `${v.secure ? 'https' : 'http'}://${v.url.host}`;

  /** The POST's form, once it has passed the origin and CSRF checks; otherwise an error. */
  async function formOf(v: Visit): Promise<URLSearchParams> {
    const origin = v.request.headers.get('origin') ?? refererOrigin(v.request.headers.get('referer'));
    if (origin !== ownOrigin(v)) {
      throw new AppError('FORBIDDEN', 'This form was not sent from this site. Reload the page and try again.');
    }
    const type = (v.request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/x-www-form-urlencoded') {
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The dashboard accepts forms (application/x-www-form-urlencoded) only');
    }
    const form = new URLSearchParams(new TextDecoder().decode(await readLimited(v.request, FORM_MAX_BYTES)));
    if (!csrfMatches(v.csrf, form.get('_csrf') ?? '')) {
      throw new AppError('FORBIDDEN', 'This form has expired. Reload the page and try again.');
    }
    return form;
  }

  // ---- responses ----

  function finish(v: Visit, response: Response): Response {
    for (const c of v.setCookies) response.headers.append('set-cookie', c);
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.headers.set(name, value);
    return response;
  }

  function show(v: Visit, status: number, options: Omit<PageOptions, 'viewer' | 'csrf'>, headers: Record<string, string> = {}): Response {
    const notice = options.notice ?? NOTICES[v.url.searchParams.get('done') ?? ''] ?? null;
    const markup = page({ ...options, notice, viewer: v.session && { ...v.session, supplierMember: v.member !== null }, csrf: csrfOf(v) });
    return finish(v, new Response(v.request.method === 'HEAD' ? null : markup.markup, { status, headers: { 'content-type': 'text/html; charset=utf-8', ...headers } }));
  }

  const redirect = async (v: Visit, location: string): Promise<Response> => finish(v, new Response(null, { status: 303, headers: { location } }));

  function errorPage(v: Visit, error: AppError): Response {
    const titles: Partial<Record<AppError['code'], string>> = {
      NOT_FOUND: 'Page not found',
      FORBIDDEN: 'Not allowed',
      RATE_LIMIT_EXCEEDED: 'Too many attempts',
      SERVICE_UNAVAILABLE: 'Temporarily unavailable',
    };
    const headers: Record<string, string> = error.retryAfter ? { 'retry-after': String(error.retryAfter) } : {};
    return show(v, error.status, { title: titles[error.code] ?? 'Something is wrong', body: pages.messagePage(error.message, { href: '/dashboard', text: 'Go to the dashboard' }) }, headers);
  }

  const signedInAs = (v: Visit) => v.session!;

  // ---- sign-in, registration, passwords ----

  async function postSignIn(v: Visit): Promise<Response> {
    const form = await formOf(v);
    const email = form.get('email') ?? '';
    try {
      const { accountId } = await signIn(v.ctx, deps.store, { email, password: form.get('password') ?? '', ip: deps.clientIp(v.request, v.server) });
      // A new token at every sign-in (never one the browser brought: no session fixation).
      if (v.sessionToken) await endSession(v.ctx, v.sessionToken);
      const { token } = await createSession(v.ctx, accountId, v.now);
      v.setCookies.push(cookie(v, SESSION_COOKIE, token, { path: '/', maxAge: SESSION_ABSOLUTE_MS / 1000 }));
      v.setCookies.push(cookie(v, PRESESSION_COOKIE, '', { path: '/dashboard', maxAge: 0 }));
      if (clock() - lastSweep >= SESSION_SWEEP_MS) {
        lastSweep = clock();
        await deleteEndedSessions(v.ctx, v.now).catch((error: unknown) => deps.logger.warn({ err: error }, 'deleting ended sessions failed'));
      }
      return redirect(v, '/dashboard/keys');
    } catch (error) {
      const known = asAppError(error);
      if (!known || (known.code !== 'UNAUTHORIZED' && known.code !== 'RATE_LIMIT_EXCEEDED')) throw error;
      const headers: Record<string, string> = known.retryAfter ? { 'retry-after': String(known.retryAfter) } : {};
      return show(v, known.status, { title: 'Sign in', body: pages.signInPage(csrfOf(v), { email, message: known.message }) }, headers);
    }
  }

  async function postRegister(v: Visit): Promise<Response> {
    const form = await formOf(v);
    const values = pick(form, ['name', 'companyName', 'email']);
    try {
      await registerAccount(v.ctx, { email: values.email ?? '', password: form.get('password') ?? '', name: values.name ?? '', companyName: values.companyName || undefined });
      return redirect(v, '/dashboard/sign-in?done=registered');
    } catch (error) {
      const refused = formRefusal(error);
      return show(v, 400, { title: 'Create an account', body: pages.registerPage(csrfOf(v), values, refused.fields) });
    }
  }

  async function postSignOut(v: Visit): Promise<Response> {
    await formOf(v);
    if (v.sessionToken) await endSession(v.ctx, v.sessionToken);
    v.setCookies.push(cookie(v, SESSION_COOKIE, '', { path: '/', maxAge: 0 }));
    return redirect(v, '/dashboard/sign-in?done=signed-out');
  }

  async function getSetPassword(v: Visit): Promise<Response> {
    const token = v.url.searchParams.get('token') ?? '';
    return show(v, 200, { title: 'Set your password', body: pages.setPasswordPage(csrfOf(v), token) });
  }

  async function postSetPassword(v: Visit): Promise<Response> {
    const form = await formOf(v);
    const token = form.get('token') ?? '';
    try {
      await setPasswordWithToken(v.ctx, token, form.get('password') ?? '');
    } catch (error) {
      const known = asAppError(error);
      if (!known) throw error;
      if (known.code === 'VALIDATION_ERROR') return show(v, 400, { title: 'Set your password', body: pages.setPasswordPage(csrfOf(v), token, fieldsOf(known), known.message) });
      return show(v, known.status, { title: 'Set your password', body: pages.messagePage(known.message, { href: '/dashboard/sign-in', text: 'Sign in' }) });
    }
    // Whoever was signed in on this browser is not the one who just set a password.
    if (v.sessionToken) await endSession(v.ctx, v.sessionToken);
    v.setCookies.push(cookie(v, SESSION_COOKIE, '', { path: '/', maxAge: 0 }));
    return redirect(v, '/dashboard/sign-in?done=password-set');
  }

  // ---- keys ----

  async function showKeys(v: Visit, status: number, form?: { values: pages.KeyFormValues; errors: Record<string, string>; message?: string }): Promise<Response> {
    const keys = await listOwnKeys(v.ctx, signedInAs(v).accountId);
    const body = pages.keysPage(csrfOf(v), { keys, plan: signedInAs(v).plan.toLowerCase(), now: v.now, activeMax: ACTIVE_KEYS_PER_ACCOUNT, ...form });
    return show(v, status, { title: 'API keys', current: 'keys', body });
  }

  async function postKey(v: Visit): Promise<Response> {
    const form = await formOf(v);
    const expires = form.get('expires') ?? '';
    const values = { name: form.get('name') ?? '', expires, scopes: form.getAll('scopes') };
    try {
      const { key, record } = await createOwnKey(v.ctx, signedInAs(v).accountId, {
        name: values.name,
        scopes: values.scopes,
        expiresInDays: expires === '' ? null : /^\d{1,4}$/.test(expires) ? Number(expires) : NaN,
      }, v.now);
      // The key is in this page only: never in a URL, never cached.
      return show(v, 201, { title: 'Your new API key', current: 'keys', body: pages.newKeyPage(key, record) });
    } catch (error) {
      const refused = formRefusal(error);
      return showKeys(v, 400, { values, errors: refused.fields, message: Object.keys(refused.fields).length ? undefined : refused.message });
    }
  }

  async function keyOrNotFound(v: Visit, id: string) {
    const key = await ownKey(v.ctx, signedInAs(v).accountId, id);
    if (!key) throw new AppError('NOT_FOUND', 'There is no such key among yours.');
    return key;
  }

  async function getKey(v: Visit, [id]: string[]): Promise<Response> {
    // The counts of this instance that are still in memory (usage, last use) are written first; a
    // failed write leaves them for the next one, and the page shows what is stored.
    await deps.flushCounts().catch((error: unknown) => deps.logger.warn({ err: error }, 'writing key counts before a key page failed'));
    const key = await keyOrNotFound(v, id!);
    // The view carries the key's effective limit and window: the same bucket and numbers as the gate's.
    const limits = { id: key.id, plan: key.plan.toUpperCase() as Plan, rateLimit: key.limit, rateWindowSeconds: key.window };
    const [hours, window] = await Promise.all([hourlyUsage(v.ctx, key.id, { now: v.now }), currentWindow(deps.store, limits)]);
    return show(v, 200, { title: `Key “${key.name || 'Unnamed key'}”`, current: 'keys', body: pages.keyPage({ key, now: v.now, window, hours }) });
  }

  async function getRevoke(v: Visit, [id]: string[]): Promise<Response> {
    const key = await keyOrNotFound(v, id!);
    return show(v, 200, { title: 'Revoke key', current: 'keys', body: pages.revokePage(csrfOf(v), key) });
  }

  async function postRevoke(v: Visit, [id]: string[]): Promise<Response> {
    await formOf(v);
    const revoked = await revokeOwnKey(v.ctx, signedInAs(v).accountId, id!, v.now);
    if (!revoked) throw new AppError('NOT_FOUND', 'There is no such key among yours.');
    deps.onKeyRevoked(revoked.id);
    return redirect(v, '/dashboard/keys?done=revoked');
  }

  // ---- webhooks ----
  // The account's endpoints, as /api/webhooks manages them: the dashboard registers as the account
  // itself (no key, so no scopes), and offers members-only event types (stock.low) to members only.

  const NO_ENDPOINT = 'There is no such webhook endpoint among yours.';

  async function showWebhooks(v: Visit, status: number, form?: { values: pages.WebhookFormValues; errors: Record<string, string>; message?: string }): Promise<Response> {
    const endpoints = await listEndpoints(v.ctx, signedInAs(v).accountId);
    const body = pages.webhooksPage(csrfOf(v), { endpoints, member: v.member !== null, requireHttps: v.ctx.webhookPolicy.requireHttps, max: MAX_ENDPOINTS, ...form });
    return show(v, status, { title: 'Webhooks', current: 'webhooks', body });
  }

  async function postWebhook(v: Visit): Promise<Response> {
    const form = await formOf(v);
    const values = { url: form.get('url') ?? '', events: form.getAll('events'), description: form.get('description') ?? '' };
    const parsed = endpointInput.safeParse({ url: values.url, events: values.events, ...(values.description.trim() ? { description: values.description } : {}) });
    const errors: Record<string, string> = {};
    if (!parsed.success) for (const issue of parsed.error.issues) errors[String(issue.path[0] ?? 'url')] ??= issue.message;
    // Who may hear what (stock.low: members only) is the service's rule: its refusal comes back below.
    if (!parsed.success) return showWebhooks(v, 400, { values, errors });
    try {
      const endpoint = await createEndpoint(v.ctx, { accountId: signedInAs(v).accountId, scopes: null, member: v.member !== null }, parsed.data);
      // The secret is in this page only: never in a URL, never cached, never shown again.
      return show(v, 201, { title: 'Your new webhook endpoint', current: 'webhooks', body: pages.newWebhookPage(endpoint) });
    } catch (error) {
      const known = asAppError(error);
      if (known?.code === 'VALIDATION_ERROR') {
        const fields = fieldsOf(known);
        return showWebhooks(v, 400, { values, errors: fields, message: Object.keys(fields).length ? undefined : known.message });
      }
      if (known?.code === 'CONFLICT') return showWebhooks(v, 409, { values, errors: {}, message: known.message });
      throw error;
    }
  }

  async function webhookOrNotFound(v: Visit, id: string) {
    const endpoint = await endpointById(v.ctx, signedInAs(v).accountId, id);
    if (!endpoint) throw new AppError('NOT_FOUND', NO_ENDPOINT);
    return endpoint;
  }

  async function getWebhook(v: Visit, [id]: string[]): Promise<Response> {
    const accountId = signedInAs(v).accountId;
    const endpoint = await webhookOrNotFound(v, id!);
    const number = pageNumber(v);
    const found = await deliveryPage(v.ctx, accountId, { id: endpoint.id, page: number, limit: DELIVERIES_PER_PAGE });
    // Deleted in between: as absent as one that never existed.
    if (!found) throw new AppError('NOT_FOUND', NO_ENDPOINT);
    const [deliveries, total] = await Promise.all([listDeliveries(v.ctx, found), countDeliveries(v.ctx, found)]);
    const body = pages.webhookPage(csrfOf(v), { endpoint, deliveries, page: { number, total, perPage: DELIVERIES_PER_PAGE } });
    return show(v, 200, { title: 'Webhook endpoint', current: 'webhooks', body });
  }

  async function postWebhookTest(v: Visit, [id]: string[]): Promise<Response> {
    await formOf(v);
    if (!(await sendTestEvent(v.ctx, signedInAs(v).accountId, id!))) throw new AppError('NOT_FOUND', NO_ENDPOINT);
    return redirect(v, `/dashboard/webhooks/${id}?done=webhook-test-sent`);
  }

  async function postWebhookEnable(v: Visit, [id]: string[]): Promise<Response> {
    await formOf(v);
    if (!(await enableEndpoint(v.ctx, signedInAs(v).accountId, id!))) throw new AppError('NOT_FOUND', NO_ENDPOINT);
    return redirect(v, `/dashboard/webhooks/${id}?done=webhook-enabled`);
  }

  async function getDeleteWebhook(v: Visit, [id]: string[]): Promise<Response> {
    const endpoint = await webhookOrNotFound(v, id!);
    return show(v, 200, { title: 'Delete webhook endpoint', current: 'webhooks', body: pages.deleteWebhookPage(csrfOf(v), endpoint) });
  }

  async function postDeleteWebhook(v: Visit, [id]: string[]): Promise<Response> {
    await formOf(v);
    if (!(await deleteEndpoint(v.ctx, signedInAs(v).accountId, id!))) throw new AppError('NOT_FOUND', NO_ENDPOINT);
    return redirect(v, '/dashboard/webhooks?done=webhook-deleted');
  }

  // ---- account ----

  async function showAccount(v: Visit, status: number, extra: Partial<Parameters<typeof pages.accountPage>[1]> = {}, headers: Record<string, string> = {}): Promise<Response> {
    const profile = await accountProfile(v.ctx, signedInAs(v).accountId);
    // Sessions are deleted with their account: a session always has one.
    if (!profile) throw new Error('signed-in account not found');
    return show(v, status, { title: 'Account', current: 'account', body: pages.accountPage(csrfOf(v), { profile: { ...profile, plan: profile.plan.toLowerCase() }, ...extra }) }, headers);
  }

  async function postProfile(v: Visit): Promise<Response> {
    const form = await formOf(v);
    const values = pick(form, ['name', 'companyName', 'phone']);
    try {
      await updateProfile(v.ctx, signedInAs(v).accountId, values);
      return redirect(v, '/dashboard/account?done=profile-saved');
    } catch (error) {
      const refused = formRefusal(error);
      return showAccount(v, 400, { values, errors: refused.fields });
    }
  }

  async function postPassword(v: Visit): Promise<Response> {
    const form = await formOf(v);
    const accountId = signedInAs(v).accountId;
    try {
      await changePassword(v.ctx, deps.store, accountId, { current: form.get('current') ?? '', next: form.get('next') ?? '', ip: deps.clientIp(v.request, v.server) }, v.now);
    } catch (error) {
      const known = asAppError(error);
      if (known?.code === 'VALIDATION_ERROR') return showAccount(v, 400, { passwordErrors: fieldsOf(known) });
      if (known?.code !== 'RATE_LIMIT_EXCEEDED') throw error;
      return showAccount(v, 429, { passwordErrors: { current: known.message } }, { 'retry-after': String(known.retryAfter) });
    }
    // Every session ended with the change, this one too: this browser gets a new one.
    const { token } = await createSession(v.ctx, accountId, v.now);
    v.setCookies.push(cookie(v, SESSION_COOKIE, token, { path: '/', maxAge: SESSION_ABSOLUTE_MS / 1000 }));
    return redirect(v, '/dashboard/account?done=password-changed');
  }

  // ---- addresses ----

  const ADDRESS_FIELDS = ['label', 'fullName', 'companyName', 'phone', 'email', 'address', 'city', 'county', 'postalCode', 'isDefault'] as const;

  async function getAddresses(v: Visit): Promise<Response> {
    const addresses = await listAddresses(v.ctx, signedInAs(v).accountId);
    return show(v, 200, { title: 'Addresses', current: 'addresses', body: pages.addressesPage(addresses) });
  }

  function showAddressForm(v: Visit, status: number, action: string, values: Record<string, string | undefined>, errors: Record<string, string> = {}): Response {
    const title = action === '/dashboard/addresses' ? 'Add an address' : 'Edit address';
    return show(v, status, { title, current: 'addresses', body: pages.addressFormPage(csrfOf(v), action, values, errors) });
  }

  async function addressOrNotFound(v: Visit, id: string) {
    const address = await addressOf(v.ctx, signedInAs(v).accountId, id);
    if (!address) throw new AppError('NOT_FOUND', 'There is no such address among yours.');
    return address;
  }

  async function getAddress(v: Visit, [id]: string[]): Promise<Response> {
    const a = await addressOrNotFound(v, id!);
    const values = Object.fromEntries(ADDRESS_FIELDS.map((f) => [f, f === 'isDefault' ? String(a.isDefault) : (a[f] ?? '')]));
    return showAddressForm(v, 200, `/dashboard/addresses/${a.id}`, values);
  }

  async function postAddress(v: Visit, [id]: string[]): Promise<Response> {
    const form = await formOf(v);
    const values = pick(form, ADDRESS_FIELDS);
    const input = { ...values, fullName: values.fullName ?? '', phone: values.phone ?? '', address: values.address ?? '', city: values.city ?? '', county: values.county ?? '', postalCode: values.postalCode ?? '', isDefault: values.isDefault === 'true' };
    const accountId = signedInAs(v).accountId;
    try {
      if (id === undefined) await createAddress(v.ctx, accountId, input);
      else if (!(await updateAddress(v.ctx, accountId, id, input))) throw new AppError('NOT_FOUND', 'There is no such address among yours.');
      return redirect(v, '/dashboard/addresses?done=address-saved');
    } catch (error) {
      const refused = formRefusal(error);
      return showAddressForm(v, 400, id === undefined ? '/dashboard/addresses' : `/dashboard/addresses/${id}`, values, { ...refused.fields, ...(Object.keys(refused.fields).length ? {} : { address: refused.message }) });
    }
  }

  async function getDeleteAddress(v: Visit, [id]: string[]): Promise<Response> {
    const address = await addressOrNotFound(v, id!);
    return show(v, 200, { title: 'Delete address', current: 'addresses', body: pages.deleteAddressPage(csrfOf(v), address) });
  }

  async function postDeleteAddress(v: Visit, [id]: string[]): Promise<Response> {
    await formOf(v);
    if (!(await deleteAddress(v.ctx, signedInAs(v).accountId, id!))) throw new AppError('NOT_FOUND', 'There is no such address among yours.');
    return redirect(v, '/dashboard/addresses?done=address-deleted');
  }

  // ---- orders ----
  // Read-only: orders move through the API (a buyer's cancel, a supplier member's status change).
  // A buyer sees their own orders; a member of a supplier also sees the supplier's. Each page is
  // one statement for its orders, history included (relationJoins: LATERAL joins, no N+1).

  function pageNumber(v: Visit): number {
    const requested = Number(v.url.searchParams.get('page') ?? '1');
    return Number.isInteger(requested) && requested >= 1 && requested <= 10_000 ? requested : 1;
  }

  const partyOf = (side: pages.OrderSide, o: { supplier: { companyName: string }; buyer: { name: string; companyName: string | null } }) =>
    side === 'buyer' ? o.supplier.companyName : [o.buyer.companyName, o.buyer.name].filter(Boolean).join(' · ') || 'A buyer';

  const ORDER_PARTIES = { supplier: { select: { companyName: true } }, buyer: { select: { name: true, companyName: true } } } satisfies Prisma.OrderSelect;

  async function orderList(v: Visit, side: pages.OrderSide, where: Prisma.OrderWhereInput) {
    const number = pageNumber(v);
    const rows = await v.ctx.prisma.order.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      skip: (number - 1) * ORDERS_PER_PAGE,
      take: ORDERS_PER_PAGE + 1,
      select: {
        ...ORDER_PARTIES,
        orderNumber: true,
        status: true,
        total: true,
        currency: true,
        createdAt: true,
        _count: { select: { items: true } },
        // Its last entry only: when it took its present status.
        history: { orderBy: [{ at: 'desc' }, { id: 'desc' }], take: 1, select: { at: true } },
      },
    });
    const orders = rows.slice(0, ORDERS_PER_PAGE).map((o) => ({
      orderNumber: o.orderNumber,
      status: o.status,
      total: o.total.toFixed(2),
      currency: o.currency,
      createdAt: o.createdAt,
      party: partyOf(side, o),
      items: o._count.items,
      since: o.history[0]?.at ?? null,
    }));
    return { orders, page: { number, hasNext: rows.length > ORDERS_PER_PAGE } };
  }

  /** One order of `where`'s, found by its number; anyone else's is as absent as one that does not exist. */
  async function orderOrNotFound(v: Visit, side: pages.OrderSide, where: Prisma.OrderWhereInput, orderNumber: string): Promise<pages.OrderView> {
    const o = await v.ctx.prisma.order.findFirst({
      where: { ...where, orderNumber },
      select: {
        id: true, orderNumber: true, status: true, currency: true, createdAt: true,
        subtotal: true, discount: true, shippingCost: true, tax: true, total: true,
        trackingNumber: true, trackingCarrier: true, trackingUrl: true,
        ...ORDER_PARTIES,
        items: { orderBy: { id: 'asc' }, select: { quantity: true, price: true, total: true, product: { select: { name: true, sku: true } } } },
        history: { orderBy: [{ at: 'asc' }, { id: 'asc' }], select: { status: true, actor: true, accountId: true, note: true, at: true } },
      },
    });
    if (!o) throw new AppError('NOT_FOUND', side === 'buyer' ? 'There is no such order among yours.' : "There is no such order among your supplier's.");
    return {
      ...o,
      subtotal: o.subtotal.toFixed(2),
      discount: o.discount.toFixed(2),
      shippingCost: o.shippingCost.toFixed(2),
      tax: o.tax.toFixed(2),
      total: o.total.toFixed(2),
      party: partyOf(side, o),
      items: o.items.map((i) => ({ name: i.product.name, sku: i.product.sku, quantity: i.quantity, price: i.price.toFixed(2), total: i.total.toFixed(2) })),
    };
  }

  /**
   * The supplier the signed-in account acts for; 403 otherwise, before any order is looked up (as
   * the API answers a non-member's key). The navigation shows its entry to members only.
   */
  function supplierOf(v: Visit) {
    if (!v.member) throw new AppError('FORBIDDEN', "Your account does not act for a supplier, so it has no supplier's orders to show. An operator makes an account a supplier's member (keys command line: member add).");
    return v.member;
  }

  async function getOrders(v: Visit): Promise<Response> {
    const { orders, page } = await orderList(v, 'buyer', { buyerId: signedInAs(v).accountId });
    return show(v, 200, { title: 'Orders', current: 'orders', body: pages.ordersPage('buyer', orders, page) });
  }

  async function getOrder(v: Visit, [orderNumber]: string[]): Promise<Response> {
    const order = await orderOrNotFound(v, 'buyer', { buyerId: signedInAs(v).accountId }, orderNumber!);
    return show(v, 200, { title: `Order ${order.orderNumber}`, current: 'orders', body: pages.orderPage('buyer', order, signedInAs(v).accountId) });
  }

  async function getSupplierOrders(v: Visit): Promise<Response> {
    const member = supplierOf(v);
    const { orders, page } = await orderList(v, 'supplier', { supplierId: member.supplierId });
    return show(v, 200, { title: `Orders of ${member.companyName}`, current: 'supplier-orders', body: pages.ordersPage('supplier', orders, page, member.companyName) });
  }

  async function getSupplierOrder(v: Visit, [orderNumber]: string[]): Promise<Response> {
    const member = supplierOf(v);
    const order = await orderOrNotFound(v, 'supplier', { supplierId: member.supplierId }, orderNumber!);
    return show(v, 200, { title: `Order ${order.orderNumber}`, current: 'supplier-orders', body: pages.orderPage('supplier', order, signedInAs(v).accountId) });
  }

  // ---- dispatch ----

  async function dispatch(v: Visit): Promise<Response> {
    const path = withoutTrailingSlash(v.url.pathname);
    const method = v.request.method === 'HEAD' ? 'GET' : v.request.method;
    const matching = routes.map((route) => ({ route, match: route.pattern.exec(path) })).filter((m) => m.match);
    if (!matching.length) throw new AppError('NOT_FOUND', 'There is no dashboard page at this address.');
    const found = matching.find((m) => m.route.method === method);
    if (!found) {
      const allow = [...new Set(matching.map((m) => m.route.method))].join(', ');
      return show(v, 405, { title: 'Not allowed', body: pages.messagePage(`This address answers ${allow} only.`) }, { allow });
    }
    if (found.route.who === 'member' && !v.session) return redirect(v, '/dashboard/sign-in');
    if (found.route.who === 'guest' && v.session) return redirect(v, '/dashboard/keys');
    return found.route.handle(v, found.match!.slice(1));
  }

  return {
    /** Everything under /dashboard. */
    async handle(request: Request, url: URL, server: unknown): Promise<Response> {
      if (url.pathname.startsWith(`${ASSET_PATH}/`) && (request.method === 'GET' || request.method === 'HEAD')) {
        const asset = serveAsset(url.pathname.slice(ASSET_PATH.length + 1), request);
        if (asset) return asset;
      }
      let visit: Visit | undefined;
      try {
        visit = await begin(request, url, server);
        return await dispatch(visit);
      } catch (error) {
        const v = visit ?? { ctx: contexts.forDashboard({ requestId: crypto.randomUUID(), ip: '', accountId: null }), request, url, server, secure: false, session: null, sessionToken: null, member: null, csrf: '', setCookies: [], now: new Date(clock()) };
        const known = asAppError(error);
        if (known) return errorPage(v, known);
        deps.logger.error({ err: error, path: url.pathname }, 'dashboard request failed');
        return errorPage(v, new AppError('INTERNAL_ERROR', 'Something went wrong on our side. Please try again.'));
      }
    },

    /** The small landing page at /. */
    landing(request: Request): Response {
      const markup = page({ title: BRAND, body: pages.landingPage() });
      return new Response(request.method === 'HEAD' ? null : markup.markup, { headers: { 'content-type': 'text/html; charset=utf-8', ...SECURITY_HEADERS } });
    },
  };
}

/** Nothing from other hosts, no inline script or style, never framed; pages are never cached. */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // The set-password link carries its token in the URL: it must not leak to another site. Not
  // no-referrer: under it, a browser sends a form's Origin as "null", and the CSRF check needs it.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

function parseCookies(header: string | null): Map<string, string> {
  const jar = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    // The first of a repeated name wins, as browsers send the most specific path first.
    if (!jar.has(name)) jar.set(name, part.slice(eq + 1).trim());
  }
  return jar;
}

/** A Set-Cookie value: HttpOnly and SameSite=Lax always, Secure when the visit came over HTTPS. */
function cookie(v: Pick<Visit, 'secure'>, name: string, value: string, opts: { path: string; maxAge?: number }): string {
  return [`${name}=${value}`, `Path=${opts.path}`, 'HttpOnly', 'SameSite=Lax', ...(opts.maxAge !== undefined ? [`Max-Age=${Math.floor(opts.maxAge)}`] : []), ...(v.secure ? ['Secure'] : [])].join('; ');
}

function refererOrigin(referer: string | null): string | null {
  if (!referer) return null;
  try {
    return new URL(referer).origin;
  } catch {
    return null;
  }
}

/** What each field of a refused form is refused for (a service's VALIDATION_ERROR details). */
function fieldsOf(error: AppError): Record<string, string> {
  return Object.fromEntries(Object.entries(error.details ?? {}).flatMap(([name, problem]) => (typeof problem === 'string' ? [[name, problem]] : [])));
}

/** A form's refusal by a service (VALIDATION_ERROR): its message and each field's problem; anything else is thrown on. */
function formRefusal(error: unknown): { message: string; fields: Record<string, string> } {
  const known = asAppError(error);
  if (known?.code !== 'VALIDATION_ERROR') throw error;
  return { message: known.message, fields: fieldsOf(known) };
}

/** The named fields of a form, as typed. */
function pick<const K extends string>(form: URLSearchParams, names: readonly K[]): Record<K, string | undefined> {
  return Object.fromEntries(names.map((n) => [n, form.get(n) ?? undefined])) as Record<K, string | undefined>;
}

export type Dashboard = ReturnType<typeof createDashboard>;
