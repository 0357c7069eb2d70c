import { parseArgs } from 'node:util';
import cliProgress from 'cli-progress';
import { ConfigError, loadConfig } from '../config/config.js';
import { DatabaseUrlError } from '../db/database.js';
import { MigrationError } from '../db/migrate.js';
import { SeedConflictError, seedDatabase, type SeedSummary } from '../seed/seed.js';
import { isEntryPoint, runCli, UsageError, withMigratedDatabase } from './run.js';

export { UsageError };

// `npm run seed -- [--products N] [--seed S]`: migrates and seeds the database the server would
// use (same environment variables). Rerunning with a larger N adds only the missing products.

const USAGE = `Usage: npm run seed -- [--products N] [--seed S]

Seeds the demo catalogue into the configured database (DATABASE_URL, or the embedded
PostgreSQL under DATA_DIR), applying pending migrations first. The same seed always gives
the same rows; a larger --products on a seeded database adds only the missing products.

Options:
  --products N   products the catalogue should hold (default: SEED_PRODUCTS, 1200)
  --seed S       seed value, a non-negative integer (default: SEED, 42)
  -h, --help     show this help`;

export interface SeedArgs {
  help: boolean;
  /** Undefined when not given: the configuration's default applies. */
  products?: number;
  seed?: number;
}

export function parseSeedArgs(argv: readonly string[]): SeedArgs {
  let values: { products?: string; seed?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        products: { type: 'string' },
        seed: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  return {
    help: values.help ?? false,
    products: nonNegativeInteger('--products', values.products),
    seed: nonNegativeInteger('--seed', values.seed),
  };
}

function nonNegativeInteger(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  // Digits only: Number() would also accept "1e3", "0x10", " 12 " and "".
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a non-negative integer, got ${JSON.stringify(value)}`);
  const n = Number(value);
  if (!Number.isSafeInteger(n)) throw new UsageError(`${flag} is too large: ${value}`);
  return n;
}

async function main(argv: readonly string[]): Promise<void> {
  const args = parseSeedArgs(argv);
  if (args.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const config = loadConfig();
  const seed = args.seed ?? config.SEED;
  const products = args.products ?? config.SEED_PRODUCTS;
  const log = (msg: string) => process.stderr.write(`${msg}\n`);

  const bar = new cliProgress.SingleBar(
    {
      format: 'Seeding products |{bar}| {percentage}% | {value}/{total} | {duration_formatted} elapsed, ETA {eta_formatted}',
      hideCursor: true,
      etaBuffer: 20,
    },
    cliProgress.Presets.shades_classic,
  );
  let barStarted = false;
  const stopBar = () => {
    if (barStarted) bar.stop();
    barStarted = false;
  };
  // Ctrl-C mid-run: what is committed stays, and the next run resumes.
  const interrupted = { say: log, message: 'Interrupted; run the same command again to resume.', before: stopBar };
  try {
    await withMigratedDatabase(config, { log, interrupted }, async ({ directUrl }) => {
      // The seed holds an advisory lock and session settings: the direct connection.
      const summary = await seedDatabase(directUrl, {
        seed,
        products,
        onProgress: (done, total) => {
          if (!barStarted) {
            bar.start(total, done);
            barStarted = true;
          } else bar.update(done);
        },
      });
      stopBar();
      process.stdout.write(`${describe(summary)}\n`);
    });
  } finally {
    stopBar();
  }
}

function describe(s: SeedSummary): string {
  const seconds = (s.durationMs / 1000).toFixed(1);
  if (s.inserted.products === 0 && s.productsBefore >= s.productsRequested) {
    return `The database already holds the first ${s.productsRequested} demo products of seed ${s.seed}; nothing to add (${seconds} s).`;
  }
  const rate = s.inserted.products > 0 && s.durationMs > 0 ? `, ${Math.round((s.inserted.products * 1000) / s.durationMs)} products/s` : '';
  const reference = Object.entries({
    categories: s.inserted.categories,
    suppliers: s.inserted.suppliers,
    accounts: s.inserted.accounts,
    addresses: s.inserted.addresses,
    coupons: s.inserted.coupons,
  })
    .filter(([, n]) => n > 0)
    .map(([what, n]) => `${n} ${what}`);
  return (
    `Seed ${s.seed}: added ${s.inserted.products} products (${s.inserted.reviews} reviews, ${s.inserted.favorites} favorites)` +
    (reference.length > 0 ? ` and ${reference.join(', ')}` : '') +
    `; the catalogue now holds ${s.productsRequested} demo products. ${seconds} s${rate}.`
  );
}

if (isEntryPoint(import.meta.url)) {
  runCli(() => main(process.argv.slice(2)), {
    help: 'npm run seed -- --help',
    expected: [ConfigError, DatabaseUrlError, SeedConflictError, MigrationError],
    failure: 'Seeding failed',
  });
}
