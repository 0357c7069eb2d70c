import { SELF_SERVICE_EXPIRY_DAYS, keyStatus, type ApiKeyView } from '../accounts/api-keys.js';
import type { SavedAddress } from '../accounts/profile.js';
import { SELF_SERVICE_SCOPES } from '../auth/scopes.js';
import { allowedNext, CANCELLED, orderStatuses, SHIPPED, type OrderStatus } from '../modules/orders/transitions.js';
import { TEST_EVENT, WEBHOOK_EVENT_NAMES, WEBHOOK_EVENTS } from '../modules/webhooks/events.js';
import { MAX_URL_LENGTH } from '../modules/webhooks/targets.js';
import { MAX_DESCRIPTION, type DeliveryRow, type EndpointRow } from '../modules/webhooks/webhooks.service.js';
import { describeWindow } from '../ratelimit/policy.js';
import type { HourUsage, WindowState } from '../usage/read.js';
import { usageChart } from './chart.js';
import { html, type Html } from './html.js';
import { errorSummary, errorText, field, form, when } from './layout.js';

// The content of each dashboard page, from data the handler (./handler.ts) has read. Pure
// functions of their arguments: every value reaches the markup through the escaping `html` tag.

type Errors = Readonly<Record<string, string>>;
type Values = Readonly<Record<string, string | undefined>>;

export const PASSWORD_HINT = 'At least 10 characters; not a common password and not your e-mail address.';

export function landingPage(): Html {
  return html`<p>The marketplace's catalogue, orders, stock and prices, as a REST API and a GraphQL graph, with API keys, scopes and plan rate limits shared by both.</p>
<div class="cards">
  <section class="card"><h2>Developer dashboard</h2><p>Register, create and revoke API keys, and see each key's usage.</p><p><a class="button" href="/dashboard">Open the dashboard</a></p></section>
  <section class="card"><h2>GraphiQL</h2><p>Explore the graph in the browser: its docs, autocompletion and a query to start with.</p><p><a href="/graphql">Open GraphiQL</a></p></section>
  <section class="card"><h2>REST API reference</h2><p>Every endpoint, its parameters and answers (OpenAPI).</p><p><a href="/api/docs">Read the REST docs</a></p></section>
</div>`;
}

export function signInPage(csrf: string, opts: { email?: string; message?: string; errors?: Errors } = {}): Html {
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

export function registerPage(csrf: string, values: Values = {}, errors: Errors = {}): Html {
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

export function setPasswordPage(csrf: string, token: string, errors: Errors = {}, message?: string): Html {
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

const scopeList = (scopes: readonly string[]) => html`${scopes.map((s, i) => html`${i ? ', ' : ''}<code>${s}</code>`)}`;

const statusCell = (key: ApiKeyView, now: Date) => {
  const status = keyStatus(key, now);
  return html`<span class="status-${status}">${status === 'active' ? 'Active' : status === 'revoked' ? 'Revoked' : 'Expired'}</span>`;
};

export interface KeyFormValues {
  name?: string;
  expires?: string;
  scopes?: readonly string[];
}

export function keysPage(csrf: string, data: { keys: ApiKeyView[]; plan: string; now: Date; values?: KeyFormValues; errors?: Errors; message?: string; activeMax: number }): Html {
  const { keys, now } = data;
  const chosen = new Set(data.values?.scopes ?? ['read:products', 'read:categories', 'read:suppliers']);
  const active = keys.filter((k) => keyStatus(k, now) === 'active').length;
  return html`<p>Send a key as <code>X-API-Key</code> (or <code>Authorization: Bearer</code>) with each request to <code>/api</code> or <code>/graphql</code>. Keys are secret: keep them out of frontend code and public repositories.</p>
<h2 id="your-keys">Your keys</h2>
${
  keys.length
    ? html`<table aria-labelledby="your-keys">
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Plan</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Status</th></tr></thead>
<tbody>${keys.map(
        (k) => html`<tr>
<td><a href="/dashboard/keys/${k.id}">${k.name || 'Unnamed key'}</a></td>
<td><code>${k.prefix}…</code></td>
<td>${scopeList(k.scopes)}</td>
<td>${k.plan}</td>
<td>${when(k.createdAt)}</td>
<td>${when(k.lastUsedAt)}</td>
<td>${when(k.expiresAt)}</td>
<td>${statusCell(k, now)}</td>
</tr>`,
      )}</tbody>
</table>`
    : html`<p>You have no keys yet. Create your first one below.</p>`
}
<h2>Create a key</h2>
<p>New keys get your account's plan (${data.plan}). You have ${active} of at most ${data.activeMax} active keys.</p>
${errorSummary(data.errors ?? {}, data.message)}
${form(
  '/dashboard/keys',
  csrf,
  html`${field({ name: 'name', label: 'Key name', value: data.values?.name, required: true, maxlength: 100, hint: 'What uses it, e.g. "shop backend".', error: data.errors?.name })}
<fieldset class="checks${data.errors?.scopes ? ' has-error' : ''}" id="field-scopes"${data.errors?.scopes ? html` aria-describedby="field-scopes-error"` : ''}>
<legend>Scopes</legend>
${data.errors?.scopes ? html`<p class="error" id="field-scopes-error">${errorText('scopes', data.errors.scopes)}</p>` : ''}
${SELF_SERVICE_SCOPES.map((s) => html`<label><input type="checkbox" name="scopes" value="${s}"${chosen.has(s) ? html` checked` : ''}> <code>${s}</code></label>`)}
</fieldset>
<div class="field">
<label for="field-expires">Expires</label>
<select id="field-expires" name="expires">
<option value="">Never</option>
${SELF_SERVICE_EXPIRY_DAYS.map((d) => html`<option value="${d}"${data.values?.expires === String(d) ? html` selected` : ''}>In ${d} days</option>`)}
</select>
</div>`,
  'Create key',
)}`;
}

export function newKeyPage(key: string, record: ApiKeyView): Html {
  return html`<p class="warning" role="alert"><strong>Copy this key now.</strong> It is shown only this once: we keep only a hash of it and cannot show it again.</p>
<div class="field">
<label for="new-key">API key “${record.name}”</label>
<div class="key-box"><input id="new-key" class="key" type="text" readonly value="${key}" aria-describedby="new-key-status"><button type="button" data-copy="new-key">Copy key</button></div>
<p id="new-key-status" class="hint" role="status"></p>
</div>
<p>Scopes: ${scopeList(record.scopes)}. Plan: ${record.plan}, ${record.limit} requests per ${describeWindow(record.window * 1000)}.</p>
<p>Try it: <code>curl -H 'X-API-Key: ${key}' …/api/orders</code></p>
<p><a href="/dashboard/keys/${record.id}">See this key's usage</a> · <a href="/dashboard/keys">Back to your keys</a></p>`;
}

export function keyPage(data: { key: ApiKeyView; now: Date; window: WindowState; hours: HourUsage[] }): Html {
  const { key, window, now } = data;
  const status = keyStatus(key, now);
  const minutes = Math.max(0, Math.ceil((window.resetAt.getTime() - now.getTime()) / 60_000));
  return html`<table>
<tbody>
<tr><th scope="row">Prefix</th><td><code>${key.prefix}…</code></td></tr>
<tr><th scope="row">Status</th><td>${statusCell(key, now)}</td></tr>
<tr><th scope="row">Scopes</th><td>${scopeList(key.scopes)}</td></tr>
<tr><th scope="row">Plan</th><td>${key.plan}: ${key.limit} requests per ${describeWindow(key.window * 1000)}</td></tr>
<tr><th scope="row">Created</th><td>${when(key.createdAt)}</td></tr>
<tr><th scope="row">Last used</th><td>${when(key.lastUsedAt)}</td></tr>
<tr><th scope="row">Expires</th><td>${when(key.expiresAt)}</td></tr>
${key.revokedAt ? html`<tr><th scope="row">Revoked</th><td>${when(key.revokedAt)}</td></tr>` : ''}
</tbody>
</table>
<h2>Current window</h2>
<p class="meter" id="window-usage"><strong>${window.used}</strong> of ${window.limit} requests used, ${window.remaining} left${window.used > 0 ? html`; the window resets in ${minutes} min` : ''}.</p>
<h2>Last 7 days</h2>
${usageChart(data.hours)}
${
  status === 'active'
    ? html`<h2>Revoke</h2><p>A revoked key stops working on the next request, everywhere. This cannot be undone.</p><p><a class="button danger" href="/dashboard/keys/${key.id}/revoke">Revoke this key…</a></p>`
    : ''
}
<p><a href="/dashboard/keys">Back to your keys</a></p>`;
}

export function revokePage(csrf: string, key: ApiKeyView): Html {
  return html`<p>Revoke the key “${key.name || 'Unnamed key'}” (<code>${key.prefix}…</code>)? Every request with it is refused from the next one on, on every instance. This cannot be undone.</p>
<div class="actions">
${form(`/dashboard/keys/${key.id}/revoke`, csrf, '', 'Revoke key', 'inline danger-form')}
<a href="/dashboard/keys/${key.id}">Cancel</a>
</div>`;
}

export interface ProfileView {
  email: string;
  name: string;
  companyName: string | null;
  phone: string | null;
  plan: string;
  createdAt: Date;
}

export function accountPage(csrf: string, data: { profile: ProfileView; values?: Values; errors?: Errors; passwordErrors?: Errors }): Html {
  const v = data.values ?? { name: data.profile.name, companyName: data.profile.companyName ?? '', phone: data.profile.phone ?? '' };
  return html`<p>Signed in as <strong>${data.profile.email}</strong> · plan ${data.profile.plan} · member since ${when(data.profile.createdAt)}.</p>
<h2>Profile</h2>
${errorSummary(data.errors ?? {})}
${form(
  '/dashboard/account',
  csrf,
  html`${field({ name: 'name', label: 'Your name', value: v.name, required: true, autocomplete: 'name', maxlength: 100, error: data.errors?.name })}
${field({ name: 'companyName', label: 'Company', value: v.companyName, autocomplete: 'organization', maxlength: 200, error: data.errors?.companyName })}
${field({ name: 'phone', label: 'Phone', type: 'tel', value: v.phone, autocomplete: 'tel', maxlength: 40, error: data.errors?.phone })}`,
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

export function addressesPage(addresses: readonly SavedAddress[]): Html {
  return html`<p>Orders are shipped to one of these: its id is the <code>addressId</code> of <code>POST /api/orders</code> (also listed by <code>GET /api/me/addresses</code>).</p>
<p><a class="button" href="/dashboard/addresses/new">Add an address</a></p>
${
  addresses.length
    ? html`<table>
<thead><tr><th scope="col">Label</th><th scope="col">Address</th><th scope="col">addressId</th><th scope="col">Actions</th></tr></thead>
<tbody>${addresses.map(
        (a) => html`<tr>
<td>${a.label || 'Address'}${a.isDefault ? html` <strong>(default)</strong>` : ''}</td>
<td>${a.fullName}${a.companyName ? html`, ${a.companyName}` : ''}<br>${a.address}, ${a.city}, ${a.county} ${a.postalCode}<br>${a.phone}${a.email ? html` · ${a.email}` : ''}</td>
<td><code>${a.id}</code></td>
<td><a href="/dashboard/addresses/${a.id}">Edit<span class="skip-label"> ${a.label || a.address}</span></a> · <a href="/dashboard/addresses/${a.id}/delete">Delete<span class="skip-label"> ${a.label || a.address}</span></a></td>
</tr>`,
      )}</tbody>
</table>`
    : html`<p>No saved addresses yet.</p>`
}`;
}

export function addressFormPage(csrf: string, action: string, values: Values & { isDefault?: string }, errors: Errors = {}): Html {
  const text = (name: string, label: string, opts: { required?: boolean; type?: 'text' | 'email' | 'tel'; autocomplete?: string; maxlength?: number } = {}) =>
    field({ name, label, value: values[name], error: errors[name], ...opts });
  return html`${errorSummary(errors)}
${form(
  action,
  csrf,
  html`${text('label', 'Label', { maxlength: 50 })}
${text('fullName', 'Full name', { required: true, autocomplete: 'name', maxlength: 100 })}
${text('companyName', 'Company', { autocomplete: 'organization', maxlength: 200 })}
${text('phone', 'Phone', { required: true, type: 'tel', autocomplete: 'tel', maxlength: 40 })}
${text('email', 'E-mail address', { type: 'email', autocomplete: 'email' })}
${text('address', 'Street address', { required: true, autocomplete: 'street-address', maxlength: 200 })}
${text('city', 'City', { required: true, autocomplete: 'address-level2', maxlength: 100 })}
${text('county', 'County', { required: true, autocomplete: 'address-level1', maxlength: 100 })}
${text('postalCode', 'Postal code', { required: true, autocomplete: 'postal-code', maxlength: 20 })}
<div class="field checks"><label><input type="checkbox" name="isDefault" value="true"${values.isDefault === 'true' ? html` checked` : ''}> Use as my default address</label></div>`,
  'Save address',
)}
<p><a href="/dashboard/addresses">Back to addresses</a></p>`;
}

export function deleteAddressPage(csrf: string, address: SavedAddress): Html {
  return html`<p>Delete the address “${address.label || address.address}” (${address.address}, ${address.city})? Orders already shipped to it keep their copy.</p>
<div class="actions">
${form(`/dashboard/addresses/${address.id}/delete`, csrf, '', 'Delete address', 'inline')}
<a href="/dashboard/addresses">Cancel</a>
</div>`;
}

/** Whose side of an order a page shows: the buyer's own, or its supplier's (to a member). */
export type OrderSide = 'buyer' | 'supplier';

/** A status in words: PENDING → Pending. */
const statusText = (status: OrderStatus) => status.charAt(0) + status.slice(1).toLowerCase();

/** "a", "a or b", "a, b or c". */
const orList = (items: readonly string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`);

/** The statuses a buyer may cancel from, read off the transition table: "pending or confirmed". */
const BUYER_CANCELS_FROM = orList(orderStatuses.filter((s) => allowedNext(s, 'buyer').includes(CANCELLED)).map((s) => statusText(s).toLowerCase()));

const ORDER_PATH: Record<OrderSide, string> = { buyer: '/dashboard/orders', supplier: '/dashboard/supplier-orders' };

export interface OrderRow {
  orderNumber: string;
  status: OrderStatus;
  total: string;
  currency: string;
  createdAt: Date;
  /** The supplier's name (buyer side) or the buyer's (supplier side). */
  party: string;
  items: number;
  /** When it took its present status (its last history entry). */
  since: Date | null;
}

export function ordersPage(side: OrderSide, orders: readonly OrderRow[], page: { number: number; hasNext: boolean }, supplier?: string): Html {
  const base = ORDER_PATH[side];
  const intro =
    side === 'buyer'
      ? html`<p>Orders placed with your keys, newest first. Read-only here: <code>GET /api/orders</code> returns them with their items, a buyer cancels a ${BUYER_CANCELS_FROM} order with <code>POST /api/orders/{id}/cancel</code>, and the supplier moves it on with <code>POST /api/supplier/orders/{id}/status</code>. Open an order for its history.</p>`
      : html`<p>Orders placed with ${supplier ?? 'your supplier'}, which your account acts for, newest first. Read-only here: <code>GET /api/supplier/orders</code> lists them, and a member's key moves an order with <code>POST /api/supplier/orders/{id}/status</code>; its buyer may cancel a ${BUYER_CANCELS_FROM} order with <code>POST /api/orders/{id}/cancel</code>. Open an order for its history.</p>`;
  return html`${intro}
${
  orders.length
    ? html`<table>
<thead><tr><th scope="col">Order</th><th scope="col">Placed</th><th scope="col">${side === 'buyer' ? 'Supplier' : 'Buyer'}</th><th scope="col">Items</th><th scope="col">Total</th><th scope="col">Status</th></tr></thead>
<tbody>${orders.map(
        (o) => html`<tr>
<td><a href="${base}/${o.orderNumber}"><code>${o.orderNumber}</code></a></td>
<td>${when(o.createdAt)}</td>
<td>${o.party}</td>
<td>${o.items}</td>
<td>${o.total} ${o.currency}</td>
<td>${statusText(o.status)}${o.since ? html`<br><span class="hint">since ${when(o.since)}</span>` : ''}</td>
</tr>`,
      )}</tbody>
</table>`
    : html`<p>No orders yet.</p>`
}
<nav aria-label="Pages of orders" class="actions">
${page.number > 1 ? html`<a href="${base}?page=${page.number - 1}">Newer orders</a>` : ''}
${page.hasNext ? html`<a href="${base}?page=${page.number + 1}">Older orders</a>` : ''}
</nav>`;
}

export interface OrderEventView {
  status: OrderStatus;
  actor: 'BUYER' | 'SUPPLIER';
  accountId: string | null;
  note: string | null;
  at: Date;
}

export interface OrderView {
  id: string;
  orderNumber: string;
  status: OrderStatus;
  currency: string;
  subtotal: string;
  discount: string;
  shippingCost: string;
  tax: string;
  total: string;
  createdAt: Date;
  party: string;
  trackingNumber: string | null;
  trackingCarrier: string | null;
  trackingUrl: string | null;
  items: ReadonlyArray<{ name: string; sku: string | null; quantity: number; price: string; total: string }>;
  /** Oldest first: its placing, then each change. */
  history: readonly OrderEventView[];
}

/** Who made a change, as the reader of this side sees it. */
function whoText(side: OrderSide, event: OrderEventView, viewerId: string): string {
  if (event.actor === 'BUYER') return side === 'buyer' ? 'You' : 'The buyer';
  return side === 'supplier' && event.accountId === viewerId ? 'You' : 'The supplier';
}

/** A carrier's tracking address is the supplier's text: a link only when it is a web address. */
function trackingLink(url: string, carrier: string | null): Html {
  const web = URL.canParse(url) && /^https?:$/.test(new URL(url).protocol);
  return web ? html`<a href="${url}" rel="noreferrer">Track the parcel${carrier ? ` at ${carrier}` : ''}</a>` : html`<code>${url}</code> (not a web address)`;
}

export function orderPage(side: OrderSide, order: OrderView, viewerId: string): Html {
  const base = ORDER_PATH[side];
  const next = allowedNext(order.status, side);
  const last = order.history[order.history.length - 1];
  const money = (amount: string) => `${amount} ${order.currency}`;
  const moving =
    side === 'buyer'
      ? html`<p>${
          next.includes(CANCELLED)
            ? html`You can still cancel it: <code>POST /api/orders/${order.id}/cancel</code> with your key, optionally with a <code>reason</code>.`
            : html`It can no longer be cancelled by you: a buyer cancels a ${BUYER_CANCELS_FROM} order only (<code>POST /api/orders/{id}/cancel</code>).`
        } The supplier moves it on with <code>POST /api/supplier/orders/{id}/status</code>.</p>`
      : next.length
        ? html`<p>From here it can become ${orList(next.map((s) => statusText(s)))}. A key of a member of the supplier moves it: <code>POST /api/supplier/orders/${order.id}/status</code> with a JSON body such as <code>{"status": "${next[0]!}"}</code> (<code>status</code> one of ${next.map((s, i) => html`${i ? ', ' : ''}<code>${s}</code>`)}) and an optional <code>note</code>. ${
            next.includes(SHIPPED) ? html`${statusText(SHIPPED)} needs <code>trackingNumber</code> and <code>trackingCarrier</code> (<code>trackingUrl</code> optional).` : ''
          }</p>`
        : html`<p>Its status is final: it cannot change any more. (Orders move with <code>POST /api/supplier/orders/{id}/status</code>.)</p>`;
  return html`<p class="meter">Status: <strong>${statusText(order.status)}</strong>${last ? html` since ${when(last.at)}` : ''}.</p>
<table>
<tbody>
<tr><th scope="row">Order number</th><td><code>${order.orderNumber}</code></td></tr>
<tr><th scope="row">Order id</th><td><code>${order.id}</code> (the <code>{id}</code> of the API's order calls)</td></tr>
<tr><th scope="row">Placed</th><td>${when(order.createdAt)}</td></tr>
<tr><th scope="row">${side === 'buyer' ? 'Supplier' : 'Buyer'}</th><td>${order.party}</td></tr>
<tr><th scope="row">Total</th><td>${money(order.total)} (items ${money(order.subtotal)}${order.discount !== '0.00' ? `, discount −${money(order.discount)}` : ''}, shipping ${money(order.shippingCost)}; VAT included ${money(order.tax)})</td></tr>
</tbody>
</table>
${
  order.trackingNumber || order.trackingUrl
    ? html`<h2 id="tracking">Tracking</h2>
<table aria-labelledby="tracking">
<tbody>
${order.trackingNumber ? html`<tr><th scope="row">Tracking number</th><td><code>${order.trackingNumber}</code></td></tr>` : ''}
${order.trackingCarrier ? html`<tr><th scope="row">Carrier</th><td>${order.trackingCarrier}</td></tr>` : ''}
${order.trackingUrl ? html`<tr><th scope="row">Follow it</th><td>${trackingLink(order.trackingUrl, order.trackingCarrier)}</td></tr>` : ''}
</tbody>
</table>`
    : ''
}
<h2 id="history">History</h2>
<table aria-labelledby="history" class="history">
<thead><tr><th scope="col">Status</th><th scope="col">When</th><th scope="col">By</th><th scope="col">Note</th></tr></thead>
<tbody>${order.history.map((e) => html`<tr><td>${statusText(e.status)}</td><td>${when(e.at)}</td><td>${whoText(side, e, viewerId)}</td><td class="note">${e.note ?? ''}</td></tr>`)}</tbody>
</table>
<h2 id="items">Items</h2>
${
  order.items.length
    ? html`<table aria-labelledby="items">
<thead><tr><th scope="col">Product</th><th scope="col">SKU</th><th scope="col">Quantity</th><th scope="col">Unit price</th><th scope="col">Total</th></tr></thead>
<tbody>${order.items.map((i) => html`<tr><td>${i.name}</td><td>${i.sku ? html`<code>${i.sku}</code>` : ''}</td><td>${i.quantity}</td><td>${money(i.price)}</td><td>${money(i.total)}</td></tr>`)}</tbody>
</table>`
    : html`<p>No items recorded.</p>`
}
<h2>Changing it</h2>
${moving}
<p><a href="${base}">Back to ${side === 'buyer' ? 'your orders' : 'the supplier\'s orders'}</a></p>`;
}

// ---- webhooks ----

/** What a disabled endpoint went through: the worker disables one only then (worker.ts). */
const DISABLED_REASON = 'it failed for the whole retry schedule';

/** An endpoint's status as the API names it (ACTIVE, DISABLED), in words; a disabled one says since when and why. */
const endpointStatus = (e: EndpointRow) =>
  e.disabledAt
    ? html`<span class="status-revoked">Disabled</span> since ${when(e.disabledAt)}: ${DISABLED_REASON}`
    : html`<span class="status-active">Active</span>${e.failingSince ? html`<br><span class="hint">failing since ${when(e.failingSince)}</span>` : ''}`;

const eventList = (events: readonly string[]) => html`${events.map((e, i) => html`${i ? ', ' : ''}<code>${e}</code>`)}`;

export interface WebhookFormValues {
  url?: string;
  events?: readonly string[];
  description?: string;
}

export function webhooksPage(
  csrf: string,
  data: { endpoints: readonly EndpointRow[]; member: boolean; requireHttps: boolean; max: number; values?: WebhookFormValues; errors?: Errors; message?: string },
): Html {
  const { endpoints, errors = {} } = data;
  const chosen = new Set(data.values?.events ?? []);
  // stock.low and any other members-only type: offered to an account acting for a supplier only.
  const offered = WEBHOOK_EVENT_NAMES.filter((name) => data.member || !WEBHOOK_EVENTS[name].membersOnly);
  return html`<p>The marketplace POSTs each event your endpoints subscribe to as JSON, signed per Standard Webhooks (headers <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>), and retries until it gets a 2xx answer. An endpoint that fails for the whole retry schedule (3 days by default) is disabled until you enable it again. The same endpoints are managed with <code>/api/webhooks</code> and a key with <code>read:orders</code>.</p>
<h2 id="your-endpoints">Your endpoints</h2>
${
  endpoints.length
    ? html`<table aria-labelledby="your-endpoints">
<thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Description</th><th scope="col">Created</th><th scope="col">Status</th></tr></thead>
<tbody>${endpoints.map(
        (e) => html`<tr>
<td><a href="/dashboard/webhooks/${e.id}">${e.url}</a></td>
<td>${eventList(e.events)}</td>
<td>${e.description ?? ''}</td>
<td>${when(e.createdAt)}</td>
<td>${endpointStatus(e)}</td>
</tr>`,
      )}</tbody>
</table>`
    : html`<p>You have no webhook endpoints yet. Add your first one below.</p>`
}
<h2>Add an endpoint</h2>
<p>You have ${endpoints.length} of at most ${data.max} endpoints.</p>
${endpoints.length >= data.max ? html`<p class="warning">You have reached the limit of ${data.max} endpoints: delete one before adding another.</p>` : ''}
${errorSummary(errors, data.message)}
${form(
  '/dashboard/webhooks',
  csrf,
  html`${field({
    name: 'url',
    label: 'Endpoint URL',
    value: data.values?.url,
    required: true,
    maxlength: MAX_URL_LENGTH,
    hint: data.requireHttps ? 'An https address on the public internet, e.g. https://example.com/webhooks.' : 'An http or https address on the public internet, e.g. https://example.com/webhooks.',
    error: errors.url,
  })}
<fieldset class="checks${errors.events ? ' has-error' : ''}" id="field-events"${errors.events ? html` aria-describedby="field-events-error"` : ''}>
<legend>Events</legend>
${errors.events ? html`<p class="error" id="field-events-error">${errorText('events', errors.events)}</p>` : ''}
${offered.map((name) => html`<label><input type="checkbox" name="events" value="${name}"${chosen.has(name) ? html` checked` : ''}> <code>${name}</code>: ${WEBHOOK_EVENTS[name].description}</label>`)}
</fieldset>
${field({ name: 'description', label: 'Description', value: data.values?.description, maxlength: MAX_DESCRIPTION, hint: 'What receives them, e.g. "shop backend".', error: errors.description })}`,
  'Add endpoint',
)}`;
}

export function newWebhookPage(endpoint: EndpointRow & { secret: string }): Html {
  return html`<p class="warning" role="alert"><strong>Copy this signing secret now.</strong> It is shown only this once, here and nowhere else. Without it you cannot check that a webhook comes from us: if you lose it, delete the endpoint and add it again.</p>
<div class="field">
<label for="new-secret">Signing secret of ${endpoint.url}</label>
<div class="key-box"><input id="new-secret" class="key" type="text" readonly value="${endpoint.secret}" aria-describedby="new-secret-status"><button type="button" data-copy="new-secret">Copy secret</button></div>
<p id="new-secret-status" class="hint" role="status"></p>
</div>
<p>Events: ${eventList(endpoint.events)}.</p>
<h2>Verifying a webhook</h2>
<p>Check the <code>webhook-signature</code> header against the raw request body before you trust an event, e.g. with the <code>standardwebhooks</code> package (npm, PyPI and others), which also refuses an old <code>webhook-timestamp</code>:</p>
<pre><code>import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.WEBHOOK_SECRET); // the whsec_… secret above
const event = webhook.verify(rawBody, headers); // throws unless the signature is valid
</code></pre>
<p>Answer with a 2xx status quickly. Failed deliveries are retried with the same <code>webhook-id</code>: use it to ignore an event you already handled.</p>
<p><a href="/dashboard/webhooks/${endpoint.id}">See this endpoint and send it a test event</a> · <a href="/dashboard/webhooks">Back to your webhooks</a></p>`;
}

const DELIVERY_STATUS: Record<DeliveryRow['status'], string> = { PENDING: 'Pending', DELIVERED: 'Delivered', FAILED: 'Failed' };

/** An attempt's outcome (send.ts) in words; null while it runs, or when the service stopped during it. */
const ATTEMPT_OUTCOMES: Record<string, string> = {
  success: 'Delivered',
  http_error: 'Error answer',
  timeout: 'Timed out',
  connection_error: 'Could not connect',
  refused_target: 'Refused: not a public address',
};

/** The most of a receiver's answer shown in the log. */
const ANSWER_SHOWN = 300;

/** An error worth showing beside a status code: send.ts's "answered 500" only repeats it. */
const errorBeside = (status: number | null, error: string | null) => (error && error !== `answered ${status}` ? error : null);

function attemptItem(a: DeliveryRow['attemptLog'][number]): Html {
  const error = errorBeside(a.statusCode, a.error);
  const outcome = a.outcome === null ? (a.finishedAt ? 'Unknown' : 'Unfinished') : (ATTEMPT_OUTCOMES[a.outcome] ?? a.outcome);
  const answer = a.responseBody ? (a.responseBody.length > ANSWER_SHOWN ? `${a.responseBody.slice(0, ANSWER_SHOWN)}…` : a.responseBody) : '';
  return html`<li value="${a.number}">${when(a.startedAt)}: ${outcome}${a.statusCode !== null ? `, HTTP ${a.statusCode}` : ''}${a.durationMs !== null ? `, ${a.durationMs} ms` : ''}${
    error ? html` (${error})` : ''
  }${answer ? html`<br><span class="hint">Answer: <code>${answer}</code></span>` : ''}</li>`;
}

function deliveryRow(d: DeliveryRow): Html {
  const last = [d.lastStatus !== null ? `HTTP ${d.lastStatus}` : '', errorBeside(d.lastStatus, d.lastError) ?? ''].filter(Boolean).join(': ');
  return html`<tr>
<td><code>${d.event.type}</code></td>
<td><code>${d.event.id}</code></td>
<td>${when(d.createdAt)}</td>
<td>${DELIVERY_STATUS[d.status]}${d.deliveredAt ? html`<br><span class="hint">${when(d.deliveredAt)}</span>` : ''}</td>
<td>${
    d.attemptLog.length
      ? html`<details><summary>${d.attempts}<span class="skip-label"> attempts of ${d.event.id}</span></summary><ol>${d.attemptLog.map(attemptItem)}</ol></details>`
      : d.attempts
  }</td>
<td>${last || '—'}</td>
<td>${d.status === 'PENDING' ? when(d.nextAttemptAt, '—') : '—'}</td>
</tr>`;
}

export function webhookPage(csrf: string, data: { endpoint: EndpointRow; deliveries: readonly DeliveryRow[]; page: { number: number; total: number; perPage: number } }): Html {
  const { endpoint: e, deliveries, page } = data;
  const base = `/dashboard/webhooks/${e.id}`;
  const hasNext = page.number * page.perPage < page.total;
  return html`${
    e.disabledAt
      ? html`<p class="warning"><strong>Disabled</strong> since ${when(e.disabledAt)}: ${DISABLED_REASON}, so no events are sent to it. Check the receiver (a test event is sent to a disabled endpoint too), then enable it again.</p>`
      : html`<p class="meter">Status: <strong>Active</strong>${e.failingSince ? html`, but failing since ${when(e.failingSince)}: if it fails for the whole retry schedule it is disabled` : ''}.</p>`
  }
<table>
<tbody>
<tr><th scope="row">URL</th><td><code>${e.url}</code></td></tr>
<tr><th scope="row">Events</th><td>${eventList(e.events)}</td></tr>
<tr><th scope="row">Description</th><td>${e.description ?? ''}</td></tr>
<tr><th scope="row">Status</th><td>${endpointStatus(e)}</td></tr>
<tr><th scope="row">Endpoint id</th><td><code>${e.id}</code> (the <code>{id}</code> of <code>/api/webhooks/{id}</code>)</td></tr>
<tr><th scope="row">Created</th><td>${when(e.createdAt)}</td></tr>
</tbody>
</table>
<div class="actions">
${form(`${base}/test`, csrf, '', 'Send test event', 'inline')}
${e.disabledAt ? form(`${base}/enable`, csrf, '', 'Enable again', 'inline') : ''}
</div>
<p class="hint">A test event (<code>${TEST_EVENT}</code>) is sent to this endpoint alone, whatever it subscribes to. The signing secret was shown once, when the endpoint was added.</p>
<h2 id="deliveries">Deliveries</h2>
${
  deliveries.length
    ? html`<p>Newest first: ${page.total} in all. Open an attempt count for each attempt's outcome.</p>
<table aria-labelledby="deliveries">
<thead><tr><th scope="col">Event</th><th scope="col">Event id</th><th scope="col">Created</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Last answer</th><th scope="col">Next retry</th></tr></thead>
<tbody>${deliveries.map(deliveryRow)}</tbody>
</table>`
    : html`<p>${page.total ? 'No deliveries on this page.' : 'No deliveries yet. Send a test event to see one here.'}</p>`
}
<nav aria-label="Pages of deliveries" class="actions">
${page.number > 1 ? html`<a href="${base}?page=${page.number - 1}">Newer deliveries</a>` : ''}
${hasNext ? html`<a href="${base}?page=${page.number + 1}">Older deliveries</a>` : ''}
</nav>
<h2>Delete</h2>
<p>Nothing more is sent to a deleted endpoint, and its delivery log goes with it.</p>
<p><a class="button danger" href="${base}/delete">Delete this endpoint…</a></p>
<p><a href="/dashboard/webhooks">Back to your webhooks</a></p>`;
}

export function deleteWebhookPage(csrf: string, endpoint: EndpointRow): Html {
  return html`<p>Delete the webhook endpoint <code>${endpoint.url}</code>${endpoint.description ? html` (“${endpoint.description}”)` : ''}? Nothing more is sent to it, events waiting for it are dropped, and its delivery log is deleted. This cannot be undone.</p>
<div class="actions">
${form(`/dashboard/webhooks/${endpoint.id}/delete`, csrf, '', 'Delete endpoint', 'inline danger-form')}
<a href="/dashboard/webhooks/${endpoint.id}">Cancel</a>
</div>`;
}

export function messagePage(message: string, link?: { href: string; text: string }): Html {
  return html`<p>${message}</p>${link ? html`<p><a href="${link.href}">${link.text}</a></p>` : ''}`;
}
