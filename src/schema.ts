import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import './scalars.js';
import './modules/products/products.schema.js';
import './modules/categories/categories.schema.js';
import './modules/suppliers/suppliers.schema.js';
import './modules/reviews/reviews.schema.js';
import './modules/orders/orders.schema.js';
import './modules/inventory/inventory.schema.js';

builder.queryType({});
builder.mutationType({});

export const schema = builder.toSchema();

/** The printed SDL checked in as schema.graphql (test/schema.test.ts fails when it is stale). */
export const printedSchema = () => `${printSchema(lexicographicSortSchema(schema))}\n`;
