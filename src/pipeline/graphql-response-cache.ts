import { Kind, print, type DocumentNode, type GraphQLFieldMap, type GraphQLSchema, type OperationDefinitionNode, type SelectionSetNode } from 'graphql';
import type { ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { ResponseCache } from '../cache/response-cache.js';
import type { RevisionSource } from '../cache/freshness.js';
import { dependenciesOf, tagsOf, type OperationDependencies } from '../cache/dependencies.js';
import { fieldRulesOf } from '../graphql/field-rules.js';
import type { Caller } from '../context/actor.js';
import type { ApiContext } from '../context/context.js';
import { completeData, errorsOfPart, type IncrementalPart } from './graphql-incremental.js';
import type { RequestState } from './request-state.js';
import { KEPT_ACTUAL_COST, loadedCost } from './graphql-cost.js';

// The response cache on /graphql: a query's answer is kept whole, as the JSON text sent, and a
// request asking the same document, operation and variables as the same caller's view is
// answered with that text instead of being executed. It is looked up once the document has been
// parsed and validated by the hardened parser and rules (Yoga keeps both per document text, so a
// repeated query costs a lookup there too). Only queries whose every root field may be kept, and
// only answers without errors.

/** The operation a request runs: the named one, or the only one. */
export function operationOf(document: DocumentNode, name: string | null | undefined): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  return name ? operations.find((o) => o.name?.value === name) : operations.length === 1 ? operations[0] : undefined;
}

/** The root fields a selection set asks for, through its fragments (named or inline). */
export function rootFieldNames(document: DocumentNode, set: SelectionSetNode, seen = new Set<string>()): string[] {
  return set.selections.flatMap((s) => {
    if (s.kind === Kind.FIELD) return [s.name.value];
    if (s.kind === Kind.INLINE_FRAGMENT) return rootFieldNames(document, s.selectionSet, seen);
    if (seen.has(s.name.value)) return [];
    seen.add(s.name.value);
    const fragment = document.definitions.find((d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === s.name.value);
    return fragment && fragment.kind === Kind.FRAGMENT_DEFINITION ? rootFieldNames(document, fragment.selectionSet, seen) : [];
  });
}

/**
 * A query whose every root field may be kept (none is marked `uncached`: the caller's own data,
 * orders, keys): its answer depends on the data and on what the caller may see, nothing else. The
 * response cache keeps these; answered over GET to a caller without a key, CDNs may too.
 */
export function isCatalogueQuery(queryFields: GraphQLFieldMap<unknown, unknown>, document: DocumentNode, operationName: string | null | undefined): boolean {
  const operation = operationOf(document, operationName);
  return (
    operation?.operation === 'query' &&
    rootFieldNames(document, operation.selectionSet).every((field) => field.startsWith('__') || (queryFields[field] !== undefined && !fieldRulesOf(queryFields[field]).uncached))
  );
}

/**
 * The variables as sent, as text; undefined when they cannot be written (nested deeper than
 * JSON.stringify's recursion goes): such a request runs, and is refused by the rule it breaks.
 */
function textOf(variables: unknown): string | undefined {
  try {
    return JSON.stringify(variables ?? null);
  } catch {
    return undefined;
  }
}

/** A result Yoga sends as the text its `stringify` gives. */
type SerializedResult = ExecutionResult & { stringify: (result: ExecutionResult) => string };

/** Where a request's data revision is read: the replica its reads go to (src/pipeline/read-routing.ts), or undefined for the primary. */
export type RevisionFor = (request: RequestState, caller: Caller | undefined, document: DocumentNode, operationName?: string | null) => RevisionSource | undefined;

export function useGraphqlResponseCache(cache: ResponseCache, schema: GraphQLSchema, revisionFor?: RevisionFor): Plugin {
  const queryFields = schema.getQueryType()!.getFields();
  /** Per parsed document (Yoga hands the same object for the same text): may it be kept, its text and what it reads. */
  const decisions = new WeakMap<DocumentNode, Map<string, Kept | null>>();
  interface Kept {
    operation: string;
    dependencies: OperationDependencies;
  }

  /** A query whose root fields may all be kept, with the text that names it and what it reads; null otherwise. */
  function keptAs(document: DocumentNode, operationName: string | null | undefined): Kept | null {
    let byName = decisions.get(document);
    if (!byName) decisions.set(document, (byName = new Map()));
    const name = operationName ?? '';
    const decided = byName.get(name);
    if (decided !== undefined) return decided;
    const operation = isCatalogueQuery(queryFields, document, operationName) ? operationOf(document, operationName) : undefined;
    const dependencies = operation ? dependenciesOf(schema, document, operation) : null;
    const verdict = dependencies ? { operation: `${name}\n${print(document)}`, dependencies } : null;
    byName.set(name, verdict);
    return verdict;
  }

  return {
    async onExecute({ args, setResultAndStopExecution }) {
      const state = args.contextValue as RequestState & Partial<ApiContext>;
      // Operations asked of /graphql: REST's routes execute through the same stages, with a cache of their own.
      if (state.route?.face !== 'graphql') return;
      const kept = keptAs(args.document, args.operationName);
      if (!kept) return;
      const variables = textOf(args.variableValues);
      if (variables === undefined) return;
      const caller = state.actor;
      const revision = revisionFor?.(state, caller, args.document, args.operationName)?.current ?? state.admission?.revision;
      const lookup = await cache.lookup({ face: 'graphql', operation: kept.operation, variables, caller, revision });
      if (!lookup) return;
      if (lookup.hit) {
        const body = lookup.hit.body;
        // An incremental answer is kept as the list of its parts (any other answer is one object): sent again part by part.
        if (body.startsWith('[')) setResultAndStopExecution(replay(JSON.parse(body) as IncrementalPart[]) as unknown as ExecutionResult);
        // Its actual cost as counted when kept; one kept before costs were counted gets no refund.
        else setResultAndStopExecution({ stringify: () => body, [KEPT_ACTUAL_COST]: lookup.hit.loaded ?? Number.POSITIVE_INFINITY } as SerializedResult);
        return;
      }
      return {
        onExecuteDone({ result, setResult }) {
          if (isAsyncIterable(result)) {
            // @defer, @stream: kept once every part has been made, none with an error, under its own
            // document (the directives are part of its text), so never answered for the same
            // query without them, nor the reverse. What it shows is what the parts add up to.
            const parts: IncrementalPart[] = [];
            let clean = true;
            return {
              onNext({ result }) {
                const part = result as IncrementalPart;
                if (errorsOfPart(part).length || part.extensions) clean = false;
                else parts.push(part);
              },
              onEnd() {
                if (!clean || parts.at(-1)?.hasNext !== false) return;
                lookup.keep({ status: 200, body: JSON.stringify(parts) }, tagsOf(kept.dependencies, completeData(parts), caller));
              },
            };
          }
          // An error may be the caller's or a moment's (a database away): never kept.
          if (result.errors?.length || result.extensions) return;
          const body = JSON.stringify(result);
          const loaded = loadedCost(args.document, args.operationName, result.data);
          lookup.keep({ status: 200, body, loaded }, tagsOf(kept.dependencies, result.data, caller));
          setResult({ ...result, stringify: () => body } as SerializedResult);
        },
      };
    },
  };
}

/** A kept incremental answer's parts, as the executor would hand them. */
async function* replay(parts: IncrementalPart[]): AsyncGenerator<IncrementalPart> {
  yield* parts;
}
