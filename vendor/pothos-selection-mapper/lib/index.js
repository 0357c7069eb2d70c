/**
 * What the ORM plugins use: the `Plan` class with the two entry points on it, the `Adapter`
 * classes their own adapters extend, and the loader-map, usage and equality helpers their
 * adapters and loaders call. Everything else is module-private; see the README.
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
    get Adapter () {
        return _adapter.Adapter;
    },
    get NodeAdapter () {
        return _node.NodeAdapter;
    },
    get Plan () {
        return _plan.Plan;
    },
    get cacheKey () {
        return _loadermap.cacheKey;
    },
    get deepEqual () {
        return _deepequal.deepEqual;
    },
    get getLoaderMapping () {
        return _loadermap.getLoaderMapping;
    },
    get selectedFieldNames () {
        return _matches.selectedFieldNames;
    },
    get setFieldMapping () {
        return _loadermap.setFieldMapping;
    },
    get setLoaderMappings () {
        return _loadermap.setLoaderMappings;
    },
    get setRowFieldMapping () {
        return _loadermap.setRowFieldMapping;
    },
    get setRowMappings () {
        return _loadermap.setRowMappings;
    }
});
const _adapter = require("./adapter.js");
const _deepequal = require("./deep-equal.js");
const _loadermap = require("./loader-map.js");
const _matches = require("./matches.js");
const _node = require("./node.js");
const _plan = require("./plan.js");

//# sourceMappingURL=index.js.map