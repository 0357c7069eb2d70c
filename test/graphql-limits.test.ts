import { buildClientSchema, getIntrospectionQuery, Lexer, printSchema, Source, TokenKind, type IntrospectionQuery } from 'graphql';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BODY_BYTES } from '../src/shared/request-body.js';
import { estimateCost } from '../src/pipeline/graphql-cost.js';
import { schema } from '../src/domain/schema.js';
import { parse } from 'graphql';
import { startTestApp, type TestApp } from './helpers/app.js';
import { sentSince } from './helpers/statements.js';

// /graphql's limits: body size and type, document depth, aliases, tokens, directives and cost,
// batching, introspection and field suggestions. Defaults come from src/config/config.ts (their
// values, and the cost estimate without a server: test/unit/graphql-limits.test.ts, graphql-cost.test.ts).

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ template: 'migrated' });
});
afterAll(() => app?.close());

let clientSeq = 0;
const clientIp = () => `10.150.${(++clientSeq >> 8) & 255}.${clientSeq & 255}`;

/** POST /graphql with a JSON body; `accept` picks the response media type. */
async function post(target: TestApp, body: unknown, accept = 'application/json') {
  const res = await target.get('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return res;
}

const gql = (target: TestApp, query: string, variables?: Record<string, unknown>) => post(target, { query, variables });

const expectRefused = (res: { status: number; body: any }, message: RegExp) => {
  expect(res.status).toBe(200);
  expect(res.body.data).toBeUndefined();
  expect(res.body.errors).toHaveLength(1);
  expect(res.body.errors[0].message).toMatch(message);
  expect(res.body.errors[0].extensions).toEqual({ code: 'VALIDATION_ERROR' });
};

const expectOk = (res: { status: number; body: any }) => {
  expect(res.status).toBe(200);
  expect(res.body.errors).toBeUndefined();
  expect(res.body.data).toBeDefined();
};

const tokens = (document: string) => {
  const lexer = new Lexer(new Source(document));
  let n = 0;
  while (lexer.advance().kind !== TokenKind.EOF) n++;
  return n;
};

describe('document limits (defaults)', () => {
  it('depth: 10 levels pass, 11 are refused', async () => {
    // product(1) supplier(2) products(3) supplier(4) … products(9) id(10)
    const ten = `{ product(slug: "x") { supplier { products(limit: 1) { supplier { products(limit: 1) { supplier { products(limit: 1) { supplier { products(limit: 1) { id } } } } } } } } } }`;
    const eleven = `{ product(slug: "x") { supplier { products(limit: 1) { supplier { products(limit: 1) { supplier { products(limit: 1) { supplier { products(limit: 1) { supplier { id } } } } } } } } } } }`;
    expectOk(await gql(app, ten));
    expectRefused(await gql(app, eleven), /depth limit of 10 exceeded, found 11/);
  });

  it('depth counts fields however they are spelt: named and inline fragments add no level', async () => {
    // The same ten levels as above, each level its own named fragment (as Apollo and Relay write
    // queries), then with inline fragments, then eleven: fragments neither add nor hide a level.
    const levels = (n: number) => {
      const names = Array.from({ length: n }, (_, i) => `L${i}`);
      const types = names.map((_, i) => (i % 2 === 0 ? 'Supplier' : 'Product'));
      const fields = names.map((_, i) => (i % 2 === 0 ? 'products(limit: 1)' : 'supplier'));
      const fragments = names.map((name, i) => `fragment ${name} on ${types[i]} { id ${i + 1 < n ? `${fields[i]} { ...${names[i + 1]} }` : ''} }`);
      return `{ product(slug: "x") { supplier { ...L0 } } } ${fragments.join(' ')}`;
    };
    // product(1) supplier(2) and then one field per fragment: 2 + 8 = 10, 2 + 9 = 11.
    expectOk(await gql(app, levels(8)));
    expectRefused(await gql(app, levels(9)), /depth limit of 10 exceeded, found 11/);
    const inline = `{ product(slug: "x") { ... on Product { supplier { ... on Supplier { products(limit: 1) { ... on Product { supplier { products(limit: 1) { supplier { products(limit: 1) { supplier { products(limit: 1) { id } } } } } } } } } } } } }`;
    expectOk(await gql(app, inline));
    // Depth 6 in named fragments, as the report sent it, is depth 6.
    const six = `{ product(slug: "x") { ...P } } fragment P on Product { supplier { ...S } } fragment S on Supplier { products(limit: 1) { ...Q } } fragment Q on Product { supplier { ...T } } fragment T on Supplier { id }`;
    expectOk(await gql(app, six));
  });

  it('aliases: 15 pass, 16 are refused', async () => {
    const aliases = (n: number) => `{ product(slug: "x") { ${Array.from({ length: n }, (_, i) => `a${i}: id`).join(' ')} } }`;
    expectOk(await gql(app, aliases(15)));
    expectRefused(await gql(app, aliases(16)), /Aliases limit of 15 exceeded, found 16/);
    // Aliases of __typename (clients add them to tell union members apart) are not counted.
    expectOk(await gql(app, `{ ${Array.from({ length: 16 }, (_, i) => `t${i}: __typename`).join(' ')} p: product(slug: "x") { id } }`));
  });

  it('directives: 20 pass, 21 are refused', async () => {
    const directives = (n: number) => `{ ${Array.from({ length: n }, () => '__typename @include(if: true)').join(' ')} }`;
    expectOk(await gql(app, directives(20)));
    expectRefused(await gql(app, directives(21)), /Directives limit of 20 exceeded, found 21/);
  });

  it('tokens: 2000 pass, 2001 are refused while parsing', async () => {
    // Repeated spreads of one fragment: cheap for every other rule, 2 tokens each.
    const doc = (extra: number) =>
      `{ __typename ${'__typename '.repeat(extra)}${'...F '.repeat(995)}} fragment F on Query { __typename }`;
    expect(tokens(doc(0))).toBe(2000);
    expect(tokens(doc(1))).toBe(2001);
    expectOk(await gql(app, doc(0)));
    expectRefused(await gql(app, doc(1)), /token limit of 2000 exceeded/);
  });

  it('cost: 10000 estimated objects pass, 10001 are refused, counting page sizes from variables too', async () => {
    // 1 page + 99 products + 99 × 100 reviews = 10000; `meta` adds 1.
    const exact = `{ products(limit: 99) { items { reviews(limit: 100) { id } } } }`;
    const over = `{ products(limit: 99) { items { reviews(limit: 100) { id } } meta { total } } }`;
    expect(estimateCost({ schema, document: parse(exact) })).toBe(10_000);
    expect(estimateCost({ schema, document: parse(over) })).toBe(10_001);
    expectOk(await gql(app, exact));
    expectRefused(await gql(app, over), /cost limit of 10000 exceeded/);

    // One document, two sets of variables: 101 + 100 × n.
    const byVariable = `query($n: Int!) { products(limit: 100) { items { reviews(limit: $n) { id } } } }`;
    expectOk(await gql(app, byVariable, { n: 98 }));
    expectRefused(await gql(app, byVariable, { n: 99 }), /cost limit/);
    expectOk(await gql(app, byVariable, { n: 98 }));
  });

  it('cost: a short query asking for a million rows is refused without running', async () => {
    const before = app.statements.length;
    const res = await gql(app, `{ products(limit: 100) { items { supplier { products(limit: 100) { supplier { products(limit: 100) { id } } } } } } }`);
    expectRefused(res, /cost limit/);
    expect(sentSince(app.statements, before)).toEqual([]);
  });

  it('answers a limit with 400 under application/graphql-response+json, like any validation error', async () => {
    const over = { query: `{ product(slug: "x") { ${Array.from({ length: 16 }, (_, i) => `a${i}: id`).join(' ')} } }` };
    const strict = await post(app, over, 'application/graphql-response+json');
    expect(strict.status).toBe(400);
    expect(strict.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    expect(strict.body.errors[0].extensions).toEqual({ code: 'VALIDATION_ERROR' });
    expect((await post(app, over)).status).toBe(200);
  });

  it('lets the existing tests\' largest query and GraphiQL\'s introspection through', async () => {
    const introspection = getIntrospectionQuery({
      descriptions: true,
      specifiedByUrl: true,
      directiveIsRepeatable: true,
      schemaDescription: true,
      inputValueDeprecation: true,
      oneOf: true,
    });
    const res = await gql(app, introspection);
    expectOk(res);
    expect(res.body.data.__schema.queryType.name).toBe('Query');
    const page = await fetch(`${app.base}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('GraphiQL');
  });
});

describe('request bodies', () => {
  it('accepts a body of exactly 1 MiB and JSON media types in any letter case', async () => {
    const query = '{ __typename }';
    const json = JSON.stringify({ query });
    const padded = json.slice(0, -1) + ' '.repeat(MAX_BODY_BYTES - json.length) + '}';
    expect(Buffer.byteLength(padded)).toBe(MAX_BODY_BYTES);
    expect((await post(app, padded)).body).toEqual({ data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } });
    for (const type of ['Application/JSON; charset=UTF-8', 'application/json;charset=utf-8', 'application/graphql+json']) {
      const res = await app.get('/graphql', { method: 'POST', headers: { 'content-type': type }, body: json });
      expect(res.body, type).toEqual({ data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } });
    }
  });

  it('refuses other media types with 415 UNSUPPORTED_MEDIA_TYPE in the GraphQL error shape', async () => {
    const query = '{ __typename }';
    const cases: [string | null, BodyInit][] = [
      [null, JSON.stringify({ query })],
      ['text/plain', JSON.stringify({ query })],
      ['application/x-www-form-urlencoded', new URLSearchParams({ query }).toString()],
      ['application/graphql', query],
      ['application/json; charset=iso-8859-1', JSON.stringify({ query })],
      ['application/jsonx', JSON.stringify({ query })],
    ];
    for (const [type, body] of cases) {
      const headers: Record<string, string> = type ? { 'content-type': type } : {};
      const res = await app.get('/graphql', { method: 'POST', headers, body: typeof body === 'string' ? new TextEncoder().encode(body) : body });
      expect(res.status, String(type)).toBe(415);
      expect(res.body, String(type)).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'UNSUPPORTED_MEDIA_TYPE' } }] });
    }
    const form = new FormData();
    form.set('operations', JSON.stringify({ query }));
    const multipart = await app.get('/graphql', { method: 'POST', body: form });
    expect(multipart.status).toBe(415);
    expect(multipart.body.errors[0].extensions.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('answers malformed bodies with 400 VALIDATION_ERROR', async () => {
    for (const body of ['', '{nope', '"query"', 'null', '[1]', new Uint8Array([0x7b, 0xff, 0x7d])]) {
      const res = await app.get('/graphql', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(res.status, String(body)).toBe(400);
      expect(res.body.errors[0].extensions, String(body)).toEqual({ code: 'VALIDATION_ERROR' });
    }
  });

  it('answers a GET whose variables or extensions are not JSON with 400 VALIDATION_ERROR naming the parameter', async () => {
    const query = encodeURIComponent('query($n: Int) { products(limit: $n) { items { name } } }');
    for (const [name, value] of [['variables', 'notjson'], ['variables', '{"n":'], ['extensions', 'notjson'], ['extensions', '{']]) {
      const res = await app.get(`/graphql?query=${query}&${name}=${encodeURIComponent(value!)}`, { headers: { accept: 'application/json' } });
      expect(res.status, `${name}=${value}`).toBe(400);
      expect(res.body.errors[0].extensions, `${name}=${value}`).toEqual({ code: 'VALIDATION_ERROR' });
      expect(res.body.errors[0].message).toContain(`${name} parameter must be JSON`);
    }
    // Well-formed, the same GET runs.
    const ok = await app.get(`/graphql?query=${query}&variables=${encodeURIComponent('{"n":2}')}`, { headers: { accept: 'application/json' } });
    expect(ok.status).toBe(200);
    expect(ok.body.errors).toBeUndefined();
    expect(Array.isArray(ok.body.data.products.items)).toBe(true);
  });

  /**
   * POST /graphql over a raw socket, writing `bytes` of body and never ending it: the answer can
   * only come from a server that stops reading at the limit.
   */
  function postUnfinished(headers: Record<string, string>, bytes: number) {
    const url = new URL(app.base);
    return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: any; ms: number }>((resolve, reject) => {
      const started = Date.now();
      const req = http.request({
        host: url.hostname,
        port: url.port,
        path: '/graphql',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp(), ...headers },
      });
      const timer = setTimeout(() => {
        req.destroy();
        reject(new Error('no answer within 10 s: the server waited for the whole body'));
      }, 10_000);
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          clearTimeout(timer);
          req.destroy();
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text), ms: Date.now() - started });
        });
      });
      req.on('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      const piece = Buffer.alloc(64 * 1024, 0x20);
      let written = 0;
      const pump = () => {
        while (written < bytes) {
          const size = Math.min(piece.length, bytes - written);
          written += size;
          if (!req.write(piece.subarray(0, size))) {
            req.once('drain', pump);
            return;
          }
        }
      };
      pump();
    });
  }

  it('refuses a declared Content-Length over 1 MiB with 413 before reading the body', async () => {
    const res = await postUnfinished({ 'content-length': String(100 * 1024 * 1024) }, 1024);
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ errors: [{ message: expect.stringMatching(/at most 1048576 bytes/), extensions: { code: 'PAYLOAD_TOO_LARGE' } }] });
    expect(res.headers.connection).toBe('close');
    expect(res.ms).toBeLessThan(5000);
  });

  it('refuses a chunked body with 413 as soon as it passes 1 MiB, without waiting for its end', async () => {
    const res = await postUnfinished({ 'transfer-encoding': 'chunked' }, MAX_BODY_BYTES + 128 * 1024);
    expect(res.status).toBe(413);
    expect(res.body.errors[0].extensions).toEqual({ code: 'PAYLOAD_TOO_LARGE' });
    expect(res.headers.connection).toBe('close');
    expect(res.ms).toBeLessThan(5000);
  });

  it('ignores the members clients send beside the operation (Apollo Client 4’s operationType, an id, nulls)', async () => {
    const typename = { data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } };
    for (const extra of [
      '"operationType":"query"',
      '"id":"abc123","operationType":"query","variables":null,"extensions":null,"operationName":null',
      // An own __proto__ member (JSON.parse makes one) changes nothing either.
      '"anything":{"nested":[1,{"deep":true}]},"__proto__":{"query":"mutation { cancelOrder(id: \\"x\\") { id } }"}',
    ]) {
      const body = `{"query":"{ __typename }",${extra}}`;
      const res = await post(app, body);
      expect(res.status, body).toBe(200);
      expect(res.body, body).toEqual(typename);
    }
    // Only extra members: still no query.
    const none = await post(app, { operationType: 'query' });
    expect(none.status).toBe(400);
    expect(none.body.errors[0]).toEqual({ message: 'Must provide query string.', extensions: { code: 'VALIDATION_ERROR' } });
  });

  it('still refuses a member it reads when it has the wrong type', async () => {
    for (const [body, message] of [
      [{ query: 5, operationType: 'query' }, /"query" param to be a string/],
      [{ query: '{ __typename }', variables: 'x' }, /"variables" param to be empty or an object/],
      [{ query: '{ __typename }', variables: [1] }, /"variables" param to be empty or an object/],
      [{ query: '{ __typename }', extensions: 'x' }, /"extensions" param to be empty or an object/],
    ] as const) {
      const res = await post(app, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors[0].message, JSON.stringify(body)).toMatch(message);
      expect(res.body.errors[0].extensions, JSON.stringify(body)).toEqual({ code: 'VALIDATION_ERROR' });
      expect(res.body.data).toBeUndefined();
    }
  });

  it('refuses batches while batching is off', async () => {
    const res = await post(app, [{ query: '{ __typename }' }]);
    expect(res.status).toBe(400);
    expect(res.body.errors[0]).toEqual({ message: expect.stringMatching(/Batching is not supported/), extensions: { code: 'VALIDATION_ERROR' } });
  });
});

describe('nesting', () => {
  // The token limit can be raised to a million, so it is not what stops a deep document: each of
  // these nested 3,000 deep overflowed the stack (INTERNAL_ERROR) before the parser counted nesting.
  let manyTokens: TestApp;
  let deepest: TestApp;
  beforeAll(async () => {
    [manyTokens, deepest] = await Promise.all([
      startTestApp({ template: 'migrated', env: { GRAPHQL_MAX_TOKENS: '1000000' } }),
      startTestApp({ template: 'migrated', env: { GRAPHQL_MAX_TOKENS: '1000000', GRAPHQL_MAX_DEPTH: '1000' } }),
    ]);
  });
  afterAll(async () => {
    await manyTokens?.close();
    await deepest?.close();
  });

  const nest = (open: string, inner: string, close: string, n: number) => open.repeat(n) + inner + close.repeat(n);
  const documents = (n: number): [string, string][] => [
    ['list literal', `{ products(limit: ${nest('[', '1', ']', n)}) { meta { total } } }`],
    ['object literal', `{ products(limit: ${nest('{a: ', '1', '}', n)}) { meta { total } } }`],
    ['list in an input object', `mutation { createOrder(input: {supplierId: "s", items: ${nest('[', '{productId: "p", quantity: 1}', ']', n)}}) { id } }`],
    ['variable default value', `query($v: Int = ${nest('[', '1', ']', n)}) { products(limit: $v) { meta { total } } }`],
    ['directive argument', `{ __typename @include(if: ${nest('[', 'true', ']', n)}) }`],
    ['list type', `query($v: ${nest('[', 'Int', ']', n)}) { __typename }`],
    ['selection set', `{ ${nest('product(slug: "x") { supplier { products(limit: 1) { ', 'id', ' } } }', Math.ceil(n / 3))} }`],
    ['introspection', `{ __type(name: "Product") { ${nest('ofType { ', 'name', ' }', n)} } }`],
    ['inline fragments', `{ ${nest('... on Query { ', '__typename', ' }', n)} }`],
  ];

  it('refuses documents nested 3,000 deep, whatever their tokens, as VALIDATION_ERROR before anything recurses', async () => {
    for (const target of [app, manyTokens, deepest]) {
      for (const [what, document] of documents(3000)) {
        const res = await gql(target, document);
        expect(res.status, what).toBe(200);
        expect(res.body.errors, what).toEqual([{ message: expect.stringMatching(/too deeply nested|token limit/), extensions: { code: 'VALIDATION_ERROR' } }]);
      }
    }
    for (const [what, document] of documents(3000)) {
      expectRefused(await gql(manyTokens, document), /^Document too deeply nested: more than 42 levels of braces and brackets$/);
      expect((await post(manyTokens, { query: document }, 'application/graphql-response+json')).status, what).toBe(400);
    }
  });

  it('allows GRAPHQL_MAX_DEPTH + 32 levels in all, the deepest input of the schema and introspection\'s type chain included', async () => {
    // Within the limit, each is answered by the rule it breaks (a value of the wrong type, the depth limit…), never by an internal error.
    for (const [what, document] of documents(36)) {
      const res = await gql(manyTokens, document);
      expect(res.body.errors?.[0]?.message ?? '', what).not.toMatch(/too deeply nested/);
      expect(res.body.errors?.map((e: { extensions: { code: string } }) => e.extensions.code) ?? [], what).not.toContain('INTERNAL_ERROR');
    }
    const limit = 1000 + 32;
    expect((await gql(deepest, `{ products(limit: ${nest('[', '1', ']', limit - 1)}) { meta { total } } }`)).body.errors[0].message).toMatch(/cannot represent/);
    expectRefused(await gql(deepest, `{ products(limit: ${nest('[', '1', ']', limit)}) { meta { total } } }`), /more than 1032 levels/);
  });

  it('answers deep JSON in variables and extensions as a client error, not an internal one', async () => {
    // Written as text: JSON.stringify itself recurses.
    const deep = (n: number) => `${'['.repeat(n)}1${']'.repeat(n)}`;
    const deepObject = (n: number) => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;
    const query = (q: string) => JSON.stringify(q);
    const cases: [string, string][] = [
      ['an Int variable', `{"query": ${query('query($v: Int) { products(limit: $v) { meta { total } } }')}, "variables": {"v": ${deep(3000)}}}`],
      ['a list variable', `{"query": ${query('query($v: [ID!]) { __typename @skip(if: false) }')}, "variables": {"v": ${deep(3000)}}}`],
      ['an input object variable', `{"query": ${query('mutation($v: CreateOrderInput!) { createOrder(input: $v) { id } }')}, "variables": {"v": ${deepObject(3000)}}}`],
      ['an unused variable', `{"query": ${query('{ __typename }')}, "variables": {"v": ${deep(100_000)}}}`],
      ['extensions', `{"query": ${query('{ __typename }')}, "extensions": {"deep": ${deepObject(100_000)}}}`],
    ];
    for (const [what, body] of cases) {
      const res = await post(manyTokens, body);
      expect(res.status, what).toBeLessThan(500);
      for (const error of res.body.errors ?? []) expect(error.extensions.code, what).toBe('VALIDATION_ERROR');
    }
  });
});

describe('with GRAPHQL_BATCH_LIMIT=3 and GRAPHQL_INTROSPECTION=false', () => {
  let custom: TestApp;
  beforeAll(async () => {
    custom = await startTestApp({ template: 'migrated', env: { GRAPHQL_BATCH_LIMIT: '3', GRAPHQL_INTROSPECTION: 'false' } });
  });
  afterAll(() => custom?.close());

  it('runs batches of up to 3 operations and refuses 4', async () => {
    const op = (i: number) => ({ query: `query Op${i} { __typename }`, operationName: `Op${i}` });
    const three = await post(custom, [op(1), op(2), op(3)]);
    expect(three.status).toBe(200);
    expect(three.body).toEqual([0, 1, 2].map(() => ({ data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } })));
    const four = await post(custom, [op(1), op(2), op(3), op(4)]);
    expect(four.status).toBe(400);
    expect(four.body.errors[0]).toEqual({ message: expect.stringMatching(/1 to 3 operations; it has 4/), extensions: { code: 'VALIDATION_ERROR' } });
    expect((await post(custom, [])).status).toBe(400);
  });

  it('ignores extra members in each operation of a batch', async () => {
    const res = await post(custom, [{ query: '{ __typename }', operationType: 'query' }, { query: '{ __typename }', id: 'x', variables: null }]);
    expect(res.status).toBe(200);
    expect(res.body).toEqual([0, 1].map(() => ({ data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } })));
  });

  it('applies the document limits to each operation of a batch', async () => {
    const res = await post(custom, [
      { query: '{ __typename }' },
      { query: `{ product(slug: "x") { ${Array.from({ length: 16 }, (_, i) => `a${i}: id`).join(' ')} } }` },
    ]);
    expect(res.body[0]).toEqual({ data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } });
    expect(res.body[1].errors[0].extensions).toEqual({ code: 'VALIDATION_ERROR' });
  });

  it('refuses introspection but not __typename', async () => {
    const res = await gql(custom, '{ __schema { queryType { name } } }');
    expectRefused(res, /Introspection is disabled/);
    expectRefused(await gql(custom, '{ __type(name: "Product") { name } }'), /Introspection is disabled/);
    expect((await gql(custom, '{ __typename }')).body).toEqual({ data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } });
  });
});

describe('with NODE_ENV=production', () => {
  let prod: TestApp;
  let prodNoIntrospection: TestApp;
  beforeAll(async () => {
    [prod, prodNoIntrospection] = await Promise.all([
      startTestApp({ template: 'migrated', env: { NODE_ENV: 'production' } }),
      startTestApp({ template: 'migrated', env: { NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'false' } }),
    ]);
  });
  afterAll(async () => {
    await prod?.close();
    await prodNoIntrospection?.close();
  });

  const mistakes: [string, string, Record<string, unknown>?][] = [
    ['field', '{ products(limit: 1) { items { nme } } }'],
    ['argument', '{ products(limt: 1) { meta { total } } }'],
    ['enum literal', '{ products(sortBy: POPULR) { meta { total } } }'],
    ['type', 'query($s: ProductSrt) { products(sortBy: $s) { meta { total } } }'],
    ['enum variable', 'query($s: ProductSort) { products(sortBy: $s) { meta { total } } }', { s: 'POPULR' }],
  ];

  it('suggests names in development', async () => {
    for (const [what, query, variables] of mistakes) {
      const res = await gql(app, query, variables);
      expect(res.body.errors[0].message, what).toMatch(/Did you mean/);
      expect(res.body.errors[0].extensions.code, what).toBe('VALIDATION_ERROR');
    }
  });

  it('hides "Did you mean …?" suggestions', async () => {
    for (const target of [prod, prodNoIntrospection]) {
      for (const [what, query, variables] of mistakes) {
        const res = await gql(target, query, variables);
        expect(res.body.errors[0].message, what).not.toMatch(/Did you mean|POPULAR|"name"|"limit"/);
        expect(res.body.errors[0].extensions.code, what).toBe('VALIDATION_ERROR');
      }
    }
  });

  it('answers introspection by default: the whole query GraphiQL sends for its docs and autocompletion', async () => {
    const res = await gql(prod, getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true }));
    expectOk(res);
    const types: { name: string }[] = res.body.data.__schema.types;
    expect(types.map((t) => t.name)).toEqual(expect.arrayContaining(['Query', 'Mutation', 'Product', 'CreateOrderInput']));
    expectOk(await gql(prod, '{ __type(name: "Product") { fields { name } } }'));
  });

  it('serves GraphiQL its schema at /graphiql/schema.json: what introspection answers, unmetered, revalidated by ETag; not found with introspection off', async () => {
    const options = { descriptions: true, inputValueDeprecation: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true };
    const asked = await gql(prod, getIntrospectionQuery(options));
    const file = await prod.get('/graphiql/schema.json');
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toMatch(/^application\/json/);
    // The same schema GraphiQL would get from /graphql, so its docs and autocompletion are the served schema's.
    const built = (data: IntrospectionQuery) => printSchema(buildClientSchema(data));
    expect(built(file.body.data)).toBe(built(asked.body.data));
    // No request limit spent: not a metered route.
    expect(file.headers.get('x-ratelimit-limit')).toBeNull();
    const etag = file.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await prod.get('/graphiql/schema.json', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect((await prod.get('/graphiql/schema.json', { method: 'POST' })).status).toBe(405);
    // With introspection off the path is not found, and /graphql refuses the query itself.
    expect((await prodNoIntrospection.get('/graphiql/schema.json')).status).toBe(404);
  });

  it('turns introspection off with GRAPHQL_INTROSPECTION=false', async () => {
    expectRefused(await gql(prodNoIntrospection, '{ __schema { queryType { name } } }'), /Introspection is disabled/);
    expectRefused(await gql(prodNoIntrospection, '{ __type(name: "Product") { name } }'), /Introspection is disabled/);
    expect((await gql(prodNoIntrospection, '{ __typename }')).body).toEqual({ data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } });
  });
});
