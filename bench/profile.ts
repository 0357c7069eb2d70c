import { readFileSync } from 'node:fs';
import path from 'node:path';

// Where a V8 CPU profile (--cpu-prof) spends its samples, by the package that owns the function
// on top of the stack (self time): what BENCHMARKS.md calls the profile split.
//
// `tsx bench/profile.ts FILE.cpuprofile [--functions 25]` prints the split and the busiest functions.

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
}
interface CpuProfile {
  /** Microseconds on the monotonic clock (process.hrtime's). */
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Groups of packages, in the words of the issue (the first that matches names the package). */
const GROUPS: [string, RegExp][] = [
  ['Prisma', /^(@prisma\/|prisma$|generated\/prisma)/],
  ['GraphQL execution', /^graphql$/],
  ['Pothos', /^@pothos\//],
  ['pg protocol', /^(pg|pg-protocol|pg-pool|pg-types|postgres-.*|pg-.*)$/],
  ['Yoga / envelop / whatwg-node', /^(graphql-yoga|@graphql-yoga\/.*|@envelop\/.*|@whatwg-node\/.*|@graphql-tools\/.*|@escape\.tech\/.*)$/],
  ['pino / prom-client', /^(pino|pino-.*|prom-client|sonic-boom|thread-stream)$/],
  ['zod', /^zod$/],
  ['dataloader / lru-cache', /^(dataloader|lru-cache)$/],
];

/** The package a script URL belongs to: a node_modules package, our code, Node itself or V8. */
export function packageOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (!url) {
    if (functionName === '(garbage collector)') return 'V8: garbage collector';
    if (functionName === '(program)' || functionName === '(idle)' || functionName === '(root)') return `V8: ${functionName}`;
    return 'V8 / native';
  }
  if (url.startsWith('node:')) return 'Node core';
  const file = url.replace(/^file:\/\//, '');
  const modules = file.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = file.slice(modules + '/node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (/\/(src|dist)\/generated\/prisma\//.test(file)) return 'generated/prisma';
  const src = /\/(src|dist)\/(.*)$/.exec(file);
  if (src) return `ours: ${path.dirname(src[2]!).split('/')[0] === '.' ? src[2] : path.dirname(src[2]!).split('/')[0]}`;
  return 'other';
}

export function groupOf(pkg: string): string {
  if (pkg.startsWith('ours:')) return 'our code';
  if (pkg.startsWith('V8:') || pkg === 'V8 / native') return pkg === 'V8: garbage collector' ? 'GC' : pkg === 'V8: (idle)' ? 'idle' : 'V8 / native';
  if (pkg === 'Node core') return 'Node core (http, streams, timers)';
  return GROUPS.find(([, re]) => re.test(pkg))?.[0] ?? `other packages`;
}

export interface Split {
  /** Busy time (idle excluded), ms. */
  busyMs: number;
  groups: { name: string; ms: number; share: number }[];
  packages: { name: string; ms: number; share: number }[];
  functions: { name: string; ms: number; share: number }[];
}

/** `fromUs`: only samples from then on (process.hrtime in µs), e.g. to leave the start-up out. */
export function profileSplit(file: string, fromUs = 0): Split {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at >= fromUs) self.set(id, (self.get(id) ?? 0) + delta);
  });
  const groups = new Map<string, number>();
  const packages = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  const add = (m: Map<string, number>, k: string, us: number) => m.set(k, (m.get(k) ?? 0) + us);
  for (const [id, us] of self) {
    const frame = byId.get(id)!.callFrame;
    const pkg = packageOf(frame);
    const group = groupOf(pkg);
    if (group === 'idle') continue;
    busy += us;
    add(groups, group, us);
    add(packages, pkg, us);
    add(functions, `${frame.functionName || '(anonymous)'} ${pkg} ${path.basename(frame.url)}:${frame.lineNumber + 1}`, us);
  }
  const rows = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1]).map(([name, us]) => ({ name, ms: us / 1000, share: us / busy }));
  return { busyMs: busy / 1000, groups: rows(groups), packages: rows(packages), functions: rows(functions) };
}

export function renderSplit(split: Split, title: string): string {
  const pct = (s: number) => `${(100 * s).toFixed(1)} %`;
  return [
    `${title} (${(split.busyMs / 1000).toFixed(1)} s busy, self time by group):`,
    '',
    '| Group | share of busy time |',
    '|---|---:|',
    ...split.groups.map((g) => `| ${g.name} | ${pct(g.share)} |`),
  ].join('\n');
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  const file = process.argv[2];
  if (!file) throw new Error('usage: tsx bench/profile.ts FILE.cpuprofile [--functions N]');
  const n = Number(process.argv[process.argv.indexOf('--functions') + 1] || 25);
  const split = profileSplit(file);
  const pct = (s: number) => `${(100 * s).toFixed(1)} %`.padStart(7);
  console.log(renderSplit(split, path.basename(file)));
  console.log('\nPackages:');
  for (const p of split.packages.slice(0, 30)) console.log(`${pct(p.share)}  ${p.name}`);
  console.log('\nFunctions (self):');
  for (const f of split.functions.slice(0, n)) console.log(`${pct(f.share)}  ${f.name}`);
}
