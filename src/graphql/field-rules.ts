import SchemaBuilder, {
  BasePlugin,
  completeValue,
  decodeBase64,
  isThenable,
  type FieldNullability,
  type InputFieldMap,
  type PothosOutputFieldConfig,
  type SchemaTypes,
  type TypeParam,
} from '@pothos/core';
import type { GraphQLFieldConfig, GraphQLFieldResolver, GraphQLResolveInfo } from 'graphql';
import type { z } from 'zod';
import { requireMembership } from '../auth/membership.js';
import { requireScopesOnce, type Scope } from '../auth/scopes.js';
import { isDatabaseUnavailable } from '../db/prisma.js';
import { asAppError, AppError, validationError, type ErrorDetails } from '../shared/errors.js';
import { limitParam } from '../shared/pagination.js';
import { idParam, parseInput } from '../shared/validation.js';
import type { ApiContext, CursorSeal } from '../context/context.js';

// The rules of a field, applied by a builder plugin before its resolver runs.
//
// Declared on a field, once (the REST routes derive theirs from the same field: src/rest/derive.ts):
// - `scopes`: the API key must carry them (401 without a key, 403 naming what is missing); checked
//   first, so that a caller who may not use the field learns nothing about its arguments. `[]`
//   asks for a valid key of any scopes (the caller's own data: `me`). Checked once per request and
//   scope (requireScopesOnce): a scope REST checked for its route, or an earlier field, is not checked again.
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
//    this API issued, signed (src/graphql/cursors.ts), and reach plugin-prisma as the raw cursor
//    inside; `first` with `last`, `after` with `before`, `first` with `before` and `last` with
//    `after` are refused. A field with a `page` argument is an offset list whose service parses
//    page, limit and its filters together (pageParams), so that the details name every bad argument
//    at once, as over REST; the plugin leaves it to that.
// 2. A field that can fail on its own is nullable, so that its failure nulls that field only and
//    its siblings still answer: every root field, and every field with list arguments. List items
//    stay non-null.
// 3. A field declared `issuesCursor` (the edges' `cursor`, pageInfo's `startCursor`/`endCursor`:
//    src/graphql/builder.ts) hands out its cursor signed. Signing where a cursor leaves rather than
//    where a connection resolves covers every connection, nested ones loaded with their parent's
//    query included.

/** Arguments that size a list. */
export const SIZE_ARGUMENTS = ['limit', 'first', 'last'] as const;
/** Arguments that list the items a field answers, one each (`nodes(ids:)`): the list's size is their length. */
export const KEY_LIST_ARGUMENTS = ['ids'] as const;
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

/** What plugin-prisma writes before a string key (its `S` tag; other tags hold other types). */
const STRING_CURSOR_PREFIX = 'GPC:S:';

/**
 * The raw cursor inside one this API issued: signed with one of its secrets, and, past the
 * signature, of the one form plugin-prisma issues for this schema's connections, which all page by
 * a string `id`: base64 of `GPC:S:<id>`. Any other tag would reach the database as a malformed
 * query (a number, a date, a compound key), should a signed one ever be of another.
 */
function openCursor(value: unknown, seal: CursorSeal | undefined): string | undefined {
  if (typeof value !== 'string' || !seal) return undefined;
  const raw = seal.open(value);
  if (raw === undefined) return undefined;
  try {
    const decoded = decodeBase64(raw);
    return decoded.startsWith(STRING_CURSOR_PREFIX) && idParam.safeParse(decoded.slice(STRING_CURSOR_PREFIX.length)).success ? raw : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A field's list arguments as plugin-prisma reads them, each cursor opened to the raw one inside;
 * or what is wrong with them, by argument. Null means "not given". `seal`: the request's, for a
 * field that takes cursors.
 */
export function readListArguments(
  args: Readonly<Record<string, unknown>>,
  seal: CursorSeal | undefined,
): { args: Readonly<Record<string, unknown>>; problems?: never } | { problems: ErrorDetails } {
  const given = (name: string) => args[name] !== null && args[name] !== undefined;
  const details: Record<string, string> = {};
  for (const name of SIZE_ARGUMENTS) {
    if (!given(name)) continue;
    const parsed = limitParam.safeParse(args[name]);
    if (!parsed.success) details[name] = parsed.error.issues[0]?.message ?? 'is invalid';
  }
  let read = args;
  for (const name of CURSOR_ARGUMENTS) {
    if (!given(name)) continue;
    const raw = openCursor(args[name], seal);
    if (raw === undefined) details[name] = CURSOR_MESSAGE;
    else read = { ...read, [name]: raw };
  }
  for (const [a, b] of EXCLUSIVE_PAIRS) {
    if (given(a) && given(b)) {
      details[a] ??= `cannot be combined with ${b}`;
      details[b] ??= `cannot be combined with ${a}`;
    }
  }
  return Object.keys(details).length ? { problems: details } : { args: read };
}

/** readListArguments' arguments; throws VALIDATION_ERROR naming each bad one ("Invalid cursor" when a cursor is). */
export function checkListArguments(args: Readonly<Record<string, unknown>>, seal: CursorSeal | undefined): Readonly<Record<string, unknown>> {
  const read = readListArguments(args, seal);
  if (!read.problems) return read.args;
  const details = read.problems;
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
      /**
       * The rules that need the database (an active supplier, a product's minimum order), judged on
       * the parts of a refused argument that are well-formed: their problems join the schema's, so
       * that one answer names every broken rule. An argument the schema accepts meets them where it
       * is used.
       */
      databaseProblems?: (raw: Readonly<Record<string, unknown>>, ctx: ApiContext) => Promise<ErrorDetails>;
    };

/** The rules a field declares, as the REST routes and the OpenAPI document read them back. */
export interface FieldRules {
  /** Present: the field needs a valid key carrying these (none: any key). Absent: no key needed. */
  scopes?: readonly Scope[];
  /** The key's account must act for a supplier. */
  member?: true;
  input?: InputRule;
  lookupBy?: string;
  /** Never answered from the response cache. */
  uncached?: true;
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
 * After parseWithRule refused `raw`: the refusal again, with the rule's database problems added
 * (the schema's own word kept where both name a path). A database that cannot answer leaves the
 * refusal as it is: still true, and more use to the caller than a 503. Rethrows anything else.
 */
export async function refuseWithDatabaseProblems(rule: InputRule, raw: Readonly<Record<string, unknown>>, ctx: ApiContext, error: unknown): Promise<never> {
  const refusal = asAppError(error);
  if (!refusal || refusal.code !== 'VALIDATION_ERROR' || !('argument' in rule) || !rule.databaseProblems) throw error;
  let more: ErrorDetails;
  try {
    more = await rule.databaseProblems(raw, ctx);
  } catch (lookupError) {
    if (isDatabaseUnavailable(lookupError)) throw refusal;
    throw lookupError;
  }
  throw new AppError(refusal.code, refusal.message, { ...refusal.details, ...Object.fromEntries(Object.entries(more).filter(([path]) => !Object.hasOwn(refusal.details ?? {}, path))) });
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
const takesCursors = ({ args }: ArgumentNames) => CURSOR_ARGUMENTS.some((name) => name in args);

/** A field that hands out a cursor, signed on its way out. */
function signingCursors<Context>(resolver: GraphQLFieldResolver<unknown, Context, object>): GraphQLFieldResolver<unknown, Context, object> {
  return (parent, args, context, info) =>
    completeValue(resolver(parent, args, context, info) as unknown, (raw) =>
      typeof raw === 'string' ? completeValue((context as ApiContext).cursors(), (seal) => seal.sign(raw)) : raw,
    );
}

/** plugin-prisma's hook that builds a relation's part of its parent's query from the field's arguments. */
type PrismaSelect = (args: Record<string, unknown>, ...rest: unknown[]) => unknown;

/** What a field's description says of the key it needs. */
export const keyNote = (scopes: readonly Scope[], member = false) =>
  `${scopes.length ? `(scope ${scopes.join(', ')}` : '(any API key'}${member ? ', of an account acting for a supplier)' : ')'}`;

export class FieldRulesPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(fieldConfig: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
    const { scopes, member, input, lookupBy, uncached } = fieldConfig.pothosOptions;
    if (member && !scopes) throw new Error(`${fieldConfig.name}: member needs scopes`);
    const rules: FieldRules = {
      ...(scopes ? { scopes } : {}),
      ...(member ? { member } : {}),
      ...(input ? { input } : {}),
      ...(lookupBy ? { lookupBy } : {}),
      ...(uncached ? { uncached } : {}),
    };
    if (Object.keys(rules).length) fieldConfig = { ...fieldConfig, extensions: { ...fieldConfig.extensions, fieldRules: rules } };
    // The schema's readers (GraphiQL's docs) learn a field's scopes from the same declaration.
    if (scopes) fieldConfig = { ...fieldConfig, description: [fieldConfig.description, keyNote(scopes, member)].filter(Boolean).join(' ') };
    const root = fieldConfig.kind === 'Query' || fieldConfig.kind === 'Mutation';
    if (!root && !hasListArguments(fieldConfig)) return fieldConfig;
    const checked = checksListArguments(fieldConfig);
    const extensions = fieldConfig.extensions ?? {};
    const select = extensions.pothosPrismaSelect;
    const cursorsTaken = takesCursors(fieldConfig);
    return {
      ...fieldConfig,
      type: { ...fieldConfig.type, nullable: true },
      // A relation's arguments are read while its parent is loaded, to build the parent's query,
      // with its cursors opened as the resolver opens them. With bad arguments it adds nothing to
      // that query (its parent and the parent's siblings load as usual), and the field's own
      // resolver refuses them below, at the field's own path. So it does too while the request's
      // seal is still being read (the first request of a process that keeps its secret in the
      // database): the field then loads on its own, once the resolver has the seal.
      extensions:
        checked && typeof select === 'function'
          ? {
              ...extensions,
              pothosPrismaSelect: ((args, context, ...rest) => {
                const seal = cursorsTaken ? (context as ApiContext).cursors() : undefined;
                if (isThenable(seal)) return null;
                const read = readListArguments(args, seal);
                return read.problems ? null : (select as PrismaSelect)(read.args as Record<string, unknown>, context, ...rest);
              }) satisfies PrismaSelect,
            }
          : extensions,
    };
  }

  override wrapResolve(
    resolver: GraphQLFieldResolver<unknown, Types['Context'], object>,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> {
    const { scopes, member, input, lookupBy, issuesCursor } = fieldConfig.pothosOptions;
    if (issuesCursor) return signingCursors(resolver);
    const listChecked = checksListArguments(fieldConfig);
    if (!scopes && !input && !lookupBy && !listChecked) return resolver;
    const resolveChecked = (seal: CursorSeal | undefined, ...[parent, args, context, info]: Parameters<typeof resolver>) => {
      if (lookupBy && !lookupKey.safeParse((args as Record<string, unknown>)[lookupBy]).success) return null;
      const listArgs = listChecked ? checkListArguments(args as Record<string, unknown>, seal) : (args as Record<string, unknown>);
      if (!input) return resolver(parent, listArgs, context, info);
      let parsed: Record<string, unknown>;
      try {
        parsed = parseArguments(input, listArgs, listChecked);
      } catch (error) {
        if (!('argument' in input)) throw error;
        return refuseWithDatabaseProblems(input, ((args as Record<string, unknown>)[input.argument] ?? {}) as Record<string, unknown>, context as ApiContext, error);
      }
      return resolver(parent, parsed, context, info);
    };
    // A connection has the seal before it resolves: its cursors are opened with it, and its edges
    // (below it) sign theirs with it.
    const resolveSealed: typeof resolver =
      listChecked && takesCursors(fieldConfig)
        ? (parent, args, context, info) => completeValue((context as ApiContext).cursors(), (seal) => resolveChecked(seal, parent, args, context, info))
        : (parent, args, context, info) => resolveChecked(undefined, parent, args, context, info);
    return (parent, args, context, info) => {
      if (scopes) requireScopesOnce(context as ApiContext, ...scopes);
      if (member) return requireMembership(context as ApiContext).then(() => resolveSealed(parent, args, context, info));
      return resolveSealed(parent, args, context, info);
    };
  }

  /** A subscription is refused by the same rules before its stream opens (its events' resolvers find the scopes checked; the live hub ends a stream whose key changes). */
  override wrapSubscribe(
    subscribe: GraphQLFieldResolver<unknown, Types['Context'], object> | undefined,
    fieldConfig: PothosOutputFieldConfig<Types>,
  ): GraphQLFieldResolver<unknown, Types['Context'], object> | undefined {
    const { scopes, member } = fieldConfig.pothosOptions;
    if (!subscribe || !scopes) return subscribe;
    return (parent, args, context, info) => {
      requireScopesOnce(context as ApiContext, ...scopes);
      if (member) return requireMembership(context as ApiContext).then(() => subscribe(parent, args, context, info));
      return subscribe(parent, args, context, info);
    };
  }
}

/** The arguments with the rule's output in place; a connection's list arguments (checked, cursors opened, above) pass as they are. */
function parseArguments(rule: InputRule, args: Readonly<Record<string, unknown>>, listChecked: boolean): Record<string, unknown> {
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
      /** The field's value is a connection cursor handed to clients: it leaves signed (src/graphql/cursors.ts). */
      issuesCursor?: true;
      /**
       * A root query whose answer the response cache never keeps: its data changes without a write
       * to the tables the data revision follows (a webhook's delivery log, written by the worker).
       */
      uncached?: true;
    }
  }
}

/** The plugin's name, for the builder's `plugins` list (as Pothos' own plugins export theirs). */
export const fieldRulesPlugin = 'fieldRules' as const;

SchemaBuilder.registerPlugin(fieldRulesPlugin, FieldRulesPlugin);
