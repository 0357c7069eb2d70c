import { createApiKey } from '../../src/accounts/api-keys.js';
import { createPrisma } from '../../src/db/prisma.js';
import { asOperator } from './context.js';

export interface TestKeyOptions {
  /** E-mail of the owning account (created if missing); default buyer@example.com. */
  owner?: string;
  /** Default pro. Enterprise needs `limit` and `windowSeconds`. */
  plan?: 'basic' | 'pro' | 'enterprise';
  scopes: string[];
  limit?: number;
  windowSeconds?: number;
  expiresAt?: Date;
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
  // Test setup, not the subject: on a loaded machine opening a connection can take over the
  // service's 1 s connect timeout.
  const prisma = createPrisma({ url, poolMax: 1, timeouts: { connectMs: 10_000 } });
  try {
    const { key, record } = await createApiKey(asOperator(prisma), {
      owner: opts.owner ?? 'buyer@example.com',
      plan: PLAN[opts.plan ?? 'pro'],
      scopes: opts.scopes,
      rateLimit: opts.limit,
      rateWindowSeconds: opts.windowSeconds,
      expiresAt: opts.expiresAt,
    });
    return { id: record.id, key, accountId: record.accountId, prefix: record.prefix };
  } finally {
    await prisma.$disconnect();
  }
}
