import { html, type Html } from '../html.js';
import { errorSummary, field, form, when, type FieldErrors, type FieldValues } from '../layout.js';
import { PASSWORD_HINT } from './auth-page.js';

// The account's profile and its password.

export interface ProfileView {
  email: string;
  name: string;
  companyName: string | null;
  phone: string | null;
  plan: string;
  createdAt: Date;
}

export function accountPage(csrf: string, data: { profile: ProfileView; values?: FieldValues; errors?: FieldErrors; passwordErrors?: FieldErrors }): Html {
  const shown = data.values ?? { name: data.profile.name, companyName: data.profile.companyName ?? '', phone: data.profile.phone ?? '' };
  return html`<p>Signed in as <strong>${data.profile.email}</strong> · plan ${data.profile.plan} · member since ${when(data.profile.createdAt)}.</p>
<p>See who signed in to this account and from where, and every change to its keys and password, in the <a href="/dashboard/security">security log</a>.</p>
<h2>Profile</h2>
${errorSummary(data.errors ?? {})}
${form(
  '/dashboard/account',
  csrf,
  html`${field({ name: 'name', label: 'Your name', value: shown.name, required: true, autocomplete: 'name', maxlength: 100, error: data.errors?.name })}
${field({ name: 'companyName', label: 'Company', value: shown.companyName, autocomplete: 'organization', maxlength: 200, error: data.errors?.companyName })}
${field({ name: 'phone', label: 'Phone', type: 'tel', value: shown.phone, autocomplete: 'tel', maxlength: 40, error: data.errors?.phone })}`,
  'Save profile',
)}
<h2>Change password</h2>
<p>Changing it signs you out everywhere else.</p>
${errorSummary(data.passwordErrors ?? {})}
${form(
  '/dashboard/account/password',
  csrf,
  html`${field({ name: 'current', label: 'Current password', type: 'password', required: true, autocomplete: 'current-password', error: data.passwordErrors?.current })}
${field({ name: 'next', label: 'New password', type: 'password', required: true, autocomplete: 'new-password', hint: PASSWORD_HINT, error: data.passwordErrors?.next })}`,
  'Change password',
)}`;
}
