import type { SecurityEventView } from '../../accounts/security-log.js';
import { html, type Html } from '../html.js';
import { when } from '../layout.js';

// The account's security log: who signed in and from where, and every change to its keys,
// password, webhook endpoints and memberships, newest first.

/** Who did it, in words. */
function who(event: SecurityEventView): Html {
  const id = event.actorId ? html` <code>${event.actorId.slice(-8)}</code>` : '';
  switch (event.actorKind) {
    case 'session':
      return html`Dashboard session${id}`;
    case 'key':
      return html`API key${event.actorId ? html` <a href="/dashboard/keys/${event.actorId}"><code>${event.actorId.slice(-8)}</code></a>` : ''}`;
    case 'cli':
      return html`The operator (keys CLI)`;
    case 'visitor':
      return html`Someone signing in`;
    case 'service':
      return event.kind === 'key.expired' ? html`Its expiry date` : html`The service`;
  }
}

/** What it concerned: a key, an endpoint, a supplier, a plan. */
function what(event: SecurityEventView): Html {
  const d = event.details;
  const parts: Html[] = [];
  if (typeof d.prefix === 'string') parts.push(html`key <code>${d.prefix}…</code>${typeof d.name === 'string' && d.name ? html` (${d.name})` : ''}`);
  if (typeof d.host === 'string') parts.push(html`<code>${d.host}</code>`);
  if (typeof d.supplier === 'string') parts.push(html`${d.supplier}`);
  if (typeof d.from === 'string' && typeof d.to === 'string') parts.push(html`${d.from} → ${d.to}`);
  if (typeof d.sessionsEnded === 'number' && d.sessionsEnded > 0) parts.push(html`${d.sessionsEnded} session(s) ended`);
  if (d.how === 'registered') parts.push(html`after registering`);
  return html`${event.what}${parts.length ? html`: ${parts.map((part, i) => html`${i ? ', ' : ''}${part}`)}` : ''}`;
}

export function securityPage(data: { events: SecurityEventView[]; page: number; more: boolean; keepDays: number }): Html {
  const { events, page, more, keepDays } = data;
  const pager = [
    page > 1 ? html`<a href="/dashboard/security${page > 2 ? `?page=${page - 1}` : ''}">Newer events</a>` : '',
    more ? html`<a href="/dashboard/security?page=${page + 1}">Older events</a>` : '',
  ].filter(Boolean);
  return html`<p>Sign-ins and every change to your password, keys, webhook endpoints and supplier memberships, newest first, kept ${keepDays} days. Only you see it. Something you do not recognise? Change your password and revoke the keys concerned.</p>
${
  events.length
    ? html`<table aria-labelledby="security-log">
<caption id="security-log">Security log${page > 1 ? html`, page ${page}` : ''}</caption>
<thead><tr><th scope="col">When</th><th scope="col">What</th><th scope="col">Who</th><th scope="col">Address</th><th scope="col">Browser</th></tr></thead>
<tbody>${events.map(
        (event) => html`<tr>
<td>${when(event.createdAt)}</td>
<td>${what(event)}</td>
<td>${who(event)}</td>
<td>${event.ip ?? ''}</td>
<td>${event.userAgent ?? ''}</td>
</tr>`,
      )}</tbody>
</table>`
    : html`<p>Nothing yet${page > 1 ? ' on this page' : ''}.</p>`
}
${pager.length ? html`<p class="actions">${pager}</p>` : ''}`;
}
