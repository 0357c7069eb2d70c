import path from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { benchChildren, cpuMs, createBenchKey, openBenchDatabase, startFlags, startOnCore0 } from './common.js';

// CPU per request of two builds of the service, side by side, and of the hand-written baseline,
// on the same distinct REST list pages as `npm run bench`'s list-distinct (700 (limit, page)
// pairs, the response cache off): for trying a change on a machine that is not quiet. Throughput
// moves with whatever else runs; the CPU a process spends per request moves much less.
//
//   npx tsx bench/ab-cpu.ts --a /tmp/dist-before --b dist [--rounds 4] [--seconds 6] [--products 100000]
//
// Each program runs pinned to core 0 and is loaded in turn from core 1 (10 connections), rounds
// alternating; each round first sends a few seconds of other pages (warm-up), then measures.
// Prints per program the median CPU ms per request and req/s, and the baseline's CPU over each
// build's: what the list-distinct ratio would be if both were bound by their own core.

const { values: args } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: 'dist' },
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '6' },
    products: { type: 'string', default: '100000' },
    /** Extra environment of a build, KEY=VALUE (repeatable): to switch a change by a setting. */
    'a-env': { type: 'string', multiple: true, default: [] },
    'b-env': { type: 'string', multiple: true, default: [] },
  },
  strict: true,
});
const ROUNDS = Number(args.rounds);
const SECONDS = Number(args.seconds);
const log = (msg: string) => process.stderr.write(`[ab-cpu] ${msg}\n`);

const { children, stopAll, stopAndWait } = benchChildren();

const WARM_UP_SECONDS = 15;

/** A program on core 0, its RESPONSE_CACHE off; ready once a list page answers (`headers`: the service's key). */
async function start(name: string, script: string, env: Record<string, string>, headers: Record<string, string>, tsx = false) {
  const { url, child } = await startOnCore0(name, script, {
    env: { ...env, LOG_LEVEL: 'warn', DEMO_DATA: 'false', RESPONSE_CACHE: 'off' },
    flags: [...startFlags(), ...(tsx ? ['--import', 'tsx'] : [])],
    probe: '/api/products?limit=1',
    init: { headers },
    children,
  });
  return { name, url, pid: child.pid! };
}

function pages(limits: number[], pageCount: number): string[] {
  const out: string[] = [];
  for (let page = 1; page <= pageCount; page++) for (const limit of limits) out.push(`/api/products?limit=${limit}&page=${page}`);
  // A fixed interleaving of shallow and deep pages.
  return out.map((p, i) => [p, (i * 7919) % out.length] as const).sort((x, y) => x[1] - y[1]).map(([p]) => p);
}

async function load(url: string, paths: string[], headers: Record<string, string>, seconds: number) {
  let next = 0;
  const result = await autocannon({
    url,
    connections: 10,
    duration: seconds,
    headers,
    requests: [{ setupRequest: (req: object) => ({ ...req, path: paths[next++ % paths.length] }) }],
  } as never);
  const r = result as unknown as { requests: { total: number }; non2xx: number; errors: number; duration: number };
  if (r.non2xx || r.errors) throw new Error(`${url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r.requests.total;
}

const settings = (pairs: string[]) => Object.fromEntries(pairs.map((p) => [p.slice(0, p.indexOf('=')), p.slice(p.indexOf('=') + 1)]));

const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;

async function main() {
  if (!args.a) throw new Error('--a DIR (a build of the service: DIR/server.js) is required');
  const db = await openBenchDatabase(Number(args.products), log);
  try {
    const key = await createBenchKey(db.url);
    const env = { DATABASE_URL: db.url };
    const headersOf = (name: string): Record<string, string> => (name === 'baseline' ? {} : { 'x-api-key': key });
    const programs = [
      await start('a', path.join(args.a, 'server.js'), { ...env, ...settings(args['a-env']) }, headersOf('a')),
      await start('b', path.join(args.b, 'server.js'), { ...env, ...settings(args['b-env']) }, headersOf('b')),
      await start('baseline', 'bench/baseline-server.ts', env, headersOf('baseline'), true),
    ];
    const measured = pages([12, 24, 50, 100], 175);
    const warmUp = pages([10, 20, 40, 80], 175);
    // A fresh process runs mostly unoptimised code: each first answers WARM_UP_SECONDS of other pages.
    for (const p of programs) await load(p.url, warmUp, headersOf(p.name), WARM_UP_SECONDS);
    const cpu: Record<string, number[]> = {};
    const rate: Record<string, number[]> = {};
    for (let round = 0; round < ROUNDS; round++) {
      for (const p of round % 2 ? [...programs].reverse() : programs) {
        const headers = headersOf(p.name);
        await load(p.url, warmUp, headers, 3);
        const before = cpuMs(p.pid);
        const started = performance.now();
        const requests = await load(p.url, measured, headers, SECONDS);
        const seconds = (performance.now() - started) / 1000;
        (cpu[p.name] ??= []).push((cpuMs(p.pid) - before) / requests);
        (rate[p.name] ??= []).push(requests / seconds);
        log(`round ${round + 1} ${p.name}: ${((cpuMs(p.pid) - before) / requests).toFixed(3)} ms CPU/request, ${(requests / seconds).toFixed(0)} req/s`);
      }
    }
    const base = median(cpu.baseline!);
    for (const p of programs) {
      const c = median(cpu[p.name]!);
      console.log(
        `${p.name.padEnd(9)} ${c.toFixed(3)} ms CPU/request (all: ${cpu[p.name]!.map((x) => x.toFixed(2)).join(' ')}), ${median(rate[p.name]!).toFixed(0)} req/s` +
          (p.name === 'baseline' ? '' : `, baseline CPU / this: ${((100 * base) / c).toFixed(1)} %`),
      );
    }
  } finally {
    // The programs go before their database does (else the baseline dies of its pool's error).
    await stopAndWait();
    await db.close();
  }
}

main().catch((error) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  stopAll();
  process.exit(1);
});
