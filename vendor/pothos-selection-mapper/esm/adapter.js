/**
 * The ORM boundary: what an adapter tells the traversal, and where the selections it produces
 * accumulate. One class, so an adapter's state and helpers have a home and the members it has
 * nothing to say about are inherited rather than checked for.
 */ /**
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
 */ export class Adapter {
    /**
   * Whether a fragment under `@defer` is walked. `EntryOptions.skipDeferredFragments` overrides
   * it for one entry point.
   */ skipDeferredFragments = true;
    /**
   * Whether merging `query` into `node` would leave everything already selected as it is. A yes
   * or no; `firstConflict` is the version that names a key. Inherited: nothing ever conflicts.
   */ canMergeQuery(_node, _query, _options) {
        return true;
    }
    /**
   * The first key of a type-level `query` that conflicts with what `node` holds, for the error
   * message that names it. Inherited: none.
   */ firstConflict(_node, _query) {
        return undefined;
    }
    /**
   * `mergeQuery` from another node: everything `from` holds, merged into `node`. Inherited: the
   * round trip through `toQuery`.
   */ mergeNode(node, from) {
        this.mergeQuery(node, this.toQuery(from));
    }
    /** `canMergeQuery` node to node. Inherited: the round trip through `toQuery`. */ canMergeNode(node, from) {
        return this.canMergeQuery(node, this.toQuery(from));
    }
}

//# sourceMappingURL=adapter.js.map