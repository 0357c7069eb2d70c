import type { JsonSchema, ObjectOrigin } from './graphql-to-json-schema.js';

// Objects the operations select (a product, a supplier summary, the pagination meta) become
// named schemas under components.schemas, referenced wherever they occur. Identical selections
// share one schema; names come from what the selection is:
//   - exactly one fragment spread: the fragment's name without the `Rest` prefix (RestProduct → Product);
//   - a fragment and more fields: CategoryWithProducts;
//   - fields selected in place: the GraphQL type's name when the type is only ever selected that
//     way, else `<Type>Summary` (the spec's ProductSummary, SupplierSummary, CategorySummary).

const REF_PREFIX = '#/components/schemas/';

/** JSON with object keys sorted, so equal schemas compare equal whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

interface Structure {
  key: string;
  origin: ObjectOrigin;
  node: JsonSchema;
  name?: string;
}

export interface Components {
  /** components.schemas, sorted by name. */
  schemas: Record<string, JsonSchema>;
  /** A copy of `schema` with every named object replaced by its $ref. */
  refer: (schema: JsonSchema) => JsonSchema;
}

/** Walks a schema tree, calling `visit` on every sub-schema (the root included). */
function eachSchema(schema: unknown, visit: (node: JsonSchema) => void): void {
  if (Array.isArray(schema)) {
    for (const item of schema) eachSchema(item, visit);
    return;
  }
  if (schema === null || typeof schema !== 'object') return;
  visit(schema as JsonSchema);
  for (const value of Object.values(schema)) eachSchema(value, visit);
}

/**
 * Names every object schema reachable from `roots` that has an origin, and returns the
 * components with a function that rewrites any schema to reference them.
 */
export function extractComponents(roots: readonly JsonSchema[], origins: ReadonlyMap<JsonSchema, ObjectOrigin>): Components {
  const byKey = new Map<string, Structure>();
  const keyOf = new Map<JsonSchema, string>();
  for (const root of roots) {
    eachSchema(root, (node) => {
      const origin = origins.get(node);
      if (!origin || keyOf.has(node)) return;
      const key = canonical(node);
      keyOf.set(node, key);
      if (!byKey.has(key)) byKey.set(key, { key, origin, node });
    });
  }

  const structures = [...byKey.values()];
  const perType = new Map<string, Structure[]>();
  for (const s of structures) perType.set(s.origin.typeName, [...(perType.get(s.origin.typeName) ?? []), s]);

  const taken = new Set<string>();
  const claim = (s: Structure, wanted: string) => {
    let name = wanted;
    for (let n = 2; taken.has(name); n++) name = `${wanted}${n}`;
    taken.add(name);
    s.name = name;
  };
  // Fragment-named structures first: they are the full representations and own the plain names.
  for (const s of structures) {
    const [fragment, ...more] = s.origin.fragments;
    if (fragment === undefined || more.length) continue;
    const base = fragment.replace(/^Rest(?=[A-Z])/, '');
    claim(s, s.origin.ownKeys.length ? `${base}With${s.origin.ownKeys.map(capitalise).join('And')}` : base);
  }
  for (const s of structures) {
    if (s.name) continue;
    const sameType = perType.get(s.origin.typeName) ?? [];
    claim(s, sameType.length === 1 ? s.origin.typeName : `${s.origin.typeName}Summary`);
  }

  const refer = (schema: JsonSchema, keepRoot = false): JsonSchema => {
    const map = (value: unknown, isRoot: boolean): unknown => {
      if (Array.isArray(value)) return value.map((v) => map(v, false));
      if (value === null || typeof value !== 'object') return value;
      const node = value as JsonSchema;
      const key = keyOf.get(node);
      if (key !== undefined && !isRoot) return { $ref: `${REF_PREFIX}${byKey.get(key)?.name}` };
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(node)) out[k] = map(v, false);
      return simplify(out);
    };
    return map(schema, keepRoot) as JsonSchema;
  };

  const schemas: Record<string, JsonSchema> = {};
  for (const s of [...structures].sort((a, b) => ((a.name ?? '') < (b.name ?? '') ? -1 : 1))) {
    schemas[s.name ?? ''] = refer(s.node, true);
  }
  return { schemas, refer: (schema) => refer(schema) };
}

/** `{ description, allOf: [{ $ref }] }` → `{ $ref, description }`: OpenAPI 3.1 allows keywords beside $ref. */
function simplify(node: Record<string, unknown>): Record<string, unknown> {
  const allOf = node.allOf;
  if (!Array.isArray(allOf) || allOf.length !== 1) return node;
  const only = allOf[0] as Record<string, unknown>;
  if (typeof only.$ref !== 'string' || Object.keys(only).length !== 1) return node;
  const { allOf: _allOf, ...rest } = node;
  return { $ref: only.$ref, ...rest };
}
