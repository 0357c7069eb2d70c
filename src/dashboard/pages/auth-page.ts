import { html, type Html } from '../html.js';
import { errorSummary, field, form, type FieldErrors, type FieldValues } from '../layout.js';

// Signing in, registering, and setting a password from an operator's one-time link.

export const PASSWORD_HINT = 'At least 10 characters; not a common password and not your e-mail address.';

export function signInPage(csrf: string, opts: { email?: string; message?: string; errors?: FieldErrors } = {}): Html {
  return html`${errorSummary(opts.errors ?? {}, opts.message)}
${form(
  '/dashboard/sign-in',
  csrf,
  html`${field({ name: 'email', label: 'E-mail address', type: 'email', value: opts.email, required: true, autocomplete: 'username', error: opts.errors?.email })}
${field({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'current-password', error: opts.errors?.password })}`,
  'Sign in',
)}
<p>No account yet? <a href="/dashboard/register">Register</a>.</p>`;
}

export function registerPage(csrf: string, values: FieldValues = {}, errors: FieldErrors = {}): Html {
  return html`<p>An account gives you API keys for the marketplace API, and a place to keep your delivery addresses. No e-mail is sent.</p>
${errorSummary(errors)}
${form(
  '/dashboard/register',
  csrf,
  html`${field({ name: 'name', label: 'Your name', value: values.name, required: true, autocomplete: 'name', maxlength: 100, error: errors.name })}
${field({ name: 'companyName', label: 'Company', value: values.companyName, autocomplete: 'organization', maxlength: 200, error: errors.companyName })}
${field({ name: 'email', label: 'E-mail address', type: 'email', value: values.email, required: true, autocomplete: 'email', error: errors.email })}
${field({ name: 'password', label: 'Password', type: 'password', required: true, autocomplete: 'new-password', hint: PASSWORD_HINT, error: errors.password })}`,
  'Create account',
)}
<p>Already registered? <a href="/dashboard/sign-in">Sign in</a>.</p>`;
}

export function setPasswordPage(csrf: string, token: string, errors: FieldErrors = {}, message?: string): Html {
  return html`<p>Choose a password for your account. The link works once.</p>
${errorSummary(errors, message)}
${form(
  '/dashboard/set-password',
  csrf,
  html`<input type="hidden" name="token" value="${token}">
${field({ name: 'password', label: 'New password', type: 'password', required: true, autocomplete: 'new-password', hint: PASSWORD_HINT, error: errors.password })}`,
  'Set password',
)}`;
}
