import type { ObjectRef } from '@pothos/core';
import { decodeGlobalID, encodeGlobalID, resolveNodes } from '@pothos/plugin-relay';
import type { GraphQLResolveInfo } from 'graphql';
import { z } from 'zod';
import { requireScopesOnce, type Scope } from '../auth/scopes.js';
import type { ApiContext } from '../context/context.js';
import { LIMIT_MAX } from '../shared/pagination.js';
import { builder } from './builder.js';
import { lookupKey, withInput } from './field-rules.js';

// Relay's Node interface, on top of the database ids: every type keeps `id` (the database id, as
// REST has it) and gains `globalId`, the Node interface's id (base64 of `<type>:<database id>`),
// which `node(id:)` and `nodes(ids:)` take back. Each Node type says here, once, how a batch of its
// ids is loaded for the caller: with the scopes and the ownership of the type's own lookup, so a
// global id reaches nothing its type's lookup would not (another account's order is null, as
// `order(id:)` answers it; a key without read:orders is refused as `order(id:)` refuses it).

/** `nodes(ids:)` takes at most this many ids: the bound of every list (`limit`, `first`, `last`). */
export const MAX_NODE_IDS = LIMIT_MAX;

/** How a Node type is refetched. */
export interface NodeRule<Row extends { id: string }> {
  /** The scopes of the type's own lookup; absent: open like the catalogue. `[]`: any valid key. */
  scopes?: readonly Scope[];
  /**
   * The rows among `ids` the caller may see through the type's own lookup (any order, the others
   * left out). Types that load only the columns a query asks for may return just their ids:
   * plugin-prisma loads the rest of a selection by id, in one statement per type.
   */
  load: (ctx: ApiContext, ids: string[]) => Promise<readonly Row[]>;
}

/** The Node types, by GraphQL name: what `node(id:)` may answer (any other type name finds nothing). */
const nodeTypes = new Set<string>();

type Types = typeof builder.$inferSchemaTypes;

/** Makes `ref` a Node: it gains `globalId` and is refetched by `node(id:)` under `rule`. */
export function implementNode<Row extends { id: string }>(ref: ObjectRef<Types, Row>, rule: NodeRule<Row>): void {
  nodeTypes.add(ref.name);
  builder.nodeRef(ref, {
    id: { resolve: (row) => row.id },
    loadManyWithoutCache: async (ids: string[], ctx: ApiContext) => {
      if (rule.scopes) requireScopesOnce(ctx, ...rule.scopes);
      // An id that cannot be one finds nothing, without a query (as `lookupBy` lookups answer it).
      const wellFormed = ids.filter((id) => lookupKey.safeParse(id).success);
      const rows = wellFormed.length ? await rule.load(ctx, wellFormed) : [];
      const byId = new Map(rows.map((row) => [row.id, row]));
      return ids.map((id) => byId.get(id) ?? null);
    },
  });
}

const GLOBAL_ID_MESSAGE = 'is not a global id this API returned (a Node’s globalId)';

/**
 * A global id as this API writes it: base64 of `<type name>:<database id>`, spelt exactly as it was
 * issued. Anything else is refused (VALIDATION_ERROR); a well-formed one of no Node type, or of no
 * row the caller may see, finds nothing (null).
 */
const globalIdParam = z.string({ error: GLOBAL_ID_MESSAGE }).transform((value, ctx) => {
  try {
    const { typename, id } = decodeGlobalID(value);
    if (encodeGlobalID(typename, id) === value) return { typename, id };
  } catch {
    // Falls through to the refusal below.
  }
  ctx.addIssue({ code: 'custom', message: GLOBAL_ID_MESSAGE });
  return z.NEVER;
});

type GlobalId = z.output<typeof globalIdParam>;

const nodeInput = z.object({ id: globalIdParam }).strict();
const nodesInput = z
  .object({ ids: z.array(globalIdParam, { error: 'must be a list of global ids' }).max(MAX_NODE_IDS, `must hold at most ${MAX_NODE_IDS} ids`) })
  .strict();

/** The nodes of `ids` in their order; null for each that names no Node type or nothing the caller may see. */
function loadNodes(ctx: ApiContext, info: GraphQLResolveInfo, ids: readonly GlobalId[]) {
  return resolveNodes(builder, ctx, info, ids.map((id) => (nodeTypes.has(id.typename) ? id : null)));
}

builder.queryFields((t) => ({
  node: t.field({
    type: builder.nodeInterfaceRef(),
    nullable: true,
    description:
      'Refetches any Node by its globalId, with the scopes and ownership of its type’s own lookup (an order: read:orders, and the caller’s own or its supplier’s); null when there is no such node or the caller may not see it',
    args: { id: t.arg.id({ required: true, description: 'A globalId (not the database `id`)' }) },
    // Its answer may be a webhook delivery, whose log changes without a write the response cache follows.
    uncached: true,
    ...withInput(nodeInput, async (input, ctx, _root, info) => (await loadNodes(ctx, info, [input.id]))[0] ?? null),
  }),
  nodes: t.field({
    type: [builder.nodeInterfaceRef()],
    nullable: { list: true, items: true },
    description: `Refetches up to ${MAX_NODE_IDS} Nodes by globalId, in the order given, each as node(id:) would (null where node(id:) answers null)`,
    args: { ids: t.arg.idList({ required: true, description: `At most ${MAX_NODE_IDS} globalIds` }) },
    uncached: true,
    ...withInput(nodesInput, (input, ctx, _root, info) => loadNodes(ctx, info, input.ids)),
  }),
}));
