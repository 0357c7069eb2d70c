import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
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

/**
 * The schema with `@defer` and `@stream`, exactly as Yoga's defer-stream plugin adds them
 * (src/pipeline/graphql-incremental.ts): the plugin then finds them there and serves this schema
 * as it is, so schema.graphql, what the REST face compiles and what introspection shows are one.
 */
function withIncrementalDirectives(built: GraphQLSchema): GraphQLSchema {
  let schema = built;
  const addDirectives = useDeferStream().onSchemaChange as (payload: { schema: GraphQLSchema; replaceSchema(next: GraphQLSchema): void }) => void;
  addDirectives({ schema, replaceSchema: (next) => (schema = next) });
  return schema;
}

export const schema = withIncrementalDirectives(builder.toSchema());

/** The printed SDL checked in as schema.graphql (test/unit/schema.test.ts fails when it is stale). */
export const printedSchema = () => `${printSchema(lexicographicSortSchema(schema))}\n`;
