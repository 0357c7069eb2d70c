import { type GraphQLNamedType, type GraphQLResolveInfo } from 'graphql';
import type { Adapter, NodeBase } from './adapter.js';
import { type Mapping, type Mappings } from './loader-map.js';
import type { Node } from './node.js';
import type { EntryOptions, Position, WalkedType } from './types.js';
/**
 * One merge a traversal collected, in the order it happened: a type's selection, a same-model
 * variant's, a nested selection's relation query, or a field's. A play folds the list into a
 * node; nothing is merged, accepted or rejected before then.
 *
 * A record holds its query by reference, so a select function that mutates the query it returned
 * after returning it changes what a later play builds — a bug in the select function. Nothing
 * copies it: a query is opaque to this package, which could only copy one by round-tripping it
 * through the adapter on every field.
 */
export type RootMerge<Query> = {
    kind: 'type';
    query: Query;
} | {
    kind: 'query';
    query: Query;
} | {
    kind: 'variant';
    type: WalkedType;
    variant: WalkedType;
    query: Query;
} | {
    kind: 'field';
    key: string;
    alias: string;
    query: Query;
    mapping: Mapping;
};
/**
 * A plan played: the node its merges built and the mappings the accepted merges recorded. A play
 * owns its node, so a caller may merge into one without disturbing the plan or another play.
 */
export interface PlayedPlan<Model, Query, NodeType extends NodeBase<Model> = Node<Model>> {
    plan: Plan<Model, Query, NodeType>;
    root: NodeType;
    mappings: Mappings;
}
/**
 * What a plan takes from whatever created it: an entry point's options, or the plan it hangs
 * beneath. A parent plan satisfies this, so a nested plan is created from its parent directly
 * with nothing allocated to carry the values across.
 */
export interface PlanSource {
    context: object;
    info: GraphQLResolveInfo;
    /** Whether a fragment under `@defer` is walked; defaults to the adapter's own setting. */
    skipDeferredFragments?: boolean;
}
export declare class Plan<Model, Query, NodeType extends NodeBase<Model> = Node<Model>> {
    readonly adapter: Adapter<Model, Query, NodeType>;
    readonly position?: Position | undefined;
    /** Merged first by a play a caller gives no seed of its own. */
    readonly initial?: Query | undefined;
    readonly context: object;
    readonly info: GraphQLResolveInfo;
    readonly skipDeferredFragments: boolean;
    /** What the plan loads. A node is created for it once per play. */
    readonly model: Model;
    /**
     * The merges waiting on a user callback that returned a promise, in the order they were
     * appended. Absent until the first one: a synchronous plan never creates a promise.
     */
    pending?: Promise<void>;
    /** The traversal's whole output: every merge it collected, in the order it collected them. */
    private readonly merges;
    /**
     * The play `settle` ran, which a later play takes whole when the seed conflicts with none of
     * it. Never handed out: a play that reuses it copies it into a node of its own.
     */
    private played?;
    /**
     * The plan for the field `info` resolves, settled, or undefined when paths are given and
     * nothing is selected under them. Declared synchronous: the result is a promise only when a
     * select function returned one, and must then be awaited. The plan is handed out rather than
     * played, so a plugin that owes a resolver a synchronous query builder settles this first and
     * plays it behind the resolver's own selection with `plan.query(select)`.
     */
    static fromInfo<Model, Query, NodeType extends NodeBase<Model> = Node<Model>>(adapter: Adapter<Model, Query, NodeType>, options: EntryOptions<Query>): Plan<Model, Query, NodeType> | undefined;
    /**
     * The plan loading the field `info` resolves for its parent row, played. The loaded row
     * replaces the parent the field resolver sees, so besides the field's own selection it
     * carries the parent type's type-level selection. The field is what the row is loaded for, so
     * it is merged first and a type-level relation whose arguments conflict with it is left out.
     */
    static forParentRow<Model, Query, NodeType extends NodeBase<Model> = Node<Model>>(adapter: Adapter<Model, Query, NodeType>, context: object, info: GraphQLResolveInfo, skipDeferredFragments?: boolean): PlayedPlan<Model, Query, NodeType>;
    /**
     * `source` is an entry point's options for a root plan and the parent plan for a nested one,
     * which is why `initial` is passed beside it: it belongs to the root alone and a nested plan
     * must never inherit one. `position` is where the field this plan hangs beneath is, undefined
     * when there is no field above the plan.
     */
    constructor(adapter: Adapter<Model, Query, NodeType>, source: PlanSource, type: GraphQLNamedType, position?: Position | undefined, 
    /** Merged first by a play a caller gives no seed of its own. */
    initial?: Query | undefined);
    /**
     * The plan beneath one nested selection: this plan's adapter, context, info and deferred
     * setting, with merges of its own. It hangs beneath the field whose select function made it.
     */
    nested(type: GraphQLNamedType, position: Position): Plan<Model, Query, NodeType>;
    /** Appends one merge to the list a play folds. The traversal's only way to add to a plan. */
    collect(merge: RootMerge<Query>): void;
    /**
     * The relation query of the nested selection this plan was made for. It takes the head of the
     * list, so it is merged before the fields walked beneath it whether the callback that produced
     * it answered at once or resolved after the walk. A nested plan has at most one.
     */
    collectQuery(query: Query): void;
    /**
     * Appends the merge of `value` to the plan's pending chain. Only merges are chained, never user
     * code, so a link can never append another and the chain needs no loop. Each link waits on the
     * previous one, so async merges run in the order they were appended. Both promises get a
     * handler at once, so a callback that rejects early is never an unhandled rejection.
     */
    chain<T>(value: PromiseLike<T>, merge: (v: T) => void): void;
    /**
     * A plan that threw synchronously never reaches `finish`, so the merges it had already chained
     * would reject unobserved once their callbacks settle. The throw is what the caller sees.
     */
    abandon(): void;
    /**
     * The single exit of every entry point: `done`, a method of this plan, runs now when nothing is
     * pending, else after every pending merge, in which case the result is a promise behind the
     * declared synchronous type. Fixed arity, so the synchronous call allocates nothing.
     */
    finish<R>(done: (this: this) => R): R;
    finish<A, R>(done: (this: this, arg: A) => R, arg: A): R;
    /**
     * A fresh node with this plan's merges folded into it, and the mappings of the merges it took.
     * `seed` takes the place of the plan's own `initial`: it is merged before anything the traversal
     * collected, so a relation or computed value the document plans with other arguments loses, and
     * its field falls back to loading on its own.
     *
     * Synchronous, and runs no user callback, so a play of an async plan costs no more than a play
     * of a synchronous one.
     */
    play(seed?: Query): PlayedPlan<Model, Query, NodeType>;
    /**
     * The plan played behind `seed`, its mappings recorded for the resolvers beneath it, and its
     * node serialized. A cached plan accepts the current resolver info to scope each execution.
     * Every play records its mappings on the request context; an adapter whose
     * resolvers read a loaded row another way simply never looks them up.
     */
    query(seed?: Query, info?: GraphQLResolveInfo): Query;
    /**
     * The plan played once, so a play-time error — a conflict between two type-level selections —
     * is raised now rather than only inside a `query()` a resolver may never call. That play is
     * kept, and a later one whose seed conflicts with none of it takes it whole, so settling costs
     * the resolver's own play nothing.
     */
    settle(): this;
    /**
     * The plan played, with `type`'s type-level selection merged in behind it, minus what conflicts
     * with the field the row is loaded for. A parent-row plan is never replayed behind a caller's
     * selection, so it plays once, here.
     */
    enterParentType(type: GraphQLNamedType): PlayedPlan<Model, Query, NodeType>;
    /**
     * A settled play that a play seeded with `seed` can take whole, or undefined. A seed conflicting
     * with nothing the settled play holds changes no decision it made, since every rejection was
     * against something the seed leaves in place — unless the seed stands in for the plan's own
     * `initial`, which the settled play already merged.
     */
    private reusable;
    /**
     * Unlike a field-level select, a type-level selection has no per-field fallback, so a relation
     * argument or a computed value that conflicts with what is already in the node is an error
     * rather than a rejection.
     */
    private mergeVariant;
}
//# sourceMappingURL=plan.d.ts.map