/**
 * The ORM boundary: what an adapter tells the traversal, and where the selections it produces
 * accumulate. One class, so an adapter's state and helpers have a home and the members it has
 * nothing to say about are inherited rather than checked for.
 */ "use strict";
Object.defineProperty(exports, "__esModule", {
    value: true
});
Object.defineProperty(exports, "Adapter", {
    enumerable: true,
    get: function() {
        return Adapter;
    }
});
class Adapter {
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