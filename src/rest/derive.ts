import {
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  Kind,
  parse,
  typeFromAST,
  validate,
  type DocumentNode,
  type FieldNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { z } from 'zod';
import type { Scope } from '../auth/scopes.js';
import type { ApiContext } from '../context/context.js';
import { fieldRulesOf, lookupKey, parseWithRule, refuseWithDatabaseProblems, schemaOfRule, type InputRule } from '../graphql/field-rules.js';
import { validationError } from '../shared/errors.js';
import { parseInput } from '../shared/validation.js';
import type { RestRoute } from './routes.js';

// A REST route names its path and its GraphQL operation; everything else it needs is read from the
// fields that operation selects, so that each rule is written once, on the field:
// - its scopes: those the root fields declare (and whether it needs a key at all);
// - its query parameters: the root fields' input rules, less the arguments the path gives (one
//   field: its schema as it is, with its refinements; several alternatives, as /api/v1/stock has:
//   their parameters together, each field's own refinements then applied by the field that
//   runs), plus the route's own extras;
// - its body: the argument of the root field whose rule parses one argument (createOrder's input),
//   or, on a route that is not a GET, the field's arguments that are not in its path (cancelOrder's
//   reason: a body every member of which is optional may be left out);
// - whether the key's account must act for a supplier (`member`);
// - its variables: the parsed values, converted back to GraphQL's form by each variable's type.

export interface DerivedRoute extends RestRoute {
  operation: DocumentNode;
  definition: OperationDefinitionNode;
  scopes: readonly Scope[];
  /** A field it selects needs a valid key (with `scopes`, or any key when there are none). */
  keyRequired: boolean;
  /** A field it selects needs the key's account to act for a supplier. */
  member: boolean;
  /** A GET the response cache may answer: no field it selects is `uncached`. */
  cacheable: boolean;
  /** What the query string is validated with (all values strings); the OpenAPI parameters come from it. */
  querySchema: z.ZodObject;
  parseQuery: (raw: Record<string, string>) => Record<string, unknown>;
  /** What a `:name` segment must be to name anything (a lookup's key); anything else is 404. */
  pathSchemas: Record<string, z.ZodType>;
  /** The JSON body; absent: the route takes no body. */
  body?: RestBody;
  variables: (query: Record<string, unknown>, params: Record<string, string>, body?: unknown) => Record<string, unknown>;
}

export interface RestBody {
  schema: z.ZodType;
  /** The variable the whole body becomes (createOrder's input); absent: each member is the variable of its name. */
  variable?: string;
  /** The route may be called without a body (every member optional): it is then `{}`. */
  optional: boolean;
  /** The parsed body; a promise only of a refusal that also names the rule's database problems. */
  parse: (raw: unknown, ctx: ApiContext) => unknown;
}

/** Derives a route's rules from `schema`; a route whose operation does not fit it fails at start-up. */
export function deriveRoute(route: RestRoute, schema: GraphQLSchema): DerivedRoute {
  const where = `REST route ${route.method} ${route.path}`;
  // Only a GET's answer is ever stored (every other method's is no-store).
  if (route.cache && route.method !== 'GET') throw new Error(`${where}: only a GET may be cached`);
  const operation = parse(route.document);
  const errors = validate(schema, operation);
  if (errors.length) throw new Error(`${where}: ${errors.map((e) => e.message).join('; ')}`);
  const definition = operation.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const root = definition && schema.getRootType(definition.operation);
  if (!definition || !root) throw new Error(`${where}: no operation`);

  const scopes = new Set<Scope>();
  let keyRequired = false;
  let member = false;
  let cacheable = route.method === 'GET';
  const queryRules: z.ZodObject[] = [];
  const pathSchemas: Record<string, z.ZodType> = {};
  let body: DerivedRoute['body'];
  for (const selection of definition.selectionSet.selections) {
    if (selection.kind !== Kind.FIELD) continue;
    const rules = fieldRulesOf(root.getFields()[selection.name.value]!);
    if (rules.scopes) keyRequired = true;
    if (rules.member) member = true;
    if (rules.uncached) cacheable = false;
    for (const scope of rules.scopes ?? []) scopes.add(scope);
    const lookup = variableOf(selection, rules.lookupBy);
    if (lookup && route.path.includes(`:${lookup}`)) pathSchemas[lookup] = lookupKey;
    if (!rules.input) continue;
    if ('argument' in rules.input) body = bodyOf(rules.input, variableOf(selection, rules.input.argument), where);
    else if (route.method !== 'GET') body = argumentsBody(rules.input, selection, route.path, where);
    else queryRules.push(withoutPathArguments(rules.input, selection, route.path));
  }
  const querySchema = queryOf(queryRules, route.extraQuery ?? {});

  const variableTypes = new Map(
    (definition.variableDefinitions ?? []).map((d) => [d.variable.name.value, typeFromAST(schema, d.type) as GraphQLInputType | undefined]),
  );
  for (const [name, type] of variableTypes) if (!type) throw new Error(`${where}: $${name} has no input type`);
  const asVariables = (values: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(values).flatMap(([name, value]) => (variableTypes.has(name) ? [[name, toVariable(variableTypes.get(name)!, value)]] : [])));

  return {
    ...route,
    operation,
    definition,
    scopes: [...scopes],
    keyRequired,
    member,
    cacheable,
    pathSchemas,
    querySchema,
    parseQuery: (raw) => parseInput(querySchema, raw) as Record<string, unknown>,
    ...(body ? { body } : {}),
    variables: (query, params, parsedBody) => ({
      ...asVariables(query),
      ...asVariables(params),
      ...(body && parsedBody !== undefined ? asVariables(body.variable ? { [body.variable]: parsedBody } : (parsedBody as Record<string, unknown>)) : {}),
      ...route.switches?.(query),
    }),
  };
}

/** One rule: itself (refinements and all); several: their parameters side by side. Either with the route's extras. */
function queryOf(rules: z.ZodObject[], extras: z.ZodRawShape): z.ZodObject {
  if (rules.length === 1) return rules[0]!.safeExtend(extras);
  return z.object(Object.assign({}, ...rules.map((rule) => rule.shape), extras)).strict();
}

/** The variable a selected field passes to `argument`, if it passes one. */
function variableOf(selection: FieldNode, argument: string | undefined): string | undefined {
  const value = selection.arguments?.find((a) => a.name.value === argument)?.value;
  return value?.kind === Kind.VARIABLE ? value.name.value : undefined;
}

/** The body is the value of the argument the rule parses, passed as a variable. */
function bodyOf(rule: Extract<InputRule, { argument: string }>, variable: string | undefined, where: string): RestBody {
  if (!variable) throw new Error(`${where}: ${rule.argument} must be passed as a variable`);
  return {
    schema: schemaOfRule(rule),
    variable,
    optional: false,
    parse: (raw: unknown, ctx: ApiContext) => {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw validationError({ body: 'must be a JSON object' }, rule.message);
      try {
        return parseWithRule(rule, raw);
      } catch (error) {
        return refuseWithDatabaseProblems(rule, raw as Record<string, unknown>, ctx, error);
      }
    },
  };
}

/** The field's arguments whose values the path gives (the slug of /api/products/:slug/reviews), as omit() takes them. */
function pathArguments(selection: FieldNode, path: string): Record<string, true> {
  const segments = new Set(path.split('/').filter((s) => s.startsWith(':')).map((s) => s.slice(1)));
  const fromPath: Record<string, true> = {};
  for (const argument of selection.arguments ?? []) {
    if (argument.value.kind === Kind.VARIABLE && segments.has(argument.value.name.value)) fromPath[argument.name.value] = true;
  }
  return fromPath;
}

/** A GET's query parameters: the rule's arguments less those its path gives. */
function withoutPathArguments(rule: z.ZodObject, selection: FieldNode, path: string): z.ZodObject {
  const fromPath = pathArguments(selection, path);
  // omit() refuses a refined object: only a rule with path arguments is narrowed.
  return Object.keys(fromPath).length ? rule.omit(fromPath) : rule;
}

/**
 * The body is the field's arguments that the path does not give, each passed as the variable of its
 * name; none left (DELETE /api/webhooks/:id): the route takes no body.
 */
function argumentsBody(rule: z.ZodObject, selection: FieldNode, path: string, where: string): RestBody | undefined {
  const fromPath = pathArguments(selection, path);
  for (const argument of selection.arguments ?? []) {
    const passedByName = argument.value.kind === Kind.VARIABLE && argument.value.name.value === argument.name.value;
    if (!fromPath[argument.name.value] && !passedByName) throw new Error(`${where}: ${argument.name.value} must be passed as $${argument.name.value}`);
  }
  const schema = rule.omit(fromPath);
  if (!Object.keys(schema.shape).length) return undefined;
  return {
    schema,
    optional: schema.safeParse({}).success,
    parse: (raw: unknown) => {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw validationError({ body: 'must be a JSON object' });
      return parseInput(schema, raw);
    },
  };
}

/**
 * A parsed value in the form GraphQL takes as a variable of `type`: an enum's internal value by its
 * name (`newest` → NEWEST). A scalar's value passes as the parser left it: each scalar's parseValue
 * takes it (an exact decimal stays exact; serialising it would make it a binary float).
 */
function toVariable(type: GraphQLInputType, value: unknown): unknown {
  if (value === undefined || value === null) return value;
  if (isNonNullType(type)) return toVariable(type.ofType, value);
  if (isListType(type)) return Array.isArray(value) ? value.map((item) => toVariable(type.ofType, item)) : toVariable(type.ofType, value);
  if (isInputObjectType(type)) {
    const fields = type.getFields();
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).flatMap(([name, v]) => (fields[name] && v !== undefined ? [[name, toVariable(fields[name].type, v)]] : [])),
    );
  }
  return isEnumType(type) ? type.serialize(value) : value;
}
