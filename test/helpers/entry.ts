import fs from 'node:fs';
import path from 'node:path';

// How a test runs one of the service's programs (src/cli/keys-command.ts, src/cli/seed-command.ts)
// as a real process: on the build, as `npm run keys` and `npm run seed` do, when the build is newer
// than every source file; otherwise (sources edited since `npm run build`, or never built) on the
// sources through tsx, so that a test never runs code older than what it tests. `npm test` builds
// first (pretest): there each run saves tsx's start, about 0.5 s of CPU per process.

const root = path.resolve(import.meta.dirname, '../..');

const newestSourceMs = () =>
  Math.max(
    ...fs
      .readdirSync(path.join(root, 'src'), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
      .map((entry) => fs.statSync(path.join(entry.parentPath, entry.name)).mtimeMs),
  );

const modifiedMs = (file: string) => fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? -Infinity;

let sourceMs: number | undefined;

/**
 * `node` arguments that run `source` (a path under src/, e.g. 'cli/keys-command.ts'): its compiled
 * file under dist/ when that is newer than every source, else the source itself through tsx.
 */
export function entryArgs(source: string): string[] {
  const built = path.join(root, 'dist', source.replace(/\.ts$/, '.js'));
  sourceMs ??= newestSourceMs();
  return modifiedMs(built) > sourceMs ? [built] : ['--import', 'tsx', path.join(root, 'src', source)];
}
