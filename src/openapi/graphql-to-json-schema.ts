import {
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  type DirectiveNode,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { z } from 'zod';

// The JSON a REST path answers is the result of its GraphQL operation (src/rest/routes.ts), so its
// JSON Schema is read off the operation: each selection set walked against the schema's types.
// A field is present whenever it is selected (GraphQL always sends a selected key), null only
// where its type is nullable; @include/@skip on a variable make it optional.

export type JsonSchema = z.core.JSONSchema.JSONSchema;

/** How each scalar of the schema reaches JSON. A scalar missing here stops the document build. */
export const SCALAR_SCHEMAS: Readonly<Record<string, JsonSchema>> = {
  ID: { type: 'string' },
  String: { type: 'string' },
  Boolean: { type: 'boolean' },
  Int: { type: 'integer', format: 'int32' },
  Float: { type: 'number', format: 'double' },
  // Exact decimals are serialised as JSON numbers (src/graphql/scalars.ts).
  Decimal: { type: 'number' },
  DateTime: { type: 'string', format: 'date-time' },
  // Free-form: the only JSON field, Product.specifications, is an object.
  JSON: { type: 'object' },
};

/** Where an object schema came from: its type, the fragments spread into it and the fields selected directly. */
export interface ObjectOrigin {
  typeName: string;
  fragments: string[];
  ownKeys: string[];
}

export interface OperationSchemas {
  /** The schema of each top-level response key's value (`products` → `{ items, meta }`). */
  fields: Map<string, JsonSchema>;
  /** Every object schema built for a selection set, by identity; src/openapi/components.ts names them. */
  origins: Map<JsonSchema, ObjectOrigin>;
}

interface Collected {
  field: GraphQLField<unknown, unknown> | undefined;
  nodes: FieldNode[];
  /** Selected at least once without a condition. */
  always: boolean;
  conditions: Set<string>;
}

/** false: never selected; undefined: always; a string: the condition it depends on, in words. */
function condition(directives: readonly DirectiveNode[] | undefined): false | string | undefined {
  const words: string[] = [];
  for (const directive of directives ?? []) {
    const name = directive.name.value;
    if (name !== 'include' && name !== 'skip') continue;
    const arg = directive.arguments?.find((a) => a.name.value === 'if');
    if (!arg) continue;
    if (arg.value.kind === Kind.BOOLEAN) {
      if (arg.value.value !== (name === 'include')) return false;
    } else if (arg.value.kind === Kind.VARIABLE) {
      words.push(`\`${arg.value.name.value}\` is ${name === 'include' ? 'true' : 'false'}`);
    } else {
      throw new Error(`@${name}(if:) must be a boolean or a variable`);
    }
  }
  return words.length ? `Present only when ${words.join(' and ')}.` : undefined;
}

const nullSchema: JsonSchema = { type: 'null' };

/** The schema that also admits null. Objects keep their identity inside anyOf, for naming. */
function orNull(schema: JsonSchema, isObject: boolean): JsonSchema {
  if (isObject || typeof schema.type !== 'string') return { anyOf: [schema, nullSchema] };
  return {
    ...schema,
    type: [schema.type, 'null'],
    ...(schema.enum ? { enum: [...schema.enum, null] } : {}),
  };
}

/** The schema without its null alternative, and whether it had one. */
export function splitNull(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  const anyOf = schema.anyOf;
  if (anyOf?.length === 2 && anyOf.some((s) => s.type === 'null')) {
    const other = anyOf.find((s) => s.type !== 'null');
    if (other) return { schema: other, nullable: true };
  }
  if (Array.isArray(schema.type) && schema.type.includes('null')) {
    const types = schema.type.filter((t) => t !== 'null');
    const rest: JsonSchema = { ...schema, type: types.length === 1 ? types[0] : types };
    if (schema.enum) rest.enum = schema.enum.filter((v) => v !== null);
    return { schema: rest, nullable: true };
  }
  return { schema, nullable: false };
}

/** A property's schema with the field's description; an object keeps its identity (allOf) for naming. */
function described(schema: JsonSchema, description: string, isObjectNode: boolean): JsonSchema {
  return isObjectNode ? { description, allOf: [schema] } : { ...schema, description };
}

/**
 * The JSON Schema of every top-level value an operation answers with, walked from its selection
 * sets. Supports fields, aliases, named and inline fragments on the field's own type, and
 * @include/@skip; abstract types (interfaces, unions) are refused rather than guessed.
 */
export function operationSchemas(schema: GraphQLSchema, document: DocumentNode): OperationSchemas {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const [operation] = operations;
  if (!operation || operations.length > 1) throw new Error('The document must hold exactly one operation');
  const fragments = new Map(
    document.definitions
      .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
      .map((d) => [d.name.value, d] as const),
  );
  const root = schema.getRootType(operation.operation);
  if (!root) throw new Error(`The schema has no ${operation.operation} type`);
  const origins = new Map<JsonSchema, ObjectOrigin>();

  function collect(type: GraphQLObjectType, sets: readonly SelectionSetNode[]) {
    const fields = new Map<string, Collected>();
    const usedFragments: string[] = [];
    const ownKeys: string[] = [];
    const checkTypeCondition = (name: string | undefined) => {
      if (name !== undefined && name !== type.name) {
        throw new Error(`Fragment on ${name} inside ${type.name}: only fragments on the field's own type are supported`);
      }
    };
    const visit = (set: SelectionSetNode, inherited: string | undefined, top: boolean) => {
      for (const selection of set.selections) {
        const own = condition(selection.directives);
        if (own === false) continue;
        const when = [inherited, own].filter(Boolean).join(' ') || undefined;
        if (selection.kind === Kind.FIELD) {
          const key = selection.alias?.value ?? selection.name.value;
          const name = selection.name.value;
          const field = name === '__typename' ? undefined : type.getFields()[name];
          if (name !== '__typename' && !field) throw new Error(`${type.name} has no field ${name}`);
          let entry = fields.get(key);
          if (!entry) {
            entry = { field, nodes: [], always: false, conditions: new Set() };
            fields.set(key, entry);
          }
          entry.nodes.push(selection);
          if (when === undefined) entry.always = true;
          else entry.conditions.add(when);
          if (top && !ownKeys.includes(key)) ownKeys.push(key);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          checkTypeCondition(selection.typeCondition?.name.value);
          visit(selection.selectionSet, when, top);
        } else {
          const fragment = fragments.get(selection.name.value);
          if (!fragment) throw new Error(`Unknown fragment ${selection.name.value}`);
          checkTypeCondition(fragment.typeCondition.name.value);
          if (top && !usedFragments.includes(fragment.name.value)) usedFragments.push(fragment.name.value);
          visit(fragment.selectionSet, when, false);
        }
      }
    };
    for (const set of sets) visit(set, undefined, true);
    return { fields, usedFragments, ownKeys };
  }

  function objectSchema(type: GraphQLObjectType, sets: readonly SelectionSetNode[]): JsonSchema {
    const { fields, usedFragments, ownKeys } = collect(type, sets);
    const properties: Record<string, JsonSchema> = {};
    const required: string[] = [];
    for (const [key, entry] of fields) {
      let value: JsonSchema;
      let isObjectNode = false;
      if (!entry.field) {
        value = { type: 'string', const: type.name };
      } else {
        value = outputSchema(entry.field.type, selectionSets(entry.nodes));
        isObjectNode = origins.has(value);
      }
      const notes = sentences([entry.field?.description, entry.always ? undefined : [...entry.conditions].join(' Or: ')]);
      properties[key] = notes ? described(value, notes, isObjectNode) : value;
      if (entry.always) required.push(key);
    }
    const result: JsonSchema = { type: 'object', properties, required, additionalProperties: false };
    origins.set(result, { typeName: type.name, fragments: usedFragments, ownKeys });
    return result;
  }

  function outputSchema(type: GraphQLOutputType, sets: readonly SelectionSetNode[]): JsonSchema {
    if (isNonNullType(type)) return innerSchema(type.ofType, sets);
    const inner = innerSchema(type, sets);
    return orNull(inner, origins.has(inner));
  }

  function innerSchema(type: GraphQLOutputType, sets: readonly SelectionSetNode[]): JsonSchema {
    if (isListType(type)) return { type: 'array', items: outputSchema(type.ofType, sets) };
    if (isScalarType(type)) {
      const scalar = SCALAR_SCHEMAS[type.name];
      if (!scalar) throw new Error(`Scalar ${type.name} has no JSON Schema: add it to SCALAR_SCHEMAS`);
      return { ...scalar };
    }
    if (isEnumType(type)) return { type: 'string', enum: type.getValues().map((v) => v.name) };
    if (isObjectType(type)) {
      if (!sets.length) throw new Error(`${type.name} needs a selection set`);
      return objectSchema(type, sets);
    }
    throw new Error(`${String(type)}: interfaces and unions are not supported`);
  }

  // Top-level values are taken bare: their descriptions and conditions are the route's business.
  const fields = new Map<string, JsonSchema>();
  for (const [key, entry] of collect(root, [operation.selectionSet]).fields) {
    if (entry.field) fields.set(key, outputSchema(entry.field.type, selectionSets(entry.nodes)));
  }
  return { fields, origins };
}

/** Descriptions joined as sentences: `Reference price` + `Present only…` → `Reference price. Present only…` */
export function sentences(parts: readonly (string | null | undefined)[]): string {
  return parts
    .filter((p): p is string => Boolean(p))
    .map((p, i, all) => (i < all.length - 1 && !/[.!?:]$/.test(p) ? `${p}.` : p))
    .join(' ');
}

const selectionSets = (nodes: readonly FieldNode[]) => nodes.flatMap((n) => (n.selectionSet ? [n.selectionSet] : []));
