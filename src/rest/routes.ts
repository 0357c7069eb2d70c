import type { Scope } from '../auth/scopes.js';
import type { Context } from '../context.js';
import { parseCategoryListInput } from '../modules/categories/categories.service.js';
import { parseRecordQuery, READ_PRICES, READ_STOCK } from '../modules/inventory/inventory.service.js';
import { idempotencyOutcome, rememberRestResponse, type IdempotencyOutcome, type RestResponse } from '../modules/orders/idempotency.js';
import { parseCreateOrderInput, parseOrderListInput, READ_ORDERS, WRITE_ORDERS } from '../modules/orders/orders.service.js';
import { parseProductListInput } from '../modules/products/products.service.js';
import { parseSupplierListInput } from '../modules/suppliers/suppliers.service.js';
import { parseInput } from '../validation.js';
import { z } from 'zod';

// The documented REST paths, each one GraphQL operation on the same schema. The selection set
// is the REST representation: what a path returns is read here and nowhere else.

const PRODUCT_FIELDS = /* GraphQL */ `
  fragment RestProduct on Product {
    id name nameEn slug description price compareAtPrice minOrder stock sku images specifications
    isActive isFeatured viewCount vatRate vatCategory createdAt updatedAt
    supplier { id companyName verified rating }
    category { id name slug }
    _count { reviews favorites }
  }`;

const CATEGORY_FIELDS = /* GraphQL */ `
  fragment RestCategory on Category {
    id name nameEn slug description image parentId order isActive createdAt
    children { id name slug }
    _count { products }
  }`;

const SUPPLIER_FIELDS = /* GraphQL */ `
  fragment RestSupplier on Supplier {
    id companyName cui address city county phone email description logo website verified rating reviewCount createdAt
    _count { products reviews }
  }`;

const ORDER_FIELDS = /* GraphQL */ `
  fragment RestOrder on Order {
    id orderNumber status currency subtotal discount shippingCost tax total notes
    shippingAddress { fullName companyName phone email address city county postalCode }
    trackingNumber trackingCarrier trackingUrl createdAt
    items { id productId quantity price total product { id name slug price images } }
    buyer { id email name companyName phone }
    supplier { id companyName verified rating }
  }`;

const STOCK_FIELDS = 'id sku stock lowStockThreshold trackInventory minOrder isActive updatedAt';
const PRICE_FIELDS = 'id sku price compareAtPrice vatRate updatedAt';

const META = 'meta { page limit total totalPages }';

/** How the operation's result becomes the envelope: a list (items, and meta when paginated) or one record. */
export type RestShape = { kind: 'list'; field: string } | { kind: 'one'; field: string; notFound: string };

export type RestMethod = 'GET' | 'POST';

/** How a route's Idempotency-Key outcome reaches the HTTP response (replay header, stored body). */
export interface RestIdempotency {
  outcome: (ctx: Context) => IdempotencyOutcome | undefined;
  remember: (ctx: Context, response: RestResponse) => Promise<void>;
}

export interface RestRoute {
  /** Path with `:name` segments, e.g. /api/products/:slug */
  path: string;
  method: RestMethod;
  /** Checked before anything else is read, with the same gate the GraphQL field applies again. */
  scopes?: readonly Scope[];
  /** Validates the query string (all values strings); throws VALIDATION_ERROR naming each bad parameter. */
  parseQuery: (raw: Record<string, string>) => Record<string, unknown>;
  /** POST: validates the JSON body with the schema the GraphQL field uses; its output becomes variables. */
  parseBody?: (raw: unknown) => Record<string, unknown>;
  document: string;
  variables: (query: Record<string, unknown>, params: Record<string, string>, body?: Record<string, unknown>) => Record<string, unknown>;
  /** A path such as /api/v1/stock answers one record or a list depending on its parameters. */
  shape: RestShape | ((query: Record<string, unknown>) => RestShape);
  /** Success status; 200 unless given. */
  status?: number;
  idempotency?: RestIdempotency;
}

const noQueryParams = z.object({}).strict();
const parseNone = (raw: Record<string, string>) => parseInput(noQueryParams, raw);

/** productId or sku: one record; neither: a page of all (CONTRACT.md, Stock and prices). */
const recordShape = (one: string, list: string, notFound: string) => (q: Record<string, unknown>): RestShape =>
  q.productId !== undefined || q.sku !== undefined ? { kind: 'one', field: one, notFound } : { kind: 'list', field: list };

const recordVariables = (q: Record<string, unknown>) => ({ ...q, one: q.productId !== undefined || q.sku !== undefined });

/** GraphQL enum values are the REST values in upper case (newest → NEWEST). */
const upperSort = (q: Record<string, unknown>) => ({ ...q, sortBy: String(q.sortBy).toUpperCase() });

export const restRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/api/products',
    parseQuery: parseProductListInput,
    document: `query RestProducts($page: Int, $limit: Int, $search: String, $categoryId: ID, $supplierId: ID,
        $minPrice: Float, $maxPrice: Float, $featured: Boolean, $sortBy: ProductSort) {
      products(page: $page, limit: $limit, search: $search, categoryId: $categoryId, supplierId: $supplierId,
          minPrice: $minPrice, maxPrice: $maxPrice, featured: $featured, sortBy: $sortBy) {
        items { ...RestProduct } ${META}
      }
    } ${PRODUCT_FIELDS}`,
    variables: upperSort,
    shape: { kind: 'list', field: 'products' },
  },
  {
    method: 'GET',
    path: '/api/products/:slug',
    parseQuery: parseNone,
    document: `query RestProduct($slug: String!) { product(slug: $slug) { ...RestProduct } } ${PRODUCT_FIELDS}`,
    variables: (_q, params) => ({ slug: params.slug }),
    shape: { kind: 'one', field: 'product', notFound: 'Product' },
  },
  {
    method: 'GET',
    path: '/api/categories',
    parseQuery: parseCategoryListInput,
    document: `query RestCategories($page: Int, $limit: Int, $parentOnly: Boolean, $includeProducts: Boolean!) {
      categories(page: $page, limit: $limit, parentOnly: $parentOnly) {
        items { ...RestCategory products(limit: 4) @include(if: $includeProducts) { id name slug price images } }
        ${META}
      }
    } ${CATEGORY_FIELDS}`,
    variables: (q) => ({ ...q, includeProducts: q.includeProducts === true }),
    shape: { kind: 'list', field: 'categories' },
  },
  {
    method: 'GET',
    path: '/api/categories/:slug',
    parseQuery: parseNone,
    document: `query RestCategory($slug: String!) { category(slug: $slug) { ...RestCategory } } ${CATEGORY_FIELDS}`,
    variables: (_q, params) => ({ slug: params.slug }),
    shape: { kind: 'one', field: 'category', notFound: 'Category' },
  },
  {
    method: 'GET',
    path: '/api/suppliers',
    parseQuery: parseSupplierListInput,
    document: `query RestSuppliers($page: Int, $limit: Int, $search: String, $verified: Boolean, $city: String,
        $county: String, $sortBy: SupplierSort) {
      suppliers(page: $page, limit: $limit, search: $search, verified: $verified, city: $city, county: $county, sortBy: $sortBy) {
        items { ...RestSupplier } ${META}
      }
    } ${SUPPLIER_FIELDS}`,
    variables: upperSort,
    shape: { kind: 'list', field: 'suppliers' },
  },
  {
    method: 'GET',
    path: '/api/suppliers/:id',
    parseQuery: parseNone,
    document: `query RestSupplier($id: ID!) { supplier(id: $id) { ...RestSupplier } } ${SUPPLIER_FIELDS}`,
    variables: (_q, params) => ({ id: params.id }),
    shape: { kind: 'one', field: 'supplier', notFound: 'Supplier' },
  },
  {
    method: 'GET',
    path: '/api/orders',
    scopes: [READ_ORDERS],
    parseQuery: parseOrderListInput,
    document: `query RestOrders($page: Int, $limit: Int, $status: OrderStatus) {
      orders(page: $page, limit: $limit, status: $status) { items { ...RestOrder } ${META} }
    } ${ORDER_FIELDS}`,
    variables: (q) => q,
    shape: { kind: 'list', field: 'orders' },
  },
  {
    method: 'POST',
    path: '/api/orders',
    scopes: [WRITE_ORDERS],
    parseQuery: parseNone,
    parseBody: parseCreateOrderInput,
    document: `mutation RestCreateOrder($input: CreateOrderInput!) { createOrder(input: $input) { ...RestOrder } } ${ORDER_FIELDS}`,
    variables: (_q, _params, body) => ({ input: body }),
    shape: { kind: 'one', field: 'createOrder', notFound: 'Order' },
    status: 201,
    idempotency: { outcome: idempotencyOutcome, remember: rememberRestResponse },
  },
  {
    method: 'GET',
    path: '/api/orders/:id',
    scopes: [READ_ORDERS],
    parseQuery: parseNone,
    document: `query RestOrder($id: ID!) { order(id: $id) { ...RestOrder } } ${ORDER_FIELDS}`,
    variables: (_q, params) => ({ id: params.id }),
    shape: { kind: 'one', field: 'order', notFound: 'Order' },
  },
  {
    method: 'GET',
    path: '/api/v1/stock',
    scopes: [READ_STOCK],
    parseQuery: parseRecordQuery,
    document: `query RestStock($productId: ID, $sku: String, $page: Int, $limit: Int, $one: Boolean!) {
      stockRecord(productId: $productId, sku: $sku) @include(if: $one) { ${STOCK_FIELDS} }
      stockRecords(page: $page, limit: $limit) @skip(if: $one) { items { ${STOCK_FIELDS} } ${META} }
    }`,
    variables: recordVariables,
    shape: recordShape('stockRecord', 'stockRecords', 'Stock record'),
  },
  {
    method: 'GET',
    path: '/api/v1/prices',
    scopes: [READ_PRICES],
    parseQuery: parseRecordQuery,
    document: `query RestPrices($productId: ID, $sku: String, $page: Int, $limit: Int, $one: Boolean!) {
      priceRecord(productId: $productId, sku: $sku) @include(if: $one) { ${PRICE_FIELDS} }
      priceRecords(page: $page, limit: $limit) @skip(if: $one) { items { ${PRICE_FIELDS} } ${META} }
    }`,
    variables: recordVariables,
    shape: recordShape('priceRecord', 'priceRecords', 'Price record'),
  },
];
