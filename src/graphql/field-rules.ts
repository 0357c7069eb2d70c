import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import { parsePrismaCursor } from '@pothos/plugin-prisma';
import type { GraphQLFieldResolver } from 'graphql';
import { validationError, type ErrorDetails } from '../shared/errors.js';
import { limitParam } from '../shared/pagination.js';
import { idParam } from '../shared/validation.js';

// Two rules every field of the schema follows, applied by a builder plugin so that a field added
// later follows them without being told:
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

type ArgumentNames = { args: Readonly<Record<string, unknown>> };
const hasListArguments = ({ args }: ArgumentNames) => Object.keys(args).some((name) => LIST_ARGUMENTS.includes(name));
const checksListArguments = (config: ArgumentNames) => hasListArguments(config) && !('page' in config.args);

/** plugin-prisma's hook that builds a relation's part of its parent's query from the field's arguments. */
type PrismaSelect = (args: Record<string, unknown>, ...rest: unknown[]) => unknown;

export class FieldRulesPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(fieldConfig: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
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
    if (!checksListArguments(fieldConfig)) return resolver;
    return (parent, args, context, info) => {
      checkListArguments(args as Record<string, unknown>);
      return resolver(parent, args, context, info);
    };
  }
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      fieldRules: FieldRulesPlugin<Types>;
    }
  }
}

/** The plugin's name, for the builder's `plugins` list (as Pothos' own plugins export theirs). */
export const fieldRulesPlugin = 'fieldRules' as const;

SchemaBuilder.registerPlugin(fieldRulesPlugin, FieldRulesPlugin);
