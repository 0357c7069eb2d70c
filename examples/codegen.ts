// GraphQL Code Generator's configuration for the GraphQL examples (npm run examples:generate,
// run from the repository's top folder): the client preset reads the committed schema.graphql and
// the graphql(`…`) documents in the example, and writes typed documents (TypedDocumentNode) with
// the types of their results and variables into examples/generated/graphql/.
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['examples/graphql-client.ts', 'examples/apollo-client.ts', 'examples/urql-client.ts'],
  ignoreNoDocuments: false,
  generates: {
    'examples/generated/graphql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        // ESM with Node's resolution: relative imports end in .js.
        emitLegacyCommonJSImports: false,
        useTypeImports: true,
        enumsAsTypes: true,
        onlyOperationTypes: true,
        // What the service sends for its scalars (docs/api.md, Money): Decimal is a JSON number;
        // as an input a string of decimal digits is accepted too.
        scalars: {
          DateTime: 'string',
          Decimal: { input: 'number | string', output: 'number' },
          JSON: 'unknown',
        },
      },
    },
  },
};

export default config;
