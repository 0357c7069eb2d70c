import type { GraphQLResolveInfo } from 'graphql';
import type { Position } from './types.js';
/**
 * What a plan records for one field whose selection was merged: the mappings of the fields walked
 * beneath it, and, for a field a select function planned, the position it was planned at, so a
 * resolver can ask the same question of it that the select path asked. A static selection records
 * the shared empty mapping and has no position: it ran no callback that could have read one.
 */
export interface Mapping {
    nested: Mappings;
    position?: Position;
}
/**
 * Mappings keyed by `${Type}@${relative.path}`, where the relative path is the aliased field path
 * from the walked field to the mapped field (`Post@edges.node.author`). A resolver beneath the
 * walked field finds a mapping iff the plan that would have loaded its data was merged.
 */
export type Mappings = Record<string, Mapping>;
/** The mapping of a static selection: nothing can ever be recorded beneath one. */
export declare const EMPTY_MAPPING: Mapping;
/**
 * Adopts the first mapping recorded for a key; a later one deep-unions into a copy, so a recorded
 * mapping is never changed after the fact (two plays may accept a different subset of the fields).
 */
export declare function unionMappings(into: Mapping | undefined, from: Mapping): Mapping;
/** The string keys of a response path joined by `.`; list indices are dropped. */
export declare function responsePath(path: GraphQLResolveInfo['path'] | undefined): string;
export declare function cacheKey(type: string, path: GraphQLResolveInfo['path']): string;
/**
 * Records the mappings of a plan rooted at the field `info` resolves, under that field's path.
 * The plan loaded the whole field, so its mappings answer for every row of it: they go to the
 * shared tier. Multiple plans can contribute to one field (Relay nodes of different model
 * types share the list's path), so later contributions replace matching keys and retain others.
 */
export declare function setLoaderMappings(ctx: object, info: GraphQLResolveInfo, mappings: Mappings): void;
/**
 * Records a row's mappings and scopes its descendants to this concrete field execution. A
 * descendant's parent is a different object, so row identity alone cannot carry its plan through
 * a relation, connection wrapper, or list. The execution path retains indices to isolate siblings.
 */
export declare function setRowMappings(ctx: object, info: GraphQLResolveInfo, mappings: Mappings): void;
/**
 * Records the mapping of the field `info` resolves (under its own parent type) along with the
 * mappings beneath it, so both the field's resolver and the resolvers below it can look
 * themselves up. `row` is the value the field is about to resolve with: the parent row when it
 * was loaded by the planned query, and the reloaded row when the fallback loader fetched it.
 */
export declare function setFieldMapping(ctx: object, info: GraphQLResolveInfo, mapping: Mapping, row: unknown): void;
/**
 * `setFieldMapping` for a plan that loaded `row` alone: the field's own mapping is recorded
 * against `row` rather than claimed for the whole field, so a sibling row the plan never loaded
 * keeps falling back instead of reading the entry and resolving against data it does not carry.
 *
 * Descendants inherit the mapping through this field's execution scope, even when their parent
 * is a child object or a connection wrapper rather than the row that was reloaded.
 */
export declare function setRowFieldMapping(ctx: object, info: GraphQLResolveInfo, mapping: Mapping, row: unknown): void;
/**
 * The mapping recorded for the field at `path` on `row`, preferring one recorded for that row
 * over the plan's. `row` is the value whose data the mapping describes — the resolver's parent.
 */
export declare function getLoaderMapping(ctx: object, path: GraphQLResolveInfo['path'], type: string, row?: unknown): Mapping | null;
//# sourceMappingURL=loader-map.d.ts.map