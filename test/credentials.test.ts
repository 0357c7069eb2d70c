import crypto from 'node:crypto';
import { hash as argon2Hash } from '@node-rs/argon2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../src/accounts/api-keys.js';
import {
  changePassword,
  createPasswordLink,
  registerAccount,
  setPasswordWithToken,
  signIn,
} from '../src/accounts/credentials.js';
import { ARGON2_PARAMS, hashIsOutdated, hashPassword, passwordProblem, verifyNothing, verifyPassword } from '../src/accounts/passwords.js';
import { createSession, readSession } from '../src/accounts/sessions.js';
import { LIMITS } from '../src/config/limits.js';
import { createPrisma, type PrismaClient } from '../src/db/prisma.js';
import { MemoryRateLimitStore } from '../src/ratelimit/memory-store.js';
import { AppError, asAppError } from '../src/shared/errors.js';
import { manualClock } from './helpers/clock.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { asOperator } from './helpers/context.js';

let db: TestDatabase;
let prisma: PrismaClient;
const stores: MemoryRateLimitStore[] = [];

beforeAll(async () => {
  db = await createTestDatabase('migrated');
  prisma = createPrisma({ url: db.url, poolMax: 4 });
});

afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await prisma?.$disconnect();
  await db?.drop();
});

/** A store of its own per test, on a clock that moves only when told. */
function freshStore() {
  const clock = manualClock();
  const store = new MemoryRateLimitStore({ now: clock.now });
  stores.push(store);
  return { store, clock, at: () => new Date(clock.now()) };
}

const GOOD = 'correct horse battery staple';
let n = 0;
const uniqueEmail = (label: string) => `${label}-${++n}-${crypto.randomBytes(3).toString('hex')}@example.com`;

/** The rejection of `promise`, which must reject. */
async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** The fields a VALIDATION_ERROR refuses, each with its problem. */
async function formError(promise: Promise<unknown>): Promise<Record<string, string>> {
  const error = asAppError(await rejection(promise));
  expect(error?.code).toBe('VALIDATION_ERROR');
  return error!.details as Record<string, string>;
}

/** Everything a client could see of an AppError. */
const visible = (error: unknown) => {
  expect(error).toBeInstanceOf(AppError);
  const e = error as AppError;
  return { code: e.code, status: e.status, message: e.message, extensions: e.extensions, details: e.details, retryAfter: e.retryAfter };
};

describe('password hashing', () => {
  it('is argon2id with OWASP parameters, in a PHC string', async () => {
    const hash = await hashPassword(GOOD);
    const match = /^\$argon2id\$v=19\$([^$]+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/.exec(hash);
    expect(match).not.toBeNull();
    const params = Object.fromEntries(match![1]!.split(',').map((kv) => kv.split('=')));
    expect(params).toEqual({ m: '19456', t: '2', p: '1' });
    expect(Buffer.from(match![2]!, 'base64')).toHaveLength(16); // salt
    expect(Buffer.from(match![3]!, 'base64')).toHaveLength(32);
    expect(ARGON2_PARAMS).toMatchObject({ algorithm: 2 /* argon2id */, memoryCost: 19456, timeCost: 2, parallelism: 1 });
    // Salted: the same password never hashes the same twice.
    expect(await hashPassword(GOOD)).not.toBe(hash);
  });

  it('verifies the right password only, and never throws on a malformed hash', async () => {
    const hash = await hashPassword(GOOD);
    expect(await verifyPassword(hash, GOOD)).toBe(true);
    expect(await verifyPassword(hash, `${GOOD} `)).toBe(false);
    expect(await verifyPassword(hash, '')).toBe(false);
    for (const bad of ['', 'nonsense', '$argon2id$', '$argon2id$v=19$m=19456,t=2,p=1$$', '$2b$10$abcdefghijklmnopqrstuv', hash.slice(0, -5)]) {
      expect(await verifyPassword(bad, GOOD)).toBe(false);
    }
  });

  it('treats composed and decomposed accents as one password', async () => {
    const composed = 'caf\u00e9 au lait, s\u2019il vous pla\u00eet';
    const hash = await hashPassword(composed);
    expect(await verifyPassword(hash, composed.normalize('NFD'))).toBe(true);
  });

  it('tells hashes made with other parameters from current ones', async () => {
    expect(hashIsOutdated(await hashPassword(GOOD))).toBe(false);
    expect(hashIsOutdated(await argon2Hash(GOOD, { algorithm: ARGON2_PARAMS.algorithm, memoryCost: 4096, timeCost: 1, parallelism: 1 }))).toBe(true);
    expect(hashIsOutdated('nonsense')).toBe(true);
  });
});

describe('password rules', () => {
  const email = 'jane.developer@example.com';

  it.for([
    ['too short', 'Abc123!x', /at least 10 characters/],
    ['too long, saying why', 'x'.repeat(257), /at most 256 characters.*slow/],
    ['common', 'password123', /most common passwords/],
    ['common in other letter case', 'PassWord123', /most common passwords/],
    ['common, a 10-digit run', '1234567890', /most common passwords/],
    ['the e-mail address', 'Jane.Developer@Example.com', /e-mail address/],
    ["the e-mail's local part", 'jane.developer', /e-mail address/],
  ] as const)('refuses a password that is %s, without repeating it', async ([, password, message]) => {
    const problem = await passwordProblem(password, { email });
    expect(problem).toMatch(message);
    expect(problem).not.toContain(password);
  });

  it('accepts a long uncommon one, 10 and 256 characters included', async () => {
    expect(await passwordProblem(GOOD, { email })).toBeNull();
    expect(await passwordProblem('k7#Lq9!vZ2', { email })).toBeNull();
    expect(await passwordProblem('€'.repeat(256), { email })).toBeNull(); // characters, not bytes
  });
});

describe('registerAccount', () => {
  it('creates an account that can sign in, e-mail lower-cased and trimmed', async () => {
    const email = uniqueEmail('Reg').toUpperCase();
    const created = await registerAccount(asOperator(prisma), { email: `  ${email} `, password: GOOD, name: '  Jane  ', companyName: '' });
    expect(created).toEqual({ id: expect.any(String), email: email.toLowerCase() });
    const row = await prisma.account.findUniqueOrThrow({ where: { id: created.id } });
    expect(row).toMatchObject({ email: email.toLowerCase(), name: 'Jane', companyName: null, plan: 'BASIC' });
    expect(row.passwordHash).toMatch(/^\$argon2id\$/);
    expect(row.passwordChangedAt).toBeInstanceOf(Date);
    const { store } = freshStore();
    expect(await signIn(asOperator(prisma), store, { email, password: GOOD, ip: '192.0.2.1' })).toEqual({ accountId: created.id });
  });

  it('reports every bad field at once', async () => {
    const fields = await formError(registerAccount(asOperator(prisma), { email: 'nobody', password: 'short', name: '   ', companyName: 'x'.repeat(201) }));
    expect(Object.keys(fields).sort()).toEqual(['companyName', 'email', 'name', 'password']);
    expect(fields.email).toMatch(/e-mail address/);
    expect(fields.name).toMatch(/required/);
    expect(fields.companyName).toMatch(/at most 200/);
    expect(fields.password).toMatch(/at least 10/);
    expect(await formError(registerAccount(asOperator(prisma), { email: uniqueEmail('c'), password: GOOD, name: 'Bell\u0007' }))).toEqual({
      name: 'must not contain control characters',
    });
    expect(await formError(registerAccount(asOperator(prisma), { email: uniqueEmail('c'), password: GOOD, name: 'x'.repeat(101) }))).toEqual({
      name: 'must be at most 100 characters',
    });
  });

  it('refuses an e-mail that is registered, whatever its letter case', async () => {
    const email = uniqueEmail('taken');
    await registerAccount(asOperator(prisma), { email, password: GOOD, name: 'First' });
    const fields = await formError(registerAccount(asOperator(prisma), { email: email.toUpperCase(), password: 'another good passphrase', name: 'Second' }));
    expect(fields).toEqual({ email: expect.stringMatching(/already registered: sign in/) });
  });

  it('refuses an e-mail the keys CLI made an account for, pointing to the operator', async () => {
    const email = uniqueEmail('cli');
    await createApiKey(asOperator(prisma), { owner: email, plan: 'PRO', scopes: ['read:orders'] });
    const fields = await formError(registerAccount(asOperator(prisma), { email, password: GOOD, name: 'Dev' }));
    expect(fields.email).toMatch(/already registered.*ask the operator for a link/);
    expect((await prisma.account.findUniqueOrThrow({ where: { email } })).passwordHash).toBeNull();
  });

  it('answers every taken address alike: one with a password and one the keys CLI made cannot be told apart', async () => {
    const withPassword = uniqueEmail('one');
    const withoutPassword = uniqueEmail('two');
    await registerAccount(asOperator(prisma), { email: withPassword, password: GOOD, name: 'First' });
    await createApiKey(asOperator(prisma), { owner: withoutPassword, plan: 'PRO', scopes: ['read:orders'] });
    const first = await formError(registerAccount(asOperator(prisma), { email: withPassword, password: GOOD, name: 'Again' }));
    const second = await formError(registerAccount(asOperator(prisma), { email: withoutPassword, password: GOOD, name: 'Again' }));
    expect(first.email).toBe(second.email);
  });

  it('makes one account of two concurrent registrations, and a VALIDATION_ERROR of the other', async () => {
    const email = uniqueEmail('race');
    const results = await Promise.allSettled([
      registerAccount(asOperator(prisma), { email, password: GOOD, name: 'One' }),
      registerAccount(asOperator(prisma), { email, password: GOOD, name: 'Two' }),
    ]);
    const fulfilled = results.filter((r) => r.status === 'fulfilled');
    const rejected = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.reason).toMatchObject({ code: 'VALIDATION_ERROR', details: { email: expect.stringMatching(/already registered/) } });
    expect(await prisma.account.count({ where: { email } })).toBe(1);
  });
});

describe('look-alike identities', () => {
  // Buyers' names and e-mails are shown to suppliers: what the hostile client registered.
  const lookalikes: [string, Record<string, string>, string, RegExp][] = [
    ['an e-mail with a zero-width space', { email: `pay\u200Bments-${crypto.randomBytes(3).toString('hex')}@example.com` }, 'email', /invisible or direction-changing/],
    ['an e-mail with a Cyrillic а among Latin letters', { email: `p\u0430yments-${crypto.randomBytes(3).toString('hex')}@example.com` }, 'email', /mixes Latin and Cyrillic letters/],
    ['a name starting with a right-to-left override', { name: '\u202Eevil' }, 'name', /invisible or direction-changing/],
    ['a company name with a zero-width joiner', { companyName: 'Acme\u200DSRL' }, 'companyName', /invisible or direction-changing/],
  ];

  it.each(lookalikes)('refuses %s, saying why in the field\'s error', async (_, change, field, why) => {
    const fields = await formError(registerAccount(asOperator(prisma), { email: uniqueEmail('l'), password: GOOD, name: 'Dev', ...change }));
    expect(fields[field]).toMatch(why);
  });

  it('accepts an address in one script, Cyrillic included, and names with accents', async () => {
    const cyrillic = `\u043f\u0440\u0438\u043c\u0435\u0440-${crypto.randomInt(1e9)}@example.com`;
    await expect(registerAccount(asOperator(prisma), { email: cyrillic, password: GOOD, name: 'Ștefan Ăvram' })).resolves.toMatchObject({ email: cyrillic });
  });

  it('compares e-mails NFC-normalised: a decomposed "ă" is the composed one', async () => {
    const tag = crypto.randomBytes(3).toString('hex');
    const composed = `\u0103na-${tag}@example.com`;
    const decomposed = `a\u0306na-${tag}@example.com`;
    const made = await registerAccount(asOperator(prisma), { email: decomposed, password: GOOD, name: 'Ana' });
    expect(made.email).toBe(composed);
    const fields = await formError(registerAccount(asOperator(prisma), { email: composed, password: GOOD, name: 'Ana' }));
    expect(fields.email).toMatch(/already registered/);
  });
});

describe('signIn', () => {
  let email: string;
  let accountId: string;
  let cliEmail: string;

  beforeAll(async () => {
    email = uniqueEmail('signin');
    accountId = (await registerAccount(asOperator(prisma), { email, password: GOOD, name: 'Signer' })).id;
    cliEmail = uniqueEmail('nopassword');
    await createApiKey(asOperator(prisma), { owner: cliEmail, plan: 'BASIC', scopes: ['read:orders'] });
  });

  it('signs in with the right password, e-mail in any case', async () => {
    const { store } = freshStore();
    expect(await signIn(asOperator(prisma), store, { email: ` ${email.toUpperCase()}`, password: GOOD, ip: '192.0.2.2' })).toEqual({ accountId });
  });

  it('answers an unknown e-mail, an account without password and a wrong password alike, each after one argon2 verification', async () => {
    const { store } = freshStore();
    const hash = await hashPassword(GOOD);
    await verifyNothing('warm-up'); // the dummy hash is made once, on first use
    const verifyTimes: number[] = [];
    const timeOneVerify = async () => {
      const start = performance.now();
      await verifyPassword(hash, 'wrong password');
      verifyTimes.push(performance.now() - start);
    };
    for (let i = 0; i < 3; i++) await timeOneVerify();

    const attempts = {
      unknown: { email: uniqueEmail('ghost'), password: GOOD },
      passwordless: { email: cliEmail, password: GOOD },
      wrong: { email, password: 'not the password at all' },
      malformed: { email: 'not an address', password: GOOD },
    };
    const seen: Record<string, unknown> = {};
    const took: Record<string, number> = {};
    for (const [kind, attempt] of Object.entries(attempts)) {
      const start = performance.now();
      const error = await rejection(signIn(asOperator(prisma), store, { ...attempt, ip: '192.0.2.3' }));
      took[kind] = performance.now() - start;
      seen[kind] = visible(error);
      // Timed between the attempts too: the machine's load may fall while they run.
      await timeOneVerify();
    }
    const oneVerify = Math.min(...verifyTimes);
    // A lower bound only: these paths must do the work of one verification, not return early.
    for (const [kind, ms] of Object.entries(took)) expect(ms, kind).toBeGreaterThanOrEqual(oneVerify * 0.5);
    expect(seen.unknown).toEqual({ code: 'UNAUTHORIZED', status: 401, message: 'Wrong e-mail or password', extensions: { code: 'UNAUTHORIZED' }, details: undefined, retryAfter: undefined });
    expect(seen.passwordless).toEqual(seen.unknown);
    expect(seen.wrong).toEqual(seen.unknown);
    expect(seen.malformed).toEqual(seen.unknown);
  });

  it('throttles attempts per account, counting every attempt, until the window ends', async () => {
    const { store, clock, at } = freshStore();
    const { max: limit, windowMs } = LIMITS.signIn.perAccount;
    // From a different IP each time: only the account's bucket can stop them.
    for (let i = 0; i < limit; i++) {
      await expect(signIn(asOperator(prisma, at()), store, { email, password: `wrong guess ${i}`, ip: `198.51.100.${i}` })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    }
    clock.advance(60_000);
    const limited = visible(await rejection(signIn(asOperator(prisma, at()), store, { email: email.toUpperCase(), password: GOOD, ip: '203.0.113.1' })));
    const wait = windowMs / 1000 - 60;
    expect(limited).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', status: 429, retryAfter: wait, message: `Too many sign-in attempts; try again in ${wait} s` });
    expect(limited.extensions).toMatchObject({ retryAfter: wait });
    // Other accounts are not affected.
    await expect(signIn(asOperator(prisma, at()), store, { email: uniqueEmail('other'), password: GOOD, ip: '203.0.113.1' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });

    clock.advance(windowMs - 60_000);
    expect(await signIn(asOperator(prisma, at()), store, { email, password: GOOD, ip: '203.0.113.1' })).toEqual({ accountId });
  });

  it('throttles attempts per IP across accounts', async () => {
    const { store, at } = freshStore();
    const { max: limit, windowMs } = LIMITS.signIn.perIp;
    const ip = '2001:db8::7';
    for (let i = 0; i < limit; i++) {
      await expect(signIn(asOperator(prisma, at()), store, { email: uniqueEmail('spray'), password: GOOD, ip })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    }
    const limited = visible(await rejection(signIn(asOperator(prisma, at()), store, { email, password: GOOD, ip })));
    expect(limited).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: windowMs / 1000, message: `Too many sign-in attempts; try again in ${windowMs / 1000} s` });
    // The same account from another IP still works.
    expect(await signIn(asOperator(prisma, at()), store, { email, password: GOOD, ip: '2001:db8::8' })).toEqual({ accountId });
  });

  it('upgrades a hash made with older parameters on a successful sign-in', async () => {
    const old = await argon2Hash(GOOD, { algorithm: ARGON2_PARAMS.algorithm, memoryCost: 4096, timeCost: 1, parallelism: 1 });
    const e = uniqueEmail('old');
    const account = await prisma.account.create({ data: { email: e, passwordHash: old } });
    const { store } = freshStore();
    expect(await signIn(asOperator(prisma), store, { email: e, password: GOOD, ip: '192.0.2.9' })).toEqual({ accountId: account.id });
    const { passwordHash } = await prisma.account.findUniqueOrThrow({ where: { id: account.id } });
    expect(passwordHash).toMatch(/^\$argon2id\$v=19\$m=19456,/);
    expect(await verifyPassword(passwordHash!, GOOD)).toBe(true);
  });
});

describe('changePassword', () => {
  const NEXT = 'a brand new passphrase';

  const IP = '192.0.2.77';

  it('checks the current password and the rules, then ends every session', async () => {
    const { store } = freshStore();
    const email = uniqueEmail('change');
    const { id } = await registerAccount(asOperator(prisma), { email, password: GOOD, name: 'Changer' });
    const sessions = await Promise.all([createSession(asOperator(prisma), id), createSession(asOperator(prisma), id), createSession(asOperator(prisma), id)]);
    const before = (await prisma.account.findUniqueOrThrow({ where: { id } })).passwordChangedAt!;

    expect(await formError(changePassword(asOperator(prisma), store, id, { current: 'not it at all', next: NEXT, ip: IP }))).toEqual({ current: 'is not your current password' });
    expect(await formError(changePassword(asOperator(prisma), store, id, { current: GOOD, next: GOOD, ip: IP }))).toEqual({ next: expect.stringMatching(/differ/) });
    expect(await formError(changePassword(asOperator(prisma), store, id, { current: GOOD, next: 'password123', ip: IP }))).toEqual({ next: expect.stringMatching(/common/) });
    expect(await prisma.session.count({ where: { accountId: id } })).toBe(3);

    await changePassword(asOperator(prisma), store, id, { current: GOOD, next: NEXT, ip: IP });
    expect(await prisma.session.count({ where: { accountId: id } })).toBe(0);
    for (const { token } of sessions) expect(await readSession(asOperator(prisma), token)).toBeNull();
    const after = (await prisma.account.findUniqueOrThrow({ where: { id } })).passwordChangedAt!;
    expect(after.getTime()).toBeGreaterThan(before.getTime());

    await expect(signIn(asOperator(prisma), store, { email, password: GOOD, ip: '192.0.2.4' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(await signIn(asOperator(prisma), store, { email, password: NEXT, ip: '192.0.2.4' })).toEqual({ accountId: id });
  });

  it('counts each try against the sign-in limits: guessing the current password is throttled too', async () => {
    const { store } = freshStore();
    const email = uniqueEmail('guess');
    const { id } = await registerAccount(asOperator(prisma), { email, password: GOOD, name: 'Guessed' });
    let refused: unknown;
    for (let i = 0; i < 20 && !refused; i++) {
      await changePassword(asOperator(prisma), store, id, { current: `guess ${i} of many`, next: NEXT, ip: IP }).catch((error: unknown) => {
        if ((error as { code?: string }).code === 'RATE_LIMIT_EXCEEDED') refused = error;
      });
    }
    expect(refused).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', message: expect.stringMatching(/try again in \d+ s/) });
    // The account's budget is spent for sign-in as well.
    await expect(signIn(asOperator(prisma), store, { email, password: GOOD, ip: '192.0.2.99' })).rejects.toMatchObject({ code: 'RATE_LIMIT_EXCEEDED' });
  });

  it('voids set-password links sent before the change', async () => {
    const { store } = freshStore();
    const email = uniqueEmail('voids');
    const { id } = await registerAccount(asOperator(prisma), { email, password: GOOD, name: 'Voider' });
    const { token } = await createPasswordLink(asOperator(prisma), email);
    await changePassword(asOperator(prisma), store, id, { current: GOOD, next: NEXT, ip: IP });
    await expect(setPasswordWithToken(asOperator(prisma), token, 'yet another passphrase')).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/already been used/) });
  });
});

describe('password links', () => {
  it('creates the account when there is none, and stores only the hash of the token', async () => {
    const email = uniqueEmail('Invite').toUpperCase();
    const start = Date.now();
    const link = await createPasswordLink(asOperator(prisma), email);
    const end = Date.now();
    expect(link.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Seven days from when it was made, however long making it took.
    expect(link.expiresAt.getTime()).toBeGreaterThanOrEqual(start + 7 * 86_400_000);
    expect(link.expiresAt.getTime()).toBeLessThanOrEqual(end + 7 * 86_400_000);
    const account = await prisma.account.findUniqueOrThrow({ where: { email: email.toLowerCase() } });
    expect(account).toMatchObject({ id: link.accountId, passwordHash: null });
    const rows = await prisma.passwordToken.findMany({ where: { accountId: link.accountId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]!.tokenHash).toBe(crypto.createHash('sha256').update(link.token).digest('hex'));
    expect(JSON.stringify(rows)).not.toContain(link.token);
  });

  it('gives concurrent first links of one address one account', async () => {
    const email = uniqueEmail('twice');
    const [a, b] = await Promise.all([createPasswordLink(asOperator(prisma), email), createPasswordLink(asOperator(prisma), email)]);
    expect(a.accountId).toBe(b.accountId);
    expect(a.token).not.toBe(b.token);
  });

  it('refuses an address that is no e-mail', async () => {
    expect(await formError(createPasswordLink(asOperator(prisma), 'nobody'))).toEqual({ email: expect.stringMatching(/e-mail address/) });
  });

  it('sets a password once; a bad password leaves the link usable; every session ends', async () => {
    const email = uniqueEmail('once');
    const { token, accountId } = await createPasswordLink(asOperator(prisma), email);
    await createSession(asOperator(prisma), accountId);

    expect(await formError(setPasswordWithToken(asOperator(prisma), token, 'password123'))).toEqual({ password: expect.stringMatching(/common/) });
    expect(await setPasswordWithToken(asOperator(prisma), token, GOOD)).toEqual({ accountId });
    expect(await prisma.session.count({ where: { accountId } })).toBe(0);
    const row = await prisma.account.findUniqueOrThrow({ where: { id: accountId } });
    expect(row.passwordChangedAt).toBeInstanceOf(Date);
    const { store } = freshStore();
    expect(await signIn(asOperator(prisma), store, { email, password: GOOD, ip: '192.0.2.5' })).toEqual({ accountId });

    const again = visible(await rejection(setPasswordWithToken(asOperator(prisma), token, 'a different passphrase')));
    expect(again).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/already been used/) });
    expect(JSON.stringify(again)).not.toContain(token);
  });

  it('lets only one of two concurrent uses through', async () => {
    const { token } = await createPasswordLink(asOperator(prisma), uniqueEmail('concurrent'));
    const results = await Promise.allSettled([setPasswordWithToken(asOperator(prisma), token, GOOD), setPasswordWithToken(asOperator(prisma), token, 'another fine passphrase')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const [failure] = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(failure!.reason).toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/already been used/) });
  });

  it('refuses expired, unknown and malformed tokens', async () => {
    const { token } = await createPasswordLink(asOperator(prisma), uniqueEmail('expired'), { ttlMs: 1 });
    // Past its 1 ms on the real clock, the one the service compares with.
    await new Promise((resolve) => setTimeout(resolve, 5));
    await expect(setPasswordWithToken(asOperator(prisma), token, GOOD)).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/expired/) });
    const unknown = crypto.randomBytes(32).toString('base64url');
    for (const bad of [unknown, '', 'short', `${token}x`, 'x'.repeat(5000)]) {
      await expect(setPasswordWithToken(asOperator(prisma), bad, GOOD)).rejects.toMatchObject({ code: 'UNAUTHORIZED', message: expect.stringMatching(/not valid/) });
    }
  });
});
