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
    get collectSelectedFieldNames () {
        return collectSelectedFieldNames;
    },
    get findMatches () {
        return findMatches;
    },
    get firstMatch () {
        return firstMatch;
    },
    get includeOf () {
        return includeOf;
    },
    get isDeferred () {
        return isDeferred;
    },
    get isSkipped () {
        return isSkipped;
    },
    get matchesForModel () {
        return matchesForModel;
    },
    get modelOf () {
        return modelOf;
    },
    get normalizeInclude () {
        return normalizeInclude;
    },
    get resolveType () {
        return resolveType;
    },
    get selectedFieldNames () {
        return selectedFieldNames;
    }
});
const _core = require("@pothos/core");
const _graphql = require("graphql");
function includeOf(type) {
    return type.extensions?.pothosIndirectInclude;
}
function resolveType(schema, type) {
    let target = type;
    let include = includeOf(target);
    while(include){
        target = schema.getType(include.getType());
        include = includeOf(target);
    }
    return target;
}
function modelOf(adapter, schema, type) {
    return adapter.modelFor(resolveType(schema, type));
}
function matchesForModel(adapter, schema, matches, targetType) {
    const targetModel = modelOf(adapter, schema, targetType);
    if (!targetModel) {
        return matches;
    }
    return matches.filter((match)=>{
        const model = modelOf(adapter, schema, match.type);
        return !model || model === targetModel;
    });
}
/**
 * The one selection traversal this package owns. It reads the selections of `selection` at
 * `level`: drops what `@skip`/`@include` removes, classifies every fragment
 * (`resolveFragmentTypes`), notes whether a `@defer` was crossed, descends into the fragments
 * that apply, expands a named fragment once per state (`memo`), and calls `visit` at every field
 * that applies to `level.type`. What happens at a field is the caller's alone, which is the whole
 * of the difference between its consumers: `matchPath` matches one path segment's name and
 * descends with the rest of the path, `collectSelectedFieldNames` adds every name and descends no
 * further, and `firstMatch` takes the first match and stops.
 *
 * `segment` is the indirect-include path segment the caller is looking for, when it has one; only
 * its `type` is read, to pin the type a fragment is expected on.
 *
 * `memo` records the named fragments already expanded, keyed on the fragment, the two types, the
 * deferred flag, and `memoKey` — whatever else the caller varies as it descends (`matchPath`
 * passes its remaining path length and its alias path). A fragment spread more than once at one
 * point of the traversal is expanded once: a valid fragment DAG can spread the same fragment at
 * every level, which makes expanding every spread exponential in its depth. A caller that varies
 * nothing passes no `memoKey`, leaving its memo finer than it needs to be by the deferred flag —
 * a little time, never correctness, for a caller that accumulates.
 *
 * This traversal decides nothing about `@defer`: it reports `level.deferred` and the visitor
 * chooses, and the consumers do not choose alike. `findMatches` reports the flag and
 * `walkBranches` honours it, so a deferred branch is entered but its fields are not walked while
 * `skipDeferredFragments` is set; `firstMatch` (the `selectedFieldNode` a select function is
 * handed) and `selectedFieldNames` both discard it.
 *
 * The last two therefore over-report — they answer "yes, the document selects this" for a
 * selection branch resolution will skip — and that direction is what makes the divergence safe.
 * The plugins use both as gates, and a gate computed from an over-reporting source can only be
 * wrongly true, which loads a column or a count nothing reads; it can never be wrongly false, so
 * no row goes missing and anything under-fetched falls through to the model loader, which
 * re-queries. Make either honour the flag and the gates start under-reporting, which loses data;
 * `matches.test.ts` pins the direction.
 */ function eachSelectedField(info, selection, level, segment, visit, memo, memoKey = '') {
    if (!selection.selectionSet) {
        return false;
    }
    const { type, path, deferred } = level;
    // A segment that pins a type condition pins it here too: its field must be found under a
    // fragment on that type, never taken from a level that merely has a field of the same name.
    const expectedType = pinnedType(info, segment) ?? level.expectedType;
    const fieldsApply = expectedType.name === type.name && ((0, _graphql.isObjectType)(type) || (0, _graphql.isInterfaceType)(type));
    for (const sel of selection.selectionSet.selections){
        if (isSkipped(info, sel)) {
            continue;
        }
        let fragment;
        switch(sel.kind){
            case _graphql.Kind.FIELD:
                {
                    if (fieldsApply && visit(sel, level) === true) {
                        return true;
                    }
                    continue;
                }
            case _graphql.Kind.FRAGMENT_SPREAD:
                fragment = info.fragments[sel.name.value];
                break;
            case _graphql.Kind.INLINE_FRAGMENT:
                fragment = sel;
                break;
            default:
                {
                    const unsupported = sel;
                    throw new _core.PothosValidationError(`Unsupported selection kind ${unsupported.kind}`);
                }
        }
        const next = resolveFragmentTypes(info, fragment.typeCondition ? info.schema.getType(fragment.typeCondition.name.value) : undefined, type, expectedType);
        const deferredHere = deferred || isDeferred(info, sel);
        if (fragment.kind === _graphql.Kind.FRAGMENT_DEFINITION) {
            const state = `${fragment.name.value}|${next.type.name}|${next.expectedType.name}|${deferredHere}|${memoKey}`;
            if (memo.has(state)) {
                continue;
            }
            memo.add(state);
        }
        const stopped = eachSelectedField(info, fragment, {
            type: next.type,
            expectedType: next.expectedType,
            path,
            deferred: deferredHere
        }, segment, visit, memo, memoKey);
        if (stopped) {
            return true;
        }
    }
    return false;
}
/**
 * The field `name` of `type`, or a validation error. A document naming a field the type does not
 * have only reaches here when graphql validation was skipped; without this it would read a
 * property of undefined.
 */ function fieldOn(type, name) {
    const field = (0, _graphql.isObjectType)(type) || (0, _graphql.isInterfaceType)(type) ? type.getFields()[name] : undefined;
    if (!field) {
        throw new _core.PothosValidationError(`Unknown field ${name} on ${type.name}`);
    }
    return field;
}
/**
 * Follows `includePath` from `level`, starting at segment `at`, to the fields selected at its end,
 * reporting each to `onMatch` in document order and stopping when `onMatch` says to. Every step is
 * one `eachSelectedField` whose visitor matches that segment by name and follows the rest of the
 * path beneath it. The path is walked by index, so a step allocates nothing but the alias path it
 * grew.
 */ function matchPath(info, selection, level, includePath, at, onMatch, memo) {
    const remaining = includePath.length - at;
    if (remaining === 0) {
        return onMatch({
            type: level.type,
            field: selection,
            path: level.path,
            deferred: level.deferred
        }) === true;
    }
    const segment = includePath[at];
    return eachSelectedField(info, selection, level, segment, (field, on)=>{
        if (field.name.value !== segment.name) {
            return false;
        }
        const returnType = (0, _graphql.getNamedType)(fieldOn(on.type, field.name.value).type);
        return matchPath(info, field, {
            type: returnType,
            expectedType: returnType,
            path: [
                ...on.path,
                field.alias?.value ?? field.name.value
            ],
            deferred: on.deferred
        }, includePath, at + 1, onMatch, memo);
    }, memo, `${remaining}|${level.path.join('.')}`);
}
/**
 * Follows each of `paths`, prefixed by any type-level `prefix`, from `selection` (which is expected
 * to be a selection on `type`), reporting the fields at their ends to `onMatch` in path order then
 * document order, and stopping when `onMatch` says to. Paths are followed through fragments; see
 * `resolveFragmentTypes` for the rules. Each path gets its own memo: what one path expanded says
 * nothing about the next.
 */ function eachMatch(info, type, selection, paths, { prefix, path = [], deferred = false }, onMatch) {
    for (const includePath of paths){
        const stopped = matchPath(info, selection, {
            type,
            expectedType: type,
            path,
            deferred
        }, prefix?.length ? [
            ...prefix,
            ...includePath
        ] : includePath, 0, onMatch, new Set());
        if (stopped) {
            return;
        }
    }
}
function findMatches(info, type, selection, paths, options = {}) {
    const matches = [];
    eachMatch(info, type, selection, paths, options, (match)=>{
        matches.push(match);
    });
    return matches;
}
function firstMatch(info, type, selection, path, { prefix } = {}) {
    let first;
    eachMatch(info, type, selection, [
        path
    ], {
        prefix
    }, (match)=>{
        first = match;
        return true;
    });
    return first;
}
/**
 * Per request context, per execution (`info.variableValues` is built once per execution, and the
 * names depend on the variables through `@skip`/`@include`), per return type, then per field node.
 */ const selectedFieldNamesCache = (0, _core.createContextCache)(()=>new WeakMap());
function selectedFieldNames(context, info) {
    const byExecution = selectedFieldNamesCache(context);
    let byType = byExecution.get(info.variableValues);
    if (!byType) {
        byType = new WeakMap();
        byExecution.set(info.variableValues, byType);
    }
    let memo = memoIn(byType, (0, _graphql.getNamedType)(info.returnType));
    for (const node of info.fieldNodes){
        memo = memoIn(memo.next, node);
    }
    memo.names ??= collectSelectedFieldNames(info);
    return memo.names;
}
function memoIn(map, key) {
    let memo = map.get(key);
    if (!memo) {
        memo = {
            next: new WeakMap()
        };
        map.set(key, memo);
    }
    return memo;
}
function collectSelectedFieldNames(info, returnType = (0, _graphql.getNamedType)(info.returnType), fieldNodes = info.fieldNodes) {
    const prefix = includeOf(returnType)?.path;
    const names = new Set();
    // Every name at one level: `eachSelectedField`'s last step for all of them at once. The level's
    // `deferred` flag is never read, which is the asymmetry `eachSelectedField` documents.
    const addName = (field)=>{
        names.add(field.name.value);
    };
    for (const node of fieldNodes){
        // Through a wrapper, the fields are those beneath its inner field.
        const roots = prefix?.length ? findMatches(info, returnType, node, [
            prefix
        ]) : [
            {
                type: returnType,
                field: node,
                deferred: false
            }
        ];
        for (const root of roots){
            eachSelectedField(info, root.field, {
                type: root.type,
                expectedType: root.type,
                path: [],
                deferred: root.deferred
            }, undefined, addName, new Set());
        }
    }
    return names;
}
/**
 * The type to walk and the type the next segment is expected on, when descending into a fragment.
 * `expected` arrives pinned: `eachSelectedField` resolved any `type` on the segment before it
 * classified a single selection.
 *
 * - A fragment on the expected type, or on an abstract type the expected type belongs to, walks as
 *   the expected type: every field selectable there also exists on it.
 * - A fragment that narrows an abstract expected type to an implementation or member, or to an
 *   abstract type that overlaps it, advances the expected type so the segment's field can be found
 *   on the narrower type.
 * - Fragments on unrelated types keep the expected type, so their fields are skipped until a nested
 *   fragment narrows back to it.
 */ function resolveFragmentTypes(info, fragmentType, type, expected) {
    if (!fragmentType || fragmentType.name === expected.name) {
        return {
            type: fragmentType ?? type,
            expectedType: expected
        };
    }
    if ((0, _graphql.isAbstractType)(fragmentType) && ((0, _graphql.isObjectType)(expected) || (0, _graphql.isInterfaceType)(expected)) && info.schema.isSubType(fragmentType, expected)) {
        return {
            type: expected,
            expectedType: expected
        };
    }
    if ((0, _graphql.isAbstractType)(expected)) {
        const narrows = (0, _graphql.isObjectType)(fragmentType) || (0, _graphql.isInterfaceType)(fragmentType) ? info.schema.isSubType(expected, fragmentType) : false;
        const overlaps = (0, _graphql.isAbstractType)(fragmentType) && (0, _graphql.doTypesOverlap)(info.schema, expected, fragmentType);
        if (narrows || overlaps) {
            return {
                type: fragmentType,
                expectedType: fragmentType
            };
        }
    }
    return {
        type: fragmentType,
        expectedType: expected
    };
}
/**
 * The type an indirect-include segment pins its field to, or undefined when it pins none. A
 * pinned segment names the fragment type condition the field must be found under, so the pin
 * decides both which fragments are descended into and whether a field selected directly at a
 * level counts as the segment's.
 */ function pinnedType(info, segment) {
    if (!segment?.type) {
        return undefined;
    }
    const pinned = info.schema.getType(segment.type);
    if (!pinned) {
        throw new _core.PothosValidationError(`Unknown type ${segment.type} in indirect include path segment ${segment.name}`);
    }
    return pinned;
}
function normalizeInclude(path, type, expectedType, schema) {
    let currentType = path.length > 0 ? type : expectedType ?? type;
    const normalized = [];
    if (path.length === 0 && !((0, _graphql.isObjectType)(currentType) || (0, _graphql.isInterfaceType)(currentType))) {
        throw new _core.PothosValidationError(`Expected ${currentType} to be an Object or Interface type`);
    }
    for (const segment of path){
        const { name, type: pinned } = typeof segment === 'string' ? {
            name: segment
        } : segment;
        if (pinned) {
            const pinnedType = schema.getType(pinned);
            if (!pinnedType) {
                throw new _core.PothosValidationError(`Unknown type ${pinned} in nested selection path segment ${name}`);
            }
            currentType = pinnedType;
        }
        if (!((0, _graphql.isObjectType)(currentType) || (0, _graphql.isInterfaceType)(currentType))) {
            throw new _core.PothosValidationError(`Expected ${currentType} to be an Object or Interface type`);
        }
        const field = currentType.getFields()[name];
        if (!field) {
            throw new _core.PothosValidationError(`Expected ${currentType} to have a field ${name}`);
        }
        currentType = (0, _graphql.getNamedType)(field.type);
        if (!((0, _graphql.isObjectType)(currentType) || (0, _graphql.isInterfaceType)(currentType))) {
            throw new _core.PothosValidationError(`Expected ${currentType} to be an Object or Interface type`);
        }
        normalized.push(pinned ? {
            name,
            type: pinned
        } : {
            name
        });
    }
    const targetType = currentType;
    return {
        getType: ()=>expectedType?.name ?? targetType.name,
        path: normalized
    };
}
function isSkipped(info, selection) {
    if (!selection.directives?.length) {
        return false;
    }
    const skip = (0, _graphql.getDirectiveValues)(_graphql.GraphQLSkipDirective, selection, info.variableValues);
    if (skip?.if === true) {
        return true;
    }
    const include = (0, _graphql.getDirectiveValues)(_graphql.GraphQLIncludeDirective, selection, info.variableValues);
    if (include?.if === false) {
        return true;
    }
    return false;
}
function isDeferred(info, node) {
    if (!node.directives?.length) {
        return false;
    }
    const deferDirective = info.schema.getDirective('defer');
    if (!deferDirective) {
        return false;
    }
    const defer = (0, _graphql.getDirectiveValues)(deferDirective, node, info.variableValues);
    return !!defer && defer.if !== false;
}

//# sourceMappingURL=matches.js.map