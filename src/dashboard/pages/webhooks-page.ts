import { TEST_EVENT, WEBHOOK_EVENT_NAMES, WEBHOOK_EVENTS } from '../../domain/webhooks/events.js';
import { MAX_URL_LENGTH } from '../../domain/webhooks/targets.js';
import { MAX_DESCRIPTION, type DeliveryRow, type DisabledReason, type EndpointRow } from '../../domain/webhooks/webhooks.service.js';
import { html, type Html } from '../html.js';
import { errorSummary, errorText, field, form, when, type FieldErrors } from '../layout.js';

// The account's webhook endpoints: the list and the form that adds one, a new endpoint's signing
// secret shown once, an endpoint's delivery log, and the confirmation before deleting one.

/** Why nothing is sent to a disabled endpoint, in words. */
const DISABLED_REASONS: Record<DisabledReason, string> = {
  FAILING: 'it failed for the whole retry schedule',
  KEY_REVOKED: 'the API key that registered it was revoked',
  KEY_EXPIRED: 'the API key that registered it expired',
};

/** An endpoint's status as the API names it (ACTIVE, DISABLED), in words; a disabled one says since when and why. */
export const endpointStatus = (endpoint: EndpointRow) =>
  endpoint.disabledAt && endpoint.disabledReason
    ? html`<span class="status-revoked">Disabled</span> since ${when(endpoint.disabledAt)}: ${DISABLED_REASONS[endpoint.disabledReason]}`
    : html`<span class="status-active">Active</span>${endpoint.failingSince ? html`<br><span class="hint">failing since ${when(endpoint.failingSince)}</span>` : ''}`;

/** Whose an endpoint is: the key that registered it (linked to its page), or the account. */
const ownerOf = (endpoint: EndpointRow) =>
  endpoint.key ? html`key <a href="/dashboard/keys/${endpoint.key.id}">${endpoint.key.name || 'Unnamed key'}</a> (<code>${endpoint.key.prefix}…</code>)` : html`this account`;

const eventList = (events: readonly string[]) => html`${events.map((e, i) => html`${i ? ', ' : ''}<code>${e}</code>`)}`;

export interface WebhookFormValues {
  url?: string;
  events?: readonly string[];
  description?: string;
}

export function webhooksPage(
  csrf: string,
  data: { endpoints: readonly EndpointRow[]; member: boolean; requireHttps: boolean; max: number; values?: WebhookFormValues; errors?: FieldErrors; message?: string; formToken: string },
): Html {
  const { endpoints, errors = {} } = data;
  const chosen = new Set(data.values?.events ?? []);
  // stock.low and any other members-only type: offered to an account acting for a supplier only.
  const offered = WEBHOOK_EVENT_NAMES.filter((name) => data.member || !WEBHOOK_EVENTS[name].membersOnly);
  return html`<p>The marketplace POSTs each event your endpoints subscribe to as JSON, signed per Standard Webhooks (headers <code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>), and retries until it gets a 2xx answer. An endpoint that fails for the whole retry schedule (3 days by default) is disabled until you enable it again.</p>
<p>Endpoints you add here are your account's. A key with the <code>write:webhooks</code> scope registers its own with <code>/api/webhooks</code>: they are listed here with their key, are sent only the events that key may read, and stop for good when the key is revoked or expires.</p>
<h2 id="your-endpoints">Your endpoints</h2>
${
  endpoints.length
    ? html`<table aria-labelledby="your-endpoints">
<thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Description</th><th scope="col">Registered by</th><th scope="col">Created</th><th scope="col">Status</th></tr></thead>
<tbody>${endpoints.map(
        (endpoint) => html`<tr>
<td><a href="/dashboard/webhooks/${endpoint.id}">${endpoint.url}</a></td>
<td>${eventList(endpoint.events)}</td>
<td>${endpoint.description ?? ''}</td>
<td>${ownerOf(endpoint)}</td>
<td>${when(endpoint.createdAt)}</td>
<td>${endpointStatus(endpoint)}</td>
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
  { formToken: data.formToken },
)}`;
}

export function newWebhookPage(endpoint: EndpointRow & { secret: string }): Html {
  return html`<p class="warning" role="alert"><strong>Copy this signing secret now.</strong> It is shown only this once, here and nowhere else, not even if you reload this page. Without it you cannot check that a webhook comes from us: if you lose it, delete the endpoint and add it again.</p>
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

/** The created page once its secret was shown: a reload, or a link opened again. */
export function webhookSecretShownPage(endpoint: EndpointRow): Html {
  return html`<p class="warning">The signing secret of ${endpoint.url} was shown once, right after the endpoint was added, and cannot be shown again. If you did not copy it, delete the endpoint and add it again.</p>
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

function attemptItem(attempt: DeliveryRow['attemptLog'][number]): Html {
  const error = errorBeside(attempt.statusCode, attempt.error);
  const outcome = attempt.outcome === null ? (attempt.finishedAt ? 'Unknown' : 'Unfinished') : (ATTEMPT_OUTCOMES[attempt.outcome] ?? attempt.outcome);
  const answer = attempt.responseBody ? (attempt.responseBody.length > ANSWER_SHOWN ? `${attempt.responseBody.slice(0, ANSWER_SHOWN)}…` : attempt.responseBody) : '';
  return html`<li value="${attempt.number}">${when(attempt.startedAt)}: ${outcome}${attempt.statusCode !== null ? `, HTTP ${attempt.statusCode}` : ''}${attempt.durationMs !== null ? `, ${attempt.durationMs} ms` : ''}${
    error ? html` (${error})` : ''
  }${answer ? html`<br><span class="hint">Answer: <code>${answer}</code></span>` : ''}</li>`;
}

function deliveryRow(delivery: DeliveryRow): Html {
  const last = [delivery.lastStatus !== null ? `HTTP ${delivery.lastStatus}` : '', errorBeside(delivery.lastStatus, delivery.lastError) ?? ''].filter(Boolean).join(': ');
  return html`<tr>
<td><code>${delivery.event.type}</code></td>
<td><code>${delivery.event.id}</code></td>
<td>${when(delivery.createdAt)}</td>
<td>${DELIVERY_STATUS[delivery.status]}${delivery.deliveredAt ? html`<br><span class="hint">${when(delivery.deliveredAt)}</span>` : ''}</td>
<td>${
    delivery.attemptLog.length
      ? html`<details><summary>${delivery.attempts}<span class="skip-label"> attempts of ${delivery.event.id}</span></summary><ol>${delivery.attemptLog.map(attemptItem)}</ol></details>`
      : delivery.attempts
  }</td>
<td>${last || '—'}</td>
<td>${delivery.status === 'PENDING' ? when(delivery.nextAttemptAt, '—') : '—'}</td>
</tr>`;
}

export function webhookPage(csrf: string, data: { endpoint: EndpointRow; deliveries: readonly DeliveryRow[]; page: { number: number; total: number; perPage: number } }): Html {
  const { endpoint, deliveries, page } = data;
  const base = `/dashboard/webhooks/${endpoint.id}`;
  const hasNext = page.number * page.perPage < page.total;
  const keyEnded = endpoint.disabledReason === 'KEY_REVOKED' || endpoint.disabledReason === 'KEY_EXPIRED';
  return html`${
    endpoint.disabledAt && endpoint.disabledReason
      ? html`<p class="warning"><strong>Disabled</strong> since ${when(endpoint.disabledAt)}: ${DISABLED_REASONS[endpoint.disabledReason]}, so no events are sent to it. ${
          keyEnded
            ? 'It cannot be enabled again: add the endpoint anew, here or with a working key.'
            : 'Check the receiver (a test event is sent to a disabled endpoint too), then enable it again.'
        }</p>`
      : html`<p class="meter">Status: <strong>Active</strong>${endpoint.failingSince ? html`, but failing since ${when(endpoint.failingSince)}: if it fails for the whole retry schedule it is disabled` : ''}.</p>`
  }
<table>
<tbody>
<tr><th scope="row">URL</th><td><code>${endpoint.url}</code></td></tr>
<tr><th scope="row">Events</th><td>${eventList(endpoint.events)}</td></tr>
<tr><th scope="row">Description</th><td>${endpoint.description ?? ''}</td></tr>
<tr><th scope="row">Status</th><td>${endpointStatus(endpoint)}</td></tr>
<tr><th scope="row">Registered by</th><td>${ownerOf(endpoint)}</td></tr>
<tr><th scope="row">Endpoint id</th><td><code>${endpoint.id}</code> (the <code>{id}</code> of <code>/api/webhooks/{id}</code>)</td></tr>
<tr><th scope="row">Created</th><td>${when(endpoint.createdAt)}</td></tr>
</tbody>
</table>
${
  keyEnded
    ? ''
    : html`<div class="actions">
${form(`${base}/test`, csrf, '', 'Send test event', { className: 'inline' })}
${endpoint.disabledReason === 'FAILING' ? form(`${base}/enable`, csrf, '', 'Enable again', { className: 'inline' }) : ''}
</div>`
}
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
${form(`/dashboard/webhooks/${endpoint.id}/delete`, csrf, '', 'Delete endpoint', { className: 'inline', destructive: true })}
<a href="/dashboard/webhooks/${endpoint.id}">Cancel</a>
</div>`;
}
