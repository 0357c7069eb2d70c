import { html, type Html } from '../html.js';

// Pages of no one concern: the landing page at /, and a message with a way on (errors, refusals).

export function landingPage(): Html {
  return html`<p>The marketplace's catalogue, orders, stock and prices, as a REST API and a GraphQL graph, with API keys, scopes and plan rate limits shared by both.</p>
<div class="cards">
  <section class="card"><h2>Developer dashboard</h2><p>Register, create and revoke API keys, and see each key's usage.</p><p><a class="button" href="/dashboard">Open the dashboard</a></p></section>
  <section class="card"><h2>GraphiQL</h2><p>Explore the graph in the browser: its docs, autocompletion and a query to start with.</p><p><a href="/graphql">Open GraphiQL</a></p></section>
  <section class="card"><h2>REST API reference</h2><p>Every endpoint, its parameters and answers (OpenAPI).</p><p><a href="/api/docs">Read the REST docs</a></p></section>
</div>`;
}

export function messagePage(message: string, link?: { href: string; text: string }): Html {
  return html`<p>${message}</p>${link ? html`<p><a href="${link.href}">${link.text}</a></p>` : ''}`;
}
