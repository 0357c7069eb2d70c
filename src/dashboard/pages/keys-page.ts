import { keyStatus, SELF_SERVICE_EXPIRY_DAYS, type ApiKeyView } from '../../accounts/api-keys.js';
import { PUBLISHABLE_SCOPES, SCOPE_USES, SELF_SERVICE_SCOPES } from '../../auth/scopes.js';
import type { EndpointRow } from '../../domain/webhooks/webhooks.service.js';
import { describeWindow } from '../../ratelimit/policy.js';
import type { HourUsage, WindowState } from '../../usage/read.js';
import { usageChart } from '../chart.js';
import { html, type Html } from '../html.js';
import { errorSummary, errorText, field, form, when, type FieldErrors } from '../layout.js';
import { endpointStatus } from './webhooks-page.js';

// The account's API keys: the list and the form that creates one, a new key shown once, a key's
// usage, and the confirmation before revoking it.

const scopeList = (scopes: readonly string[]) => html`${scopes.map((s, i) => html`${i ? ', ' : ''}<code>${s}</code>`)}`;

const statusCell = (key: ApiKeyView, now: Date) => {
  const status = keyStatus(key, now);
  return html`<span class="status-${status}">${status === 'active' ? 'Active' : status === 'revoked' ? 'Revoked' : 'Expired'}</span>`;
};

export interface KeyFormValues {
  name?: string;
  expires?: string;
  scopes?: readonly string[];
  kind?: 'secret' | 'publishable';
  origins?: string;
  allowServer?: boolean;
  allowStock?: boolean;
}

/** A key's kind as listings show it: a publishable key with the origins it is bound to. */
const kindCell = (key: ApiKeyView) =>
  key.kind === 'publishable'
    ? html`Publishable, from ${key.origins.map((o, i) => html`${i ? ', ' : ''}<code>${o}</code>`)}${key.allowServer ? ' and servers' : ''}`
    : 'Secret';

const checked = (on: boolean | undefined) => (on ? html` checked` : '');

export function keysPage(csrf: string, data: { keys: ApiKeyView[]; plan: string; now: Date; values?: KeyFormValues; errors?: FieldErrors; message?: string; activeMax: number; formToken: string }): Html {
  const { keys, now } = data;
  // Nothing chosen for the developer: a key gets what they tick, each scope saying what it allows.
  const chosen = new Set(data.values?.scopes ?? []);
  const active = keys.filter((key) => keyStatus(key, now) === 'active').length;
  const kind = data.values?.kind ?? 'secret';
  return html`<p>Send a key as <code>X-API-Key</code> (or <code>Authorization: Bearer</code>) with each request to <code>/api</code> or <code>/graphql</code>. Secret keys (<code>mk_…</code>) are for servers: keep them out of frontend code and public repositories. Publishable keys (<code>pk_…</code>) are made for browser code: they read the catalogue only, from the pages of the origins you list.</p>
<h2 id="your-keys">Your keys</h2>
${
  keys.length
    ? html`<table aria-labelledby="your-keys">
<thead><tr><th scope="col">Name</th><th scope="col">Prefix</th><th scope="col">Kind</th><th scope="col">Scopes</th><th scope="col">Plan</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Expires</th><th scope="col">Status</th></tr></thead>
<tbody>${keys.map(
        (key) => html`<tr>
<td><a href="/dashboard/keys/${key.id}">${key.name || 'Unnamed key'}</a></td>
<td><code>${key.prefix}…</code></td>
<td>${kindCell(key)}</td>
<td>${scopeList(key.scopes)}</td>
<td>${key.plan}</td>
<td>${when(key.createdAt)}</td>
<td>${when(key.lastUsedAt)}</td>
<td>${when(key.expiresAt)}</td>
<td>${statusCell(key, now)}</td>
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
<fieldset class="checks" id="field-kind">
<legend>Kind</legend>
<label><input type="radio" name="kind" value="secret"${checked(kind === 'secret')}> Secret (<code>mk_…</code>): for your servers, with the scopes chosen below</label>
<label><input type="radio" name="kind" value="publishable"${checked(kind === 'publishable')}> Publishable (<code>pk_…</code>): for browser code, the catalogue only (${scopeList(PUBLISHABLE_SCOPES.filter((s) => s !== 'read:stock'))}), from the origins below</label>
</fieldset>
${field({ name: 'origins', label: 'Origins (publishable keys)', value: data.values?.origins, maxlength: 2000, hint: 'Where its pages are served from, separated by commas: https://shop.example (http only for localhost), no path.', error: data.errors?.origins })}
<fieldset class="checks" id="field-publishable-options">
<legend>Publishable key options</legend>
<label><input type="checkbox" name="allow_server"${checked(data.values?.allowServer)}> Also accept requests without an Origin (from a server)</label>
<label><input type="checkbox" name="allow_stock"${checked(data.values?.allowStock)}> Show stock (<code>read:stock</code>: stock records, and product changes of stock alone)</label>
</fieldset>
<fieldset class="checks${data.errors?.scopes ? ' has-error' : ''}" id="field-scopes"${data.errors?.scopes ? html` aria-describedby="field-scopes-error"` : ''}>
<legend>Scopes (secret keys)</legend>
${data.errors?.scopes ? html`<p class="error" id="field-scopes-error">${errorText('scopes', data.errors.scopes)}</p>` : ''}
${SELF_SERVICE_SCOPES.map((s) => html`<label><input type="checkbox" name="scopes" value="${s}"${chosen.has(s) ? html` checked` : ''}> <code>${s}</code> <span class="hint">${SCOPE_USES[s]}</span></label>`)}
</fieldset>
<div class="field">
<label for="field-expires">Expires</label>
<select id="field-expires" name="expires">
<option value="">Never</option>
${SELF_SERVICE_EXPIRY_DAYS.map((d) => html`<option value="${d}"${data.values?.expires === String(d) ? html` selected` : ''}>In ${d} days</option>`)}
</select>
</div>`,
  'Create key',
  { formToken: data.formToken },
)}`;
}

/** The new key, once; `apiOrigin` is where the API answers, for a command that runs as pasted. */
export function newKeyPage(key: string, record: ApiKeyView, apiOrigin: string): Html {
  return html`<p class="warning" role="alert"><strong>Copy this key now.</strong> It is shown only this once: we keep only a hash of it and cannot show it again, not even if you reload this page.</p>
<div class="field">
<label for="new-key">API key “${record.name}”</label>
<div class="key-box"><input id="new-key" class="key" type="text" readonly value="${key}" aria-describedby="new-key-status"><button type="button" data-copy="new-key">Copy key</button></div>
<p id="new-key-status" class="hint" role="status"></p>
</div>
<p>Scopes: ${scopeList(record.scopes)}. Plan: ${record.plan}, ${record.limit} requests per ${describeWindow(record.window * 1000)}.</p>
${
  record.kind === 'publishable'
    ? html`<p>A publishable key, made to be seen in your pages' code: it reads the catalogue only, from the pages of ${record.origins.map((o, i) => html`${i ? ', ' : ''}<code>${o}</code>`)}${record.allowServer ? ' and from servers' : ''}.</p>
<p>Try it: <code>curl -H 'X-API-Key: ${key}' -H 'Origin: ${record.origins[0] ?? ''}' '${apiOrigin}/api/products?limit=1'</code></p>`
    : html`<p>Try it (any key may read its own account): <code>curl -H 'X-API-Key: ${key}' ${apiOrigin}/api/me</code></p>`
}
<p><a href="/dashboard/keys/${record.id}">See this key's usage</a> · <a href="/dashboard/keys">Back to your keys</a></p>`;
}

/** The created page once its key was shown: a reload, or a link opened again. */
export function keyShownPage(record: ApiKeyView): Html {
  return html`<p class="warning">The key “${record.name || 'Unnamed key'}” (<code>${record.prefix}…</code>) was shown once, right after it was created, and cannot be shown again: we keep only a hash of it. If you did not copy it, revoke it and create a new one.</p>
<p><a href="/dashboard/keys/${record.id}">See this key's usage</a> · <a href="/dashboard/keys">Back to your keys</a></p>`;
}

/** The webhook endpoints a key registered: they hear nothing once it is revoked or expires. */
const keyEndpoints = (endpoints: readonly EndpointRow[]) =>
  endpoints.length
    ? html`<table aria-labelledby="key-endpoints">
<thead><tr><th scope="col">URL</th><th scope="col">Status</th></tr></thead>
<tbody>${endpoints.map((e) => html`<tr><td><a href="/dashboard/webhooks/${e.id}">${e.url}</a></td><td>${endpointStatus(e)}</td></tr>`)}</tbody>
</table>`
    : html`<p>None. A key with <code>write:webhooks</code> registers endpoints with <code>/api/webhooks</code>; they stop when it is revoked or expires.</p>`;

export function keyPage(data: { key: ApiKeyView; now: Date; window: WindowState; hours: HourUsage[]; endpoints: readonly EndpointRow[] }): Html {
  const { key, window, now } = data;
  const status = keyStatus(key, now);
  const minutes = Math.max(0, Math.ceil((window.resetAt.getTime() - now.getTime()) / 60_000));
  return html`<table>
<tbody>
<tr><th scope="row">Prefix</th><td><code>${key.prefix}…</code></td></tr>
<tr><th scope="row">Status</th><td>${statusCell(key, now)}</td></tr>
<tr><th scope="row">Kind</th><td>${kindCell(key)}</td></tr>
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
<h2 id="key-endpoints">Webhook endpoints it registered</h2>
${keyEndpoints(data.endpoints)}
${
  status === 'active'
    ? html`<h2>Revoke</h2><p>A revoked key stops working on the next request, everywhere. This cannot be undone.</p><p><a class="button danger" href="/dashboard/keys/${key.id}/revoke">Revoke this key…</a></p>`
    : ''
}
<p><a href="/dashboard/keys">Back to your keys</a></p>`;
}

export function revokePage(csrf: string, key: ApiKeyView, endpoints: readonly EndpointRow[]): Html {
  const listening = endpoints.filter((e) => !e.disabledAt);
  return html`<p>Revoke the key “${key.name || 'Unnamed key'}” (<code>${key.prefix}…</code>)? Every request with it is refused from the next one on, on every instance. This cannot be undone.</p>
${
  listening.length
    ? html`<p class="warning">The ${listening.length === 1 ? 'webhook endpoint it registered stops' : `${listening.length} webhook endpoints it registered stop`} receiving events at once, for good: ${listening.map((e, i) => html`${i ? ', ' : ''}<code>${e.url}</code>`)}.</p>`
    : ''
}
<div class="actions">
${form(`/dashboard/keys/${key.id}/revoke`, csrf, '', 'Revoke key', { className: 'inline', destructive: true })}
<a href="/dashboard/keys/${key.id}">Cancel</a>
</div>`;
}
