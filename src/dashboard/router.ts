import { randomUUID } from 'node:crypto';
import type { ContextFactory } from '../context/context.js';
import type { RateLimitStore } from '../ratelimit/store.js';
import { withoutTrailingSlash } from '../shared/paths.js';
import { countFormSubmission, type FormLimit } from '../accounts/credentials.js';
import { AppError, asAppError } from '../shared/errors.js';
import { Response } from '../shared/fetch-api.js';
import { accountHandlers } from './account.js';
import * as addresses from './addresses.js';
import { serveAsset, serveFavicon } from './assets.js';
import { authHandlers } from './auth.js';
import { keyHandlers } from './keys.js';
import { getSecurityLog } from './security.js';
import { ASSET_PATH, BRAND, page } from './layout.js';
import * as orders from './orders.js';
import { landingPage, messagePage } from './pages/common.js';
import { createVisits, errorPage, HTML_TYPE, isSignedIn, redirectTo, SECURITY_HEADERS, showPage, type SignedInVisit, type Visit } from './visit.js';
import * as webhooks from './webhooks.js';

// The developer dashboard at /dashboard: server-rendered pages and plain HTML forms (they work
// without JavaScript). Its handlers read the form, call the same services as the API with the
// visit's context, and render what they return; every form that changes something is answered
// with a redirect. This file is its route table: each path, who may see it, and its handler.

export interface DashboardDeps {
  /** The one context factory: each visit's context (the signed-in owner, or a visitor). */
  contexts: ContextFactory;
  /** The rate-limit store the gate counts in: sign-in throttling and each key's live window. */
  store: RateLimitStore;
  /** Told of a key revoked here, so the gate stops it on the very next request. */
  onKeyRevoked: (keyId: string) => void;
  /** Writes what is still counted in memory (key usage, last use) before a page reads it. */
  flushCounts: () => Promise<void>;
  /** Where people reach the service (config PUBLIC_URL), for commands the pages print; unset: the visit's own origin. */
  publicUrl?: string;
  clientIp: (request: Request, server: unknown) => string;
  isHttps: (request: Request, server: unknown) => boolean;
}

type Handler<V extends Visit> = (visit: V, params: string[]) => Promise<Response>;

/**
 * guest: signed-in visitors go to their keys; member: others go to sign in. `throttled`: the
 * form limit (LIMITS.forms) a form is counted against before it is read: perIp for a form that
 * makes or unlocks something (an account, a password, a key, an endpoint), counted per client address;
 * savesPerAccount for an edit of the signed-in account's own data (its profile, its addresses),
 * counted per account, so for members only, once the session is known.
 */
type DashboardRoute = { method: 'GET' | 'POST'; pattern: RegExp } & (
  | { who: 'member'; throttled?: FormLimit; handle: Handler<SignedInVisit> }
  | { who: 'guest' | 'anyone'; throttled?: 'perIp'; handle: Handler<Visit> }
);

const ID = '([A-Za-z0-9_-]{1,64})';
const path = (pattern: string) => new RegExp(`^/dashboard${pattern}$`);

export function createDashboard(deps: DashboardDeps) {
  const visits = createVisits({ contexts: deps.contexts, clientIp: deps.clientIp, isHttps: deps.isHttps });
  const auth = authHandlers({ store: deps.store });
  const keys = keyHandlers({ store: deps.store, onKeyRevoked: deps.onKeyRevoked, flushCounts: deps.flushCounts, publicUrl: deps.publicUrl });
  const account = accountHandlers({ store: deps.store });

  const routes: DashboardRoute[] = [
    { method: 'GET', pattern: path(''), who: 'anyone', handle: async (visit) => redirectTo(visit, visit.session ? '/dashboard/keys' : '/dashboard/sign-in') },
    { method: 'GET', pattern: path('/sign-in'), who: 'guest', handle: auth.getSignIn },
    { method: 'POST', pattern: path('/sign-in'), who: 'anyone', handle: auth.postSignIn },
    { method: 'GET', pattern: path('/register'), who: 'guest', handle: auth.getRegister },
    { method: 'POST', pattern: path('/register'), who: 'guest', throttled: 'perIp', handle: auth.postRegister },
    { method: 'POST', pattern: path('/sign-out'), who: 'anyone', handle: auth.postSignOut },
    { method: 'GET', pattern: path('/set-password'), who: 'anyone', handle: auth.getSetPassword },
    { method: 'POST', pattern: path('/set-password'), who: 'anyone', throttled: 'perIp', handle: auth.postSetPassword },
    { method: 'GET', pattern: path('/keys'), who: 'member', handle: keys.getKeys },
    { method: 'POST', pattern: path('/keys'), who: 'member', throttled: 'perIp', handle: keys.postKey },
    { method: 'GET', pattern: path(`/keys/${ID}`), who: 'member', handle: keys.getKey },
    { method: 'GET', pattern: path(`/keys/${ID}/created`), who: 'member', handle: keys.getCreatedKey },
    { method: 'GET', pattern: path(`/keys/${ID}/revoke`), who: 'member', handle: keys.getRevoke },
    { method: 'POST', pattern: path(`/keys/${ID}/revoke`), who: 'member', handle: keys.postRevoke },
    { method: 'GET', pattern: path('/webhooks'), who: 'member', handle: webhooks.getWebhooks },
    { method: 'POST', pattern: path('/webhooks'), who: 'member', throttled: 'perIp', handle: webhooks.postWebhook },
    { method: 'GET', pattern: path(`/webhooks/${ID}`), who: 'member', handle: webhooks.getWebhook },
    { method: 'GET', pattern: path(`/webhooks/${ID}/created`), who: 'member', handle: webhooks.getCreatedWebhook },
    { method: 'POST', pattern: path(`/webhooks/${ID}/test`), who: 'member', handle: webhooks.postWebhookTest },
    { method: 'POST', pattern: path(`/webhooks/${ID}/enable`), who: 'member', handle: webhooks.postWebhookEnable },
    { method: 'GET', pattern: path(`/webhooks/${ID}/delete`), who: 'member', handle: webhooks.getDeleteWebhook },
    { method: 'POST', pattern: path(`/webhooks/${ID}/delete`), who: 'member', handle: webhooks.postDeleteWebhook },
    { method: 'GET', pattern: path('/account'), who: 'member', handle: account.getAccount },
    { method: 'POST', pattern: path('/account'), who: 'member', throttled: 'savesPerAccount', handle: account.postProfile },
    { method: 'POST', pattern: path('/account/password'), who: 'member', throttled: 'perIp', handle: account.postPassword },
    { method: 'GET', pattern: path('/security'), who: 'member', handle: getSecurityLog },
    { method: 'GET', pattern: path('/addresses'), who: 'member', handle: addresses.getAddresses },
    { method: 'GET', pattern: path('/addresses/new'), who: 'member', handle: addresses.getNewAddress },
    { method: 'POST', pattern: path('/addresses'), who: 'member', throttled: 'savesPerAccount', handle: addresses.postAddress },
    { method: 'GET', pattern: path(`/addresses/${ID}`), who: 'member', handle: addresses.getAddress },
    { method: 'POST', pattern: path(`/addresses/${ID}`), who: 'member', throttled: 'savesPerAccount', handle: addresses.postAddress },
    { method: 'GET', pattern: path(`/addresses/${ID}/delete`), who: 'member', handle: addresses.getDeleteAddress },
    { method: 'POST', pattern: path(`/addresses/${ID}/delete`), who: 'member', throttled: 'savesPerAccount', handle: addresses.postDeleteAddress },
    { method: 'GET', pattern: path('/orders'), who: 'member', handle: orders.getOrders },
    { method: 'GET', pattern: path(`/orders/${ID}`), who: 'member', handle: orders.getOrder },
    { method: 'GET', pattern: path('/supplier-orders'), who: 'member', handle: orders.getSupplierOrders },
    { method: 'GET', pattern: path(`/supplier-orders/${ID}`), who: 'member', handle: orders.getSupplierOrder },
  ];

  async function dispatch(visit: Visit): Promise<Response> {
    const requested = withoutTrailingSlash(visit.url.pathname);
    const method = visit.request.method === 'HEAD' ? 'GET' : visit.request.method;
    const matching = routes.map((route) => ({ route, match: route.pattern.exec(requested) })).filter((m) => m.match);
    if (!matching.length) throw new AppError('NOT_FOUND', 'There is no dashboard page at this address.');
    const found = matching.find((m) => m.route.method === method);
    if (!found) {
      const allow = [...new Set(matching.map((m) => m.route.method))].join(', ');
      return showPage(visit, 405, { title: 'Not allowed', body: messagePage(`This address answers ${allow} only.`) }, { allow });
    }
    const { route, match } = found;
    const params = match!.slice(1);
    if (route.throttled === 'perIp') await countFormSubmission(deps.store, 'perIp', visit.ip, visit.now);
    if (route.who === 'member') {
      if (!isSignedIn(visit)) return redirectTo(visit, '/dashboard/sign-in');
      if (route.throttled === 'savesPerAccount') await countFormSubmission(deps.store, 'savesPerAccount', visit.session.accountId, visit.now);
      return route.handle(visit, params);
    }
    if (route.who === 'guest' && visit.session) return redirectTo(visit, '/dashboard/keys');
    return route.handle(visit, params);
  }

  return {
    /**
     * Everything under /dashboard. `state` is the request's (the server context the route table
     * hands on): its requestId is the one X-Request-ID answers with.
     */
    async handle(request: Request, url: URL, state: { requestId?: string }): Promise<Response> {
      if (url.pathname.startsWith(`${ASSET_PATH}/`) && (request.method === 'GET' || request.method === 'HEAD')) {
        const asset = serveAsset(url.pathname.slice(ASSET_PATH.length + 1), request);
        if (asset) return asset;
      }
      // Set by the first stage of every request (src/pipeline/observe.ts); a fresh one otherwise.
      const requestId = state.requestId ?? randomUUID();
      let visit: Visit | undefined;
      try {
        visit = await visits.start(request, url, state, requestId);
        return await dispatch(visit);
      } catch (error) {
        const answered = visit ?? visits.unstarted(request, url, requestId);
        const known = asAppError(error);
        if (known) return errorPage(answered, known);
        answered.ctx.logger.error({ err: error, path: url.pathname }, 'dashboard request failed');
        return errorPage(answered, new AppError('INTERNAL_ERROR', 'Something went wrong on our side. Please try again.'));
      }
    },

    /** /favicon.ico: the dashboard's icon, for every page of the site that links none. */
    favicon: (request: Request): Response => serveFavicon(request),

    /** The small landing page at /. */
    landing(request: Request): Response {
      const markup = page({ title: BRAND, body: landingPage() });
      return new Response(request.method === 'HEAD' ? null : markup.markup, { headers: { 'content-type': HTML_TYPE, ...SECURITY_HEADERS } });
    },
  };
}

export type Dashboard = ReturnType<typeof createDashboard>;
