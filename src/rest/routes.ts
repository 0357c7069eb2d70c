import type { z } from 'zod';
import { MAX_ADDRESSES } from '../accounts/profile.js';
import { booleanParam } from '../shared/validation.js';
import { ADDRESS_FIELDS, CATEGORY_FIELDS, DELIVERY_FIELDS, ORDER_FIELDS, PRICE_FIELDS, PRODUCT_FIELDS, REVIEW_FIELDS, STOCK_FIELDS, SUPPLIER_FIELDS, WEBHOOK_FIELDS } from '../domain/representations.js';

// The documented REST paths, each one GraphQL operation on the same schema. The selection set is
// the REST representation, made of the resources' representations (src/domain/representations.ts,
// which webhook events share). Scopes, query parameters, body and variables are not restated
// here: src/rest/derive.ts reads them from the fields the operation selects.

const REVIEWS_DESCRIPTION =
  'Newest first unless `sortBy` says otherwise; ties are broken by newest first, then id. `rating` keeps the reviews of that rating only.';

const META = 'meta { page limit total totalPages }';

/** When a status change (a cancellation included) answers 409. */
const STATUS_CONFLICT =
  'The order’s status does not allow it (details: status, requested, allowed), or the Idempotency-Key was used with another body or is still being processed';

/**
 * How the operation's result becomes the envelope: a list (items, and meta when paginated) or one
 * record. `notFound` names what a lookup answering null did not find (404: a record, or the owner
 * of a list such as a product's reviews); a field that never answers null without an error (every
 * root field is nullable, so nullability cannot say) has none.
 */
export type RestShape = { kind: 'list' | 'one'; field: string; notFound?: string };

/** A shape chosen by the parameters; `variants` lists every shape it can choose, for the OpenAPI document. */
export type RestShapeChoice = ((query: Record<string, unknown>) => RestShape) & { variants: readonly RestShape[] };

export type RestMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** How long shared caches may keep a GET's answer (src/rest/caching.ts). */
export interface RestCache {
  /** Seconds a shared cache may keep the answer to a caller without a key; a keyed answer is always private. */
  publicMaxAge: number;
}

/** What the OpenAPI document (src/openapi/) says of a route beyond its schemas and its operation. */
export interface RestDocs {
  summary: string;
  description?: string;
  tag: string;
  /** When the route answers 409 CONFLICT; absent: it never does. */
  conflict?: string;
}

export interface RestRoute {
  /** Path with `:name` segments, e.g. /api/products/:slug; each segment is the variable of its name. */
  path: string;
  method: RestMethod;
  document: string;
  /** Query parameters of REST's own, beyond the arguments of the operation's fields. */
  extraQuery?: z.ZodRawShape;
  /** Variables of REST's own (directive switches), from the validated query. */
  switches?: (query: Record<string, unknown>) => Record<string, unknown>;
  /** A path such as /api/v1/stock answers one record or a list depending on its parameters. */
  shape: RestShape | RestShapeChoice;
  /** Success status; 200 unless given. */
  status?: number;
  /** A GET that shared caches may keep; absent: private, revalidated on every use. */
  cache?: RestCache;
  /** Honours Idempotency-Key (its operation reports how it used the key: src/rest/replay.ts). */
  idempotent?: true;
  docs: RestDocs;
}

/** productId or sku: one record; neither: a page of all (docs/api.md, Stock and prices). */
function recordShape(one: string, list: string, notFound: string): RestShapeChoice {
  const record: RestShape = { kind: 'one', field: one, notFound };
  const page: RestShape = { kind: 'list', field: list };
  const choose = (q: Record<string, unknown>): RestShape => (q.productId !== undefined || q.sku !== undefined ? record : page);
  return Object.assign(choose, { variants: [record, page] });
}

// The catalogue read without a key, which shared caches may keep: categories and suppliers (the
// spec advises clients to cache them) for five minutes, products and their reviews for one.
const PUBLIC_FIVE_MINUTES: RestCache = { publicMaxAge: 300 };
/** Also how long shared caches may keep a GraphQL catalogue query answered over GET (src/pipeline/graphql-http-caching.ts). */
export const PUBLIC_ONE_MINUTE: RestCache = { publicMaxAge: 60 };

const recordSwitch = (q: Record<string, unknown>) => ({ one: q.productId !== undefined || q.sku !== undefined });

export const restRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/api/products',
    cache: PUBLIC_ONE_MINUTE,
    document: `query RestProducts($page: Int, $limit: Int, $search: String, $categoryId: ID, $supplierId: ID,
        $minPrice: Decimal, $maxPrice: Decimal, $featured: Boolean, $sortBy: ProductSort) {
      products(page: $page, limit: $limit, search: $search, categoryId: $categoryId, supplierId: $supplierId,
          minPrice: $minPrice, maxPrice: $maxPrice, featured: $featured, sortBy: $sortBy) {
        items { ...RestProduct } ${META}
      }
    } ${PRODUCT_FIELDS}`,
    shape: { kind: 'list', field: 'products' },
    docs: {
      tag: 'Products',
      summary: 'List active products',
      description: 'Filtered, sorted and paginated. `search` matches name, English name, description and SKU, ignoring case and diacritics; `categoryId` includes the subcategories.',
    },
  },
  {
    method: 'GET',
    path: '/api/products/:slug',
    cache: PUBLIC_ONE_MINUTE,
    document: `query RestProduct($slug: String!) { product(slug: $slug) { ...RestProduct } } ${PRODUCT_FIELDS}`,
    shape: { kind: 'one', field: 'product', notFound: 'Product' },
    docs: { tag: 'Products', summary: 'An active product by slug' },
  },
  {
    method: 'GET',
    path: '/api/categories',
    cache: PUBLIC_FIVE_MINUTES,
    extraQuery: { includeProducts: booleanParam.optional() },
    document: `query RestCategories($page: Int, $limit: Int, $parentOnly: Boolean, $includeProducts: Boolean!) {
      categories(page: $page, limit: $limit, parentOnly: $parentOnly) {
        items { ...RestCategory products(limit: 4) @include(if: $includeProducts) { id name slug price images } }
        ${META}
      }
    } ${CATEGORY_FIELDS}`,
    switches: (q) => ({ includeProducts: q.includeProducts === true }),
    shape: { kind: 'list', field: 'categories' },
    docs: {
      tag: 'Categories',
      summary: 'List active categories',
      description:
        'In display order. Without `page` and `limit` every category is returned and there is no `meta`; with either, a page with `meta`. `includeProducts` adds up to 4 of the most viewed products of each category’s subtree.',
    },
  },
  {
    method: 'GET',
    path: '/api/categories/:slug',
    cache: PUBLIC_FIVE_MINUTES,
    document: `query RestCategory($slug: String!) { category(slug: $slug) { ...RestCategory } } ${CATEGORY_FIELDS}`,
    shape: { kind: 'one', field: 'category', notFound: 'Category' },
    docs: { tag: 'Categories', summary: 'An active category by slug, with its subcategories' },
  },
  {
    method: 'GET',
    path: '/api/suppliers',
    cache: PUBLIC_FIVE_MINUTES,
    document: `query RestSuppliers($page: Int, $limit: Int, $search: String, $verified: Boolean, $city: String,
        $county: String, $sortBy: SupplierSort) {
      suppliers(page: $page, limit: $limit, search: $search, verified: $verified, city: $city, county: $county, sortBy: $sortBy) {
        items { ...RestSupplier } ${META}
      }
    } ${SUPPLIER_FIELDS}`,
    shape: { kind: 'list', field: 'suppliers' },
    docs: {
      tag: 'Suppliers',
      summary: 'List active suppliers',
      description: '`city` and `county` match whole names, ignoring case and diacritics (`timis` finds Timiș).',
    },
  },
  {
    method: 'GET',
    path: '/api/suppliers/:id',
    cache: PUBLIC_FIVE_MINUTES,
    document: `query RestSupplier($id: ID!) { supplier(id: $id) { ...RestSupplier } } ${SUPPLIER_FIELDS}`,
    shape: { kind: 'one', field: 'supplier', notFound: 'Supplier' },
    docs: { tag: 'Suppliers', summary: 'An active supplier by id' },
  },
  {
    method: 'GET',
    path: '/api/products/:slug/reviews',
    cache: PUBLIC_ONE_MINUTE,
    document: `query RestProductReviews($slug: String!, $page: Int, $limit: Int, $rating: Int, $sortBy: ReviewSort) {
      productReviews(slug: $slug, page: $page, limit: $limit, rating: $rating, sortBy: $sortBy) { items { ${REVIEW_FIELDS} } ${META} }
    }`,
    shape: { kind: 'list', field: 'productReviews', notFound: 'Product' },
    docs: { tag: 'Reviews', summary: 'Reviews of an active product', description: REVIEWS_DESCRIPTION },
  },
  {
    method: 'GET',
    path: '/api/suppliers/:id/reviews',
    cache: PUBLIC_ONE_MINUTE,
    document: `query RestSupplierReviews($id: ID!, $page: Int, $limit: Int, $rating: Int, $sortBy: ReviewSort) {
      supplierReviews(id: $id, page: $page, limit: $limit, rating: $rating, sortBy: $sortBy) { items { ${REVIEW_FIELDS} } ${META} }
    }`,
    shape: { kind: 'list', field: 'supplierReviews', notFound: 'Supplier' },
    docs: {
      tag: 'Reviews',
      summary: 'Reviews of an active supplier’s products',
      description: `Only the reviews of the supplier’s active products. ${REVIEWS_DESCRIPTION}`,
    },
  },
  {
    method: 'GET',
    path: '/api/orders',
    document: `query RestOrders($page: Int, $limit: Int, $status: OrderStatus) {
      orders(page: $page, limit: $limit, status: $status) { items { ...RestOrder } ${META} }
    } ${ORDER_FIELDS}`,
    shape: { kind: 'list', field: 'orders' },
    docs: { tag: 'Orders', summary: 'List the caller’s orders', description: 'The orders of the account behind the key (any of its keys), newest first.' },
  },
  {
    method: 'POST',
    path: '/api/orders',
    document: `mutation RestCreateOrder($input: CreateOrderInput!) { createOrder(input: $input) { ...RestOrder } } ${ORDER_FIELDS}`,
    shape: { kind: 'one', field: 'createOrder' },
    status: 201,
    idempotent: true,
    docs: {
      tag: 'Orders',
      summary: 'Place an order',
      description:
        'Prices are taken from the catalogue and stock is reserved in one transaction. Send an `Idempotency-Key` to make retries safe: the same key and body within 24 hours answer the first response again (with `Idempotent-Replayed: true`).',
      conflict: 'Not enough stock for an item (details per short item), or the Idempotency-Key was used with another body or is still being processed',
    },
  },
  {
    method: 'GET',
    path: '/api/orders/:id',
    document: `query RestOrder($id: ID!) { order(id: $id) { ...RestOrder } } ${ORDER_FIELDS}`,
    shape: { kind: 'one', field: 'order', notFound: 'Order' },
    docs: { tag: 'Orders', summary: 'One of the caller’s orders', description: 'Another account’s order is not found, exactly like an id never used.' },
  },
  {
    method: 'POST',
    path: '/api/orders/:id/cancel',
    document: `mutation RestCancelOrder($id: ID!, $reason: String) { cancelOrder(id: $id, reason: $reason) { ...RestOrder } } ${ORDER_FIELDS}`,
    shape: { kind: 'one', field: 'cancelOrder', notFound: 'Order' },
    idempotent: true,
    docs: {
      tag: 'Orders',
      summary: 'Cancel one of the caller’s orders',
      description:
        'While the order is PENDING or CONFIRMED. The units it took go back to stock in the same transaction, and the cancellation (with the optional `reason`) is added to its `history`. The body may be left out. Send an `Idempotency-Key` to make retries safe.',
      conflict: STATUS_CONFLICT,
    },
  },
  {
    method: 'GET',
    path: '/api/supplier/orders',
    document: `query RestSupplierOrders($page: Int, $limit: Int, $status: OrderStatus) {
      supplierOrders(page: $page, limit: $limit, status: $status) { items { ...RestOrder } ${META} }
    } ${ORDER_FIELDS}`,
    shape: { kind: 'list', field: 'supplierOrders' },
    docs: {
      tag: 'Supplier',
      summary: 'List the orders of the caller’s supplier',
      description: 'For a key whose account acts for a supplier (keys CLI `member add`): the orders placed with that supplier, newest first.',
    },
  },
  {
    method: 'GET',
    path: '/api/supplier/orders/:id',
    document: `query RestSupplierOrder($id: ID!) { supplierOrder(id: $id) { ...RestOrder } } ${ORDER_FIELDS}`,
    shape: { kind: 'one', field: 'supplierOrder', notFound: 'Order' },
    docs: { tag: 'Supplier', summary: 'One order of the caller’s supplier', description: 'Another supplier’s order is not found, exactly like an id never used.' },
  },
  {
    method: 'POST',
    path: '/api/supplier/orders/:id/status',
    document: `mutation RestUpdateOrderStatus($id: ID!, $input: OrderStatusInput!) { updateOrderStatus(id: $id, input: $input) { ...RestOrder } } ${ORDER_FIELDS}`,
    shape: { kind: 'one', field: 'updateOrderStatus', notFound: 'Order' },
    idempotent: true,
    docs: {
      tag: 'Supplier',
      summary: 'Move an order of the caller’s supplier to its next status',
      description:
        'Along the order lifecycle; SHIPPED needs `trackingNumber` and `trackingCarrier` (`trackingUrl` optional). Cancelling gives back the stock the order took. Every change is added to the order’s `history` with the optional `note`. Send an `Idempotency-Key` to make retries safe.',
      conflict: STATUS_CONFLICT,
    },
  },
  {
    method: 'GET',
    path: '/api/me',
    document: `query RestMe {
      me { id email name companyName phone plan createdAt key { id prefix name plan scopes limit windowSeconds expiresAt } }
    }`,
    shape: { kind: 'one', field: 'me' },
    docs: {
      tag: 'Account',
      summary: 'The caller’s account and key',
      description: 'The account behind the key presenting the request, and that key: its plan, scopes and rate limit.',
    },
  },
  {
    method: 'GET',
    path: '/api/me/addresses',
    // `items:` makes `me` a list of its addresses, as the list shape reads one (without meta: never paginated).
    document: `query RestMyAddresses { me { items: addresses { ${ADDRESS_FIELDS} } } }`,
    shape: { kind: 'list', field: 'me' },
    docs: {
      tag: 'Account',
      summary: 'The caller’s saved addresses',
      description: `Every address saved on the account (at most ${MAX_ADDRESSES}), the default first, then oldest first. An id is what \`addressId\` of \`POST /api/orders\` takes.`,
    },
  },
  {
    method: 'GET',
    path: '/api/v1/stock',
    document: `query RestStock($productId: ID, $sku: String, $page: Int, $limit: Int, $one: Boolean!) {
      stockRecord(productId: $productId, sku: $sku) @include(if: $one) { ${STOCK_FIELDS} }
      stockRecords(page: $page, limit: $limit) @skip(if: $one) { items { ${STOCK_FIELDS} } ${META} }
    }`,
    switches: recordSwitch,
    shape: recordShape('stockRecord', 'stockRecords', 'Stock record'),
    docs: {
      tag: 'Stock',
      summary: 'Stock of one product or of all',
      description: 'Every product, inactive ones included. With `productId` or `sku` (both: they must name the same product) `data` is one record; with neither, a page of all records by id.',
    },
  },
  {
    method: 'GET',
    path: '/api/v1/prices',
    document: `query RestPrices($productId: ID, $sku: String, $page: Int, $limit: Int, $one: Boolean!) {
      priceRecord(productId: $productId, sku: $sku) @include(if: $one) { ${PRICE_FIELDS} }
      priceRecords(page: $page, limit: $limit) @skip(if: $one) { items { ${PRICE_FIELDS} } ${META} }
    }`,
    switches: recordSwitch,
    shape: recordShape('priceRecord', 'priceRecords', 'Price record'),
    docs: {
      tag: 'Prices',
      summary: 'Price of one product or of all',
      description: 'Every product, inactive ones included. With `productId` or `sku` (both: they must name the same product) `data` is one record; with neither, a page of all records by id.',
    },
  },
  {
    method: 'PATCH',
    path: '/api/v1/stock/:productId',
    document: `mutation RestUpdateStock($productId: ID!, $input: StockUpdateInput!) { updateStock(productId: $productId, input: $input) { ${STOCK_FIELDS} } }`,
    shape: { kind: 'one', field: 'updateStock', notFound: 'Product' },
    docs: {
      tag: 'Stock',
      summary: 'Change the stock of one of the caller’s supplier’s products',
      description: 'For a key whose account acts for the product’s supplier. Only the fields sent change; a product of another supplier is not found.',
    },
  },
  {
    method: 'PATCH',
    path: '/api/v1/prices/:productId',
    document: `mutation RestUpdatePrice($productId: ID!, $input: PriceUpdateInput!) { updatePrice(productId: $productId, input: $input) { ${PRICE_FIELDS} } }`,
    shape: { kind: 'one', field: 'updatePrice', notFound: 'Product' },
    docs: {
      tag: 'Prices',
      summary: 'Change the price of one of the caller’s supplier’s products',
      description:
        'For a key whose account acts for the product’s supplier. Only the fields sent change; `compareAtPrice: null` removes the reference price, which must otherwise stay above the price. Product lists, totals and searches see the new price from the next request on. A product of another supplier is not found.',
    },
  },
  {
    method: 'POST',
    path: '/api/webhooks',
    document: `mutation RestCreateWebhook($input: WebhookEndpointInput!) { createWebhookEndpoint(input: $input) { ${WEBHOOK_FIELDS} secret } }`,
    shape: { kind: 'one', field: 'createWebhookEndpoint' },
    status: 201,
    docs: {
      tag: 'Webhooks',
      summary: 'Register a webhook endpoint',
      description:
        'Events of the chosen types are POSTed to `url`, signed per Standard Webhooks with the `secret` this answer holds: it is shown this once. The URL must be https in production and must not resolve to a private, loopback or link-local address. The endpoint is this key’s: only this key manages it, it is sent only events the key may read (`order.*` needs read:orders, `stock.low` read:stock and an account acting for a supplier), and nothing once the key is revoked or expires.',
      conflict: 'The account already has the most endpoints it may have (details: limit)',
    },
  },
  {
    method: 'GET',
    path: '/api/webhooks',
    document: `query RestWebhooks { webhookEndpoints { items { ${WEBHOOK_FIELDS} } } }`,
    shape: { kind: 'list', field: 'webhookEndpoints' },
    docs: { tag: 'Webhooks', summary: 'The webhook endpoints this key registered', description: 'Oldest first, never paginated; secrets are never shown again. Endpoints of the account’s other keys, and those made in the dashboard, are not listed.' },
  },
  {
    method: 'GET',
    path: '/api/webhooks/:id',
    document: `query RestWebhook($id: ID!) { webhookEndpoint(id: $id) { ${WEBHOOK_FIELDS} } }`,
    shape: { kind: 'one', field: 'webhookEndpoint', notFound: 'Webhook endpoint' },
    docs: { tag: 'Webhooks', summary: 'One of the webhook endpoints this key registered', description: '`status` is DISABLED once it failed for a whole retry schedule (3 days by default).' },
  },
  {
    method: 'DELETE',
    path: '/api/webhooks/:id',
    document: `mutation RestDeleteWebhook($id: ID!) { deleteWebhookEndpoint(id: $id) { ${WEBHOOK_FIELDS} } }`,
    shape: { kind: 'one', field: 'deleteWebhookEndpoint', notFound: 'Webhook endpoint' },
    docs: { tag: 'Webhooks', summary: 'Delete a webhook endpoint', description: 'Its pending deliveries are dropped with it; the answer is the endpoint as it was.' },
  },
  {
    method: 'POST',
    path: '/api/webhooks/:id/test',
    document: `mutation RestTestWebhook($id: ID!) { testWebhookEndpoint(id: $id) { ${DELIVERY_FIELDS} } }`,
    shape: { kind: 'one', field: 'testWebhookEndpoint', notFound: 'Webhook endpoint' },
    status: 202,
    docs: {
      tag: 'Webhooks',
      summary: 'Send a webhook.test event to an endpoint',
      description: 'Queued like any event (a disabled endpoint is sent it too); the answer is its delivery, to follow in the delivery log.',
    },
  },
  {
    method: 'POST',
    path: '/api/webhooks/:id/enable',
    document: `mutation RestEnableWebhook($id: ID!) { enableWebhookEndpoint(id: $id) { ${WEBHOOK_FIELDS} } }`,
    shape: { kind: 'one', field: 'enableWebhookEndpoint', notFound: 'Webhook endpoint' },
    docs: { tag: 'Webhooks', summary: 'Enable a disabled webhook endpoint', description: 'New events are sent to it again; deliveries that failed while it was disabled stay failed.' },
  },
  {
    method: 'GET',
    path: '/api/webhooks/:id/deliveries',
    document: `query RestWebhookDeliveries($id: ID!, $page: Int, $limit: Int, $status: WebhookDeliveryStatus) {
      webhookDeliveries(id: $id, page: $page, limit: $limit, status: $status) { items { ${DELIVERY_FIELDS} } ${META} }
    }`,
    shape: { kind: 'list', field: 'webhookDeliveries', notFound: 'Webhook endpoint' },
    docs: {
      tag: 'Webhooks',
      summary: 'The delivery log of a webhook endpoint',
      description: 'Newest first: each event sent to it, its status, attempts (every one in `attemptLog`, with at most 1 KB of each answer), last HTTP status and when the next retry is due.',
    },
  },
];
