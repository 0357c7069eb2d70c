import { changePassword } from '../accounts/credentials.js';
import { accountProfile, updateProfile } from '../accounts/profile.js';
import { createSession, SESSION_ABSOLUTE_MS } from '../accounts/sessions.js';
import type { RateLimitStore } from '../ratelimit/store.js';
import { asAppError } from '../shared/errors.js';
import { accountPage } from './pages/account-page.js';
import { fieldsOf, formRefusal, pick, readForm, redirectTo, showPage, startSessionCookie, type SignedInVisit } from './visit.js';

// The account's profile and password.

type AccountPageData = Parameters<typeof accountPage>[1];

export function accountHandlers(deps: { store: RateLimitStore }) {
  async function showAccount(visit: SignedInVisit, status: number, form: Omit<AccountPageData, 'profile'> = {}, headers: Record<string, string> = {}) {
    const profile = await accountProfile(visit.ctx, visit.session.accountId);
    // Sessions are deleted with their account: a session always has one.
    if (!profile) throw new Error('signed-in account not found');
    const body = accountPage(visit.csrfToken, { profile: { ...profile, plan: profile.plan.toLowerCase() }, ...form });
    return showPage(visit, status, { title: 'Account', current: 'account', body }, headers);
  }

  return {
    getAccount: (visit: SignedInVisit) => showAccount(visit, 200),

    async postProfile(visit: SignedInVisit) {
      const form = await readForm(visit);
      const values = pick(form, ['name', 'companyName', 'phone']);
      try {
        await updateProfile(visit.ctx, visit.session.accountId, values);
        return redirectTo(visit, '/dashboard/account?done=profile-saved');
      } catch (error) {
        const refused = formRefusal(error);
        return showAccount(visit, 400, { values, errors: refused.fields });
      }
    },

    async postPassword(visit: SignedInVisit) {
      const form = await readForm(visit);
      const accountId = visit.session.accountId;
      try {
        await changePassword(visit.ctx, deps.store, accountId, { current: form.get('current') ?? '', next: form.get('next') ?? '', ip: visit.ip });
      } catch (error) {
        const known = asAppError(error);
        if (known?.code === 'VALIDATION_ERROR') return showAccount(visit, 400, { passwordErrors: fieldsOf(known) });
        if (known?.code !== 'RATE_LIMIT_EXCEEDED') throw error;
        return showAccount(visit, 429, { passwordErrors: { current: known.message } }, { 'retry-after': String(known.retryAfter) });
      }
      // Every session ended with the change, this one too: this browser gets a new one.
      const { token } = await createSession(visit.ctx, accountId);
      startSessionCookie(visit, token, SESSION_ABSOLUTE_MS);
      return redirectTo(visit, '/dashboard/account?done=password-changed');
    },
  };
}
