import { buildSchema, parse } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { describe, expect, it } from 'vitest';
import type { ResponseCache } from '../../src/cache/response-cache.js';
import type { RevisionSource } from '../../src/cache/freshness.js';
import type { Caller } from '../../src/context/actor.js';
import type { PrismaClient } from '../../src/db/prisma.js';
import type { Replica, Replicas } from '../../src/db/replicas.js';
import type { Logger } from '../../src/config/logger.js';
import type { Metrics } from '../../src/http/metrics.js';
import { useGate, type Gate, type GateVerdict } from '../../src/pipeline/gate.js';
import { PIPELINE, requestPipeline, type PipelineParts } from '../../src/pipeline/pipeline.js';
import { createReadRouting, type ReadRouting } from '../../src/pipeline/read-routing.js';
import type { HttpRoute, RequestState } from '../../src/pipeline/request-state.js';
import { useRoute, useRouteAnswer } from '../../src/pipeline/route-table.js';
import type { RateLimitStore } from '../../src/ratelimit/store.js';

// The request pipeline (src/pipeline/pipeline.ts): the list is what runs, in its order; and the
// stages that hand each other the request's state (route → gate → answer, read routing's replica)
// write each field once.

const schema = buildSchema('type Query { a: Int }');

/** Parts whose own plugins are recognisable objects; the others' plugins are made for real. */
function partsWith(over: Partial<PipelineParts> = {}) {
  const bodyRules: Plugin = {};
  const documentRules: Plugin[] = [{}, {}];
  const persisted: Plugin = {};
  const readRoutingPlugin: Plugin = {};
  const parts: PipelineParts = {
    observe: { logger: {} as Logger, metrics: {} as Metrics, routeOf: () => '/' },
    routes: [],
    gate: {} as Gate,
    hardening: { bodyRules, documentRules },
    persisted,
    schema,
    cost: { maxCost: 100, store: {} as RateLimitStore },
    restDocuments: [],
    readRouting: { plugin: readRoutingPlugin } as ReadRouting,
    responseCache: {} as ResponseCache,
    ...over,
  };
  return { parts, bodyRules, documentRules, persisted, readRoutingPlugin };
}

const indexOf = (name: string) => PIPELINE.findIndex((stage) => stage.name === name);

describe('the pipeline list', () => {
  it('names each stage once, with what it reads and what it decides', () => {
    const names = PIPELINE.map((stage) => stage.name);
    expect(new Set(names).size).toBe(names.length);
    for (const stage of PIPELINE) {
      expect(stage.reads.length, stage.name).toBeGreaterThan(0);
      expect(stage.decides.length, stage.name).toBeGreaterThan(0);
    }
  });

  it('hands Yoga the plugins stage by stage, in the order of the list', () => {
    const { parts, bodyRules, documentRules, persisted, readRoutingPlugin } = partsWith();
    const plugins = requestPipeline(parts);
    const byStage = PIPELINE.map((stage) => ({ name: stage.name, count: stage.plugins(parts).length }));
    // Each stage's plugins stand where its place in the list says, and nowhere else.
    let at = 0;
    const stageAt = new Map<Plugin, string>();
    for (const { name, count } of byStage) for (let i = 0; i < count; i++) stageAt.set(plugins[at++]!, name);
    expect(at).toBe(plugins.length);
    expect(stageAt.get(bodyRules)).toBe('body limits');
    expect(stageAt.get(persisted)).toBe('persisted documents');
    for (const rule of documentRules) expect(stageAt.get(rule)).toBe('document rules');
    expect(stageAt.get(readRoutingPlugin)).toBe('read routing');
    expect(plugins.indexOf(bodyRules)).toBeLessThan(plugins.indexOf(persisted));
    expect(plugins.indexOf(persisted)).toBeLessThan(plugins.indexOf(documentRules[0]!));
    expect(plugins.indexOf(documentRules[1]!)).toBeLessThan(plugins.indexOf(readRoutingPlugin));
    // The first plugin is observe's: it sees every request first and every response first.
    expect(Object.keys(plugins[0]!).sort()).toEqual(['onRequest', 'onResponse']);
  });

  it('leaves out the stages the app does without (no replicas, no response cache)', () => {
    const { parts } = partsWith({ readRouting: undefined, responseCache: undefined });
    const empty = PIPELINE.filter((stage) => stage.plugins(parts).length === 0).map((stage) => stage.name);
    expect(empty).toEqual(['read routing', 'response cache']);
    expect(requestPipeline(parts)).toHaveLength(requestPipeline(partsWith().parts).length - 2);
  });

  it('keeps the orders the behaviour rests on', () => {
    // Admitted before anything is answered: a refused document is still a counted request.
    expect(indexOf('route')).toBeLessThan(indexOf('gate'));
    expect(indexOf('gate')).toBeLessThan(indexOf('answer'));
    expect(indexOf('answer')).toBeLessThan(indexOf('body limits'));
    // The ETag is taken before the cost report is added to the answer.
    expect(indexOf('cache headers')).toBeLessThan(indexOf('cost'));
    // Read routing wraps the executor chosen before it.
    expect(indexOf('execute')).toBeLessThan(indexOf('read routing'));
    // A kept answer is marked, charged and counted like an executed one: the cache comes after them.
    for (const before of ['cache headers', 'cost', 'read routing']) expect(indexOf(before)).toBeLessThan(indexOf('response cache'));
    expect(PIPELINE.at(-1)?.name).toBe('envelope');
  });
});

/** Runs one plugin's onRequest as the server would: the response it ends with, if any. */
async function onRequest(plugin: Plugin, request: Request, state: RequestState): Promise<Response | undefined> {
  let ended: Response | undefined;
  const hook = plugin.onRequest as unknown as (payload: object) => unknown;
  await hook({ request, url: new URL(request.url), serverContext: state, endResponse: (response: Response) => (ended = response) });
  return ended;
}

describe('route, gate and answer', () => {
  const answered = new Response('answered');
  const table: HttpRoute[] = [
    { path: '/api/*', metered: true, face: 'rest', handle: () => answered },
    { path: '/free', metered: false, face: 'rest', handle: () => answered },
    { path: '/graphql', metered: true, face: 'graphql', handle: () => undefined },
  ];
  const caller: Caller = { kind: 'anonymous', ip: '203.0.113.5' };
  const revision = async () => 1;
  function gateSaying(verdict: GateVerdict) {
    const asked: string[] = [];
    const gate = {
      admit: async (_request: Request, _state: unknown, face: string) => {
        asked.push(face);
        return verdict;
      },
    } as unknown as Gate;
    return { gate, asked };
  }
  /** The three stages in their order, stopping where one answers. */
  async function walk(path: string, verdict: GateVerdict) {
    const { gate, asked } = gateSaying(verdict);
    const state: RequestState = {};
    const request = new Request(`http://unit.test${path}`);
    for (const plugin of [useRoute(table), useGate(gate, table), useRouteAnswer()]) {
      const response = await onRequest(plugin, request, state);
      if (response) return { response, state, asked };
    }
    return { response: undefined, state, asked };
  }

  it('routes the path, admits the request, and writes each on the request’s state', async () => {
    const { response, state, asked } = await walk('/api/products', { admission: { actor: caller, revision } });
    expect(response).toBe(answered);
    expect(state.route).toBe(table[0]);
    expect(state.admission).toEqual({ actor: caller, revision });
    expect(asked).toEqual(['rest']);
  });

  it('answers a path of no route with 404, before the gate', async () => {
    const { response, state, asked } = await walk('/nowhere', { admission: { actor: caller, revision } });
    expect(response?.status).toBe(404);
    expect(state.route).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it('keeps what the gate charged for a refusal, and answers with the refusal alone', async () => {
    const refused = new Response('no', { status: 401 });
    const { response, state } = await walk('/graphql', { admission: { revision }, refused });
    expect(response).toBe(refused);
    expect(state.admission).toEqual({ revision });
  });

  it('does not ask the gate about a path it does not meter', async () => {
    const { response, state, asked } = await walk('/free', { admission: { actor: caller, revision } });
    expect(response).toBe(answered);
    expect(state.admission).toBeUndefined();
    expect(asked).toEqual([]);
  });

  it('leaves /graphql to Yoga once admitted, with its face on the state', async () => {
    const { response, state, asked } = await walk('/graphql', { admission: { actor: caller, revision } });
    expect(response).toBeUndefined();
    expect(state.route?.face).toBe('graphql');
    expect(asked).toEqual(['graphql']);
  });
});

describe('read routing', () => {
  const replica: Replica = { name: 'r1', url: 'postgresql://r1', prisma: {} as PrismaClient };
  const source: RevisionSource = { current: async () => 7, close: async () => undefined };
  function routing() {
    const chosen: object[] = [];
    const replicas = {
      choose: (operation: object) => {
        chosen.push(operation);
        return replica;
      },
    } as unknown as Replicas;
    return { routing: createReadRouting({ replicas, primary: {} as PrismaClient, revisions: new Map([[replica, source]]) }), chosen };
  }
  const query = parse('{ products { id } }');

  it('chooses once per request, keeps the choice on its state, and reads the revision there', () => {
    const { routing: r, chosen } = routing();
    const state: RequestState = {};
    expect(r.targetOf(state, undefined, query)).toBe(replica);
    expect(state.replica).toBe(replica);
    expect(r.revisionOf(state, undefined, query)).toBe(source);
    expect(chosen).toEqual([{ readOnly: true, rootFields: ['products'], accountId: null }]);
  });

  it('chooses afresh for another request', () => {
    const { routing: r, chosen } = routing();
    r.targetOf({}, undefined, query);
    r.targetOf({}, undefined, query);
    expect(chosen).toHaveLength(2);
  });

  it('reads from the primary when the document names no operation to run', () => {
    const { routing: r, chosen } = routing();
    const state: RequestState = {};
    expect(r.targetOf(state, undefined, parse('query A { a } query B { b }'))).toBeNull();
    expect(state.replica).toBeNull();
    expect(r.revisionOf(state, undefined, query)).toBeUndefined();
    expect(chosen).toEqual([]);
  });
});
