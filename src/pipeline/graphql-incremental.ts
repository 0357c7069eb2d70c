import { useDeferStream } from '@graphql-yoga/plugin-defer-stream';
import { getOperationAST, GraphQLError, Kind, visit, type ASTNode, type DocumentNode, type ExecutionResult, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';

// Incremental delivery (@defer, @stream) on /graphql: a query may defer fragments and stream lists,
// answered as multipart/mixed (Apollo Client, meros, GraphiQL) or as Server-Sent Events
// (graphql-sse), each part a JSON payload in the format of the 2022 proposal that Yoga's executor
// and Apollo Client (`deferSpec=20220824`) speak: `{ data, hasNext }` first, then
// `{ incremental: [{ data | items, path, errors? }], hasNext }`. The directives are in the schema
// (src/domain/schema.ts); the plugin adds their validation rules. The rest of the pipeline is
// unchanged: the same document limits (a directive counts against GRAPHQL_MAX_DIRECTIVES), the
// same cost, charged once before the first part; the response cache keeps a deferred answer part
// by part under its own document (./graphql-response-cache.ts), and the envelope gives each
// part's errors the contract's codes (./graphql-errors.ts).
//
// Queries only: a mutation's answer is one result (an Idempotency-Key replays it whole, and REST
// runs the same operations), and a subscription's events are already a stream. A client that
// accepts neither multipart/mixed nor text/event-stream cannot read an incremental answer: it is
// refused before anything runs or is charged, rather than given Yoga's bodiless 406.

const INCREMENTAL_DIRECTIVES = new Set(['defer', 'stream']);

/** The media types an incremental answer is sent as. */
const INCREMENTAL_MEDIA_TYPES = ['multipart/mixed', 'text/event-stream'];

/** Does this part of a document use @defer or @stream anywhere (its fragments not followed)? */
function usesIncremental(node: ASTNode): boolean {
  let found = false;
  visit(node, {
    Directive(directive) {
      if (INCREMENTAL_DIRECTIVES.has(directive.name.value)) found = true;
    },
  });
  return found;
}

/** Per parsed document (Yoga hands the same object for the same text, REST its own fixed ones) and operation name. */
const decided = new WeakMap<DocumentNode, Map<string, boolean>>();

/** Does the operation a request runs use @defer or @stream, in itself or in a fragment of the document? */
export function isIncremental(document: DocumentNode, operationName: string | null | undefined): boolean {
  let byName = decided.get(document);
  if (!byName) decided.set(document, (byName = new Map()));
  let verdict = byName.get(operationName ?? '');
  if (verdict === undefined) byName.set(operationName ?? '', (verdict = usesIncrementalIn(document, operationName)));
  return verdict;
}

function usesIncrementalIn(document: DocumentNode, operationName: string | null | undefined): boolean {
  const operation = getOperationAST(document, operationName);
  if (!operation || !usesIncremental(operation)) {
    // A fragment may hold the directive; any fragment of the document counts (unused ones are refused by validation).
    return !!operation && document.definitions.some((d) => d.kind === Kind.FRAGMENT_DEFINITION && usesIncremental(d));
  }
  return true;
}

/** @defer and @stream only in queries: refused in a mutation or a subscription, in it or in a fragment it spreads. */
const queriesOnly: ValidationRule = (context) => ({
  OperationDefinition(operation) {
    if (operation.operation === 'query') return;
    const parts = [operation, ...context.getRecursivelyReferencedFragments(operation)];
    if (!parts.some(usesIncremental)) return;
    context.reportError(
      new GraphQLError(`@defer and @stream are served on queries only, not in a ${operation.operation}`, {
        nodes: operation,
        extensions: { code: 'VALIDATION_ERROR' },
      }),
    );
  },
});

/** Does a @stream of the document ask for fewer than 0 items at first (literally, or by a variable's value)? */
function negativeInitialCount(document: DocumentNode, variables: Readonly<Record<string, unknown>> | null | undefined): boolean {
  let negative = false;
  visit(document, {
    Directive(directive) {
      if (directive.name.value !== 'stream') return;
      const value = directive.arguments?.find((a) => a.name.value === 'initialCount')?.value;
      const count = value?.kind === Kind.INT ? Number(value.value) : value?.kind === Kind.VARIABLE ? variables?.[value.name.value] : undefined;
      if (typeof count === 'number' && count < 0) negative = true;
    },
  });
  return negative;
}

/** True when the Accept header admits a type an incremental answer is sent as (`*\/*` and `multipart/*` included; no header, or an empty one, is `*\/*`, as Yoga reads it). */
export function acceptsIncremental(accept: string | null): boolean {
  return (accept || '*/*')
    .toLowerCase()
    .split(',')
    .map((range) => range.split(';')[0]!.trim())
    .some((range) => {
      const [type, subtype] = range.split('/');
      return INCREMENTAL_MEDIA_TYPES.some((media) => {
        const [t, s] = media.split('/');
        return (type === '*' || type === t) && (subtype === '*' || subtype === s);
      });
    });
}

/** The document-rules stage's part in incremental delivery: the directives' rules, queries only, and the Accept check. */
export function useIncrementalDelivery(): Plugin[] {
  return [
    useDeferStream(),
    {
      onValidate({ addValidationRule }) {
        addValidationRule(queriesOnly);
      },
      onExecute({ args, setResultAndStopExecution }) {
        if (!isIncremental(args.document, args.operationName)) return;
        const request = (args.contextValue as { request?: Request }).request;
        const refuse = (message: string) => setResultAndStopExecution({ errors: [new GraphQLError(message, { extensions: { code: 'VALIDATION_ERROR', http: { status: 400 } } })] });
        if (request && !acceptsIncremental(request.headers.get('accept'))) {
          refuse('@defer and @stream answer in parts: send Accept: multipart/mixed or text/event-stream, or leave the directives out');
          return;
        }
        // The executor would throw on a negative count, a failure of ours to the client.
        if (negativeInitialCount(args.document, args.variableValues)) refuse('@stream’s initialCount must be 0 or more');
      },
    },
  ];
}

/** One payload of an incremental answer, in the 2022 format. */
export interface IncrementalPart extends ExecutionResult {
  hasNext?: boolean;
  incremental?: ReadonlyArray<{ data?: Record<string, unknown> | null; items?: unknown[] | null; path?: ReadonlyArray<string | number>; errors?: ReadonlyArray<unknown> }>;
}

/** Every error of a part: its own and those of its increments. */
export const errorsOfPart = (part: IncrementalPart): unknown[] => [...(part.errors ?? []), ...(part.incremental ?? []).flatMap((i) => i.errors ?? [])];

/**
 * The data an incremental answer adds up to: the first part's, each deferred fragment's merged in
 * at its path and each streamed item appended to its list. The same data a non-deferred query
 * answers, to learn what the answer shows (the response cache's tags).
 */
export function completeData(parts: readonly IncrementalPart[]): Record<string, unknown> | null | undefined {
  const data = structuredClone(parts[0]?.data);
  if (!data) return data;
  const at = (path: ReadonlyArray<string | number>): unknown => path.reduce<unknown>((node, key) => (node as Record<string | number, unknown> | null)?.[key], data);
  // Objects field by field, lists item by item (a fragment's fields may overlap those already sent).
  const merge = (target: Record<string | number, unknown>, source: Record<string | number, unknown>) => {
    for (const [key, value] of Object.entries(source)) {
      const existing = target[key];
      const both = existing && value && typeof existing === 'object' && typeof value === 'object' && Array.isArray(existing) === Array.isArray(value);
      if (both) merge(existing as Record<string, unknown>, value as Record<string, unknown>);
      else target[key] = structuredClone(value);
    }
  };
  for (const part of parts.slice(1)) {
    for (const { path = [], ...increment } of part.incremental ?? []) {
      if (increment.items) {
        // A streamed item's path ends with its index in the list.
        const list = at(path.slice(0, -1));
        if (Array.isArray(list)) list.push(...structuredClone(increment.items));
      } else if (increment.data) {
        const target = at(path);
        if (target && typeof target === 'object') merge(target as Record<string, unknown>, increment.data);
      }
    }
  }
  return data;
}
