import { createSchema, createYoga } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import { useContractErrorCodes } from '../../src/pipeline/graphql-errors.js';
import { graphqlHardening, graphqlLimitsFrom, NESTING_HEADROOM, type GraphqlHardening } from '../../src/pipeline/graphql-limits.js';
import { loadConfig } from '../../src/config/config.js';
import { MAX_BODY_BYTES } from '../../src/shared/request-body.js';

// The document limits and body rules of /graphql (src/pipeline/graphql-limits.ts), applied by Yoga in
// this process to a schema of three types: no app, no database, no socket. The limits are set
// small, so that each boundary is a short document.

const typeDefs = /* GraphQL */ `
  type Query {
    node: Node
    echo(text: String, list: [[[Int]]]): String
  }
  type Node {
    id: ID!
    name: String
    child: Node
  }
`;
const node = (): Record<string, unknown> => ({ id: '1', name: 'n', child: node });
const schema = createSchema({
  typeDefs,
  resolvers: { Query: { node, echo: (_: unknown, { text }: { text?: string }) => text ?? 'ok' }, Node: { child: node } },
});

const LIMITS = { GRAPHQL_MAX_DEPTH: '3', GRAPHQL_MAX_ALIASES: '2', GRAPHQL_MAX_DIRECTIVES: '2', GRAPHQL_MAX_TOKENS: '60' };

/** The two stages' plugins, body rules then document rules, in the pipeline's order. */
const hardeningPlugins = ({ bodyRules, documentRules }: GraphqlHardening) => [bodyRules, ...documentRules];

function yogaWith(env: Record<string, string> = {}) {
  const hardening = graphqlHardening(loadConfig({ ...LIMITS, ...env }));
  return createYoga({ schema, logging: false, landingPage: false, graphiql: false, ...hardening.yogaOptions, plugins: [useContractErrorCodes(), ...hardeningPlugins(hardening)] });
}

interface Answer {
  status: number;
  headers: Headers;
  body: { data?: unknown; errors?: { message: string; extensions?: { code?: string; details?: Record<string, string> } }[] };
}

/** POSTs `body` (text as it is, anything else as JSON) with the GraphQL response media type, so a refused document is a 400. */
async function post(yoga: ReturnType<typeof yogaWith>, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await yoga.fetch('http://unit.test/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : {} };
}

const query = (yoga: ReturnType<typeof yogaWith>, source: string, variables?: Record<string, unknown>) => post(yoga, { query: source, variables });

function expectRefused(answer: Answer, status: number, code: string, message: RegExp) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(status);
  expect(answer.body.errors?.[0]?.extensions?.code).toBe(code);
  expect(answer.body.errors?.[0]?.message).toMatch(message);
}

function expectAnswered(answer: Answer) {
  expect(answer.body.errors, JSON.stringify(answer.body)).toBeUndefined();
  expect(answer.status).toBe(200);
}

const yoga = yogaWith();

describe('the limits a configuration sets', () => {
  it('has the documented defaults', () => {
    expect(graphqlLimitsFrom(loadConfig({}))).toEqual({
      maxDepth: 10,
      maxAliases: 15,
      maxTokens: 2000,
      maxCost: 10_000,
      maxDirectives: 20,
      batchLimit: 0,
      introspection: true,
      hideSuggestions: false,
    });
  });

  it('hides suggestions in production only, and keeps introspection on there unless turned off', () => {
    expect(graphqlLimitsFrom(loadConfig({}))).toMatchObject({ hideSuggestions: false, introspection: true });
    expect(graphqlLimitsFrom(loadConfig({ NODE_ENV: 'production' }))).toMatchObject({ hideSuggestions: true, introspection: true });
    expect(graphqlLimitsFrom(loadConfig({ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'false' })).introspection).toBe(false);
  });
});

describe('document limits', () => {
  it('depth: as deep as the limit passes, one level more is refused', async () => {
    expectAnswered(await query(yoga, `{ node { child { id } } }`));
    expectRefused(await query(yoga, `{ node { child { child { id } } } }`), 400, 'VALIDATION_ERROR', /depth/i);
  });

  it('depth: fragments, named or inline, add no level', async () => {
    expectAnswered(await query(yoga, `{ node { ... on Node { ...F } } } fragment F on Node { child { id } }`));
    expectRefused(await query(yoga, `{ node { ...F } } fragment F on Node { child { child { id } } }`), 400, 'VALIDATION_ERROR', /depth/i);
  });

  it('aliases: as many as the limit pass, one more is refused', async () => {
    expectAnswered(await query(yoga, `{ a: node { id } b: node { id } }`));
    expectRefused(await query(yoga, `{ a: node { id } b: node { id } c: node { id } }`), 400, 'VALIDATION_ERROR', /alias/i);
  });

  it('directives: as many as the limit pass, one more is refused', async () => {
    expectAnswered(await query(yoga, `{ node @include(if: true) { id @skip(if: false) } }`));
    expectRefused(await query(yoga, `{ node @include(if: true) { id @skip(if: false) name @skip(if: false) } }`), 400, 'VALIDATION_ERROR', /directive/i);
  });

  it('tokens: a document over the limit is refused while parsing, and not called a syntax error', async () => {
    const names = (n: number) => `{ node { ${'id '.repeat(n)}} }`;
    expectAnswered(await query(yoga, names(10)));
    const refused = await query(yoga, names(100));
    expectRefused(refused, 400, 'VALIDATION_ERROR', /^Document too large: token limit of 60 exceeded$/);
  });

  it('nesting: braces and brackets deeper than the depth limit plus the headroom are refused before anything recurses', async () => {
    const roomy = yogaWith({ GRAPHQL_MAX_TOKENS: '100000' });
    const lists = (n: number) => `{ echo(list: ${'['.repeat(n)}${']'.repeat(n)}) }`;
    const allowed = 3 + NESTING_HEADROOM;
    // The selection set of the operation is one level; the lists are the rest.
    expect((await query(roomy, lists(allowed - 1))).body.errors?.[0]?.message ?? '').not.toMatch(/too deeply nested/);
    expectRefused(await query(roomy, lists(allowed)), 400, 'VALIDATION_ERROR', /^Document too deeply nested: more than 35 levels/);
    expectRefused(await query(roomy, lists(5000)), 400, 'VALIDATION_ERROR', /too deeply nested/);
  });

  it('answers a refused document 200 to a client that accepts only application/json, as GraphQL over HTTP asks', async () => {
    const answer = await post(yoga, { query: `{ a: node { id } b: node { id } c: node { id } }` }, { accept: 'application/json' });
    expect(answer.status).toBe(200);
    expect(answer.body.errors?.[0]?.extensions?.code).toBe('VALIDATION_ERROR');
  });
});

describe('introspection', () => {
  it('is answered by default', async () => {
    expectAnswered(await query(yoga, `{ __schema { queryType { name } } }`));
  });

  it('turned off, refuses __schema and __type but still answers __typename', async () => {
    const closed = yogaWith({ GRAPHQL_INTROSPECTION: 'false' });
    expectRefused(await query(closed, `{ __schema { queryType { name } } }`), 400, 'VALIDATION_ERROR', /Introspection is disabled.*"__schema"/);
    expectRefused(await query(closed, `{ __type(name: "Node") { name } }`), 400, 'VALIDATION_ERROR', /"__type"/);
    expectAnswered(await query(closed, `{ __typename node { __typename } }`));
  });
});

describe('suggestions', () => {
  it('says "Did you mean …?" in development', async () => {
    expect((await query(yoga, `{ nod { id } }`)).body.errors?.[0]?.message).toMatch(/Did you mean "node"\?/);
  });

  it('says nothing of the names it knows in production', async () => {
    const answer = await query(yogaWith({ NODE_ENV: 'production' }), `{ nod { id } }`);
    expect(answer.body.errors?.[0]?.message).toBe('Cannot query field "nod" on type "Query".');
  });
});

describe('request bodies', () => {
  it.each(['application/json', 'APPLICATION/JSON', 'application/json; charset=utf-8', 'application/json;charset="utf-8"', 'application/graphql+json'])(
    'takes a JSON body sent as %s',
    async (type) => {
      expectAnswered(await post(yoga, { query: '{ echo }' }, { 'content-type': type }));
    },
  );

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1'])(
    'refuses %s with 415 UNSUPPORTED_MEDIA_TYPE, closing the connection',
    async (type) => {
      const answer = await post(yoga, '{"query":"{ echo }"}', { 'content-type': type });
      expectRefused(answer, 415, 'UNSUPPORTED_MEDIA_TYPE', /takes a JSON body/);
      expect(answer.headers.get('connection')).toBe('close');
    },
  );

  it('refuses a declared length over 1 MiB with 413 before reading it', async () => {
    const answer = await post(yoga, '{}', { 'content-length': String(MAX_BODY_BYTES + 1) });
    expectRefused(answer, 413, 'PAYLOAD_TOO_LARGE', new RegExp(`at most ${MAX_BODY_BYTES} bytes`));
    expect(answer.headers.get('connection')).toBe('close');
  });

  it('refuses a body that grows past 1 MiB while read, whatever it did not declare', async () => {
    const big = JSON.stringify({ query: `{ echo(text: "${'x'.repeat(MAX_BODY_BYTES)}") }` });
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const response = await yoga.fetch('http://unit.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
  });

  it.each([
    ['bytes that are not UTF-8', new Uint8Array([0x7b, 0xff, 0x7d]), /not valid UTF-8/],
    ['nothing', '', /body is empty/],
    ['text that is not JSON', '{"query": ', /not valid JSON/],
    ['a JSON string', '"{ echo }"', /must be a JSON object/],
    ['JSON null', 'null', /must be a JSON object/],
  ])('answers %s with 400 VALIDATION_ERROR', async (_what, body, message) => {
    expectRefused(await post(yoga, body), 400, 'VALIDATION_ERROR', message);
  });

  it('refuses a batch while batching is off', async () => {
    expectRefused(await post(yoga, [{ query: '{ echo }' }]), 400, 'VALIDATION_ERROR', /Batching is not supported/);
  });

  it('with a batch limit, runs up to that many operations and refuses more, none, or ones that are not objects', async () => {
    const batching = yogaWith({ GRAPHQL_BATCH_LIMIT: '2' });
    const ran = await post(batching, [{ query: '{ a: echo(text: "1") }' }, { query: '{ b: echo(text: "2") }' }]);
    expect(ran.status).toBe(200);
    expect(ran.body).toEqual([{ data: { a: '1' } }, { data: { b: '2' } }]);
    expectRefused(await post(batching, [{ query: '{ echo }' }, { query: '{ echo }' }, { query: '{ echo }' }]), 400, 'VALIDATION_ERROR', /1 to 2 operations; it has 3/);
    expectRefused(await post(batching, []), 400, 'VALIDATION_ERROR', /it has 0/);
    expectRefused(await post(batching, [{ query: '{ echo }' }, '{ echo }']), 400, 'VALIDATION_ERROR', /Each operation of a batch must be a JSON object/);
  });

  it('refuses a GET whose variables are not JSON, naming the parameter', async () => {
    const response = await yoga.fetch(`http://unit.test/graphql?query=${encodeURIComponent('{ echo }')}&variables=${encodeURIComponent('{nope')}`, {
      headers: { accept: 'application/graphql-response+json' },
    });
    expect(response.status).toBe(400);
    expect((await response.json()).errors[0].message).toBe('The variables parameter must be JSON (URL-encoded)');
  });
});

describe('variables', () => {
  it('refuses a string that is not well-formed Unicode, naming where it is, before any resolver runs', async () => {
    let ran = false;
    const watched = createYoga({
      schema: createSchema({
        typeDefs,
        resolvers: {
          Query: {
            echo: () => {
              ran = true;
              return 'x';
            },
          },
        },
      }),
      logging: false,
      plugins: hardeningPlugins(graphqlHardening(loadConfig(LIMITS))),
    });
    const answer = await post(watched, `{"query":"query($t: String) { echo(text: $t) }","variables":{"t":"\\ud800"}}`);
    expectRefused(answer, 400, 'VALIDATION_ERROR', /well-formed Unicode/);
    expect(answer.body.errors?.[0]?.extensions?.details).toEqual({ t: 'is not well-formed Unicode (it holds a lone surrogate)' });
    expect(ran).toBe(false);
  });
});
