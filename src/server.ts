import { createApp } from './app.js';
import { createApiKey } from './auth/keys.js';
import { SCOPES } from './auth/scopes.js';
import { ConfigError, loadConfig } from './config.js';
import { openDatabase } from './db/database.js';
import { migrate } from './db/migrate.js';
import { createPrisma, type PrismaClient } from './db/prisma.js';
import { seedDatabase } from './db/seed.js';
import { createHttpServer } from './http/request-target.js';
import { createLogger } from './logger.js';

// Process entry point: configuration, database, HTTP listener, and an orderly shutdown.

const SHUTDOWN_GRACE_MS = 10_000;

async function main() {
  const config = loadConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const db = await openDatabase(config, { log: (msg) => logger.info(msg) });
  const prisma = createPrisma({ url: db.url, poolMax: config.DB_POOL_MAX });
  const closeData = async () => {
    await prisma.$disconnect();
    await db.close();
  };

  try {
    const { applied } = await migrate(db.url, { log: (msg) => logger.info(msg) });
    if (applied.length) logger.info({ migrations: applied }, 'migrations applied');
    if (config.SEED_ON_START && (await prisma.product.count({ take: 1 })) === 0) {
      logger.info({ seed: config.SEED, products: config.SEED_PRODUCTS }, 'empty catalogue: seeding the demo data');
      const started = Date.now();
      await seedDatabase(db.url, { seed: config.SEED, products: config.SEED_PRODUCTS });
      logger.info({ ms: Date.now() - started }, 'demo data seeded');
      if (db.embedded) await printDemoKey(prisma);
    }
  } catch (error) {
    await closeData();
    throw error;
  }

  const app = await createApp({ prisma, databaseUrl: db.url, logger, config });
  const server = createHttpServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.PORT, config.HOST, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  const base = `http://${config.HOST === '0.0.0.0' ? 'localhost' : config.HOST}:${port}`;
  logger.info({ port, rest: `${base}/api`, graphql: `${base}/graphql` }, 'marketplace API listening');

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // Stop accepting, let in-flight requests finish, then cut idle keep-alive connections.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const timer = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    await closed;
    clearTimeout(timer);
    await app.dispose();
    await closeData();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/**
 * First start on the embedded database: one Pro key with every read scope and write:orders, so
 * a newcomer can try every endpoint at once (CONTRACT.md). Printed once, to stdout, not logged.
 */
async function printDemoKey(prisma: PrismaClient) {
  const scopes = SCOPES.filter((s) => s.startsWith('read:') || s === 'write:orders');
  const { key } = await createApiKey(prisma, { owner: DEMO_KEY_OWNER, plan: 'PRO', scopes, name: 'demo key (first start)' });
  process.stdout.write(
    `\nDemo API key for ${DEMO_KEY_OWNER} (Pro plan; ${scopes.join(', ')}).\n` +
      `It is shown only this once; keys are stored hashed. Try:\n` +
      `  curl -H 'X-API-Key: ${key}' http://localhost:<port>/api/orders\n\n`,
  );
}

const DEMO_KEY_OWNER = 'buyer@example.com';

main().catch((error: unknown) => {
  // A configuration or start-up failure: say what, briefly, without a stack for expected cases.
  const message = error instanceof ConfigError ? error.message : error instanceof Error ? error.stack ?? error.message : String(error);
  process.stderr.write(`marketplace API failed to start: ${message}\n`);
  process.exit(1);
});
