import { maxAliasesRule } from '@escape.tech/graphql-armor-max-aliases';
import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { maxDirectivesRule } from '@escape.tech/graphql-armor-max-directives';
import { MaxTokensParserWLexer } from '@escape.tech/graphql-armor-max-tokens';
import {
  GraphQLError,
  type ConstListValueNode,
  type DocumentNode,
  type GraphQLSchema,
  type ConstObjectValueNode,
  type ExecutionResult,
  type ListValueNode,
  type ObjectValueNode,
  type ParseOptions,
  type SelectionSetNode,
  type Source,
  type TypeNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import type { GraphQLParams, Plugin, YogaServerOptions } from 'graphql-yoga';
import type { Config } from '../config/config.js';
import { asAppError, errorStatus, type ErrorCode } from '../shared/errors.js';
import { MAX_BODY_BYTES, payloadTooLarge, readLimited } from '../shared/request-body.js';
import { ILL_FORMED_MESSAGE, illFormedStringAt } from '../shared/validation.js';
import { PERSISTED_PARAM_NAMES } from './graphql-persisted.js';

// Limits and protocol rules for /graphql, in front of the schema:
//
// - POST bodies: JSON only (415 otherwise), at most 1 MiB (413), read without trusting
//   Content-Length and abandoned at the limit; batches (JSON arrays) only when GRAPHQL_BATCH_LIMIT
//   allows them. An operation's members other than those the service reads are ignored.
// - Documents: at most GRAPHQL_MAX_TOKENS tokens and GRAPHQL_MAX_DEPTH + NESTING_HEADROOM levels of
//   braces and brackets (both counted while parsing), GRAPHQL_MAX_DEPTH deep,
//   GRAPHQL_MAX_ALIASES aliases, GRAPHQL_MAX_DIRECTIVES directives (graphql-armor's rules), and an
//   estimated cost of at most GRAPHQL_MAX_COST objects (./graphql-cost.ts, checked and charged to
//   the caller's cost budget by ./graphql-cost-budget.ts).
// - Introspection per GRAPHQL_INTROSPECTION (default: on, production included: the schema is public,
//   and GraphiQL needs it for its docs and autocompletion); "Did you mean …?" hints hidden in
//   production, where they would let a client with introspection off rebuild the schema by guessing.
//
// Every refusal is a GraphQL error `{ message, extensions: { code } }` with the contract's code:
// VALIDATION_ERROR for a document over a limit, PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE. Document
// refusals follow the GraphQL over HTTP spec like any validation error: 200 with
// application/json, 400 with application/graphql-response+json.

export interface GraphqlLimits {
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  maxCost: number;
  maxDirectives: number;
  /** Operations per batched request; 0: batching off. */
  batchLimit: number;
  introspection: boolean;
  /** Hide "Did you mean …?" suggestions in error messages. */
  hideSuggestions: boolean;
}

export function graphqlLimitsFrom(config: Config): GraphqlLimits {
  const production = config.NODE_ENV === 'production';
  return {
    maxDepth: config.GRAPHQL_MAX_DEPTH,
    maxAliases: config.GRAPHQL_MAX_ALIASES,
    maxTokens: config.GRAPHQL_MAX_TOKENS,
    maxCost: config.GRAPHQL_MAX_COST,
    maxDirectives: config.GRAPHQL_MAX_DIRECTIVES,
    batchLimit: config.GRAPHQL_BATCH_LIMIT,
    introspection: config.GRAPHQL_INTROSPECTION ?? true,
    hideSuggestions: production,
  };
}

/**
 * What createYoga needs: spread `yogaOptions` into its options; the plugins are two stages of the
 * pipeline (./pipeline.ts): the body's rules as it is read, the document's once it is known.
 */
export interface GraphqlHardening {
  bodyRules: Plugin;
  documentRules: Plugin[];
  yogaOptions: Pick<YogaServerOptions<Record<string, unknown>, Record<string, unknown>>, 'batching' | 'multipart'>;
}

export function graphqlHardening(config: Config): GraphqlHardening {
  const limits = graphqlLimitsFrom(config);
  return {
    bodyRules: useRequestBodyRules(limits),
    documentRules: [useDocumentLimits(limits), useWellFormedVariables(), ...(limits.hideSuggestions ? [useHiddenSuggestions()] : [])],
    yogaOptions: {
      // Yoga's own batching check stays as a second line; ours (in the body parser) answers first.
      batching: limits.batchLimit > 0 ? { limit: limits.batchLimit } : false,
      // No Upload scalar, and multipart is a CORS "simple" content type: refused with 415.
      multipart: false,
    },
  };
}

/** A refusal of the whole request, with its HTTP status (and headers) for Yoga's response. */
function requestError(code: ErrorCode, message: string, headers?: Record<string, string>): GraphQLError {
  return new GraphQLError(message, { extensions: { code, http: { status: errorStatus[code], ...(headers ? { headers } : {}) } } });
}

/**
 * A document over a limit: VALIDATION_ERROR, and `spec: true` so that Yoga answers it like any
 * validation error: 400 with application/graphql-response+json, 200 with application/json.
 */
function limitError(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'VALIDATION_ERROR', http: { status: 400, spec: true } } });
}

// ── Request bodies ───────────────────────────────────────────────────────────────────────────

/**
 * Media types a POST body may have. The GraphQL over HTTP spec requires application/json and
 * lets a server refuse the rest; application/graphql+json is the name an earlier draft of the spec
 * gave it (Yoga accepts it). Form encodings, multipart and text/plain are refused: the schema has
 * no uploads, and they are the content types a cross-site form can send without a preflight.
 */
const JSON_MEDIA_TYPES = new Set(['application/json', 'application/graphql+json']);

/** True when Content-Type is one of JSON_MEDIA_TYPES, with no charset or UTF-8 (the spec's only encoding). */
function isJsonContentType(header: string | null): boolean {
  if (!header) return false;
  const [type = '', ...params] = header.split(';').map((part) => part.trim().toLowerCase());
  if (!JSON_MEDIA_TYPES.has(type)) return false;
  return params.every((param) => {
    const [name, value = ''] = param.split('=').map((part) => part.trim());
    return name !== 'charset' || ['utf-8', 'utf8', '"utf-8"'].includes(value);
  });
}

/** What an operation in a JSON body may carry that the service reads: GraphQL over HTTP's four, and a trusted document's id. */
const OPERATION_MEMBERS = ['query', 'variables', 'operationName', 'extensions', ...PERSISTED_PARAM_NAMES];

function useRequestBodyRules(limits: GraphqlLimits): Plugin {
  // The rest of a refused body is never read: the connection cannot serve another request.
  const close = { connection: 'close' };

  /**
   * The members of an operation this service reads. Any other is ignored, not refused: clients send
   * their own beside them (Apollo Client 4 its `operationType`, others an `id`), as they send unknown
   * query-string parameters on GET. The ones read keep Yoga's checks of their types.
   */
  const readMembers = (operation: Record<string, unknown>): GraphQLParams => {
    const read: Record<string, unknown> = {};
    for (const name of OPERATION_MEMBERS) if (Object.hasOwn(operation, name)) read[name] = operation[name];
    return read as GraphQLParams;
  };

  const parseBody = async (request: Request): Promise<GraphQLParams | GraphQLParams[]> => {
    let bytes: Uint8Array;
    try {
      bytes = await readLimited(request, MAX_BODY_BYTES);
    } catch (error) {
      const appError = asAppError(error);
      if (appError?.code === 'PAYLOAD_TOO_LARGE') throw requestError('PAYLOAD_TOO_LARGE', appError.message, close);
      throw error;
    }
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw requestError('VALIDATION_ERROR', 'The request body is not valid UTF-8');
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw requestError('VALIDATION_ERROR', text.trim() ? 'The request body is not valid JSON' : 'The request body is empty: send a JSON object with a query');
    }
    if (Array.isArray(body)) {
      if (limits.batchLimit === 0) throw requestError('VALIDATION_ERROR', 'Batching is not supported: send one operation per request');
      if (body.length === 0 || body.length > limits.batchLimit) {
        throw requestError('VALIDATION_ERROR', `A batch must have 1 to ${limits.batchLimit} operations; it has ${body.length}`);
      }
      if (!body.every((item) => typeof item === 'object' && item !== null && !Array.isArray(item))) {
        throw requestError('VALIDATION_ERROR', 'Each operation of a batch must be a JSON object');
      }
      return (body as Record<string, unknown>[]).map(readMembers);
    }
    if (typeof body !== 'object' || body === null) {
      throw requestError('VALIDATION_ERROR', 'The request body must be a JSON object with a query');
    }
    // Its fields (query, variables, operationName, extensions) are checked by Yoga next.
    return readMembers(body as Record<string, unknown>);
  };

  /** A GET's parameters, as Yoga reads them, but a `variables` or `extensions` that is not JSON is the client's error (400), not ours. */
  const parseQueryString = (request: Request): GraphQLParams => {
    const params = new URL(request.url).searchParams;
    const json = (name: 'variables' | 'extensions') => {
      const text = params.get(name);
      if (!text) return undefined;
      try {
        return JSON.parse(text) as Record<string, unknown>;
      } catch {
        throw requestError('VALIDATION_ERROR', `The ${name} parameter must be JSON (URL-encoded)`);
      }
    };
    return { operationName: params.get('operationName') || undefined, query: params.get('query') || undefined, variables: json('variables'), extensions: json('extensions') };
  };

  return {
    onRequestParse({ request, setRequestParser }) {
      // GET carries its parameters in the URL, bounded by the HTTP server's header limit.
      if (request.method === 'GET') {
        setRequestParser(parseQueryString);
        return;
      }
      if (request.method !== 'POST') return;
      if (!isJsonContentType(request.headers.get('content-type'))) {
        throw requestError(
          'UNSUPPORTED_MEDIA_TYPE',
          'POST /graphql takes a JSON body sent with Content-Type: application/json',
          request.body ? close : undefined,
        );
      }
      // A declared length over the limit is refused here, before any parser (Yoga's own 25 MB
      // check included) sees the request; a chunked body is counted by readLimited.
      const declared = request.headers.get('content-length');
      if (declared !== null && Number(declared) > MAX_BODY_BYTES) {
        throw requestError('PAYLOAD_TOO_LARGE', payloadTooLarge(MAX_BODY_BYTES).message, close);
      }
      // Our parser replaces Yoga's JSON parser: same format, with the size limit, the contract's
      // codes and a media-type match that ignores letter case.
      setRequestParser(parseBody);
    },
  };
}

// ── Documents ────────────────────────────────────────────────────────────────────────────────

/** graphql-armor's refusals: reported like any validation error, with our code. */
const armorOptions = {
  exposeLimits: true,
  // Reported rather than thrown, so that Yoga treats them as the validation errors they are.
  propagateOnRejection: false,
  onReject: [
    (context: ValidationContext | null, error: GraphQLError) => {
      context?.reportError(limitError(error.message.replace(/^Syntax Error: /, '')));
    },
  ],
};

/** Forbids __schema and __type (not __typename), like graphql's NoSchemaIntrospectionCustomRule, with our code. */
const noIntrospection: ValidationRule = (context) => ({
  Field(node) {
    if (node.name.value === '__schema' || node.name.value === '__type') {
      context.reportError(
        new GraphQLError(`Introspection is disabled on this server: "${node.name.value}" cannot be queried`, {
          nodes: node,
          extensions: { code: 'VALIDATION_ERROR' },
        }),
      );
    }
  },
});

/**
 * Levels of nesting a document may have beyond GRAPHQL_MAX_DEPTH: inline fragments, input values
 * (`[{…}]`: the deepest argument of the schema nests 3) and introspection's `ofType` chain, which
 * the depth limit does not count.
 */
export const NESTING_HEADROOM = 32;

/**
 * The token-limited parser, refusing a document whose selection sets, list and object values and
 * list types nest deeper than `maxNesting` in total. Each of these is parsed (and later validated,
 * coerced, costed, executed) by recursion, so `[[[…]]]` a few thousand deep overflowed the stack:
 * the nesting is checked on the way in, before any of that recursion goes deeper than the limit.
 */
class NestingLimitedParser extends MaxTokensParserWLexer {
  private nesting = 0;

  constructor(
    source: string | Source,
    options: ConstructorParameters<typeof MaxTokensParserWLexer>[1],
    private readonly maxNesting: number,
  ) {
    super(source, options);
  }

  private nested<T>(parse: () => T): T {
    if (this.nesting >= this.maxNesting) {
      throw limitError(`Document too deeply nested: more than ${this.maxNesting} levels of braces and brackets`);
    }
    this.nesting++;
    try {
      return parse();
    } finally {
      this.nesting--;
    }
  }

  override parseSelectionSet(): SelectionSetNode {
    return this.nested(() => super.parseSelectionSet());
  }

  override parseList(isConst: true): ConstListValueNode;
  override parseList(isConst: boolean): ListValueNode;
  override parseList(isConst: boolean): ListValueNode {
    return this.nested(() => super.parseList(isConst));
  }

  override parseObject(isConst: true): ConstObjectValueNode;
  override parseObject(isConst: boolean): ObjectValueNode;
  override parseObject(isConst: boolean): ObjectValueNode {
    return this.nested(() => super.parseObject(isConst));
  }

  override parseTypeReference(): TypeNode {
    return this.nested(() => super.parseTypeReference());
  }
}

function useDocumentLimits(limits: GraphqlLimits): Plugin {
  const rules: ValidationRule[] = [
    // Depth is the depth of fields: a fragment (named or inline) is no level of its own.
    maxDepthRule({ n: limits.maxDepth, flattenFragments: true, ...armorOptions }),
    maxAliasesRule({ n: limits.maxAliases, ...armorOptions }),
    maxDirectivesRule({ n: limits.maxDirectives, ...armorOptions }),
    ...(limits.introspection ? [] : [noIntrospection]),
  ];

  const tokenLimitedParse = (source: string | Source, options?: ParseOptions) => {
    const parser = new NestingLimitedParser(source, {
      ...options,
      n: limits.maxTokens,
      exposeLimits: true,
      // Thrown while parsing, so a huge document stops at the limit instead of being parsed whole.
      propagateOnRejection: true,
      onReject: [
        (_context: ValidationContext | null, error: GraphQLError) => {
          // Not a syntax error, whatever armor's message says.
          (error as { message: string }).message = `Document too large: token limit of ${limits.maxTokens} exceeded`;
          const extensions = error.extensions as Record<string, unknown>;
          extensions.code = 'VALIDATION_ERROR';
          extensions.http = { status: 400, spec: true };
        },
      ],
    }, limits.maxDepth + NESTING_HEADROOM);
    return parser.parseDocument();
  };

  return {
    onParse({ setParseFn }) {
      setParseFn(tokenLimitedParse);
    },
    onValidate({ addValidationRule }) {
      for (const rule of rules) addValidationRule(rule);
    },
    // The estimated cost is checked (and charged) per execution and per subscription by ./graphql-cost-budget.ts.
  };
}

/** What the onExecute and onSubscribe hooks both hand a plugin: the operation and a way to answer it instead. */
interface LimitHookPayload {
  args: { schema: GraphQLSchema; document: DocumentNode; operationName?: string | null; variableValues?: Record<string, unknown> | null };
  setResultAndStopExecution(result: ExecutionResult): void;
}

// ── Variables ────────────────────────────────────────────────────────────────────────────────

/**
 * JSON carries strings that are not well-formed Unicode (`"\ud800"`), which no argument can mean
 * and the database cannot store: such a variable is a VALIDATION_ERROR naming it, before any
 * resolver runs. (A document cannot hold one: GraphQL's parser refuses a lone surrogate escape.)
 */
function useWellFormedVariables(): Plugin {
  const check = ({ args, setResultAndStopExecution }: LimitHookPayload) => {
    const at = illFormedStringAt(args.variableValues ?? {});
    if (at === null) return;
    setResultAndStopExecution({
      errors: [
        new GraphQLError('Invalid variables: strings must be well-formed Unicode', {
          extensions: { code: 'VALIDATION_ERROR', details: { [at]: ILL_FORMED_MESSAGE }, http: { status: 400, spec: true } },
        }),
      ],
    });
  };
  return { onExecute: check, onSubscribe: check };
}

// ── Suggestions ──────────────────────────────────────────────────────────────────────────────

/** graphql-js's hints: `Did you mean "x"?`, `… "x" or "y"?`, `… the enum value "X"?`, `… to use an inline fragment on "T"?`. */
const SUGGESTION = /\s*Did you mean [^?]*\?/g;

/**
 * Strips "Did you mean …?" from every error (validation, variable coercion), so that a
 * production schema with introspection off cannot be rebuilt by guessing names.
 */
function useHiddenSuggestions(): Plugin {
  const strip = (result: ExecutionResult) => {
    for (const error of result.errors ?? []) {
      const message = error.message.replace(SUGGESTION, '');
      if (message !== error.message) (error as { message: string }).message = message;
    }
  };
  return {
    onResultProcess({ result }) {
      for (const one of Array.isArray(result) ? result : [result]) {
        if (one && typeof one === 'object' && 'errors' in one) strip(one as ExecutionResult);
      }
    },
  };
}
