import { csrfMatches, csrfTokenFor, readSession, type SessionView } from '../accounts/sessions.js';
import { membershipOf, type Membership } from '../auth/membership.js';
import type { ContextFactory, RequestContext } from '../context/context.js';
import { readLimited } from '../shared/request-body.js';
import { AppError, asAppError } from '../shared/errors.js';
import { Response } from '../shared/fetch-api.js';
import { looksLikeToken, randomToken } from '../shared/tokens.js';
import { page, type PageOptions } from './layout.js';
import { messagePage } from './pages/common.js';

// One request to the dashboard, a visit: who makes it (its session cookie, read by nothing but the
// dashboard: /api and /graphql accept API keys only, so a session is never a key), the context the
// services are called with, and how it is answered (pages, redirects, cookies, headers).
//
// Every POST is checked three ways before it changes anything: it must come from a page of this
// origin (Origin, or Referer when a browser sends no Origin), carry the visit's CSRF token (derived
// from the session token, or before sign-in from a pre-session cookie), and be a small form.

const SESSION_COOKIE = 'mp_session';
const PRESESSION_COOKIE = 'mp_presession';
/** Forms are a few hundred bytes; nothing a person types here comes near this. */
const FORM_MAX_BYTES = 16 * 1024;

export interface Visit {
  /** Who visits, for the services: the signed-in owner once the session is read, a visitor before. */
  ctx: RequestContext;
  request: Request;
  url: URL;
  /** The client's address, as the gate resolves it (through trusted proxies only). */
  ip: string;
  /** It came over HTTPS (directly, or as a trusted proxy says): its cookies are Secure. */
  secure: boolean;
  /** The request's cookies by name. */
  cookies: ReadonlyMap<string, string>;
  session: SessionView | null;
  /** The session cookie's token, when it stands for a live session. */
  sessionToken: string | null;
  /** The supplier the signed-in account acts for (SupplierMember), or null. */
  member: Membership | null;
  /** The secret the CSRF token derives from: the session token, or the pre-session cookie's. */
  csrfBasis: string;
  /** The CSRF token of this visit's forms. */
  csrfToken: string;
  /** Set-Cookie lines of the answer. */
  setCookies: string[];
  now: Date;
}

/** A visit of a signed-in account: what the member-only pages get. */
export interface SignedInVisit extends Visit {
  session: SessionView;
  sessionToken: string;
}

export const isSignedIn = (visit: Visit): visit is SignedInVisit => visit.session !== null && visit.sessionToken !== null;

export interface VisitDeps {
  contexts: ContextFactory;
  clientIp: (request: Request, server: unknown) => string;
  isHttps: (request: Request, server: unknown) => boolean;
}

export function createVisits(deps: VisitDeps) {
  const { contexts } = deps;
  const visitorContext = (requestId: string, ip: string, userAgent: string) => contexts.forDashboard({ requestId, ip, accountId: null, userAgent });

  return {
    /**
     * A request's visit: its session read, and its pre-session cookie set before sign-in. `requestId`
     * is the request's own (X-Request-ID), so that the visit's log lines and the answer agree.
     */
    async start(request: Request, url: URL, server: unknown, requestId: string): Promise<Visit> {
      const cookies = parseCookies(request.headers.get('cookie'));
      const ip = deps.clientIp(request, server);
      const userAgent = request.headers.get('user-agent') ?? '';
      const ctx = visitorContext(requestId, ip, userAgent);
      const visit: Visit = {
        ctx,
        request, url, ip, secure: deps.isHttps(request, server), cookies,
        // The context's clock: the visit's time and the services' are one.
        session: null, sessionToken: null, member: null, csrfBasis: '', csrfToken: '', setCookies: [], now: ctx.now(),
      };
      const token = cookies.get(SESSION_COOKIE);
      if (token) {
        visit.session = await readSession(visit.ctx, token);
        if (visit.session) visit.sessionToken = token;
        else endSessionCookie(visit);
      }
      if (visit.session) {
        visit.ctx = contexts.forDashboard({ requestId, ip, accountId: visit.session.accountId, sessionId: visit.session.sessionId, userAgent });
        // Every signed-in page needs it (the navigation shows supplier orders to members only); read
        // per request, so a membership the CLI removes holds on the next page.
        visit.member = await membershipOf(visit.ctx);
      }
      let presession = cookies.get(PRESESSION_COOKIE);
      if (!visit.session && !looksLikeToken(presession)) {
        presession = randomToken();
        setCookie(visit, PRESESSION_COOKIE, presession, { path: '/dashboard' });
      }
      visit.csrfBasis = visit.sessionToken ?? presession ?? '';
      visit.csrfToken = csrfTokenFor(visit.csrfBasis);
      return visit;
    },

    /** The visit of a request that could not be started (its session unread): a visitor's, for an error page. */
    unstarted(request: Request, url: URL, requestId: string): Visit {
      const ctx = visitorContext(requestId, '', '');
      return {
        ctx,
        request, url, ip: '', secure: false, cookies: new Map(),
        session: null, sessionToken: null, member: null, csrfBasis: '', csrfToken: '', setCookies: [], now: ctx.now(),
      };
    },
  };
}

/** The signed-in account's session as a new one: the cookie for its token (sign-in, a password change). */
export const startSessionCookie = (visit: Visit, token: string, maxAgeMs: number) => setCookie(visit, SESSION_COOKIE, token, { path: '/', maxAge: maxAgeMs / 1000 });

/** Drops the session cookie: signing out, a session that has ended, a password set for someone else. */
export const endSessionCookie = (visit: Visit) => expireCookie(visit, SESSION_COOKIE, '/');

/** After sign-in the session's token is the CSRF basis: the pre-session cookie is done. */
export const endPresessionCookie = (visit: Visit) => expireCookie(visit, PRESESSION_COOKIE, '/dashboard');

// ---- cookies ----

export interface CookieOptions {
  path: string;
  /** Seconds; none: the browser keeps it for its session. */
  maxAge?: number;
  /** Lax unless a cookie must never go with a request another site starts. */
  sameSite?: 'Lax' | 'Strict';
}

/** Sets a cookie on the answer: HttpOnly always, Secure when the visit came over HTTPS. */
export function setCookie(visit: Visit, name: string, value: string, { path, maxAge, sameSite = 'Lax' }: CookieOptions): void {
  visit.setCookies.push(
    [`${name}=${value}`, `Path=${path}`, 'HttpOnly', `SameSite=${sameSite}`, ...(maxAge !== undefined ? [`Max-Age=${Math.floor(maxAge)}`] : []), ...(visit.secure ? ['Secure'] : [])].join('; '),
  );
}

/** Tells the browser to drop a cookie (the same name and path it was set with). */
export const expireCookie = (visit: Visit, name: string, path: string, sameSite?: CookieOptions['sameSite']) => setCookie(visit, name, '', { path, maxAge: 0, sameSite });

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

// ---- reading the request ----

/** The origin this request was addressed to, as a browser on it would write it. */
export const ownOrigin = (visit: Visit) => `${visit.secure ? 'https' : 'http'}://${visit.url.host}`;

/** The POST's form, once it has passed the origin and CSRF checks; otherwise an error. */
export async function readForm(visit: Visit): Promise<URLSearchParams> {
  const origin = visit.request.headers.get('origin') ?? refererOrigin(visit.request.headers.get('referer'));
  if (origin !== ownOrigin(visit)) {
    throw new AppError('FORBIDDEN', 'This form was not sent from this site. Reload the page and try again.');
  }
  const type = (visit.request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'The dashboard accepts forms (application/x-www-form-urlencoded) only');
  }
  const form = new URLSearchParams(new TextDecoder().decode(await readLimited(visit.request, FORM_MAX_BYTES)));
  if (!csrfMatches(visit.csrfBasis, form.get('_csrf') ?? '')) {
    throw new AppError('FORBIDDEN', 'This form has expired. Reload the page and try again.');
  }
  return form;
}

function refererOrigin(referer: string | null): string | null {
  if (!referer) return null;
  try {
    return new URL(referer).origin;
  } catch {
    return null;
  }
}

/** The named fields of a form, as typed. */
export function pick<const K extends string>(form: URLSearchParams, names: readonly K[]): Record<K, string | undefined> {
  return Object.fromEntries(names.map((name) => [name, form.get(name) ?? undefined])) as Record<K, string | undefined>;
}

/** The page of a paged list the visit asks for (`?page=`): 1 unless a sensible number. */
export function pageNumberOf(visit: Visit): number {
  const requested = Number(visit.url.searchParams.get('page') ?? '1');
  return Number.isInteger(requested) && requested >= 1 && requested <= 10_000 ? requested : 1;
}

/** What each field of a refused form is refused for (a service's VALIDATION_ERROR details). */
export function fieldsOf(error: AppError): Record<string, string> {
  return Object.fromEntries(Object.entries(error.details ?? {}).flatMap(([name, problem]) => (typeof problem === 'string' ? [[name, problem]] : [])));
}

/** A form's refusal by a service (VALIDATION_ERROR): its message and each field's problem; anything else is thrown on. */
export function formRefusal(error: unknown): { message: string; fields: Record<string, string> } {
  const known = asAppError(error);
  if (known?.code !== 'VALIDATION_ERROR') throw error;
  return { message: known.message, fields: fieldsOf(known) };
}

// ---- answers ----

/** Fixed notices a redirect can ask for (`?done=…`): no text from the URL reaches the page. */
const NOTICES: Record<string, string> = {
  registered: 'Your account is ready and you are signed in: create your first key below.',
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

/** Nothing from other hosts, no inline script or style, never framed; pages are never cached. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // The set-password link carries its token in the URL: it must not leak to another site. Not
  // no-referrer: under it, a browser sends a form's Origin as "null", and the CSRF check needs it.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

export const HTML_TYPE = 'text/html; charset=utf-8';

function finish(visit: Visit, response: Response): Response {
  for (const line of visit.setCookies) response.headers.append('set-cookie', line);
  for (const [name, value] of Object.entries(SECURITY_HEADERS)) response.headers.set(name, value);
  return response;
}

/** A page in the dashboard's frame: the navigation for a signed-in visit, and the notice a redirect asked for. */
export function showPage(visit: Visit, status: number, options: Omit<PageOptions, 'viewer' | 'csrf'>, headers: Record<string, string> = {}): Response {
  const notice = options.notice ?? NOTICES[visit.url.searchParams.get('done') ?? ''] ?? null;
  const viewer = visit.session && { ...visit.session, supplierMember: visit.member !== null };
  const markup = page({ ...options, notice, viewer, csrf: visit.csrfToken });
  return finish(visit, new Response(visit.request.method === 'HEAD' ? null : markup.markup, { status, headers: { 'content-type': HTML_TYPE, ...headers } }));
}

/** 303 See Other: the answer to every form that changed something (Post/Redirect/Get), and to pages the visit may not see. */
export const redirectTo = (visit: Visit, location: string): Response => finish(visit, new Response(null, { status: 303, headers: { location } }));

const ERROR_TITLES: Partial<Record<AppError['code'], string>> = {
  NOT_FOUND: 'Page not found',
  FORBIDDEN: 'Not allowed',
  RATE_LIMIT_EXCEEDED: 'Too many attempts',
  SERVICE_UNAVAILABLE: 'Temporarily unavailable',
};

/** An error as a page with its status (and Retry-After when it has one). */
export function errorPage(visit: Visit, error: AppError): Response {
  const headers: Record<string, string> = error.retryAfter ? { 'retry-after': String(error.retryAfter) } : {};
  const body = messagePage(error.message, { href: '/dashboard', text: 'Go to the dashboard' });
  return showPage(visit, error.status, { title: ERROR_TITLES[error.code] ?? 'Something is wrong', body }, headers);
}
