import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOwnKey } from '../src/accounts/api-keys.js';
import { claimStep, createdBefore, deleteOldFormClaims, FormSentBefore, type FormSending } from '../src/accounts/form-claims.js';
import type { CreationStep } from '../src/context/context.js';
import { createPrisma, type PrismaClient } from '../src/db/prisma.js';
import { asAppError } from '../src/shared/errors.js';
import { randomToken } from '../src/shared/tokens.js';
import { asOperator } from './helpers/context.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';

// The claim of a create form's one-time token, inside the creating service's own transaction, on
// a real database: the race the dashboard tests can only hope to hit (a second sending arriving
// while the first holds its claim uncommitted) is staged here step by step.

let db: TestDatabase;
let prisma: PrismaClient;

beforeAll(async () => {
  db = await createTestDatabase('migrated');
  prisma = createPrisma({ url: db.url, poolMax: 4 });
});

afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

const input = { name: 'twice', scopes: ['read:products'], expiresInDays: null };

async function newSending(): Promise<FormSending> {
  const account = await prisma.account.create({ data: { email: `claims-${randomToken().slice(0, 10).toLowerCase()}@example.com` }, select: { id: true } });
  return { accountId: account.id, kind: 'key', token: randomToken() };
}

const keysOf = (accountId: string) => prisma.apiKey.count({ where: { accountId } });

/** Sessions of this database waiting for a lock: the second sending, blocked on the first's claim. */
async function waitingOnALock(): Promise<number> {
  const [row] = await prisma.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
  return row!.n;
}

/**
 * The first sending's creation, held open after its claim until `release`: `claimed` resolves once
 * its claim is written (uncommitted); `ending` is what its transaction does when released.
 */
function heldCreation(sending: FormSending, ending: 'commit' | 'fail') {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let onClaimed!: () => void;
  const claimed = new Promise<void>((resolve) => (onClaimed = resolve));
  const claim = claimStep(sending, new Date());
  const step: CreationStep = {
    async before(tx) {
      await claim.before(tx);
      onClaimed();
    },
    async after(tx, createdId) {
      await released;
      if (ending === 'fail') throw new Error('refused after the claim');
      await claim.after(tx, createdId);
    },
  };
  const result = createOwnKey(asOperator(prisma), sending.accountId, input, step).catch((error: unknown) => error);
  return { claimed, release, result };
}

describe('claiming a form token in the creating transaction', () => {
  it('a second sending waits for the first, then creates nothing and is told what the first created', async () => {
    const sending = await newSending();
    const first = heldCreation(sending, 'commit');
    await first.claimed;
    const second = createOwnKey(asOperator(prisma), sending.accountId, input, claimStep(sending, new Date())).catch((error: unknown) => error);
    await expect.poll(waitingOnALock, { timeout: 10_000 }).toBe(1);
    first.release();
    const created = (await first.result) as Awaited<ReturnType<typeof createOwnKey>>;
    const lost = await second;
    expect(lost).toBeInstanceOf(FormSentBefore);
    expect((lost as FormSentBefore).createdId).toBe(created.record.id);
    expect(await keysOf(sending.accountId)).toBe(1);
    expect(await createdBefore(asOperator(prisma), sending)).toBe(created.record.id);
  });

  it('a first sending whose creation fails leaves the token free: the sending waiting on it creates', async () => {
    const sending = await newSending();
    const first = heldCreation(sending, 'fail');
    await first.claimed;
    const second = createOwnKey(asOperator(prisma), sending.accountId, input, claimStep(sending, new Date()));
    await expect.poll(waitingOnALock, { timeout: 10_000 }).toBe(1);
    first.release();
    expect(((await first.result) as Error).message).toBe('refused after the claim');
    const { record } = await second;
    expect(await keysOf(sending.accountId)).toBe(1);
    expect(await createdBefore(asOperator(prisma), sending)).toBe(record.id);
  });

  it('a refused creation claims nothing', async () => {
    const sending = await newSending();
    const refused = await createOwnKey(asOperator(prisma), sending.accountId, { ...input, name: '' }, claimStep(sending, new Date())).catch((error: unknown) => error);
    expect(asAppError(refused)?.code).toBe('VALIDATION_ERROR');
    expect(await createdBefore(asOperator(prisma), sending)).toBeNull();
  });

  it("answers a token claimed for another account's form, or another kind of form, with a refusal, never with what it created", async () => {
    const sending = await newSending();
    await createOwnKey(asOperator(prisma), sending.accountId, input, claimStep(sending, new Date()));
    const other = await newSending();
    for (const stranger of [{ ...other, token: sending.token }, { ...sending, kind: 'webhook' as const }]) {
      expect(asAppError(await createdBefore(asOperator(prisma), stranger).catch((error: unknown) => error))?.code).toBe('VALIDATION_ERROR');
      const claimed = await createOwnKey(asOperator(prisma), stranger.accountId, input, claimStep(stranger, new Date())).catch((error: unknown) => error);
      expect(asAppError(claimed)?.code).toBe('VALIDATION_ERROR');
    }
    expect(await keysOf(other.accountId)).toBe(0);
    expect(await keysOf(sending.accountId)).toBe(1);
  });

  it('deletes the claims older than a session can last, and only those', async () => {
    const sending = await newSending();
    const now = new Date();
    const at = (hoursAgo: number) => new Date(now.getTime() - hoursAgo * 3600_000);
    await prisma.formClaim.createMany({
      data: [
        { tokenHash: `old-${sending.token}`, accountId: sending.accountId, kind: 'key', createdId: 'a', createdAt: at(26) },
        { tokenHash: `day-${sending.token}`, accountId: sending.accountId, kind: 'key', createdId: 'b', createdAt: at(24) },
      ],
    });
    await deleteOldFormClaims(asOperator(prisma, now));
    const left = await prisma.formClaim.findMany({ where: { accountId: sending.accountId }, select: { tokenHash: true } });
    expect(left).toEqual([{ tokenHash: `day-${sending.token}` }]);
  });
});
