import SchemaBuilder from '@pothos/core';
import PrismaPlugin from '@pothos/plugin-prisma';
import RelayPlugin from '@pothos/plugin-relay';
import { fieldRulesPlugin } from './field-rules.js';
import { exposedColumnsPlugin } from './exposed-columns.js';
import type { ApiContext } from '../context/context.js';
import type { Money } from '../rules/money.js';
import type PrismaTypes from '../generated/pothos-prisma-types.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';

// The one SchemaBuilder: plugins and scalar shapes only. Types live in src/domain/*.
export const builder = new SchemaBuilder<{
  Context: ApiContext;
  PrismaTypes: PrismaTypes;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    Decimal: { Input: Money; Output: number | { toString(): string } };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  // First: its resolver wrapper runs before plugin-prisma's, and its field config hook after (see
  // field-rules.ts). exposedColumns wraps plugin-prisma's wrapper of a column (exposed-columns.ts).
  plugins: [fieldRulesPlugin, exposedColumnsPlugin, PrismaPlugin, RelayPlugin],
  defaultFieldNullability: false,
  prisma: {
    // The client comes from the context so that one schema serves any number of app instances.
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    filterConnectionTotalCount: true,
    // Lookups return early for ids that cannot exist, leaving the query unused on purpose; an
    // unused query that matters shows up as extra statements, which the SQL-count tests catch.
    onUnusedQuery: null,
  },
  relay: {
    clientMutationId: 'omit',
    cursorType: 'String',
    // Every cursor a connection hands out leaves signed (field-rules.ts, graphql/cursors.ts).
    cursorFieldOptions: { issuesCursor: true },
    startCursorFieldOptions: { issuesCursor: true },
    endCursorFieldOptions: { issuesCursor: true },
    // Types keep their database id as `id` (REST shares it; clients key caches on it): the Node
    // interface's global id is `globalId`. `node`/`nodes` are declared in graphql/nodes.ts, where
    // global ids are validated and each type's scopes and ownership apply.
    idFieldName: 'globalId',
    idFieldOptions: { description: 'The Node id, for node(id:) and nodes(ids:): opaque, unlike the database `id`' },
    nodeTypeOptions: { description: 'An object node(id:) refetches by its globalId' },
    nodeQueryOptions: false,
    nodesQueryOptions: false,
  },
});
