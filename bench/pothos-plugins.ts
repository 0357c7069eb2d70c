import { execFileSync } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import SchemaBuilder from '@pothos/core';
import { execute, parse, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import pino from 'pino';
import { createCursorSeal } from '../src/graphql/cursors.js';

// `npx tsx bench/pothos-plugins.ts --base REV [--head REV] [--runs 2000] [--rounds 7]`
//
// The cost of the field rules (scopes, membership, argument rules) and of the request loaders,
// in process: the schema of this work tree against the schema of REV (a commit, e.g. the one
// before a change to the rules), both built in this process, each executing the same documents
// with graphql's `execute` (parsed once, as Yoga's cache does) and a fresh context per execution
// from its own context factory. The database is stubbed at the Prisma boundary (canned rows,
// answered at once), so what is measured is GraphQL execution, the builder plugins' wrappers and
// the services above Prisma, not PostgreSQL. Each round runs every implementation of a scenario
// for --runs executions, one after the other (awaited), after a warm-up, alternating which goes
// first. What is compared is the CPU time of this process (user + system), which other processes
// of a shared machine disturb far less than the wall time (given too): per implementation the
// median of the rounds and their range, and the median of the rounds' ratios (each round's two
// runs are neighbours in time). Both implementations must answer the same (data and errors) or
// the script stops.
//
// With --head, that commit takes the work tree's place (--head REV --base REV: the same code twice,
// which shows how far apart two identical implementations measure on this machine).
//
// REV's src/ is extracted into a temporary folder (git archive) with this tree's generated Prisma
// client and a link to this tree's node_modules, so both copies share one graphql and one Pothos.

const { values: args } = parseArgs({
  options: {
    base: { type: 'string' },
    head: { type: 'string' },
    runs: { type: 'string', default: '2000' },
    rounds: { type: 'string', default: '7' },
  },
});
if (!args.base) throw new Error('--base REV is required (the commit to compare this work tree against)');
const RUNS = Number(args.runs);
const ROUNDS = Number(args.rounds);
if (!(Number.isInteger(RUNS) && RUNS >= 100) || !(Number.isInteger(ROUNDS) && ROUNDS >= 1 && ROUNDS <= 30)) {
  throw new RangeError('--runs must be an integer ≥ 100 and --rounds an integer from 1 to 30');
}

const root = path.resolve(import.meta.dirname, '..');

/** REV's src/ in a temporary folder, importable beside this tree's. */
function extract(rev: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pothos-plugins-bench-'));
  const archive = execFileSync('git', ['-C', root, 'archive', rev, 'src', 'package.json', 'tsconfig.json']);
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  fs.cpSync(path.join(root, 'src/generated'), path.join(dir, 'src/generated'), { recursive: true });
  fs.symlinkSync(fs.realpathSync(path.join(root, 'node_modules')), path.join(dir, 'node_modules'));
  return dir;
}

interface Impl {
  name: string;
  schema: GraphQLSchema;
  context: (actor: unknown) => unknown;
}

// ----- the database, stubbed at the Prisma boundary -----

const at = new Date('2026-01-01T00:00:00Z');
const orders = Array.from({ length: 20 }, (_, i) => ({
  id: `order${i}`,
  orderNumber: `ORD-1767225600000-${String(i).padStart(6, '0')}`,
  status: 'PENDING',
  createdAt: at,
  currency: 'RON',
}));
const suppliers = Array.from({ length: 20 }, (_, i) => ({ id: `supplier${i}`, companyName: `Supplier ${i}` }));

type Args = { where?: Record<string, { in?: string[] }> };
function answer(model: string, method: string, a: Args): unknown {
  switch (`${model}.${method}`) {
    case 'order.findMany':
      return orders;
    case 'order.count':
      return 137;
    case 'supplier.findMany':
      return suppliers;
    case 'supplier.count':
      return 40;
    case 'supplierMember.findMany':
      return (a.where?.accountId?.in ?? []).map((accountId) => ({ accountId, supplierId: 'supplier0', supplier: { companyName: 'Supplier 0' } }));
    case 'review.groupBy':
      return (a.where?.supplierId?.in ?? []).flatMap((supplierId) => [1, 2, 3, 4, 5].map((rating) => ({ supplierId, rating, _count: { _all: rating * 3 } })));
    default:
      throw new Error(`the stub has no answer for ${model}.${method}`);
  }
}

const prisma = new Proxy(
  {},
  { get: (_, model) => new Proxy({}, { get: (__, method) => (a: Args) => Promise.resolve(answer(String(model), String(method), a)) }) },
);

// ----- the two schemas -----

const benchSeal = createCursorSeal(['bench-cursor-secret-'.padEnd(32, '0')]);

async function load(name: string, dir: string): Promise<Impl> {
  const url = (file: string) => pathToFileURL(path.join(dir, file)).href;
  const { schema } = (await import(url('src/domain/schema.ts'))) as { schema: GraphQLSchema };
  const { createContextFactory } = (await import(url('src/context/context.ts'))) as typeof import('../src/context/context.js');
  const factory = createContextFactory(
    { prisma: prisma as never, logger: pino({ level: 'silent' }), webhookPolicy: { allowPrivate: true, requireHttps: false } },
    {
      events: () => ({}) as never,
      limitField: async () => {},
      listTotals: { forRequest: () => ({ products: async () => 0 }) },
      // A fixed secret: the stubbed database keeps none (a REV before signed cursors ignores it).
      cursors: () => benchSeal,
    },
  );
  return {
    name,
    schema,
    context: (actor) => factory.forApi({ actor: actor as never, anonymous: () => actor as never, idempotencyKey: null }),
  };
}

const keyWith = (...scopes: string[]) => ({
  kind: 'key',
  ip: '192.0.2.1',
  keyId: 'k1',
  accountId: 'account1',
  plan: 'ENTERPRISE',
  scopes,
  rateLimit: null,
  rateWindowSeconds: null,
});

interface Scenario {
  name: string;
  document: DocumentNode;
  actor: unknown;
  /** An error is the expected answer. */
  refused?: true;
}

const scenario = (name: string, source: string, actor: unknown, refused?: true): Scenario => ({ name, document: parse(source), actor, ...(refused ? { refused } : {}) });

const SCENARIOS: Scenario[] = [
  scenario(
    'orders: scope + argument rule (20 items)',
    '{ orders(page: 2, limit: 20, status: PENDING) { items { id orderNumber status createdAt } meta { total totalPages } } }',
    keyWith('read:orders'),
  ),
  scenario(
    'supplierOrders: scope + membership + argument rule',
    '{ supplierOrders(page: 1, limit: 20) { items { id orderNumber status } meta { total } } }',
    keyWith('read:orders'),
  ),
  scenario('orders refused: key without the scope, bad arguments (403)', '{ orders(page: 0, limit: 500) { meta { total } } }', keyWith('read:stock'), true),
  scenario(
    'suppliers: 20 reviewSummary through a request loader',
    '{ suppliers(limit: 20) { items { id companyName reviewSummary { average count histogram { rating count } } } } }',
    { kind: 'anonymous', ip: '192.0.2.1' },
  ),
];

async function run(impl: Impl, s: Scenario): Promise<ExecutionResult> {
  return (await execute({ schema: impl.schema, document: s.document, contextValue: impl.context(s.actor) })) as ExecutionResult;
}

/** What an answer says, for comparing the implementations (errors by message, code, details and path). */
const gist = (r: ExecutionResult) => ({
  data: JSON.parse(JSON.stringify(r.data ?? null)),
  errors: r.errors?.map((e) => ({ message: e.message, path: e.path, code: e.extensions?.code, details: e.extensions?.details })),
});

/** CPU and wall time of RUNS executions, ms. */
async function timed(impl: Impl, s: Scenario): Promise<{ cpu: number; wall: number }> {
  const started = process.hrtime.bigint();
  const cpu = process.cpuUsage();
  for (let i = 0; i < RUNS; i++) await run(impl, s);
  const used = process.cpuUsage(cpu);
  return { cpu: (used.user + used.system) / 1000, wall: Number(process.hrtime.bigint() - started) / 1e6 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  // Both trees register their builder plugins under the same names in the one Pothos.
  SchemaBuilder.allowPluginReRegistration = true;
  const dir = extract(args.base!);
  const headDir = args.head ? extract(args.head) : undefined;
  try {
    const base = await load(`base (${args.base})`, dir);
    const head = await load(args.head ? `head (${args.head})` : 'this tree', headDir ?? root);
    const impls = [base, head];
    process.stdout.write(`Node ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()}), load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
    process.stdout.write(`${RUNS} executions per implementation per round, ${ROUNDS} rounds; ms per execution: CPU median (range) | wall median\n\n`);
    for (const s of SCENARIOS) {
      const [a, b] = await Promise.all([run(base, s), run(head, s)]);
      if (!isDeepStrictEqual(gist(a!), gist(b!))) {
        throw new Error(`${s.name}: the answers differ\nbase: ${JSON.stringify(gist(a!))}\nthis: ${JSON.stringify(gist(b!))}`);
      }
      if (Boolean(a!.errors) !== Boolean(s.refused)) throw new Error(`${s.name}: unexpected answer ${JSON.stringify(gist(a!))}`);
      for (const impl of impls) for (let i = 0; i < 300; i++) await run(impl, s);
      const times = new Map(impls.map((impl) => [impl, [] as { cpu: number; wall: number }[]]));
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 ? [...impls].reverse() : impls;
        for (const impl of order) times.get(impl)!.push(await timed(impl, s));
      }
      const per = (impl: Impl, what: 'cpu' | 'wall') => times.get(impl)!.map((t) => t[what] / RUNS);
      const cell = (impl: Impl) =>
        `${median(per(impl, 'cpu')).toFixed(4)} (${Math.min(...per(impl, 'cpu')).toFixed(4)}–${Math.max(...per(impl, 'cpu')).toFixed(4)}) | ${median(per(impl, 'wall')).toFixed(4)}`;
      const ratios = per(head, 'cpu').map((t, i) => t / per(base, 'cpu')[i]!);
      process.stdout.write(
        `${s.name}\n  ${base.name}: ${cell(base)}\n  ${head.name}: ${cell(head)}\n  this / base, CPU: ${median(ratios).toFixed(3)} (rounds ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})\n`,
      );
    }
  } finally {
    for (const d of [dir, headDir]) if (d) fs.rmSync(d, { recursive: true, force: true });
  }
}

await main();
