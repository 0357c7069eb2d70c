import { createApiKey, type PublishableInput } from '../../src/accounts/api-keys.js';
import { createPrisma, type PrismaClient } from '../../src/db/prisma.js';
import { asOperator } from './context.js';

/**
 * One client per database for the test file: a client's making and first connection cost about
 * 0.1 s of CPU, and a file makes dozens of keys. Its idle connection closes by itself (the pool's
 * idle timeout) or goes when the database is dropped; the client goes with the file.
 */
const clients = new Map<string, PrismaClient>();

/** Closes the file's clients: after each file (test/setup/per-file.ts). */
export async function closeKeyClients(): Promise<void> {
  const closing = [...clients.values()].map((client) => client.$disconnect());
  clients.clear();
  await Promise.all(closing);
}

function clientFor(url: string): PrismaClient {
  let client = clients.get(url);
  // Test setup, not the subject: on a loaded machine opening a connection can take over the
  // service's 1 s connect timeout.
  if (!client) clients.set(url, (client = createPrisma({ url, poolMax: 1, timeouts: { connectMs: 10_000 } })));
  return client;
}

export interface TestKeyOptions {
  /** E-mail of the owning account (created if missing); default buyer@example.com. */
  owner?: string;
  /** Default pro. Enterprise needs `limit` and `windowSeconds`. */
  plan?: 'basic' | 'pro' | 'enterprise';
  scopes: string[];
  limit?: number;
  windowSeconds?: number;
  expiresAt?: Date;
  /** A publishable key (`pk_`) with these origins and options; `scopes` may then be []. */
  publishable?: PublishableInput;
}

export interface TestKey {
  id: string;
  /** The plaintext key, to send as X-API-Key or Authorization: Bearer. */
  key: string;
  accountId: string;
  prefix: string;
}

const PLAN = { basic: 'BASIC', pro: 'PRO', enterprise: 'ENTERPRISE' } as const;

/** A real key, made by the same code path as `npm run keys -- create`, in the database at `url`. */
export async function createTestKey(url: string, opts: TestKeyOptions): Promise<TestKey> {
  const { key, record } = await createApiKey(asOperator(clientFor(url)), {
    owner: opts.owner ?? 'buyer@example.com',
    plan: PLAN[opts.plan ?? 'pro'],
    scopes: opts.scopes,
    rateLimit: opts.limit,
    rateWindowSeconds: opts.windowSeconds,
    expiresAt: opts.expiresAt,
    publishable: opts.publishable,
  });
  return { id: record.id, key, accountId: record.accountId, prefix: record.prefix };
}
