import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { benchChildren, cpuMs, createBenchKey, gitCommit, HOST, openBenchDatabase, startFlags, startOnCore0 } from './common.js';

// What tracing costs (issue 39, item 2): the service's CPU per request and its rate, with tracing
// off and with it on (every request sampled, its spans sent over OTLP/HTTP to a receiver in this
// process), and, given --before, a build without the tracing code, so that "off" can be held to it.
//
//   npm run build && npx tsx bench/tracing.ts [--before DIR] [--products 10000] [--rounds 3] [--seconds 5]
//
// As bench/ab-cpu.ts: each program pinned to core 0 and loaded in turn from core 1 (10
// connections), rounds alternating, each round after a few seconds of warm-up; the response cache
// off, so that every request runs its statements. Two workloads: distinct REST list pages (a
// request of a few statements) and a GraphQL query of a page with its relations. The CPU a process
// spends per request moves much less than throughput on a shared machine; both are printed.
//
// --before DIR: DIR/server.js, a build of the commit before tracing, e.g.
//   git archive 6ffea5a | tar -x -C /tmp/before && ln -s "$PWD/node_modules" /tmp/before/ && cp -r src/generated /tmp/before/src/ \
//     && (cd /tmp/before && npx tsc -p tsconfig.build.json --outDir /tmp/before/dist)

const { values: args } = parseArgs({
  options: {
    before: { type: 'string' },
    products: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '5' },
  },
  strict: true,
});
const ROUNDS = Number(args.rounds);
const SECONDS = Number(args.seconds);
const WARM_UP_SECONDS = 8;
const log = (msg: string) => process.stderr.write(`[tracing] ${msg}\n`);

const { children, stopAll, stopAndWait } = benchChildren();

/** A collector as the service sees one: POST /v1/traces answered at once; the spans counted, not kept. */
async function startReceiver() {
  const received = { spans: 0, batches: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (text += chunk));
    req.on('end', () => {
      received.batches++;
      received.bytes += text.length;
      received.spans += text.split('"spanId"').length - 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  return { endpoint: `http://${HOST}:${(server.address() as AddressInfo).port}`, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

interface Workload {
  name: string;
  requests: { method: 'GET' | 'POST'; path: string; body?: string }[];
}

/** REST list pages, each asked once in turn: 4 sizes × 100 pages, interleaved. */
function listPages(): Workload {
  const paths: string[] = [];
  for (let page = 1; page <= 100; page++) for (const limit of [12, 24, 50, 100]) paths.push(`/api/products?limit=${limit}&page=${page}`);
  return { name: 'REST list pages', requests: paths.map((p) => ({ method: 'GET', path: p })) };
}

/** One GraphQL page of products with supplier, category and reviews, the pages in turn. */
function graphqlPages(): Workload {
  const query = `query Nested($page: Int) { products(limit: 20, page: $page) { items { id name slug price supplier { id companyName } category { id name } reviews(limit: 3) { id rating } } meta { total } } }`;
  const requests = Array.from({ length: 100 }, (_, i) => ({
    method: 'POST' as const,
    path: '/graphql',
    body: JSON.stringify({ query, variables: { page: i + 1 } }),
  }));
  return { name: 'GraphQL nested pages', requests };
}

/** Requests each program answered, warm-ups included: the spans received are counted against "on"'s. */
const served: Record<string, number> = {};

async function load(program: { name: string; url: string }, workload: Workload, headers: Record<string, string>, seconds: number) {
  const { url } = program;
  let next = 0;
  const result = await autocannon({
    url,
    connections: 10,
    duration: seconds,
    headers,
    requests: [{ setupRequest: (req: object) => ({ ...req, ...workload.requests[next++ % workload.requests.length] }) }],
  } as never);
  const r = result as unknown as { requests: { total: number }; non2xx: number; errors: number };
  if (r.non2xx || r.errors) throw new Error(`${url} ${workload.name}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  served[program.name] = (served[program.name] ?? 0) + r.requests.total;
  return r.requests.total;
}

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

async function main() {
  const db = await openBenchDatabase(Number(args.products), log);
  const receiver = await startReceiver();
  try {
    const key = await createBenchKey(db.url);
    // The key on every request (and JSON for GraphQL's bodies): its bucket is one no run reaches.
    const headers = { 'x-api-key': key, 'content-type': 'application/json' };
    const base = { DATABASE_URL: db.url, LOG_LEVEL: 'warn', DEMO_DATA: 'false', RESPONSE_CACHE: 'off', WEBHOOK_WORKER: 'false' };
    const start = async (name: string, script: string, env: Record<string, string> = {}) => {
      const { url, child } = await startOnCore0(name, script, { env: { ...base, ...env }, flags: startFlags(), probe: '/api/products?limit=1', init: { headers }, children });
      return { name, url, pid: child.pid! };
    };
    const programs = [
      ...(args.before ? [await start('before', path.join(args.before, 'server.js'))] : []),
      await start('off', 'dist/server.js'),
      await start('on', 'dist/server.js', { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_TRACES_SAMPLER: 'always_on', OTEL_SERVICE_NAME: 'bench' }),
    ];
    const workloads = [listPages(), graphqlPages()];
    // A fresh process runs mostly unoptimised code: each first answers a while of both workloads.
    for (const p of programs) for (const w of workloads) await load(p, w, headers, WARM_UP_SECONDS / 2);
    const lines: string[] = [];
    for (const w of workloads) {
      const cpu: Record<string, number[]> = {};
      const rate: Record<string, number[]> = {};
      for (let round = 0; round < ROUNDS; round++) {
        for (const p of round % 2 ? [...programs].reverse() : programs) {
          await load(p, w, headers, 2);
          const before = cpuMs(p.pid);
          const started = performance.now();
          const requests = await load(p, w, headers, SECONDS);
          const seconds = (performance.now() - started) / 1000;
          (cpu[p.name] ??= []).push((cpuMs(p.pid) - before) / requests);
          (rate[p.name] ??= []).push(requests / seconds);
          log(`${w.name}, round ${round + 1}, ${p.name}: ${((cpuMs(p.pid) - before) / requests).toFixed(3)} ms CPU/request, ${(requests / seconds).toFixed(0)} req/s`);
        }
      }
      const off = median(cpu.off!);
      for (const p of programs) {
        const c = median(cpu[p.name]!);
        const vsOff = p.name === 'off' ? '' : `, ${c >= off ? '+' : ''}${((100 * (c - off)) / off).toFixed(1)} % CPU against off`;
        lines.push(`${w.name.padEnd(22)} ${p.name.padEnd(7)} ${c.toFixed(3)} ms CPU/request (rounds: ${cpu[p.name]!.map((x) => x.toFixed(3)).join(' ')}), ${median(rate[p.name]!).toFixed(0)} req/s${vsOff}`);
      }
    }
    // The last batch (sent every 5 s) may still be on its way.
    await new Promise((resolve) => setTimeout(resolve, 6000));
    console.log(`\n${new Date().toISOString()}, commit ${gitCommit()}, ${args.products} products, ${ROUNDS} rounds of ${SECONDS} s, 10 connections`);
    for (const line of lines) console.log(line);
    console.log(
      `receiver: ${receiver.received.spans} spans in ${receiver.received.batches} batches (${(receiver.received.bytes / 1e6).toFixed(1)} MB) for the ${served.on} requests "on" answered: ${(receiver.received.spans / served.on!).toFixed(1)} per request`,
    );
  } finally {
    await stopAndWait();
    await receiver.close();
    await db.close();
  }
}

main().catch((error) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  stopAll();
  process.exit(1);
});
