import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { Kind, type execute, type DocumentNode, type ExecutionArgs, type GraphQLSchema } from 'graphql';
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
      if (query) setExecuteFn(((run: ExecutionArgs) => query.query(run.rootValue, run.contextValue, run.variableValues ?? {})) as typeof execute);
    },
  };
}
