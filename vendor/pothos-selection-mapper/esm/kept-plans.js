/**
 * Vendored change 4 (vendor/README.md): a root plan kept across requests. A plan is a function of
 * the document (the field's nodes, their fragments), the field's parent type, the values of the
 * variables used beneath the field, and whatever its select callbacks read of the context. One
 * whose walk read nothing of the context and finished synchronously is kept with its document's
 * field node and played again, through a view carrying the request's own context and info, by
 * the next execution of the same field with the same values of those variables: a fixed document
 * (a REST route's) is then walked once per process instead of once per request.
 */ import { visit } from 'graphql';
import { deepEqual } from './deep-equal.js';
/** Kept plans of one field node, each for other values of its variables: past this, a new one is not kept. */ const VARIANTS_MAX = 8;
/** By the first of the field's nodes: a document's nodes, so its plans go when it does. */ const kept = new WeakMap();
/** Whether a plan of these options may be kept: a field planned by itself, with no path, type or initial selection of the caller's. */ export function keepable(options) {
    const { context, typeName, path, paths, initial } = options;
    return typeof context === 'object' && context !== null && !typeName && !path?.length && !paths?.length && initial === undefined;
}
/** The kept plan for this execution of the field, as a view on the request's context and info, or undefined. */ export function keptPlan(adapter, options, skipDeferredFragments) {
    const { info, context } = options;
    const entries = kept.get(info.fieldNodes[0]);
    const entry = entries?.find((e)=>e.adapter === adapter && e.skipDeferredFragments === skipDeferredFragments && e.schema === info.schema && e.parentType === info.parentType && sameNodes(e.fieldNodes, info.fieldNodes) && e.variables.every(([name, value])=>deepEqual(value, info.variableValues[name])));
    return entry?.plan.forRequest(context, info);
}
/**
 * The context a walk sees when its plan may be kept: the request's, through a proxy noting any use
 * of it (a select callback, an argument mapper, a context cache keyed by it). Revoked once the plan
 * is kept, so the kept plan holds no request.
 */ export function contextRecorder(context) {
    const recorder = {
        used: false
    };
    const handler = {};
    for (const trap of Object.getOwnPropertyNames(Reflect)){
        handler[trap] = (...args)=>{
            recorder.used = true;
            return Reflect[trap](...args);
        };
    }
    const { proxy, revoke } = Proxy.revocable(context, handler);
    recorder.proxy = proxy;
    recorder.revoke = revoke;
    return recorder;
}
/**
 * Keeps `plan` (settled, synchronous, its walk done without using the context) for the field `info`
 * resolves, unless the field already has VARIANTS_MAX plans: false then, and the plan stays the
 * request's own (its query is not frozen, since nothing shares it).
 */ export function keepPlan(plan, info, recorder, skipDeferredFragments) {
    let entries = kept.get(info.fieldNodes[0]);
    if (!entries) {
        entries = [];
        kept.set(info.fieldNodes[0], entries);
    }
    if (entries.length >= VARIANTS_MAX) {
        return false;
    }
    recorder.revoke();
    plan.kept = {};
    entries.push({
        adapter: plan.adapter,
        skipDeferredFragments,
        schema: info.schema,
        parentType: info.parentType,
        fieldNodes: [
            ...info.fieldNodes
        ],
        variables: variablesBeneath(info).map((name)=>[
                name,
                info.variableValues[name]
            ]),
        plan
    });
    return true;
}
/** `value` and everything in it frozen: a shared query no caller can change under another. */ export function frozen(value) {
    if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
        for (const key of Reflect.ownKeys(value)){
            frozen(value[key]);
        }
        Object.freeze(value);
    }
    return value;
}
function sameNodes(kept, nodes) {
    return kept.length === nodes.length && kept.every((node, i)=>node === nodes[i]);
}
/**
 * The variables the walk may have read: those used anywhere beneath the field (arguments and
 * directives, through fragments). The field's own arguments are its resolver's, not the walk's.
 */ function variablesBeneath(info) {
    const names = new Set();
    const spread = new Set();
    const scan = (node)=>visit(node, {
            Variable (variable) {
                names.add(variable.name.value);
            },
            FragmentSpread (fragmentSpread) {
                const name = fragmentSpread.name.value;
                const fragment = info.fragments[name];
                if (fragment && !spread.has(name)) {
                    spread.add(name);
                    scan(fragment);
                }
            }
        });
    for (const node of info.fieldNodes){
        if (node.selectionSet) {
            scan(node.selectionSet);
        }
    }
    return [
        ...names
    ];
}
