import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from '../graphql/builder.js';
import '../graphql/scalars.js';
import './products/products.schema.js';
import './categories/categories.schema.js';
import './suppliers/suppliers.schema.js';
import './reviews/reviews.schema.js';
import './orders/orders.schema.js';
import './me/me.schema.js';
import './inventory/inventory.schema.js';
import './webhooks/webhooks.schema.js';
import './live/live.schema.js';

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});

export const schema = builder.toSchema();

/** The printed SDL checked in as schema.graphql (test/unit/schema.test.ts fails when it is stale). */
export const printedSchema = () => `${printSchema(lexicographicSortSchema(schema))}\n`;
