import type { OrderEventView, OrderListView, OrderSide, OrderView } from '../../domain/orders/orders.views.js';
import { allowedNext, CANCELLED, orderStatuses, SHIPPED, type OrderStatus } from '../../domain/orders/transitions.js';
import { html, type Html } from '../html.js';
import { when } from '../layout.js';

// Orders, read-only, from the buyer's side or the supplier's: the list and one order's history.

/** A status in words: PENDING → Pending. */
const statusText = (status: OrderStatus) => status.charAt(0) + status.slice(1).toLowerCase();

/** "a", "a or b", "a, b or c". */
const orList = (items: readonly string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`);

/** The statuses a buyer may cancel from, read off the transition table: "pending or confirmed". */
const BUYER_CANCELS_FROM = orList(orderStatuses.filter((s) => allowedNext(s, 'buyer').includes(CANCELLED)).map((s) => statusText(s).toLowerCase()));

const ORDER_PATH: Record<OrderSide, string> = { buyer: '/dashboard/orders', supplier: '/dashboard/supplier-orders' };

export function ordersPage(side: OrderSide, { orders, page, supplier }: OrderListView): Html {
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
        (order) => html`<tr>
<td><a href="${base}/${order.orderNumber}"><code>${order.orderNumber}</code></a></td>
<td>${when(order.createdAt)}</td>
<td>${order.party}</td>
<td>${order.items}</td>
<td>${order.total} ${order.currency}</td>
<td>${statusText(order.status)}${order.since ? html`<br><span class="hint">since ${when(order.since)}</span>` : ''}</td>
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
<tbody>${order.history.map((event) => html`<tr><td>${statusText(event.status)}</td><td>${when(event.at)}</td><td>${whoText(side, event, viewerId)}</td><td class="note">${event.note ?? ''}</td></tr>`)}</tbody>
</table>
<h2 id="items">Items</h2>
${
  order.items.length
    ? html`<table aria-labelledby="items">
<thead><tr><th scope="col">Product</th><th scope="col">SKU</th><th scope="col">Quantity</th><th scope="col">Unit price</th><th scope="col">Total</th></tr></thead>
<tbody>${order.items.map((item) => html`<tr><td>${item.name}</td><td>${item.sku ? html`<code>${item.sku}</code>` : ''}</td><td>${item.quantity}</td><td>${money(item.price)}</td><td>${money(item.total)}</td></tr>`)}</tbody>
</table>`
    : html`<p>No items recorded.</p>`
}
<h2>Changing it</h2>
${moving}
<p><a href="${base}">Back to ${side === 'buyer' ? 'your orders' : 'the supplier\'s orders'}</a></p>`;
}
