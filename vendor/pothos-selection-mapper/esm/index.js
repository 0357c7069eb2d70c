/**
 * What the ORM plugins use: the `Plan` class with the two entry points on it, the `Adapter`
 * classes their own adapters extend, and the loader-map, usage and equality helpers their
 * adapters and loaders call. Everything else is module-private; see the README.
 */ export { Adapter } from './adapter.js';
export { deepEqual } from './deep-equal.js';
export { cacheKey, getLoaderMapping, setFieldMapping, setLoaderMappings, setRowFieldMapping, setRowMappings } from './loader-map.js';
export { selectedFieldNames } from './matches.js';
export { NodeAdapter } from './node.js';
export { Plan } from './plan.js';

//# sourceMappingURL=index.js.map