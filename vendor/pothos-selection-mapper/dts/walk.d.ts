import { type FieldNode, type GraphQLNamedType } from 'graphql';
import type { NodeBase } from './adapter.js';
import type { Plan } from './plan.js';
import type { WalkedType } from './types.js';
/**
 * One selection to walk into a plan, before any indirect include on `type` is followed: the
 * selection sets of `fieldNodes` (every node selecting one field), walked as `type`.
 */
export interface Branch {
    type: GraphQLNamedType;
    fieldNodes: readonly FieldNode[];
    indirectPath: string[];
    deferred: boolean;
}
/**
 * Walks every branch into `plan`. The types the selections are walked as, and the variants their
 * fragments move to, are all collected before any field is, so type-level selections come first
 * in the merge list and the plan does not depend on which occurrence of a field, or which path
 * match, came first in the document.
 */
export declare function walkBranches<Model, Query, NodeType extends NodeBase<Model>>(plan: Plan<Model, Query, NodeType>, branches: Branch[]): void;
/** Collects what `fieldNode` (a field of `type`) selects. */
export declare function walkField<Model, Query, NodeType extends NodeBase<Model>>(plan: Plan<Model, Query, NodeType>, type: WalkedType, fieldNode: FieldNode, indirectPath: string[]): void;
//# sourceMappingURL=walk.d.ts.map