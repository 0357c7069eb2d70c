import SchemaBuilder, {
  BasePlugin,
  type FieldNullability,
  type InputFieldMap,
  type PothosOutputFieldConfig,
  type SchemaTypes,
  type TypeParam,
} from '@pothos/core';
import { parsePrismaCursor } from '@pothos/plugin-prisma';
import type { GraphQLFieldConfig, GraphQLFieldResolver, GraphQLResolveInfo } from 'graphql';
import type { z } from 'zod';
import { requireMembership } from '../auth/membership.js';
import { requireScopes, type Scope } from '../auth/scopes.js';
import { asAppError, AppError, validationError, type ErrorDetails } from '../shared/errors.js';
import { limitParam } from '../shared/pagination.js';
import { idParam, parseInput } from '../shared/validation.js';
import type { ApiContext } from '../context/context.js';

// The rules of a field, applied by a builder plugin before its resolver runs.
//
// Declared on a field, once (the REST routes derive theirs from the same field: src/rest/derive.ts):
// - `scopes`: the API key must carry them (401 without a key, 403 naming what is missing); checked
//   first, so that a caller who may not use the field learns nothing about its arguments. `[]`
//   asks for a valid key of any scopes (the caller's own data: `me`).
// - `member`: the key's account must act for a supplier (403 otherwise), checked right after the
//   scopes; the field then sees and changes that supplier's data only.
// - `input`: the field's zod schema; the arguments are parsed with it (400 naming every bad one)
//   and the resolver receives what it returned (defaults applied, values normalised).
// - `lookupBy`: the argument a lookup finds by (an id or a slug); a value that cannot be one finds
//   nothing: null, without a query, exactly like one that names nothing (REST's 404).
//
// Followed by every field of the schema without being told:
//
// 1. List arguments are validated, never clamped. `limit` (of a relation or a sample), `first` and
//    `last` (of a connection) are 1–LIMIT_MAX like REST's `limit`; `after`/`before` must be cursors
//    this API issued; `first` with `last`, `after` with `before`, `first` with `before` and `last`
//    with `after` are refused. A field with a `page` argument is an offset list whose service parses
//    page, limit and its filters together (pageParams), so that the details name every bad argument
//    at once, as over REST; the plugin leaves it to that.
// 2. A field that can fail on its own is nullable, so that its failure nulls that field only and
//    its siblings still answer: every root field, and every field with list arguments. List items
//    stay non-null.

/** Arguments that size a list. */
export const SIZE_ARGUMENTS = ['limit', 'first', 'last'] as const;
/** Arguments that hold a connection's cursor. */
const CURSOR_ARGUMENTS = ['after', 'before'] as const;
const LIST_ARGUMENTS: readonly string[] = [...SIZE_ARGUMENTS, ...CURSOR_ARGUMENTS];
/** Pairs a connection cannot take together (plugin-prisma pages one way from one cursor). */
const EXCLUSIVE_PAIRS = [
  ['first', 'last'],
  ['after', 'before'],
  ['first', 'before'],
  ['last', 'after'],
] as const;

const CURSOR_MESSAGE = 'is not a cursor this API returned (use an edge’s cursor or pageInfo’s startCursor/endCursor)';

/**
 * A cursor as plugin-prisma issues it: base64 of `GPC:` and a tagged value. Every connection of
 * this schema pages by `id`, a string, so the value must be a string that could be an id: anything
 * else (a number, a date, JSON, a compound key) would reach the database as a malformed query.
 */
function isIssuedCursor(value: unknown): boolean {
  try {
    const key = parsePrismaCursor(value);
    return typeof key === 'string' && idParam.safeParse(key).success;
  } catch {
    return false;
  }
}

/** What is wrong with a field's list arguments, by argument; undefined when nothing is. Null means "not given". */
export function listArgumentProblems(args: Readonly<Record<string, unknown>>): ErrorDetails | undefined {
  const given = (name: string) => args[name] !== null && args[name] !== undefined;
  const details: Record<string, string> = {};
  for (const name of SIZE_ARGUMENTS) {
    if (!given(name)) continue;
    const parsed = limitParam.safeParse(args[name]);
    if (!parsed.success) details[name] = parsed.error.issues[0]?.message ?? 'is invalid';
  }
  for (const name of CURSOR_ARGUMENTS) {
    if (given(name) && !isIssuedCursor(args[name])) details[name] = CURSOR_MESSAGE;
  }
  for (const [a, b] of EXCLUSIVE_PAIRS) {
    if (given(a) && given(b)) {
      details[a] ??= `cannot be combined with ${b}`;
      details[b] ??= `cannot be combined with ${a}`;
    }
  }
  return Object.keys(details).length ? details : undefined;
}

/** Throws VALIDATION_ERROR naming each bad list argument ("Invalid cursor" when a cursor is). */
export function checkListArguments(args: Readonly<Record<string, unknown>>): void {
  const details = listArgumentProblems(args);
  if (!details) return;
  const badCursor = CURSOR_ARGUMENTS.some((name) => details[name] === CURSOR_MESSAGE);
  throw validationError(details, badCursor ? 'Invalid cursor' : undefined);
}

/**
 * A field's argument rule: a zod object over all its arguments, or, for a field whose one argument
 * is an input object (createOrder's `input`), a rule for that argument with its own error wording.
 */
export type InputRule<S extends z.ZodType = z.ZodType> =
  | (S & z.ZodObject)
  | {
      schema: S;
      /** The argument the schema parses; error details name paths inside it (`items[0].quantity`). */
      argument: string;
      /** The error's message (e.g. "Invalid order"), and what an unknown member is called. */
      message: string;
      unknownKey: string;
      /** An update: a member sent as null is a value (it clears the field), not "not given". */
      nullIsValue?: true;
    };

/** The rules a field declares, as the REST routes and the OpenAPI document read them back. */
export interface FieldRules {
  /** Present: the field needs a valid key carrying these (none: any key). Absent: no key needed. */
  scopes?: readonly Scope[];
  /** The key's account must act for a supplier. */
  member?: true;
  input?: InputRule;
  lookupBy?: string;
}

/** What a lookup argument must be to name anything at all. */
export const lookupKey = idParam;

/** Reads a built field's rules (from the schema the builder made). */
export const fieldRulesOf = (field: Pick<GraphQLFieldConfig<unknown, unknown>, 'extensions'>): FieldRules =>
  ((field.extensions as { fieldRules?: FieldRules } | null | undefined)?.fieldRules ?? {});

export const schemaOfRule = (rule: InputRule): z.ZodType => ('argument' in rule ? rule.schema : rule);

/** Parses `raw` with a rule; throws VALIDATION_ERROR naming each bad argument or member. */
export function parseWithRule(rule: InputRule, raw: object): unknown {
  if (!('argument' in rule)) return parseInput(rule, raw);
  try {
    return parseInput(rule.schema, raw, rule.unknownKey, rule.nullIsValue);
  } catch (error) {
    const appError = asAppError(error);
    throw appError ? new AppError(appError.code, rule.message, appError.details) : error;
  }
}

/**
 * A resolver that receives its field's parsed input: spread into the field's options, it declares
 * the rule and types the resolver by the rule's output. `resolve` gets (input, ctx, parent, info,
 * args): beside an argument rule's argument, the field's other arguments (the id a change is for).
 */
export function withInput<S extends z.ZodType, Parent, R>(
  input: InputRule<S>,
  resolve: (input: z.output<S>, ctx: ApiContext, parent: Parent, info: GraphQLResolveInfo, args: Readonly<Record<string, unknown>>) => R,
) {
  return {
    input,
    resolve: (parent: Parent, args: object, ctx: ApiContext, info: GraphQLResolveInfo) => resolve(inputOf(input, args), ctx, parent, info, args as Record<string, unknown>),
  };
}

/**
 * The same for a plugin-prisma field, whose resolver also receives the query (include/select) to
 * load with, spread into the Prisma call.
 */
export function withInputQuery<S extends z.ZodType, Parent, R>(
  input: InputRule<S>,
  resolve: (query: object, input: z.output<S>, ctx: ApiContext, parent: Parent, info: GraphQLResolveInfo, args: Readonly<Record<string, unknown>>) => R,
) {
  return {
    input,
    resolve: (query: object, parent: Parent, args: object, ctx: ApiContext, info: GraphQLResolveInfo) =>
      resolve(query, inputOf(input, args), ctx, parent, info, args as Record<string, unknown>),
  };
}

/** What the plugin passed as arguments: the rule's output (for an argument rule, that argument's). */
const inputOf = <S extends z.ZodType>(rule: InputRule<S>, args: object) =>
  ('argument' in rule ? (args as Record<string, unknown>)[rule.argument] : args) as z.output<S>;

type ArgumentNames = { args: Readonly<Record<string, unknown>> };
const hasListArguments = ({ args }: ArgumentNames) => Object.keys(args).some((name) => LIST_ARGUMENTS.includes(name));
const checksListArguments = (config: ArgumentNames) => hasListArguments(config) && !('page' in config.args);

/** plugin-prisma's hook that builds a relation's part of its parent's query from the field's arguments. */
type PrismaSelect = (args: Record<string, unknown>, ...rest: unknown[]) => unknown;

/** What a field's description says of the key it needs. */
export const keyNote = (scopes: readonly Scope[], member = false) =>
  `${scopes.length ? `(scope ${scopes.join(', ')}` : '(any API key'}${member ? ', of an account acting for a supplier)' : ')'}`;

export class FieldRulesPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(fieldConfig: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
    const { scopes, member, input, lookupBy } = fieldConfig.pothosOptions;
    if (member && !scopes) throw new Error(`${fieldConfig.name}: member needs scopes`);
    const rules: FieldRules = {
      ...(scopes ? { scopes } : {}),
      ...(member ? { member } : {}),
      ...(input ? { input } : {}),
      ...(lookupBy ? { lookupBy } : {}),
    };
    if (Object.keys(rules).length) fieldConfig = { ...fieldConfig, extensions: { ...fieldConfig.extensions, fieldRules: rules } };
    // The schema's readers (GraphiQL's docs) learn a field's scopes from the same declaration.
    if (scopes) fieldConfig = { ...fieldConfig, description: [fieldConfig.description, keyNote(scopes, member)].filter(Boolean).join(' ') };
    const root = fieldConfig.kind === 'Query' || fieldConfig.kind === 'Mutation';
    if (!root && !hasListArguments(fieldConfig)) return fieldConfig;
    const checked = checksListArguments(fieldConfig);
    const extensions = fieldConfig.extensions ?? {};
    const select = extensions.pothosPrismaSelect;
    return {
      ...fieldConfig,
      type: { ...fieldConfig.type, nullable: true },
      // A relation's arguments are read while its parent is loaded, to build the parent's query:
      // with bad arguments it adds nothing to that query (its parent and the parent's siblings load
      // as usual), and the field's own resolver refuses them below, at the field's own path.
      extensions:
        checked && typeof select === 'function'
          ? { ...extensions, pothosPrismaSelect: ((args, ...rest) => (listArgumentProblems(args) ? null : (select as PrismaSelect)(args, ...rest))) satisfies PrismaSelect }
          : extensions,
    };
  }

  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    const { scopes, member, input, lookupBy } = fieldConfig.pothosOptions;
    const listChecked = checksListArguments(fieldConfig);
    if (!scopes && !input && !lookupBy && !listChecked) return resolver;
    const resolveChecked: typeof resolver = (parent, args, context, info) => {
      if (lookupBy && !lookupKey.safeParse((args as Record<string, unknown>)[lookupBy]).success) return null;
      if (listChecked) checkListArguments(args as Record<string, unknown>);
      return resolver(parent, input ? parseArguments(input, args as Record<string, unknown>, listChecked) : args, context, info);
    };
    return (parent, args, context, info) => {
      if (scopes) requireScopes((context as ApiContext).actor, ...scopes);
      if (member) return requireMembership(context as ApiContext).then(() => resolveChecked(parent, args, context, info));
      return resolveChecked(parent, args, context, info);
    };
  }
}

/** The arguments with the rule's output in place; a connection's list arguments (checked above) pass as they are. */
function parseArguments(rule: InputRule, args: Record<string, unknown>, listChecked: boolean): Record<string, unknown> {
  if ('argument' in rule) return { ...args, [rule.argument]: parseWithRule(rule, (args[rule.argument] ?? {}) as object) };
  const list = listChecked ? Object.fromEntries(Object.entries(args).filter(([name]) => LIST_ARGUMENTS.includes(name))) : {};
  const rest = listChecked ? Object.fromEntries(Object.entries(args).filter(([name]) => !LIST_ARGUMENTS.includes(name))) : args;
  return { ...list, ...(parseWithRule(rule, rest) as object) };
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      fieldRules: FieldRulesPlugin<Types>;
    }
    export interface FieldOptions<
      Types extends SchemaTypes = SchemaTypes,
      ParentShape = unknown,
      Type extends TypeParam<Types> = TypeParam<Types>,
      Nullable extends FieldNullability<Type> = FieldNullability<Type>,
      Args extends InputFieldMap = InputFieldMap,
      ResolveShape = unknown,
      ResolveReturnShape = unknown,
    > {
      /** Scopes the caller's API key must carry (admin:all grants all), checked before anything else; `[]`: any valid key. */
      scopes?: readonly Scope[];
      /** The key's account must act for a supplier (403 otherwise), checked after the scopes. */
      member?: true;
      /** The arguments' rule; give it with withInput/withInputQuery so the resolver receives its output. */
      input?: InputRule;
      /** The argument a lookup finds by: a value that cannot be an id or slug finds nothing (null). */
      lookupBy?: string;
    }
  }
}

/** The plugin's name, for the builder's `plugins` list (as Pothos' own plugins export theirs). */
export const fieldRulesPlugin = 'fieldRules' as const;

SchemaBuilder.registerPlugin(fieldRulesPlugin, FieldRulesPlugin);
