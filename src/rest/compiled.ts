import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { Kind, type execute, type DocumentNode, type ExecutionArgs, type ExecutionResult, type GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';

// The REST routes' queries are fixed documents, so each is compiled once, at start, into a
// function that resolves its selection (graphql-jit) instead of being walked field by field by
// the generic executor on every request: on a page of products (about 30 fields a row) that walk
// built a resolve info, a path and an argument map for every field of every row. Only the
// executor is swapped: every plugin's hooks still run around it, the same resolvers run with the
// same context, and errors are masked as before. Mutations stay with the generic executor: they
// are not hot, and their serial semantics are its to keep. plugin-prisma still plans each page as
// one query: vendor/README.md (change 3) says why that needed the selection mapper to find a field's
// scope by its response path.

const isQuery = (document: DocumentNode) =>
  document.definitions.some((d) => d.kind === Kind.OPERATION_DEFINITION && d.operation === 'query');

/**
 * A REST route answers its operation's first error alone (src/rest/router.ts), so that is the only
 * one its execution reports. When a failure nulls a field, graphql-js reports it once, but
 * graphql-jit reports every failing field beneath it: a list page whose items and meta both
 * failed to read (the database down) would be masked, and counted as a 503, twice.
 */
function answeredError(result: ExecutionResult): ExecutionResult {
  return result.errors && result.errors.length > 1 ? { ...result, errors: [result.errors[0]!] } : result;
}

/** Runs the given documents' queries compiled; any other document, the generic executor. A document that cannot be compiled fails the start. */
export function useCompiledRestQueries(schema: GraphQLSchema, documents: DocumentNode[]): Plugin {
  const compiled = new Map<DocumentNode, CompiledQuery>();
  for (const document of documents.filter(isQuery)) {
    const query = compileQuery(schema, document, undefined, { disablingCapturingStackErrors: true });
    if (!isCompiledQuery(query)) throw new Error(`A REST query could not be compiled: ${query.errors?.map((e) => e.message).join('; ')}`);
    compiled.set(document, query);
  }
  return {
    onExecute({ args, setExecuteFn }) {
      const query = compiled.get(args.document);
      if (!query) return;
      setExecuteFn(((run: ExecutionArgs) => {
        const result = query.query(run.rootValue, run.contextValue, run.variableValues ?? {});
        return 'then' in result ? result.then(answeredError) : answeredError(result);
      }) as typeof execute);
    },
  };
}
