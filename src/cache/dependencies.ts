import {
  getNamedType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Caller } from '../context/actor.js';

// What a kept answer depends on: the tags a write names when it changes what the answer shows
// (the triggers of migration *_cache_dependencies write them to "CacheChange" as they commit).
//
// An answer's tags come from two places:
//  - its operation, once per document: the tables behind every object type its selection can
//    reach (TYPE_READS), whatever rows they turn out to be;
//  - its result: the ids of the products it shows, whose stock an order changes. Everything else
//    about a product (price, name, activity, a product added or removed) bumps the "Product" tag,
//    which every answer showing products depends on anyway: a list's membership and order depend
//    on those columns, and they change rarely; stock changes with every order, so it is kept per
//    product, and an order invalidates only the answers that show the products it took.
//  - and, for a key's answer, the key's account ("account:<id>"): its profile, keys, addresses and
//    orders (as buyer or as its supplier's member) are all that account's own.

/** A table's tag: bumped by any change to it (for "Product": anything but a product's stock). */
export type TableTag = 'Product' | 'Category' | 'Supplier' | 'Review';

/**
 * The tables each object type's fields read, its own and those its resolvers count or filter by
 * (a product list filters by category and supplier; a supplier counts its products' reviews).
 * Types of an account's own data read nothing here: the account's tag covers them. Every object
 * type of the schema has an entry (a test holds that), so a new type cannot be cached blind.
 */
export const TYPE_READS: Readonly<Record<string, readonly TableTag[]>> = {
  Product: ['Product', 'Review'],
  ProductCounts: ['Product', 'Review'],
  ProductList: ['Product', 'Category', 'Supplier'],
  QueryProductsConnection: ['Product', 'Category', 'Supplier'],
  QueryProductsConnectionEdge: ['Product'],
  SupplierProductsConnection: ['Product'],
  SupplierProductsConnectionEdge: ['Product'],
  Category: ['Category', 'Product'],
  CategoryCounts: ['Category', 'Product'],
  CategoryList: ['Category', 'Product'],
  QueryCategoriesConnection: ['Category', 'Product'],
  QueryCategoriesConnectionEdge: ['Category'],
  Supplier: ['Supplier', 'Product', 'Review'],
  SupplierCounts: ['Supplier', 'Product', 'Review'],
  SupplierList: ['Supplier', 'Product', 'Review'],
  QuerySuppliersConnection: ['Supplier'],
  QuerySuppliersConnectionEdge: ['Supplier'],
  Review: ['Review', 'Product'],
  ReviewList: ['Review', 'Product', 'Supplier'],
  ReviewSummary: ['Review', 'Product'],
  RatingBucket: ['Review', 'Product'],
  ProductReviewsConnection: ['Review', 'Product'],
  ProductReviewsConnectionEdge: ['Review'],
  // A supplier's stock and price records are its products' rows.
  StockRecord: ['Product'],
  StockRecordList: ['Product'],
  PriceRecord: ['Product'],
  PriceRecordList: ['Product'],
  // Shapes that belong to their parent's reads.
  PaginationMeta: [],
  PageInfo: [],
  // An account's own data.
  Me: [],
  ApiKey: [],
  Address: [],
  Buyer: [],
  Order: [],
  OrderItem: [],
  OrderHistoryEntry: [],
  ShippingAddress: [],
  OrderList: [],
  QueryOrdersConnection: [],
  QueryOrdersConnectionEdge: [],
  QuerySupplierOrdersConnection: [],
  QuerySupplierOrdersConnectionEdge: [],
  // Never kept (their root fields are `uncached`) or never in a query (subscriptions, mutations).
  WebhookEndpoint: [],
  WebhookEndpointList: [],
  WebhookDelivery: [],
  WebhookDeliveryList: [],
  WebhookAttempt: [],
  WebhookEvent: [],
  NewWebhookEndpoint: [],
  OrderEvent: [],
  ProductChange: [],
};

/**
 * Object types whose objects are product rows (their `id` is the product's), with the fields that
 * show what changes per product ("Product:<id>": its stock, the time of its last change, its
 * favourites' count). A position that selects none of them depends on the "Product" tag alone: a
 * category's most viewed products, by name and price, are not made stale by an order.
 */
const PRODUCT_ROWS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['Product', new Set(['stock', 'updatedAt', '_count'])],
  ['StockRecord', new Set(['stock', 'updatedAt'])],
  ['PriceRecord', new Set(['updatedAt'])],
]);

/** Every product row changed in its stock (with "Product:<id>"): for an answer that shows products without their ids. */
export const ANY_PRODUCT_ROW = 'Product:*';
export const productTag = (id: string) => `Product:${id}`;
export const accountTag = (id: string) => `account:${id}`;
export const keyTag = (id: string) => `key:${id}`;
/** A TRUNCATE: every answer. */
export const EVERYTHING = '*';

/** Where product rows stand in a result: a response key, and beneath it more keys or a row. */
interface RowPlan {
  /** Where this position is a product row: whether it shows what changes per product, and the response key of its `id` (null: not selected). */
  row?: { perProduct: boolean; id: string | null };
  children: Map<string, RowPlan>;
}

/** What an operation's answers depend on: its tables, and where to find the product rows of a result. */
export interface OperationDependencies {
  tables: readonly string[];
  rows: RowPlan;
}

/** An operation whose reads cannot be told (an abstract type in its selection): its answers are not kept. */
class UnknownReads extends Error {}

/**
 * The operation's dependencies, derived from its selection over the schema (once per document:
 * cache the result); null when they cannot be told, and its answers are not to be kept.
 */
export function dependenciesOf(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): OperationDependencies | null {
  try {
    return derive(schema, document, operation);
  } catch (error) {
    if (error instanceof UnknownReads) return null;
    throw error;
  }
}

function derive(schema: GraphQLSchema, document: DocumentNode, operation: OperationDefinitionNode): OperationDependencies {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const tables = new Set<string>();
  const root = schema.getRootType(operation.operation);
  const rows: RowPlan = { children: new Map() };
  if (root) walk(root, operation.selectionSet, rows, new Set());
  return { tables: [...tables].sort(), rows };

  function walk(type: GraphQLNamedType, set: SelectionSetNode, plan: RowPlan, spread: Set<string>) {
    if (!isObjectType(type)) throw new UnknownReads(type.name);
    const fields = type.getFields();
    for (const selection of set.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(type, selection.selectionSet, plan, spread);
        continue;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        // A fragment spread twice on one path adds nothing the first did not.
        if (fragment && !spread.has(fragment.name.value)) walk(type, fragment.selectionSet, plan, new Set([...spread, fragment.name.value]));
        continue;
      }
      const key = selection.alias?.value ?? selection.name.value;
      if (plan.row) {
        if (selection.name.value === 'id') plan.row.id = key;
        if (PRODUCT_ROWS.get(type.name)?.has(selection.name.value)) plan.row.perProduct = true;
      }
      const field = fields[selection.name.value];
      if (!field || !selection.selectionSet) continue;
      const named = getNamedType(field.type);
      if (!isObjectType(named)) throw new UnknownReads(named.name);
      const reads = TYPE_READS[named.name];
      if (!reads) throw new Error(`The response cache does not know what ${named.name} reads: add it to TYPE_READS`);
      for (const table of reads) tables.add(table);
      let child = plan.children.get(key);
      if (!child) plan.children.set(key, (child = { children: new Map(), ...(PRODUCT_ROWS.has(named.name) ? { row: { perProduct: false, id: null } } : {}) }));
      walk(named, selection.selectionSet, child, spread);
    }
  }
}

/**
 * The tags of one answer: its operation's tables, the products its data shows, and the caller's
 * account for a key's answer.
 */
export function tagsOf(deps: OperationDependencies, data: unknown, caller: Caller | undefined): string[] {
  const tags = new Set<string>(deps.tables);
  if (caller?.kind === 'key') tags.add(accountTag(caller.accountId));
  collect(deps.rows, data, tags);
  return [...tags];
}

function collect(plan: RowPlan, value: unknown, tags: Set<string>) {
  if (value === null || value === undefined) return;
  if (Array.isArray(value)) {
    for (const item of value) collect(plan, item, tags);
    return;
  }
  if (typeof value !== 'object') return;
  const object = value as Record<string, unknown>;
  if (plan.row?.perProduct) {
    const id = plan.row.id === null ? undefined : object[plan.row.id];
    tags.add(typeof id === 'string' ? productTag(id) : ANY_PRODUCT_ROW);
  }
  for (const [key, child] of plan.children) collect(child, object[key], tags);
}
