import { html, type Html, type HtmlValue } from './html.js';

// The frame every dashboard page shares, and the form parts its pages are built from. Every field
// has a visible label tied to it, errors are tied to their field (aria-describedby) and announced
// in a summary at the top of the form, and every button says what it does.

export const ASSET_PATH = '/dashboard/assets';
export const BRAND = 'Marketplace API';

export interface Viewer {
  email: string;
  name: string;
  /** The account acts for a supplier: its orders get a navigation entry. */
  supplierMember?: boolean;
}

export interface PageOptions {
  title: string;
  /** The signed-in account: the navigation and the sign-out button. */
  viewer?: Viewer | null;
  /** The CSRF token of the visit, for the sign-out form. */
  csrf?: string;
  /** Which navigation entry is the current page. */
  current?: NavEntry;
  /** A one-line notice above the content (e.g. "Key revoked"), announced to screen readers. */
  notice?: string | null;
  body: HtmlValue;
}

type NavEntry = 'keys' | 'webhooks' | 'account' | 'addresses' | 'orders' | 'supplier-orders';

/** The last element marks an entry shown to supplier members only. */
const NAV: Array<[NavEntry, string, string, 'members'?]> = [
  ['keys', '/dashboard/keys', 'API keys'],
  ['webhooks', '/dashboard/webhooks', 'Webhooks'],
  ['addresses', '/dashboard/addresses', 'Addresses'],
  ['orders', '/dashboard/orders', 'Orders'],
  ['supplier-orders', '/dashboard/supplier-orders', 'Supplier orders', 'members'],
  ['account', '/dashboard/account', 'Account'],
];

export function page({ title, viewer, csrf, current, notice, body }: PageOptions): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title === BRAND ? BRAND : `${title} · ${BRAND}`}</title>
<link rel="icon" href="${ASSET_PATH}/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="${ASSET_PATH}/dashboard.css">
<script src="${ASSET_PATH}/dashboard.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/">${BRAND}</a>
  ${
    viewer
      ? html`<nav aria-label="Dashboard">
    <ul>${NAV.filter(([, , , only]) => !only || viewer.supplierMember).map(([entry, href, label]) => html`<li><a href="${href}"${entry === current ? html` aria-current="page"` : ''}>${label}</a></li>`)}</ul>
  </nav>
  <form method="post" action="/dashboard/sign-out" class="sign-out">
    ${csrfField(csrf ?? '')}
    <span class="who">${viewer.email}</span>
    <button type="submit">Sign out</button>
  </form>`
      : html`<nav aria-label="Site"><ul><li><a href="/graphql">GraphiQL</a></li><li><a href="/api/docs">REST docs</a></li></ul></nav>`
  }
</header>
<main id="main">
<h1>${title}</h1>
${notice ? html`<p class="notice" role="status">${notice}</p>` : ''}
${body}
</main>
</body>
</html>
`;
}

/** Each refused field's problem, by field name. */
export type FieldErrors = Readonly<Record<string, string>>;
/** A form's fields as typed, to fill it in again. */
export type FieldValues = Readonly<Record<string, string | undefined>>;

export const csrfField = (token: string) => html`<input type="hidden" name="_csrf" value="${token}">`;

/** The field of a create form's one-time token (src/dashboard/form-once.ts). */
export const FORM_TOKEN_FIELD = '_form_token';

/** How each form field is named on its page: error messages say what is wrong with it ("is required"). */
const FIELD_LABELS: Record<string, string> = {
  email: 'E-mail address',
  password: 'Password',
  name: 'Name',
  companyName: 'Company',
  phone: 'Phone',
  current: 'Current password',
  next: 'New password',
  label: 'Label',
  fullName: 'Full name',
  address: 'Street address',
  city: 'City',
  county: 'County',
  postalCode: 'Postal code',
  scopes: 'Scopes',
  expires: 'Expiry',
  url: 'Endpoint URL',
  events: 'Events',
  description: 'Description',
};

/** A field's error as a sentence: "Password must be at least 10 characters long". */
export function errorText(field: string, text: string, label = FIELD_LABELS[field]): string {
  return label && /^[a-z]/.test(text) ? `${label} ${text}` : text;
}

/** The errors of a form, listed first (each links to its field) and announced when the page loads. */
export function errorSummary(errors: Readonly<Record<string, string>>, message?: string): Html | '' {
  const entries = Object.entries(errors);
  if (!entries.length && !message) return '';
  return html`<div class="error-summary" role="alert" tabindex="-1">
  <h2>${message ?? 'There is a problem'}</h2>
  ${entries.length ? html`<ul>${entries.map(([field, text]) => html`<li><a href="#${fieldId(field)}">${errorText(field, text)}</a></li>`)}</ul>` : ''}
</div>`;
}

const fieldId = (name: string) => `field-${name}`;

export interface FieldOptions {
  name: string;
  label: string;
  type?: 'text' | 'email' | 'password' | 'tel';
  value?: string | null;
  error?: string;
  hint?: string;
  required?: boolean;
  autocomplete?: string;
  maxlength?: number;
}

/** A labelled input with its hint and error tied to it. */
export function field({ name, label, type = 'text', value, error, hint, required, autocomplete, maxlength }: FieldOptions): Html {
  const id = fieldId(name);
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  return html`<div class="field${error ? ' has-error' : ''}">
  <label for="${id}">${label}${required ? '' : html` <span class="optional">(optional)</span>`}</label>
  ${hint ? html`<p class="hint" id="${id}-hint">${hint}</p>` : ''}
  ${error ? html`<p class="error" id="${id}-error">${errorText(name, error, label)}</p>` : ''}
  <input id="${id}" name="${name}" type="${type}"${type === 'password' ? '' : html` value="${value ?? ''}"`}${required ? html` required` : ''}${autocomplete ? html` autocomplete="${autocomplete}"` : ''}${maxlength ? html` maxlength="${maxlength}"` : ''}${described ? html` aria-describedby="${described}"` : ''}${error ? html` aria-invalid="true"` : ''}>
</div>`;
}

export interface FormOptions {
  /** Classes of the form beside "form" ("inline": a button alone, in a row of actions). */
  className?: string;
  /** Its button revokes or deletes something for good: the danger style, not the primary one. */
  destructive?: boolean;
  /** It creates something: the one-time token of this rendering, so that sent twice it creates one. */
  formToken?: string;
}

/** A form posting to `action`, with the visit's CSRF token. */
export function form(action: string, csrf: string, content: HtmlValue, submit: string, { className = '', destructive = false, formToken }: FormOptions = {}): Html {
  return html`<form method="post" action="${action}" class="form ${className}" novalidate>
${csrfField(csrf)}${formToken === undefined ? '' : html`<input type="hidden" name="${FORM_TOKEN_FIELD}" value="${formToken}">`}
${content}
<button type="submit"${destructive ? html` class="danger"` : ''}>${submit}</button>
</form>`;
}

const DATE = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

/** A point in time as a reader wants it, with the exact value in a <time> element. */
export function when(date: Date | null | undefined, never = 'Never'): Html {
  if (!date) return html`${never}`;
  return html`<time datetime="${date.toISOString()}">${DATE.format(date)} UTC</time>`;
}
