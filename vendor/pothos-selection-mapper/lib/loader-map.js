"use strict";
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
    get EMPTY_MAPPING () {
        return EMPTY_MAPPING;
    },
    get cacheKey () {
        return cacheKey;
    },
    get getLoaderMapping () {
        return getLoaderMapping;
    },
    get responsePath () {
        return responsePath;
    },
    get setFieldMapping () {
        return setFieldMapping;
    },
    get setLoaderMappings () {
        return setLoaderMappings;
    },
    get setRowFieldMapping () {
        return setRowFieldMapping;
    },
    get setRowMappings () {
        return setRowMappings;
    },
    get unionMappings () {
        return unionMappings;
    }
});
const _core = require("@pothos/core");
const EMPTY_MAPPING = Object.freeze({
    nested: Object.freeze({})
});
function unionMappings(into, from) {
    if (!into || into === EMPTY_MAPPING) {
        return from;
    }
    const nested = {
        ...into.nested
    };
    for (const key of Object.keys(from.nested)){
        nested[key] = unionMappings(nested[key], from.nested[key]);
    }
    return into.position === undefined ? {
        nested
    } : {
        nested,
        position: into.position
    };
}
/**
 * Per request context: the mappings recorded so far, and the keys they were recorded under, by
 * the path prefix that rehomed them. `responsePath` drops list indices, so every row of a list
 * rebuilds the same key strings; a prefix builds them once.
 *
 * `mappings` holds what a plan recorded for a whole field: every row of that field was loaded by
 * it, so one mapping per path answers for all of them. `rows` holds a mapping that answers for
 * one row only — because two plans disagreed about a key, or because the plan loaded that row
 * alone. A mapping carries the position a connection pages with, so a row answering from another
 * row's mapping would page with arguments its own data was never fetched with. `rowScoped` stays
 * false while nothing has been recorded there, so a request whose rows were all loaded the same
 * way pays nothing for the row tier.
 */ const cache = (0, _core.createContextCache)(()=>({
        mappings: new Map(),
        rehomed: new Map(),
        rows: new WeakMap(),
        rowScoped: false,
        scopes: newPathNode()
    }));
/**
 * Vendored change 3 (vendor/README.md): a field execution's scope is found by its response path
 * (keys and list indices), in a tree of path segments, not by the identity of its path link.
 * graphql-js makes one link per field execution, so both name the same execution; a compiled
 * executor (graphql-jit) builds a fresh chain of links for every resolver call, and only the
 * path's value still names the execution. Scopes are set top-down, a field's before anything
 * beneath it is resolved, so a context that executes one document again (a subscription's
 * events) re-sets every scope it reads.
 */ function newPathNode() {
    return {
        children: null,
        value: undefined
    };
}
/** The links of `path`, leaf first, in a scratch array (synchronous use only; cleared after). */ const LINKS = [];
function gatherLinks(path) {
    let depth = 0;
    for(let link = path; link; link = link.prev){
        LINKS[depth++] = link;
    }
    return depth;
}
function releaseLinks(depth) {
    for(let i = 0; i < depth; i++){
        LINKS[i] = undefined;
    }
}
/** The node of `path` beneath `root`; made (with the nodes above it) when `make`, else undefined if there is none. */ function pathNode(root, path, make) {
    const depth = gatherLinks(path);
    let node = root;
    for(let i = depth - 1; i >= 0 && node; i--){
        const key = LINKS[i].key;
        let next = node.children?.get(key);
        if (!next && make) {
            next = newPathNode();
            (node.children ??= new Map()).set(key, next);
        }
        node = next;
    }
    releaseLinks(depth);
    return node;
}
/** The scope of the nearest ancestor of `path` that has one, and that ancestor's link (in `path`'s own chain). */ let nearestLink;
function nearestScope(root, path) {
    const depth = gatherLinks(path);
    let node = root;
    let found;
    nearestLink = undefined;
    // LINKS[0] is the field itself: only its ancestors are looked at.
    for(let i = depth - 1; i >= 1; i--){
        node = node.children?.get(LINKS[i].key);
        if (!node) {
            break;
        }
        if (node.value !== undefined) {
            found = node.value;
            nearestLink = LINKS[i];
        }
    }
    releaseLinks(depth);
    return found;
}
/**
 * Memoised per path link, which is created once per field per row and never mutated. graphql-js
 * shares the links above a list between every row of it, so the prefix of a field resolved for
 * each of N rows is built once rather than N times.
 *
 * Vendored change (marketplace gateway, vendor/README.md): the key is kept on the link itself,
 * under a symbol, rather than in a module-wide WeakMap: an entry per link of every request made
 * the map, and the collector's work on it, the largest single cost of a product list (profiles in
 * BENCHMARKS.md). A property goes with the link just the same. A frozen link uses the WeakMap.
 */ const pathKeys = new WeakMap();
const PATH_KEY = Symbol('pothos.responsePath');
function keptKey(path) {
    const key = path[PATH_KEY];
    return key === undefined ? pathKeys.get(path) : key;
}
function keepKey(path, key) {
    if (Object.isExtensible(path)) {
        path[PATH_KEY] = key;
    } else {
        pathKeys.set(path, key);
    }
}
function responsePath(path) {
    if (!path) {
        return '';
    }
    let key = keptKey(path);
    if (key === undefined) {
        const prefix = responsePath(path.prev);
        // A list index contributes nothing, so the link's key is its prefix's.
        key = typeof path.key === 'string' ? prefix ? `${prefix}.${path.key}` : path.key : prefix;
        keepKey(path, key);
    }
    return key;
}
function cacheKey(type, path) {
    return `${type}@${responsePath(path)}`;
}
/**
 * The keys `mappings` is recorded under when it is rehomed beneath `prefix`. Built once per
 * prefix and shared by both tiers: the strings depend on the path and the plan's own keys, never
 * on which row is being recorded for.
 */ function rehomedKeys(cached, prefix) {
    let keys = cached.rehomed.get(prefix);
    if (!keys) {
        keys = new Map();
        cached.rehomed.set(prefix, keys);
    }
    return keys;
}
/** `key`, a plan's own `Type@relative.path`, moved beneath `prefix`. Built once per prefix. */ function rehome(keys, key, prefix) {
    let under = keys.get(key);
    if (under === undefined) {
        const at = key.indexOf('@');
        under = `${key.slice(0, at)}@${prefix}.${key.slice(at + 1)}`;
        keys.set(key, under);
    }
    return under;
}
/** `row` if a mapping can be hung off it. A root field resolves with no parent value at all. */ function ownerOf(row) {
    return typeof row === 'object' && row !== null ? row : null;
}
/**
 * Records `mapping` at `key` for `row`. An unclaimed key takes it, and a key already holding this
 * very mapping needs no write, so the rows after the first write nothing. Only a key two plans
 * disagree about gives the row a mapping of its own — or, with no row to hang it off, nothing, so
 * the resolvers beneath fall back and load their own data.
 */ function claim(cached, key, mapping, row, path) {
    const held = cached.mappings.get(key);
    if (held === undefined) {
        cached.mappings.set(key, mapping);
    } else if (held !== mapping && row) {
        claimForRow(cached, key.slice(0, key.indexOf('@')), mapping, row, path);
    }
}
/**
 * Records `mapping` for this field execution against `row` alone, never in the shared tier. The caller loaded
 * `row` by itself, so an unclaimed key is not the caller's to take: the shared tier answers for
 * every row of a field, and a sibling that was never loaded would read the entry as proof that
 * it had been. With no row to hang it off there is nothing to record, and the resolvers beneath
 * fall back and load their own data.
 */ function claimForRow(cached, type, mapping, row, path) {
    let byPath = cached.rows.get(row);
    if (!byPath) {
        byPath = newPathNode();
        cached.rows.set(row, byPath);
        cached.rowScoped = true;
    }
    const node = pathNode(byPath, path, true);
    (node.value ??= new Map()).set(type, mapping);
}
function setLoaderMappings(ctx, info, mappings) {
    const cached = cache(ctx);
    const prefix = responsePath(info.path);
    const keys = rehomedKeys(cached, prefix);
    const node = pathNode(cached.scopes, info.path, true);
    node.value = node.value ? {
        ...node.value,
        ...mappings
    } : mappings;
    for (const key of Object.keys(mappings)){
        cached.mappings.set(rehome(keys, key, prefix), mappings[key]);
    }
}
function setRowMappings(ctx, info, mappings) {
    // Vendored change 2 (vendor/README.md): a scalar or enum field has no descendants to scope, and
    // an entry for it would never be read; plugin-prisma records one for every selected column of
    // every row.
    if (isLeafType(info.returnType)) {
        return;
    }
    pathNode(cache(ctx).scopes, info.path, true).value = mappings;
}
/** A scalar or enum, under any list and non-null wrappers: a type without fields or members. */ function isLeafType(type) {
    let named = type;
    while(named.ofType){
        named = named.ofType;
    }
    return typeof named.getFields !== 'function' && typeof named.getTypes !== 'function';
}
function setFieldMapping(ctx, info, mapping, row) {
    const cached = cache(ctx);
    const owner = ownerOf(row);
    claim(cached, cacheKey(info.parentType.name, info.path), mapping, owner, info.path);
    pathNode(cached.scopes, info.path, true).value = mapping.nested;
}
function setRowFieldMapping(ctx, info, mapping, row) {
    const cached = cache(ctx);
    const owner = ownerOf(row);
    if (owner) {
        claimForRow(cached, info.parentType.name, mapping, owner, info.path);
    }
    pathNode(cached.scopes, info.path, true).value = mapping.nested;
}
function getLoaderMapping(ctx, path, type, row) {
    const cached = cache(ctx);
    if (cached.rowScoped) {
        const owner = ownerOf(row);
        const byPath = owner && cached.rows.get(owner);
        const own = byPath && pathNode(byPath, path, false)?.value?.get(type);
        if (own) {
            return own;
        }
    }
    const scope = nearestScope(cached.scopes, path);
    if (scope) {
        // A different plan may have omitted this field. Do not treat a sibling's shared mapping
        // as proof that this execution loaded it.
        const ancestor = nearestLink;
        nearestLink = undefined;
        return scope[scopedKey(type, path, ancestor)] ?? null;
    }
    return cached.mappings.get(cacheKey(type, path)) ?? null;
}
/**
 * Vendored change 2 (vendor/README.md): the key a scope holds the mapping of the field at `path`
 * under, `${type}@${path relative to the scope}`. A field right beneath the scope, or beneath a
 * list item of it (every column and relation of a list's rows), is keyed by its own name: the key
 * is interned rather than built from the two response paths for every field of every row.
 */ function scopedKey(type, path, ancestor) {
    const prev = path.prev;
    if (typeof path.key === 'string' && (prev === ancestor || prev && typeof prev.key === 'number' && prev.prev === ancestor)) {
        return childKey(type, path.key);
    }
    return `${type}@${responsePath(path).slice(responsePath(ancestor).length + 1)}`;
}
/** `${type}@${name}`, built once per type and field name (up to CHILD_KEYS_MAX of them; aliases are the client's). */ const childKeys = new Map();
const CHILD_KEYS_MAX = 10000;
let childKeyCount = 0;
function childKey(type, name) {
    let byName = childKeys.get(type);
    let key = byName?.get(name);
    if (key === undefined) {
        key = `${type}@${name}`;
        if (childKeyCount < CHILD_KEYS_MAX) {
            if (!byName) {
                byName = new Map();
                childKeys.set(type, byName);
            }
            byName.set(name, key);
            childKeyCount++;
        }
    }
    return key;
}

//# sourceMappingURL=loader-map.js.map