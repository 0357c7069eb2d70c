// npm run db:migration -- <name>
//
// Writes prisma/migrations/<timestamp>_<name>/migration.sql with the SQL that takes the database
// from the schema of the last migration to the current prisma/schema.prisma.
//
// Prisma 7's `migrate dev` needs a schema engine binary that cannot be downloaded here; Prisma
// 6.19's CLI diffs two schema files offline (its engine is WebAssembly), but cannot read the
// migrated database back. So the schema as of the last generated migration is kept next to the
// migrations, in prisma/migrations/.schema-snapshot.prisma (`prisma migrate deploy` only looks at
// sub-directories, so the file does not disturb it), and each new migration is the diff from that
// snapshot to schema.prisma. test/migrations.test.ts checks that the snapshot, the migrations and
// schema.prisma agree, so a hand-written migration that forgets the snapshot is caught there.
//
// The Prisma 6 CLI insists on connecting to a live PostgreSQL even though the diff never uses it,
// so a throwaway embedded server runs for the duration; it also serves to check that all the
// migrations, the new one included, apply to an empty database before anything is kept.

import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { MIGRATIONS_DIR, migrate } from '../src/db/migrate.js';

const REPO = fileURLToPath(new URL('..', import.meta.url));
export const SCHEMA_FILE = path.join(REPO, 'prisma', 'schema.prisma');
export const SNAPSHOT_FILE = path.join(MIGRATIONS_DIR, '.schema-snapshot.prisma');

const EMPTY_DIFF = '-- This is an empty migration.';

/**
 * `prisma migrate diff --script` from `from` (a schema file, or null for an empty database) to
 * `to`, run with Prisma 6's offline engine. `url` must reach a PostgreSQL server.
 * Returns the SQL, or '' when the two schemas need no change.
 */
export async function prismaMigrateDiff(opts: { from: string | null; to: string; url: string }): Promise<string> {
  const work = await fs.mkdtemp(path.join(os.tmpdir(), 'prisma-diff-'));
  try {
    // Prisma 6 wants `url` in the datasource block, which Prisma 7 schemas no longer carry.
    const withUrl = async (source: string, target: string) => {
      const text = await fs.readFile(source, 'utf8');
      const patched = text.replace(/^(\s*datasource\s+\w+\s*\{)/m, `$1\n  url = ${JSON.stringify(opts.url)}`);
      if (patched === text) throw new Error(`${source} has no datasource block`);
      await fs.writeFile(path.join(work, target), patched);
    };
    await withUrl(opts.to, 'to.prisma');
    if (opts.from) await withUrl(opts.from, 'from.prisma');
    const moduleUrl = (relative: string) => pathToFileURL(path.join(REPO, 'node_modules', relative)).href;
    // allowExitOnIdle: otherwise the adapter's idle pool keeps the CLI alive for ten more seconds.
    await fs.writeFile(
      path.join(work, 'prisma.config.mjs'),
      `import { defineConfig } from ${JSON.stringify(moduleUrl('prisma6/config.js'))};
import { PrismaPg } from ${JSON.stringify(moduleUrl('@prisma/adapter-pg/dist/index.mjs'))};
export default defineConfig({
  experimental: { adapter: true },
  engine: 'js',
  schema: 'to.prisma',
  adapter: async () => new PrismaPg({ connectionString: ${JSON.stringify(opts.url)}, allowExitOnIdle: true }),
});
`,
    );
    const args = [
      path.join(REPO, 'node_modules', 'prisma6', 'build', 'index.js'),
      'migrate', 'diff', '--config', 'prisma.config.mjs',
      ...(opts.from ? ['--from-schema-datamodel', 'from.prisma'] : ['--from-empty']),
      '--to-schema-datamodel', 'to.prisma', '--script',
    ];
    const { stdout } = await promisify(execFile)(process.execPath, args, {
      cwd: work,
      maxBuffer: 64 * 1024 * 1024,
      env: {
        ...process.env,
        // Not used by `migrate diff`, but the CLI looks for it and would try to download it.
        PRISMA_QUERY_ENGINE_LIBRARY: '/bin/true',
        CHECKPOINT_DISABLE: '1',
        PRISMA_HIDE_UPDATE_MESSAGE: '1',
      },
    }).catch((err: unknown) => {
      const stderr = typeof err === 'object' && err !== null && 'stderr' in err ? String(err.stderr) : '';
      throw new Error(`prisma migrate diff failed: ${err instanceof Error ? err.message : String(err)}\n${stderr}`);
    });
    const script = stdout.trim();
    return script === '' || script === EMPTY_DIFF ? '' : `${script}\n`;
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

/** The migration file for a diff: the trigram operator classes need their extension first. */
export function migrationFile(diff: string): string {
  if (!/\bg(in|ist)_trgm_ops\b/.test(diff)) return diff;
  return `-- The search indexes use pg_trgm's operator classes.\nCREATE EXTENSION IF NOT EXISTS pg_trgm;\n\n${diff}`;
}

function timestamp(date: Date): string {
  // Prisma's format: UTC, YYYYMMDDHHMMSS.
  return date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

async function main(argv: string[]): Promise<number> {
  const name = (argv[0] ?? '').trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_+|_+$/g, '');
  if (!name) {
    process.stderr.write('usage: npm run db:migration -- <name>\n');
    return 2;
  }
  await fs.mkdir(MIGRATIONS_DIR, { recursive: true });
  const existing = (await fs.readdir(MIGRATIONS_DIR, { withFileTypes: true })).filter((e) => e.isDirectory());
  const hasSnapshot = await fs.access(SNAPSHOT_FILE).then(() => true, () => false);
  if (existing.length && !hasSnapshot) {
    process.stderr.write(`${SNAPSHOT_FILE} is missing: it must hold schema.prisma as of the last migration.\n`);
    return 1;
  }

  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'new-migration-'));
  const server = await startEmbeddedPostgres({ dataDir: scratch, ephemeral: true, log: () => undefined });
  let folder: string | undefined;
  try {
    const diff = await prismaMigrateDiff({ from: hasSnapshot ? SNAPSHOT_FILE : null, to: SCHEMA_FILE, url: server.url('postgres') });
    if (!diff) {
      process.stderr.write('no changes: schema.prisma matches the last migration\n');
      return 1;
    }
    folder = path.join(MIGRATIONS_DIR, `${timestamp(new Date())}_${name}`);
    await fs.mkdir(folder);
    await fs.writeFile(path.join(folder, 'migration.sql'), migrationFile(diff));

    const admin = new pg.Client({ connectionString: server.url('postgres') });
    await admin.connect();
    await admin.query('CREATE DATABASE check_migrations').finally(() => admin.end());
    await migrate(server.url('check_migrations'));

    await fs.copyFile(SCHEMA_FILE, SNAPSHOT_FILE);
    await fs.writeFile(
      path.join(MIGRATIONS_DIR, 'migration_lock.toml'),
      '# Please do not edit this file manually\n# It should be added in your version-control system (e.g., Git)\nprovider = "postgresql"\n',
    );
    process.stdout.write(`${path.relative(process.cwd(), path.join(folder, 'migration.sql'))}\n`);
    folder = undefined;
    return 0;
  } finally {
    if (folder) await fs.rm(folder, { recursive: true, force: true });
    await server.stop();
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
