// A static storefront page calling the API with a publishable key, no build step: it lists
// products over GraphQL and keeps their prices live with the productChanged subscription.
//
// Subscriptions are served over SSE. EventSource cannot send headers, so the stream is read with
// fetch (Accept: text/event-stream), which sends the key as X-API-Key like any other request; the
// browser adds the page's Origin, which the key must list.

const { api, key } = window.STOREFRONT;
const headers = { 'content-type': 'application/json', 'x-api-key': key };
const statusLine = document.getElementById('status');
const list = document.getElementById('products');

const PRODUCTS = 'query Storefront { products(limit: 4) { items { id name price } } }';
const PRICE_CHANGES = 'subscription PriceChanges($id: ID!) { productChanged(id: $id) { id isActive product { price } } }';

function say(text, isError = false) {
  statusLine.textContent = text;
  statusLine.classList.toggle('error', isError);
}

/** The message of a refusal, from a GraphQL answer or the REST envelope. */
function problemOf(body, status) {
  return body?.errors?.[0]?.message ?? body?.error?.message ?? `HTTP ${status}`;
}

async function graphql(query, variables = {}) {
  const res = await fetch(`${api}/graphql`, { method: 'POST', headers, body: JSON.stringify({ query, variables }) });
  const body = await res.json().catch(() => null);
  if (!res.ok || body?.errors) throw new Error(problemOf(body, res.status));
  return body.data;
}

const money = (price) => `${Number(price).toFixed(2)} RON`;

function show(products) {
  list.replaceChildren(
    ...products.map((p) => {
      const item = document.createElement('li');
      item.dataset.id = p.id;
      const name = document.createElement('span');
      name.className = 'name';
      name.textContent = p.name;
      const price = document.createElement('span');
      price.className = 'price';
      price.textContent = money(p.price);
      item.append(name, price);
      return item;
    }),
  );
}

/** Each `next` event's payload of a GraphQL-over-SSE stream read with fetch, until it ends. */
async function* events(res) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event = /^event:\s*(.*)$/m.exec(block)?.[1] ?? 'message';
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n');
      if (event === 'complete') return;
      if (data) yield JSON.parse(data);
    }
  }
}

/** Follows one product's price; reconnects after a pause when the stream ends or fails. */
async function follow(id) {
  for (;;) {
    try {
      const res = await fetch(`${api}/graphql`, {
        method: 'POST',
        headers: { ...headers, accept: 'text/event-stream' },
        body: JSON.stringify({ query: PRICE_CHANGES, variables: { id } }),
      });
      if (!res.ok) throw new Error(problemOf(await res.json().catch(() => null), res.status));
      for await (const payload of events(res)) {
        if (payload.errors) throw new Error(payload.errors[0].message);
        const change = payload.data?.productChanged;
        const price = list.querySelector(`li[data-id="${CSS.escape(id)}"] .price`);
        if (!change || !price) continue;
        price.textContent = change.product ? money(change.product.price) : 'unavailable';
        price.classList.add('changed');
      }
    } catch (error) {
      say(`Live prices interrupted: ${error.message}`, true);
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

try {
  const { products } = await graphql(PRODUCTS);
  show(products.items);
  say(`${products.items.length} products, prices live`);
  for (const p of products.items) void follow(p.id);
} catch (error) {
  say(`The catalogue could not be loaded: ${error.message}`, true);
}
