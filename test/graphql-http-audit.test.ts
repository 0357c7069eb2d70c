import { serverAudits, type AuditResult } from 'graphql-http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';

// The GraphQL over HTTP specification's own audit suite (graphql-http), run against the real app
// over real HTTP, in development and in production (the audits that send variables failed there
// while introspection was off by default). Every audit passes: the MUSTs, the SHOULDs and the MAYs.

describe.each(['development', 'production'] as const)('GraphQL over HTTP (graphql-http server audits), NODE_ENV=%s', (nodeEnv) => {
  let app: TestApp;
  let results: AuditResult[];

  beforeAll(async () => {
    app = await startTestApp({ template: 'migrated', env: { NODE_ENV: nodeEnv } });
    // The audits send ~60 requests: each from its own client address (through the trusted
    // loopback proxy), so the anonymous rate limit does not get in the way.
    let n = 0;
    const fetchFn = (input: RequestInfo | URL, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      n++;
      headers.set('x-forwarded-for', `10.200.${(n >> 8) & 255}.${n & 255}`);
      return fetch(input, { ...init, headers });
    };
    results = [];
    for (const audit of serverAudits({ url: `${app.base}/graphql`, fetchFn })) results.push(await audit.fn());
  });
  afterAll(() => app?.close());

  const failures = (level: string) =>
    results
      .filter((r) => r.name.startsWith(`${level} `) && r.status !== 'ok')
      .map((r) => `${r.id} ${r.name}: ${r.status === 'ok' ? '' : r.reason}`);

  it('ran the whole suite', () => {
    expect(results.length).toBeGreaterThan(50);
  });

  it('passes every MUST', () => {
    expect(failures('MUST')).toEqual([]);
  });

  it('passes every SHOULD', () => {
    expect(failures('SHOULD')).toEqual([]);
  });

  it('passes every MAY', () => {
    expect(failures('MAY')).toEqual([]);
  });
});

describe('a mutation sent with GET', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ template: 'migrated' });
  });
  afterAll(() => app?.close());

  const viaGet = (query: string, accept: string, operationName?: string) =>
    app.get(`/graphql?query=${encodeURIComponent(query)}${operationName ? `&operationName=${operationName}` : ''}`, { headers: { accept } });

  it.each(['application/json', 'application/graphql-response+json'])('is 405 with Allow: POST (Accept: %s); a query over GET still answers', async (accept) => {
    for (const [query, operationName] of [['mutation { cancelOrder(id: "x") { id } }'], ['query Q { __typename } mutation M { cancelOrder(id: "x") { id } }', 'M']] as const) {
      const res = await viaGet(query, accept, operationName);
      expect(res.status, query).toBe(405);
      expect(res.headers.get('allow'), query).toBe('POST');
      expect(res.body, query).toEqual({ errors: [{ message: 'Can only perform a mutation operation from a POST request.', extensions: { code: 'METHOD_NOT_ALLOWED' } }] });
    }
    const query = await viaGet('query Q { __typename } mutation M { cancelOrder(id: "x") { id } }', accept, 'Q');
    expect(query.status).toBe(200);
    expect(query.body).toEqual({ data: { __typename: 'Query' }, extensions: { cost: expect.any(Object) } });
  });
});
