import {
  getNamedType,
  getNullableType,
  getOperationAST,
  isCompositeType,
  isInterfaceType,
  isListType,
  isObjectType,
  Kind,
  valueFromASTUntyped,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLInterfaceType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from 'graphql';
import { KEY_LIST_ARGUMENTS, SIZE_ARGUMENTS } from '../graphql/field-rules.js';
import { LIMIT_MAX } from '../shared/pagination.js';

// An estimate of how many objects an operation can make the server load, before it runs.
//
// Depth, alias and token limits bound the size of a document, not the work it asks for:
// `products(limit: 100) { items { supplier { products(limit: 100) { supplier { products(limit: 100) …`
// is shallow and short, yet asks for a million rows. The cost multiplies list sizes down the
// query the way the resolvers will:
//
// - every object (a field of object, interface or union type) counts 1 per instance; scalars and
//   enums come with their object and count 0;
// - a list's size is its own `limit`, `first` or `last` argument, or else that of the field just
//   above it (`products(limit: 30) { items }` has 30 items, `productsConnection(first: 30) { edges }`
//   30 edges); an argument that is not given counts as its schema default, or DEFAULT_LIST_SIZE;
//   sizes are kept within 1..MAX_LIST_SIZE, the largest page any field serves (a value outside is
//   refused by the field itself, with a clearer message than a cost error);
// - a list with no size argument at all (a category's children, an order's items) counts
//   DEFAULT_LIST_SIZE; one that takes the keys of its items (`nodes(ids:)`) counts one per key;
// - introspection (`__schema`, `__type`, `__typename`) is free: it is bounded by the schema and
//   switched by GRAPHQL_INTROSPECTION;
// - `@skip`/`@include` are ignored (counted as included): the estimate is an upper bound;
// - fields are merged by response key, fragments spread once per selection set, as the executor
//   does, so repeating a field or a fragment costs nothing more (and cannot blow the estimate up).
//
// It reads variable values, so it runs when the operation is about to execute, not in the
// (cached, variable-blind) validation.

/** Arguments that set how many items a list field returns. */
const SIZE_ARGUMENT_NAMES: ReadonlySet<string> = new Set(SIZE_ARGUMENTS);
const KEY_LIST_ARGUMENT_NAMES: ReadonlySet<string> = new Set(KEY_LIST_ARGUMENTS);
/** Size assumed for a list whose size is not given: Relay's default connection size. */
export const DEFAULT_LIST_SIZE = 20;
/** The largest page any list field serves. */
export const MAX_LIST_SIZE = LIMIT_MAX;

export interface CostInput {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null | undefined;
  variables?: Readonly<Record<string, unknown>> | null | undefined;
}

/** Fields selected on one level, merged by parent type and response key. */
type Collected = Map<string, { parent: GraphQLObjectType | GraphQLInterfaceType; nodes: FieldNode[] }>;

const STOP = Symbol('over budget');
/** Nesting past which the estimate gives up (as over budget) rather than recurse further. */
const MAX_NESTING = 200;

/**
 * The estimated number of objects the operation may resolve; 0 when it names no operation.
 * With `budget`, counting stops as soon as the total passes it (the result is then some value
 * over the budget): the work spent on a hostile query is bounded by the budget, not by the query.
 */
export function estimateCost({ schema, document, operationName, variables }: CostInput, budget = Infinity): number {
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return 0;
  const root = schema.getRootType(operation.operation);
  if (!root) return 0;

  // Variables as the executor will see them: given values, else the operation's defaults. No
  // prototype: a variable named `__proto__` or `constructor` is a value like any other.
  const values: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const definition of operation.variableDefinitions ?? []) {
    if (definition.defaultValue) values[definition.variable.name.value] = valueFromASTUntyped(definition.defaultValue);
  }
  for (const [name, value] of Object.entries(variables ?? {})) if (value !== undefined) values[name] = value;

  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }

  // At least 1: every object selected costs something, which is also what bounds the walk.
  const sizeArgument = (node: FieldNode, field: GraphQLField<unknown, unknown>): number | undefined => {
    let size: number | undefined;
    for (const arg of field.args) {
      const keys = KEY_LIST_ARGUMENT_NAMES.has(arg.name);
      if (!SIZE_ARGUMENT_NAMES.has(arg.name) && !keys) continue;
      const given = node.arguments?.find((a) => a.name.value === arg.name);
      const value = given ? valueFromASTUntyped(given.value, values) : arg.defaultValue;
      const n = keys && Array.isArray(value) ? value.length : typeof value === 'number' && Number.isFinite(value) ? value : DEFAULT_LIST_SIZE;
      size = Math.max(size ?? 1, n);
    }
    return size === undefined ? undefined : Math.min(Math.max(size, 1), MAX_LIST_SIZE);
  };

  // graphql's collectFields, widened to every type condition: the fields one level selects.
  const collect = (selectionSet: SelectionSetNode, parent: GraphQLCompositeType, into: Collected, spread: Set<string>) => {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        // Leaves cost nothing; introspection is free (see above).
        if (!selection.selectionSet || selection.name.value.startsWith('__')) continue;
        if (!isObjectType(parent) && !isInterfaceType(parent)) continue;
        const key = `${parent.name}.${selection.alias?.value ?? selection.name.value}`;
        const group = into.get(key);
        if (group) group.nodes.push(selection);
        else into.set(key, { parent, nodes: [selection] });
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (type && isCompositeType(type)) collect(selection.selectionSet, type, into, spread);
      } else {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        if (!fragment || spread.has(name)) continue;
        spread.add(name);
        const type = schema.getType(fragment.typeCondition.name.value);
        if (type && isCompositeType(type)) collect(fragment.selectionSet, type, into, spread);
      }
    }
  };

  let total = 0;
  const level = (
    sets: { selectionSet: SelectionSetNode; parent: GraphQLCompositeType }[],
    instances: number,
    enclosingSize: number | undefined,
    depth: number,
  ) => {
    // Only a fragment cycle (which validation refuses) nests this deep: count it as over budget.
    if (depth > MAX_NESTING) throw STOP;
    const fields: Collected = new Map();
    const spread = new Set<string>();
    for (const { selectionSet, parent } of sets) collect(selectionSet, parent, fields, spread);
    for (const { parent, nodes } of fields.values()) {
      const first = nodes[0];
      const field = first && parent.getFields()[first.name.value];
      if (!first || !field) continue;
      const type = getNamedType(field.type);
      if (!isCompositeType(type)) continue;
      // Fields merged under one response key have the same arguments (validation sees to it).
      const ownSize = sizeArgument(first, field);
      const count = isListType(getNullableType(field.type)) ? (ownSize ?? enclosingSize ?? DEFAULT_LIST_SIZE) : 1;
      const objects = instances * count;
      total += objects;
      if (total > budget) throw STOP;
      const children = nodes.flatMap((node) => (node.selectionSet ? [{ selectionSet: node.selectionSet, parent: type }] : []));
      level(children, objects, ownSize, depth + 1);
    }
  };

  try {
    level([{ selectionSet: operation.selectionSet, parent: root }], 1, undefined, 0);
  } catch (error) {
    if (error !== STOP) throw error;
  }
  return total;
}

/**
 * The objects an answer really holds, counted as the estimate counts them: each object (a value
 * of a field with a selection set) 1, each object in a list 1, the operation's root not at all,
 * introspection free. A page asked for 50 that holds 3 counts 3. Fields are matched to the
 * document by response key, widened to every type condition as the estimate does.
 */
export function loadedCost(document: DocumentNode, operationName: string | null | undefined, data: unknown): number {
  if (data === null || typeof data !== 'object') return 0;
  // Asked twice of one answer on a cache miss (the cost budget's refund, the kept entry): counted once.
  const known = countedAnswers.get(data);
  if (known !== undefined) return known;
  const operation = getOperationAST(document, operationName ?? undefined);
  if (!operation) return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  /** Response key → the selection sets below it, for the fields with one; once per level, not per object of a list. */
  const collected = new Map<readonly SelectionSetNode[], Map<string, SelectionSetNode[]>>();
  const collect = (sets: readonly SelectionSetNode[]) => {
    const level = collected.get(sets);
    if (level) return level;
    const below = new Map<string, SelectionSetNode[]>();
    collected.set(sets, below);
    const spread = new Set<string>();
    const add = (set: SelectionSetNode) => {
      for (const selection of set.selections) {
        if (selection.kind === Kind.FIELD) {
          if (!selection.selectionSet || selection.name.value.startsWith('__')) continue;
          const key = selection.alias?.value ?? selection.name.value;
          below.set(key, [...(below.get(key) ?? []), selection.selectionSet]);
        } else if (selection.kind === Kind.INLINE_FRAGMENT) {
          add(selection.selectionSet);
        } else {
          const fragment = fragments.get(selection.name.value);
          if (!fragment || spread.has(selection.name.value)) continue;
          spread.add(selection.name.value);
          add(fragment.selectionSet);
        }
      }
    };
    for (const set of sets) add(set);
    return below;
  };
  let total = 0;
  const fieldsOf = (object: object, sets: readonly SelectionSetNode[]) => {
    for (const [key, children] of collect(sets)) visit((object as Record<string, unknown>)[key], children);
  };
  const visit = (value: unknown, sets: readonly SelectionSetNode[]): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item, sets);
    } else if (value !== null && typeof value === 'object') {
      total += 1;
      fieldsOf(value, sets);
    }
  };
  fieldsOf(data, [operation.selectionSet]);
  countedAnswers.set(data, total);
  return total;
}

/** The count of each answer's data already counted (loadedCost), for as long as the answer lives. */
const countedAnswers = new WeakMap<object, number>();

/**
 * The actual cost of a kept answer, set by the response cache on the answer it replays (text:
 * counting it again would mean parsing it): the count made when the answer was kept.
 */
export const KEPT_ACTUAL_COST = Symbol('kept actual cost');
export type WithKeptActualCost = { [KEPT_ACTUAL_COST]?: number };
