/**
 * The node one root accumulates into — a model, its arguments, its columns, its relations and its
 * computed values — and the merge, compare and conflict rules over a tree of them, shared by every
 * adapter whose query is a tree of that shape.
 *
 * A subclass supplies the only format-specific parts: `visitQuery`, the key loop of the ORM's own
 * query, and `toQuery`, the node written back. The traversal never reaches in here — it drives the
 * `Adapter` contract, of which this implements everything but those two.
 */ "use strict";
Object.defineProperty(exports, "__esModule", {
    value: true
});
function _export(target, all) {
    for(var name in all)Object.defineProperty(target, name, {
        enumerable: true,
        get: Object.getOwnPropertyDescriptor(all, name).get
    });
}
_export(exports, {
    get NodeAdapter () {
        return NodeAdapter;
    },
    get createNode () {
        return createNode;
    },
    get relation () {
        return relation;
    }
});
const _core = require("@pothos/core");
const _adapter = require("./adapter.js");
const _deepequal = require("./deep-equal.js");
function createNode(model) {
    return {
        model,
        args: {},
        columns: new Set(),
        relations: new Map(),
        computed: new Map()
    };
}
function relation(node, name, model, value) {
    if ((0, _core.isThenable)(value)) {
        throw new _core.PothosValidationError(`Relation "${name}" was given a promise. Await nestedSelection() (or a helper built on it, such as getQuery) inside an async selection function.`);
    }
    let child = node.relations.get(name);
    if (!child) {
        child = createNode(model);
        node.relations.set(name, child);
    }
    return child;
}
class NodeAdapter extends _adapter.Adapter {
    /**
   * One merger and one merge check per adapter, re-used down the tree: each saves and restores
   * the node it is at rather than allocating a visitor per level, so a merge allocates only what
   * the subclass's own `visitQuery` does. They cannot be this object — a lenient merge runs a
   * check inside itself, so one `this` could not hold both cursors.
   */ merger = new Merger(this);
    mergeCheck = new MergeCheck(this);
    createNode(model) {
        return createNode(model);
    }
    mergeQuery(node, query, options) {
        this.merger.run(node, query, options);
    }
    canMergeQuery(node, query, options) {
        return this.mergeCheck.run(node, query, options);
    }
    /**
   * Whether `value` cannot join `computed` under `name`. A `deepEqual` against the value already
   * there, which is what an adapter whose computed values are plain values wants; drizzle
   * compares its `extras` by identity, and prisma overrides it for the `_count: true` wildcard.
   */ computedConflicts(computed, name, value) {
        return computed.has(name) && !(0, _deepequal.deepEqual)(computed.get(name), value);
    }
    /**
   * The first top-level key of `query` that conflicts with `node`. Top-level only, so the error
   * names the key a user wrote rather than something nested beneath it.
   */ firstConflict(node, query) {
        let found;
        this.visitQuery(query, node.model, {
            column () {},
            allColumns () {},
            args () {},
            relation: (name, _model, nested)=>{
                const child = node.relations.get(name);
                if (!found && child && !new MergeCheck(this).run(child, nested)) {
                    found = {
                        kind: 'relation',
                        name
                    };
                }
            },
            computed: (name, value, kind = 'extra')=>{
                if (!found && this.computedConflicts(node.computed, name, value)) {
                    found = {
                        kind,
                        name
                    };
                }
            }
        });
        return found;
    }
    /** Node to node, without the serialize/merge round trip. */ mergeNode(into, from) {
        if (from.columns === null) {
            into.columns = null;
        } else if (into.columns) {
            for (const column of from.columns){
                into.columns.add(column);
            }
        }
        if (hasKeys(from.args)) {
            into.args = from.args;
        }
        for (const [name, value] of from.computed){
            into.computed.set(name, value);
        }
        for (const [name, child] of from.relations){
            this.mergeNode(relation(into, name, child.model, undefined), child);
        }
    }
    /** `canMergeQuery` node to node, likewise. */ canMergeNode(into, from) {
        if (!(0, _deepequal.deepEqual)(into.args, from.args)) {
            return false;
        }
        for (const [name, value] of from.computed){
            if (this.computedConflicts(into.computed, name, value)) {
                return false;
            }
        }
        for (const [name, child] of from.relations){
            const existing = into.relations.get(name);
            if (existing && !this.canMergeNode(existing, child)) {
                return false;
            }
        }
        return true;
    }
}
/** One query folded into a node, in place. */ class Merger {
    adapter;
    node;
    /** A relation query must add no columns; the plan beneath it adds the ones it needs. */ asQuery = false;
    /** A conflicting relation or computed value is left out, not merged. Top level only. */ lenient = false;
    constructor(adapter){
        this.adapter = adapter;
    }
    run(node, query, options) {
        this.node = node;
        this.asQuery = options?.asQuery ?? false;
        this.lenient = options?.lenient ?? false;
        this.adapter.visitQuery(query, node.model, this);
    }
    column(name) {
        this.node.columns?.add(name);
    }
    allColumns() {
        if (!this.asQuery) {
            this.node.columns = null;
        }
    }
    relation(name, model, query) {
        const parent = this.node;
        if (this.lenient) {
            const existing = parent.relations.get(name);
            // The subtree is checked whole, so once the relation is accepted it merges whole.
            if (existing && !new MergeCheck(this.adapter).run(existing, query)) {
                return;
            }
        }
        const child = relation(parent, name, model, query);
        const { asQuery, lenient } = this;
        this.node = child;
        this.asQuery = false;
        this.lenient = false;
        this.adapter.visitQuery(query, model, this);
        this.node = parent;
        this.asQuery = asQuery;
        this.lenient = lenient;
    }
    computed(name, value) {
        if (this.lenient && this.adapter.computedConflicts(this.node.computed, name, value)) {
            return;
        }
        this.node.computed.set(name, value);
    }
    args(args) {
        if (hasKeys(args)) {
            this.node.args = args;
        }
    }
}
/**
 * Whether a query merges into a node without changing what is already selected. Runs the whole
 * query even after the first failure (a rejection is the rare path) so a `visitQuery` stays a
 * plain loop.
 */ class MergeCheck {
    adapter;
    node;
    ignoreArgs = false;
    ok = true;
    constructor(adapter){
        this.adapter = adapter;
    }
    run(node, query, options) {
        this.node = node;
        this.ignoreArgs = options?.ignoreArgs ?? false;
        this.ok = true;
        this.adapter.visitQuery(query, node.model, this);
        return this.ok;
    }
    column() {}
    allColumns() {}
    relation(name, model, query) {
        const child = this.node.relations.get(name);
        if (!this.ok || !child) {
            return;
        }
        const parent = this.node;
        const { ignoreArgs } = this;
        // Below the top, a relation's own arguments are part of what is already selected.
        this.node = child;
        this.ignoreArgs = false;
        this.adapter.visitQuery(query, model, this);
        this.node = parent;
        this.ignoreArgs = ignoreArgs;
    }
    computed(name, value) {
        if (this.ok && this.adapter.computedConflicts(this.node.computed, name, value)) {
            this.ok = false;
        }
    }
    args(args) {
        if (this.ok && !this.ignoreArgs && !(0, _deepequal.deepEqual)(this.node.args, args)) {
            this.ok = false;
        }
    }
}
/** Whether an object has any own enumerable key. */ function hasKeys(value) {
    return Object.keys(value).length > 0;
}

//# sourceMappingURL=node.js.map