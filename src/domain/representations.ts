import { execute, parse, validate, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { KeyCaller } from '../context/actor.js';
import type { ApiContext } from '../context/context.js';
import type { Prisma } from '../generated/prisma/client.js';

// Each resource's representation: the fields the REST API answers for it (src/rest/routes.ts
// builds its operations from these) and that webhook events carry as their `data`, so an event's
// data is exactly what `GET` on the resource answers its reader.

export const PRODUCT_FIELDS = /* GraphQL */ `
  fragment RestProduct on Product {
    id name nameEn slug description price compareAtPrice minOrder stock sku images specifications
    isActive isFeatured viewCount vatRate vatCategory createdAt updatedAt
    supplier { id companyName verified rating }
    category { id name slug }
    _count { reviews favorites }
  }`;

export const CATEGORY_FIELDS = /* GraphQL */ `
  fragment RestCategory on Category {
    id name nameEn slug description image parentId order isActive createdAt
    children { id name slug }
    _count { products }
  }`;

export const SUPPLIER_FIELDS = /* GraphQL */ `
  fragment RestSupplier on Supplier {
    id companyName cui address city county phone email description logo website verified rating reviewCount createdAt
    _count { products reviews }
  }`;

export const ORDER_FIELDS = /* GraphQL */ `
  fragment RestOrder on Order {
    id orderNumber status currency subtotal discount shippingCost tax total notes
    shippingAddress { fullName companyName phone email address city county postalCode }
    trackingNumber trackingCarrier trackingUrl createdAt
    items { id productId quantity price total product { id name slug price images } }
    buyer { id email name companyName phone }
    supplier { id companyName verified rating }
    history { status at actor note }
  }`;

export const ADDRESS_FIELDS = 'id label fullName companyName phone email address city county postalCode isDefault createdAt';

export const REVIEW_FIELDS = 'id rating title comment images isVerified verifiedPurchase supplierResponse createdAt';

export const STOCK_FIELDS = 'id sku stock lowStockThreshold trackInventory minOrder isActive updatedAt';

export const PRICE_FIELDS = 'id sku price compareAtPrice vatRate updatedAt';

export const WEBHOOK_FIELDS = 'id url events description status disabledAt failingSince createdAt';

export const DELIVERY_FIELDS =
  'id event { id type createdAt } status attempts lastStatus lastError nextRetryAt deliveredAt createdAt attemptLog { number startedAt finishedAt outcome statusCode error responseBody durationMs }';

/** What events carry: a resource read as `reader` would read it over the API. */
const EVENT_DOCUMENTS = {
  order: `query EventOrder($id: ID!) { resource: order(id: $id) { ...RestOrder } } ${ORDER_FIELDS}`,
  stock: `query EventStock($id: ID!) { resource: stockRecord(productId: $id) { ${STOCK_FIELDS} } }`,
} as const;

export type RepresentedResource = keyof typeof EVENT_DOCUMENTS;

/** A resource's representation as `reader` reads it with `tx` (the change's own transaction); null when it sees none. */
export type Representation = (tx: Prisma.TransactionClient, reader: KeyCaller, resource: RepresentedResource, id: string) => Promise<unknown>;

/**
 * Reads representations by running their operations on `schema` (given, not imported: the schema
 * is built from the modules), each in the context `contextFor` makes for the reader.
 */
export function createRepresentation(schema: GraphQLSchema, contextFor: (tx: Prisma.TransactionClient, reader: KeyCaller) => ApiContext): Representation {
  const documents = new Map<RepresentedResource, DocumentNode>();
  for (const [resource, source] of Object.entries(EVENT_DOCUMENTS) as [RepresentedResource, string][]) {
    const document = parse(source);
    const errors = validate(schema, document);
    if (errors.length) throw new Error(`The ${resource} representation does not fit the schema: ${errors.map((e) => e.message).join('; ')}`);
    documents.set(resource, document);
  }
  return async (tx, reader, resource, id) => {
    const result = (await execute({ schema, document: documents.get(resource)!, variableValues: { id }, contextValue: contextFor(tx, reader) })) as ExecutionResult;
    if (result.errors?.length) throw result.errors[0];
    return (result.data as { resource?: unknown } | null | undefined)?.resource ?? null;
  };
}
