import { registerAccount, setPasswordWithToken, signIn } from '../accounts/credentials.js';
import { createSession, deleteEndedSessions, endSession, SESSION_ABSOLUTE_MS } from '../accounts/sessions.js';
import type { RateLimitStore } from '../ratelimit/store.js';
import { asAppError } from '../shared/errors.js';
import { messagePage } from './pages/common.js';
import { registerPage, setPasswordPage, signInPage } from './pages/auth-page.js';
import { endPresessionCookie, endSessionCookie, fieldsOf, formRefusal, pick, readForm, redirectTo, showPage, startSessionCookie, type Visit } from './visit.js';

// Signing in and out, registering, and setting a password from an operator's one-time link.

/** Ended sessions are deleted at a sign-in, at most this often per process. */
const SESSION_SWEEP_MS = 10 * 60_000;

export function authHandlers(deps: { store: RateLimitStore }) {
  let lastSweep = 0;

  /** Deletes ended sessions now and then; a failure is only logged: sign-in does not depend on it. */
  async function sweepEndedSessions(visit: Visit): Promise<void> {
    if (visit.now.getTime() - lastSweep < SESSION_SWEEP_MS) return;
    lastSweep = visit.now.getTime();
    await deleteEndedSessions(visit.ctx).catch((error: unknown) => visit.ctx.logger.warn({ err: error }, 'deleting ended sessions failed'));
  }

  /** Signs `accountId` in on this browser: a new token at every sign-in, never one the browser brought (no session fixation). */
  async function startSession(visit: Visit, accountId: string, how: 'password' | 'registered'): Promise<void> {
    if (visit.sessionToken) await endSession(visit.ctx, visit.sessionToken);
    const { token } = await createSession(visit.ctx, accountId, how);
    startSessionCookie(visit, token, SESSION_ABSOLUTE_MS);
    endPresessionCookie(visit);
    await sweepEndedSessions(visit);
  }

  return {
    async getSignIn(visit: Visit) {
      return showPage(visit, 200, { title: 'Sign in', body: signInPage(visit.csrfToken) });
    },

    async postSignIn(visit: Visit) {
      const form = await readForm(visit);
      const email = form.get('email') ?? '';
      try {
        const { accountId } = await signIn(visit.ctx, deps.store, { email, password: form.get('password') ?? '', ip: visit.ip });
        await startSession(visit, accountId, 'password');
        return redirectTo(visit, '/dashboard/keys');
      } catch (error) {
        const known = asAppError(error);
        if (!known || (known.code !== 'UNAUTHORIZED' && known.code !== 'RATE_LIMIT_EXCEEDED')) throw error;
        const headers: Record<string, string> = known.retryAfter ? { 'retry-after': String(known.retryAfter) } : {};
        return showPage(visit, known.status, { title: 'Sign in', body: signInPage(visit.csrfToken, { email, message: known.message }) }, headers);
      }
    },

    async getRegister(visit: Visit) {
      return showPage(visit, 200, { title: 'Create an account', body: registerPage(visit.csrfToken) });
    },

    async postRegister(visit: Visit) {
      const form = await readForm(visit);
      const values = pick(form, ['name', 'companyName', 'email']);
      try {
        const { id } = await registerAccount(visit.ctx, { email: values.email ?? '', password: form.get('password') ?? '', name: values.name ?? '', companyName: values.companyName || undefined });
        // Whoever registers is signed in: no second typing of the password just chosen.
        await startSession(visit, id, 'registered');
        return redirectTo(visit, '/dashboard/keys?done=registered');
      } catch (error) {
        const refused = formRefusal(error);
        return showPage(visit, 400, { title: 'Create an account', body: registerPage(visit.csrfToken, values, refused.fields) });
      }
    },

    async postSignOut(visit: Visit) {
      await readForm(visit);
      if (visit.sessionToken) await endSession(visit.ctx, visit.sessionToken);
      endSessionCookie(visit);
      return redirectTo(visit, '/dashboard/sign-in?done=signed-out');
    },

    async getSetPassword(visit: Visit) {
      const token = visit.url.searchParams.get('token') ?? '';
      return showPage(visit, 200, { title: 'Set your password', body: setPasswordPage(visit.csrfToken, token) });
    },

    async postSetPassword(visit: Visit) {
      const form = await readForm(visit);
      const token = form.get('token') ?? '';
      try {
        await setPasswordWithToken(visit.ctx, token, form.get('password') ?? '');
      } catch (error) {
        const known = asAppError(error);
        if (!known) throw error;
        if (known.code === 'VALIDATION_ERROR') {
          return showPage(visit, 400, { title: 'Set your password', body: setPasswordPage(visit.csrfToken, token, fieldsOf(known), known.message) });
        }
        return showPage(visit, known.status, { title: 'Set your password', body: messagePage(known.message, { href: '/dashboard/sign-in', text: 'Sign in' }) });
      }
      // Whoever was signed in on this browser is not the one who just set a password.
      if (visit.sessionToken) await endSession(visit.ctx, visit.sessionToken);
      endSessionCookie(visit);
      return redirectTo(visit, '/dashboard/sign-in?done=password-set');
    },
  };
}
