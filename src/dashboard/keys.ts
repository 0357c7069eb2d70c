import { ACTIVE_KEYS_PER_ACCOUNT, createOwnKey, listOwnKeys, ownKey, revokeOwnKey } from '../accounts/api-keys.js';
import type { Plan } from '../context/actor.js';
import type { RateLimitStore } from '../ratelimit/store.js';
import { listEndpoints } from '../domain/webhooks/webhooks.service.js';
import { AppError } from '../shared/errors.js';
import { currentWindow, hourlyUsage } from '../usage/read.js';
import { keyPage, keyShownPage, keysPage, newKeyPage, revokePage, type KeyFormValues } from './pages/keys-page.js';
import { createOnce, newFormToken } from './form-once.js';
import { createdPath, keepToShowOnce, takeShownOnce } from './shown-once.js';
import { formRefusal, ownOrigin, readForm, redirectTo, showPage, type SignedInVisit } from './visit.js';

// The account's API keys, through the same services as the keys CLI's and with the same rules:
// create (shown once), list, see one's usage, revoke.

export interface KeyDeps {
  /** The rate-limit store the gate counts in: each key's live window. */
  store: RateLimitStore;
  /** Told of a key revoked here, so the gate stops it on the very next request. */
  onKeyRevoked: (keyId: string) => void;
  /** Writes what is still counted in memory (key usage, last use) before a page reads it. */
  flushCounts: () => Promise<void>;
  /** Where the API is reached (PUBLIC_URL); unset: the origin the visit came to. */
  publicUrl?: string;
}

const NO_KEY = 'There is no such key among yours.';

export function keyHandlers(deps: KeyDeps) {
  /**
   * Writes this instance's counts still in memory (usage, last use) before a page shows them, so a
   * key used a moment ago is not "never used"; a failed write leaves them for the next one, and
   * the page shows what is stored.
   */
  const writeCounts = (visit: SignedInVisit) =>
    deps.flushCounts().catch((error: unknown) => visit.ctx.logger.warn({ err: error }, 'writing key counts before showing keys failed'));

  /** The address the API answers at, as a command pasted from the page must name it. */
  const apiOrigin = (visit: SignedInVisit) => deps.publicUrl?.replace(/\/+$/, '') ?? ownOrigin(visit);

  async function showKeys(visit: SignedInVisit, status: number, form?: { values: KeyFormValues; errors: Record<string, string>; message?: string }) {
    await writeCounts(visit);
    const keys = await listOwnKeys(visit.ctx, visit.session.accountId);
    const body = keysPage(visit.csrfToken, { keys, plan: visit.session.plan.toLowerCase(), now: visit.now, activeMax: ACTIVE_KEYS_PER_ACCOUNT, formToken: newFormToken(), ...form });
    return showPage(visit, status, { title: 'API keys', current: 'keys', body });
  }

  async function keyOrNotFound(visit: SignedInVisit, id: string) {
    const key = await ownKey(visit.ctx, visit.session.accountId, id);
    if (!key) throw new AppError('NOT_FOUND', NO_KEY);
    return key;
  }

  return {
    getKeys: (visit: SignedInVisit) => showKeys(visit, 200),

    async postKey(visit: SignedInVisit) {
      const form = await readForm(visit);
      const expires = form.get('expires') ?? '';
      const values = {
        name: form.get('name') ?? '',
        expires,
        scopes: form.getAll('scopes'),
        kind: form.get('kind') === 'publishable' ? ('publishable' as const) : ('secret' as const),
        origins: form.get('origins') ?? '',
        allowServer: form.get('allow_server') === 'on',
        allowStock: form.get('allow_stock') === 'on',
      };
      try {
        const outcome = await createOnce(visit, form, 'key', (step) => createOwnKey(visit.ctx, visit.session.accountId, {
          name: values.name,
          scopes: values.scopes,
          expiresInDays: expires === '' ? null : /^\d{1,4}$/.test(expires) ? Number(expires) : NaN,
          // Origins one per line or separated by commas or spaces, as pasted.
          ...(values.kind === 'publishable'
            ? { publishable: { origins: values.origins.split(/[\s,]+/), allowServer: values.allowServer, allowStock: values.allowStock } }
            : {}),
        }, step));
        if ('createdBefore' in outcome) return redirectTo(visit, createdPath('key', outcome.createdBefore));
        const { key, record } = outcome.created;
        return redirectTo(visit, keepToShowOnce(visit, 'key', record.id, key));
      } catch (error) {
        const refused = formRefusal(error);
        return showKeys(visit, 400, { values, errors: refused.fields, message: Object.keys(refused.fields).length ? undefined : refused.message });
      }
    },

    /** Where creating a key leads: the key itself on the first GET only (shown-once.ts). */
    async getCreatedKey(visit: SignedInVisit, [id]: string[]) {
      const record = await keyOrNotFound(visit, id!);
      const key = takeShownOnce(visit, 'key', record.id);
      return showPage(visit, 200, { title: 'Your new API key', current: 'keys', body: key === null ? keyShownPage(record) : newKeyPage(key, record, apiOrigin(visit)) });
    },

    async getKey(visit: SignedInVisit, [id]: string[]) {
      await writeCounts(visit);
      const key = await keyOrNotFound(visit, id!);
      // The view carries the key's effective limit and window: the same bucket and numbers as the gate's.
      const limits = { id: key.id, plan: key.plan.toUpperCase() as Plan, rateLimit: key.limit, rateWindowSeconds: key.window };
      const [hours, window, endpoints] = await Promise.all([
        hourlyUsage(visit.ctx, key.id),
        currentWindow(deps.store, limits),
        listEndpoints(visit.ctx, key.id),
      ]);
      return showPage(visit, 200, { title: `Key “${key.name || 'Unnamed key'}”`, current: 'keys', body: keyPage({ key, now: visit.now, window, hours, endpoints }) });
    },

    async getRevoke(visit: SignedInVisit, [id]: string[]) {
      const key = await keyOrNotFound(visit, id!);
      const endpoints = await listEndpoints(visit.ctx, key.id);
      return showPage(visit, 200, { title: 'Revoke key', current: 'keys', body: revokePage(visit.csrfToken, key, endpoints) });
    },

    async postRevoke(visit: SignedInVisit, [id]: string[]) {
      await readForm(visit);
      const revoked = await revokeOwnKey(visit.ctx, visit.session.accountId, id!);
      if (!revoked) throw new AppError('NOT_FOUND', NO_KEY);
      deps.onKeyRevoked(revoked.id);
      return redirectTo(visit, '/dashboard/keys?done=revoked');
    },
  };
}
