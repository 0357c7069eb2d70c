import { type FieldNode, type FragmentDefinitionNode, type FragmentSpreadNode, type GraphQLNamedType, type GraphQLResolveInfo, type GraphQLSchema, type InlineFragmentNode } from 'graphql';
export interface IndirectPathSegment {
    type?: string;
    name: string;
}
export type PathSegment = string | IndirectPathSegment;
/**
 * Set on a type's extensions (by the errors plugin, or by hand) to say that a selection on the
 * type is really a selection on `getType()`, found under `path` (or any of `paths`).
 */
export interface IndirectInclude {
    getType: () => string;
    path?: IndirectPathSegment[];
    paths?: IndirectPathSegment[][];
}
export interface Match {
    /** The GraphQL type of the matched field's return type */
    type: GraphQLNamedType;
    field: FieldNode;
    /** Aliased field names from the starting selection to the matched field */
    path: string[];
    deferred: boolean;
}
export interface MatchOptions {
    /** A type-level path prepended to every path. */
    prefix?: IndirectPathSegment[];
    /** The alias path the returned matches' paths start with. */
    path?: string[];
    deferred?: boolean;
}
/** Just enough of an `Adapter` to look a type's model up. */
export interface ModelLookup<Model> {
    modelFor: (type: GraphQLNamedType) => Model | undefined;
}
/** The include a type carries, if any. */
export declare function includeOf(type: GraphQLNamedType): IndirectInclude | undefined;
/** Follows `pothosIndirectInclude.getType()` until a type without one. */
export declare function resolveType(schema: GraphQLSchema, type: GraphQLNamedType): GraphQLNamedType;
/**
 * The model of a type, following indirect includes, which `Adapter.modelFor` does not. Every
 * model question the plan asks goes through here.
 */
export declare function modelOf<Model>(adapter: ModelLookup<Model>, schema: GraphQLSchema, type: GraphQLNamedType): Model | undefined;
/**
 * `matches` without the ones whose field returns a model other than `targetType`'s. Several
 * implementations of an interface may share a field name while returning different models, and
 * their selections must never be merged into the same query. Types without a model always match,
 * and a target without one filters nothing.
 */
export declare function matchesForModel<Model>(adapter: ModelLookup<Model>, schema: GraphQLSchema, matches: Match[], targetType: GraphQLNamedType): Match[];
/**
 * One selection set being read, as `eachSelectedField` hands it to a visitor.
 *
 * `type` is the type of the selection set. `expectedType` is the type a field must be selected on
 * for it to count: a field applies only while the two are the same, which is what stops a
 * same-named field under an unrelated fragment from being seen. `resolveFragmentTypes` moves both.
 */
export interface SelectionLevel {
    type: GraphQLNamedType;
    expectedType: GraphQLNamedType;
    /** Aliased field names from the starting selection down to this level. */
    path: string[];
    /** Whether a `@defer` was crossed on the way to this level. */
    deferred: boolean;
}
/**
 * What `eachSelectedField` calls at every field that applies. Returning `true` stops the
 * traversal; anything else continues it.
 */
export type FieldVisitor = (field: FieldNode, level: SelectionLevel) => boolean | void;
/**
 * Every field selected at the end of one of `paths`, each with the `deferred` flag
 * `eachSelectedField` computed for it.
 */
export declare function findMatches(info: GraphQLResolveInfo, type: GraphQLNamedType, selection: FieldNode | FragmentDefinitionNode | InlineFragmentNode, paths: IndirectPathSegment[][], options?: MatchOptions): Match[];
/**
 * The first field selected at the end of `path`, in document order, or undefined. The traversal
 * stops at it. The match's `deferred` flag is reported but this function's caller — the
 * `selectedFieldNode` handed to a select function — discards it; see `eachSelectedField` for why
 * over-reporting a deferred selection there is safe.
 */
export declare function firstMatch(info: GraphQLResolveInfo, type: GraphQLNamedType, selection: FieldNode, path: IndirectPathSegment[], { prefix }?: Pick<MatchOptions, 'prefix'>): Match | undefined;
/**
 * The names of the fields the document selects directly beneath the field being resolved, seen
 * through any wrapper on its return type. Every row of a list resolves the field with the same
 * field nodes, so the result is memoised on them for the execution — on the nodes rather than on
 * `info.fieldNodes`, which graphql-js 17 builds anew for every resolve, and beneath that on
 * `info.variableValues` (one object per execution) and the return type.
 *
 * `@skip` and `@include` are honoured, `@defer` is not: a name selected only under a deferred
 * fragment is reported as selected even when the plan that loads the row will not walk it. This
 * is the over-reporting side of the divergence `eachSelectedField` describes, which is the safe
 * side to gate a column or a count on. A caller that needs to know what the plan will actually
 * load must ask the plan.
 */
export declare function selectedFieldNames(context: object, info: GraphQLResolveInfo): ReadonlySet<string>;
export declare function collectSelectedFieldNames(info: GraphQLResolveInfo, returnType?: import("graphql").GraphQLNamedOutputType, fieldNodes?: readonly FieldNode[]): ReadonlySet<string>;
/**
 * Turns a path handed to `nestedSelection` into an include. A string segment is a field of the
 * type the previous segment reached; the walker narrows through fragments on its own. A
 * `{ name, type }` segment pins the fragment type condition the field must be found under, and
 * is a field of that type.
 */
export declare function normalizeInclude(path: PathSegment[], type: GraphQLNamedType, expectedType: GraphQLNamedType | undefined, schema: GraphQLSchema): IndirectInclude;
/**
 * Whether a field or fragment is under `@skip(if: true)` or `@include(if: false)`. Asked of every
 * selection the traversal reads, so it answers a selection carrying no directive at all — nearly
 * every one — without building a directive's argument values twice.
 */
export declare function isSkipped(info: GraphQLResolveInfo, selection: FieldNode | FragmentSpreadNode | InlineFragmentNode): boolean;
/** Whether a fragment is under `@defer` (when the schema declares the directive). */
export declare function isDeferred(info: GraphQLResolveInfo, node: FragmentSpreadNode | InlineFragmentNode): boolean;
//# sourceMappingURL=matches.d.ts.map