import { Adapter, type NodeBase } from './adapter.js';
import type { MergeOptions, TypeLevelConflict } from './types.js';
/**
 * One level of the query being built, used by the prisma and drizzle adapters: the model, its
 * arguments, the columns it selects (`null` = every column, which is final: a node never goes
 * back to named columns), its relations and its computed values (prisma `_count` keys, drizzle
 * `extras`). An adapter whose query is not a tree of this shape extends `Adapter` directly.
 */
export interface Node<Model> extends NodeBase<Model> {
    args: object;
    columns: Set<string> | null;
    relations: Map<string, Node<Model>>;
    computed: Map<string, unknown>;
}
export declare function createNode<Model>(model: Model): Node<Model>;
/**
 * The only way to obtain a child node: get the relation's node or create it. `value` is what the
 * map holds for the relation, checked here because a thenable is an un-awaited
 * `nestedSelection()` that would otherwise be spread as an empty object.
 */
export declare function relation<Model>(node: Node<Model>, name: string, model: Model, value: unknown): Node<Model>;
/**
 * What an adapter reports for one key of its query. Called by `NodeAdapter.visitQuery`; the
 * visitor decides what to do with the key, so merging, checking and conflict-finding share one
 * key loop per adapter instead of one each.
 *
 * A visitor is re-entrant: `relation` reads the nested query with the same visitor, so a
 * `visitQuery` must hold no state of its own across a callback.
 */
export interface QueryVisitor<Model, Query> {
    /** A named column of the model. */
    column(name: string): void;
    /** Every column. Final — a node never goes back to named columns. */
    allColumns(): void;
    /** A relation, with the model it targets and the query selected beneath it. */
    relation(name: string, model: Model, query: Query): void;
    /**
     * A value the ORM computes per row, neither a column nor a relation (prisma `_count` keys,
     * drizzle `extras`). `kind` is what a conflict on it is called to a user of that ORM, whose own
     * word for these is not the shared one (prisma's counts read as a relation).
     */
    computed(name: string, value: unknown, kind?: TypeLevelConflict['kind']): void;
    /**
     * The query arguments, normalized. A non-empty set replaces whatever the node holds. Reported
     * on every pass, empty or not, since a merge check compares a query's arguments to the node's
     * whether or not the query has any.
     */
    args(args: object): void;
}
/**
 * The adapter the prisma and drizzle adapters extend: the node tree above with every merge,
 * compare and conflict rule this package owns. A subclass answers `visitQuery` and `toQuery`, plus
 * the three translation members of `Adapter`.
 */
export declare abstract class NodeAdapter<Model, Query> extends Adapter<Model, Query, Node<Model>> {
    /**
     * One merger and one merge check per adapter, re-used down the tree: each saves and restores
     * the node it is at rather than allocating a visitor per level, so a merge allocates only what
     * the subclass's own `visitQuery` does. They cannot be this object — a lenient merge runs a
     * check inside itself, so one `this` could not hold both cursors.
     */
    private readonly merger;
    private readonly mergeCheck;
    /** Every key of `query`, read against `model` and reported to `visit`. The ORM's key loop. */
    abstract visitQuery(query: Query, model: Model, visit: QueryVisitor<Model, Query>): void;
    createNode(model: Model): Node<Model>;
    mergeQuery(node: Node<Model>, query: Query, options?: MergeOptions): void;
    canMergeQuery(node: Node<Model>, query: Query, options?: MergeOptions): boolean;
    /**
     * Whether `value` cannot join `computed` under `name`. A `deepEqual` against the value already
     * there, which is what an adapter whose computed values are plain values wants; drizzle
     * compares its `extras` by identity, and prisma overrides it for the `_count: true` wildcard.
     */
    computedConflicts(computed: ReadonlyMap<string, unknown>, name: string, value: unknown): boolean;
    /**
     * The first top-level key of `query` that conflicts with `node`. Top-level only, so the error
     * names the key a user wrote rather than something nested beneath it.
     */
    firstConflict(node: Node<Model>, query: Query): TypeLevelConflict | undefined;
    /** Node to node, without the serialize/merge round trip. */
    mergeNode(into: Node<Model>, from: Node<Model>): void;
    /** `canMergeQuery` node to node, likewise. */
    canMergeNode(into: Node<Model>, from: Node<Model>): boolean;
}
//# sourceMappingURL=node.d.ts.map