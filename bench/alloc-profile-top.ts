import { readFileSync } from 'node:fs';

// `npx tsx bench/alloc-profile-top.ts FILE.heapprofile [--requests N] [--top 40]`: a sampling heap
// profile's allocations by package and by function (self), and by function with what it calls
// (total), per request when --requests is given.

interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: Node[];
}

const [file, ...rest] = process.argv.slice(2);
if (!file) throw new Error('usage: alloc-profile-top.ts FILE [--requests N] [--top N]');
const opt = (name: string, d: number) => {
  const i = rest.indexOf(name);
  return i >= 0 ? Number(rest[i + 1]) : d;
};
const requests = opt('--requests', 1);
const top = opt('--top', 40);
const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: Node };

const pkg = (url: string) => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return m[1]!;
  if (url.startsWith('node:') || !url) return url ? 'node core' : '(native / V8)';
  if (url.includes('/dist/') || url.includes('/src/')) return 'ours';
  return url;
};
const where = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/\/work\/[^/]+\//, '')}:${n.callFrame.lineNumber + 1}`;

const byPkg = new Map<string, number>();
const self = new Map<string, number>();
const total = new Map<string, number>();
let all = 0;
function walk(n: Node, stack: Set<string>): number {
  const key = where(n);
  let sum = n.selfSize;
  all += n.selfSize;
  byPkg.set(pkg(n.callFrame.url), (byPkg.get(pkg(n.callFrame.url)) ?? 0) + n.selfSize);
  self.set(key, (self.get(key) ?? 0) + n.selfSize);
  const inner = stack.has(key) ? stack : new Set([...stack, key]);
  for (const c of n.children) sum += walk(c, inner);
  if (!stack.has(key)) total.set(key, (total.get(key) ?? 0) + sum);
  return sum;
}
walk(head, new Set());

const kb = (b: number) => (b / 1024 / requests).toFixed(1);
const print = (title: string, m: Map<string, number>, n: number) => {
  process.stdout.write(`\n${title} (KB${requests > 1 ? ' per request' : ''}; all: ${kb(all)})\n`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n)) process.stdout.write(`${kb(v).padStart(9)}  ${k}\n`);
};
print('By package (self)', byPkg, 30);
print('By function (self)', self, top);
print('By function (total: with what it calls)', total, top);
