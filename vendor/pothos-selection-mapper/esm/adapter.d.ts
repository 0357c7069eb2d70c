/**
 * The ORM boundary: what an adapter tells the traversal, and where the selections it produces
 * accumulate. One class, so an adapter's state and helpers have a home and the members it has
 * nothing to say about are inherited rather than checked for.
 */
import type { GraphQLField, GraphQLNamedType } from 'graphql';
import type { MergeOptions, SelectFn, TypeLevelConflict, WalkedType } from './types.js';
/**
 * What the traversal requires of a node: the model it loads. `Model` is the adapter's model
 * description: whatever it needs to look a relation's target up by name. One object per model,
 * so model identity is the same as model equality.
 */
export interface NodeBase<Model> {
    model: Model;
}
/**
 * The ORM boundary, translation only. `Model` is the model description a node carries, `Query`
 * the ORM's own selection format (prisma `{ select, include, ...args }`, drizzle
 * `DBQueryConfig`), opaque to the traversal, and `NodeType` what selections accumulate into, of
 * which the traversal reads only `model`.
 *
 * Six members must be answered: three translate a schema into queries (`modelFor`,
 * `typeSelection`, `fieldSelection`) and three accumulate them (`createNode`, `mergeQuery`,
 * `toQuery`). The four below those are the merge rules, inherited with the answer an adapter with
 * no conflicts to report wants: nothing ever conflicts, and node-to-node work round-trips through
 * `toQuery`. An adapter that gives every consumer of a relation its own slot inherits all four.
 *
 * `NodeAdapter` in node.ts overrides all four over a concrete query tree, and is what the prisma
 * and drizzle adapters extend; an adapter whose query is not such a tree extends this directly.
 */
export declare abstract class Adapter<Model, Query, NodeType extends NodeBase<Model>> {
    /**
     * Whether a fragment under `@defer` is walked. `EntryOptions.skipDeferredFragments` overrides
     * it for one entry point.
     */
    skipDeferredFragments: boolean;
    /**
     * The model a type carries, or undefined. Does not follow indirect includes (the walker's own
     * `modelOf` does). One object per model: identity is model identity.
     */
    abstract modelFor(type: GraphQLNamedType): Model | undefined;
    /** What the type always needs, merged whenever the type is entered, or undefined. */
    abstract typeSelection(type: GraphQLNamedType): Query | undefined;
    /**
     * What the field selects: a static query, a select function, or nothing. `type` is the type the
     * field is being walked on (its parent type, or a same-model type the plan moved to), for an
     * adapter that classifies a selection's keys against the parent model.
     */
    abstract fieldSelection(field: GraphQLField<unknown, unknown>, type: WalkedType): Query | SelectFn<Query> | undefined;
    /** A fresh, empty node for `model`. */
    abstract createNode(model: Model): NodeType;
    /** Folds `query` into `node`, in place. Never mutates `query`. */
    abstract mergeQuery(node: NodeType, query: Query, options?: MergeOptions): void;
    /** The node as a query of this ORM's format. */
    abstract toQuery(node: NodeType): Query;
    /**
     * Whether merging `query` into `node` would leave everything already selected as it is. A yes
     * or no; `firstConflict` is the version that names a key. Inherited: nothing ever conflicts.
     */
    canMergeQuery(_node: NodeType, _query: Query, _options?: MergeOptions): boolean;
    /**
     * The first key of a type-level `query` that conflicts with what `node` holds, for the error
     * message that names it. Inherited: none.
     */
    firstConflict(_node: NodeType, _query: Query): TypeLevelConflict | undefined;
    /**
     * `mergeQuery` from another node: everything `from` holds, merged into `node`. Inherited: the
     * round trip through `toQuery`.
     */
    mergeNode(node: NodeType, from: NodeType): void;
    /** `canMergeQuery` node to node. Inherited: the round trip through `toQuery`. */
    canMergeNode(node: NodeType, from: NodeType): boolean;
}
//# sourceMappingURL=adapter.d.ts.map