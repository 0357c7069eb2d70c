import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountProfile,
  addressOf,
  createAddress,
  deleteAddress,
  listAddresses,
  MAX_ADDRESSES,
  updateAddress,
  updateProfile,
  type AddressInput,
} from '../src/accounts/profile.js';
import { createPrisma, type PrismaClient } from '../src/db/prisma.js';
import { AppError, asAppError } from '../src/shared/errors.js';
import { startTestApp, type TestApp } from './helpers/app.js';
import { createTestKey, type TestKey } from './helpers/keys.js';
import { asOperator } from './helpers/context.js';

// The caller's own account: `me` over GraphQL, /api/me and /api/me/addresses over REST, and the
// profile and address functions the dashboard edits them with.

let app: TestApp;
let prisma: PrismaClient;
let mine: TestKey;
let theirs: TestKey;

const address = (overrides: Partial<AddressInput> = {}): AddressInput => ({
  label: 'Office',
  fullName: 'Ana Pop',
  phone: '+40 721 000 000',
  address: 'Str. Mare 1',
  city: 'Timișoara',
  county: 'Timiș',
  postalCode: '300001',
  ...overrides,
});

/** The VALIDATION_ERROR `fn` throws, with its fields (the details a form shows beside them). */
async function formError(fn: () => Promise<unknown>): Promise<AppError & { fields: Record<string, string> }> {
  try {
    await fn();
  } catch (error) {
    const refused = asAppError(error);
    if (refused?.code === 'VALIDATION_ERROR') return Object.assign(refused, { fields: (refused.details ?? {}) as Record<string, string> });
    throw error;
  }
  throw new Error('expected a VALIDATION_ERROR');
}

const withKey = (key: string) => ({ headers: { 'x-api-key': key } });
const graphql = (query: string, key?: string) =>
  app.get('/graphql', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({ query }),
  });

beforeAll(async () => {
  app = await startTestApp();
  prisma = createPrisma({ url: app.url, poolMax: 3 });
  mine = await createTestKey(app.url, { owner: 'me-mine@example.com', scopes: ['read:products'], plan: 'basic' });
  theirs = await createTestKey(app.url, { owner: 'me-theirs@example.com', scopes: ['read:orders'], plan: 'enterprise', limit: 77, windowSeconds: 600 });
});
afterAll(async () => {
  await prisma?.$disconnect();
  await app?.close();
});

describe('me over REST and GraphQL', () => {
  it('GET /api/me answers the account and the key presenting the request, never a password hash', async () => {
    await app.sql.query(`UPDATE "Account" SET name = 'Ana', "passwordHash" = '$argon2id$v=19$secret' WHERE id = $1`, [mine.accountId]);
    const res = await app.get('/api/me', withKey(mine.key));
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('private, no-cache');
    expect(res.body).toEqual({
      success: true,
      data: {
        id: mine.accountId,
        email: 'me-mine@example.com',
        name: 'Ana',
        companyName: null,
        phone: null,
        plan: 'BASIC',
        createdAt: expect.any(String),
        key: { id: mine.id, prefix: mine.prefix, name: expect.any(String), plan: 'BASIC', scopes: ['read:products'], limit: 1000, windowSeconds: 3600, expiresAt: null },
      },
    });
    expect(JSON.stringify(res.body)).not.toMatch(/argon2|password|hash/i);

    const other = await app.get('/api/me', withKey(theirs.key));
    expect(other.body.data).toMatchObject({ id: theirs.accountId, key: { id: theirs.id, plan: 'ENTERPRISE', scopes: ['read:orders'], limit: 77, windowSeconds: 600 } });
  });

  it('GraphQL me answers the same for any key, whatever its scopes', async () => {
    const res = await graphql('{ me { id email plan key { id prefix plan scopes limit windowSeconds expiresAt } addresses { id } } }', mine.key);
    expect(res.status).toBe(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.me).toMatchObject({ id: mine.accountId, email: 'me-mine@example.com', plan: 'BASIC', key: { id: mine.id, limit: 1000, windowSeconds: 3600 } });
  });

  it('is 401 without a key, and with a key that is not valid', async () => {
    for (const path of ['/api/me', '/api/me/addresses']) {
      const anonymous = await app.get(path);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.error.code).toBe('UNAUTHORIZED');
      const invalid = await app.get(path, withKey(`${mine.key}x`));
      expect(invalid.status).toBe(401);
      expect(invalid.body.error.code).toBe('UNAUTHORIZED');
    }
    const anonymous = await graphql('{ me { id } }');
    expect(anonymous.body.data.me).toBeNull();
    expect(anonymous.body.errors[0].extensions.code).toBe('UNAUTHORIZED');
    const invalid = await graphql('{ me { id } }', `${mine.key}x`);
    expect(invalid.status).toBe(401);
    expect(invalid.body.errors[0].extensions.code).toBe('UNAUTHORIZED');
  });

  it('lists only the caller’s own addresses, the default first', async () => {
    const first = await createAddress(asOperator(prisma), mine.accountId, address({ label: 'First' }));
    const home = await createAddress(asOperator(prisma), mine.accountId, address({ label: 'Home', isDefault: true }));
    const foreign = await createAddress(asOperator(prisma), theirs.accountId, address({ label: 'Theirs' }));

    const res = await app.get('/api/me/addresses', withKey(mine.key));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['success', 'data']);
    expect(res.body.data.map((a: { id: string }) => a.id)).toEqual([home.id, first.id]);
    expect(res.body.data[0]).toEqual({
      id: home.id,
      label: 'Home',
      fullName: 'Ana Pop',
      companyName: null,
      phone: '+40 721 000 000',
      email: null,
      address: 'Str. Mare 1',
      city: 'Timișoara',
      county: 'Timiș',
      postalCode: '300001',
      isDefault: true,
      createdAt: home.createdAt.toISOString(),
    });

    const gql = await graphql('{ me { addresses { id isDefault } } }', mine.key);
    expect(gql.body.data.me.addresses).toEqual([
      { id: home.id, isDefault: true },
      { id: first.id, isDefault: false },
    ]);
    expect((await app.get('/api/me/addresses', withKey(theirs.key))).body.data.map((a: { id: string }) => a.id)).toEqual([foreign.id]);
    expect(await listAddresses(asOperator(prisma), mine.accountId)).toEqual([home, first]);
  });
});

describe('the profile', () => {
  it('is the account’s public data', async () => {
    const profile = await accountProfile(asOperator(prisma), mine.accountId);
    expect(Object.keys(profile!).sort()).toEqual(['companyName', 'createdAt', 'email', 'id', 'name', 'phone', 'plan']);
    expect(await accountProfile(asOperator(prisma), 'no-such-account')).toBeNull();
  });

  it('changes the fields given, trimmed; empty clears the optional ones', async () => {
    const updated = await updateProfile(asOperator(prisma), mine.accountId, { name: '  Ana Pop ', companyName: 'Pop SRL', phone: '+40 (721) 000-000' });
    expect(updated).toMatchObject({ name: 'Ana Pop', companyName: 'Pop SRL', phone: '+40 (721) 000-000' });
    expect(await updateProfile(asOperator(prisma), mine.accountId, { companyName: '' })).toMatchObject({ name: 'Ana Pop', companyName: null, phone: '+40 (721) 000-000' });
    expect(await updateProfile(asOperator(prisma), mine.accountId, { phone: null })).toMatchObject({ phone: null });
    expect(await updateProfile(asOperator(prisma), 'no-such-account', { name: 'X' })).toBeNull();
  });

  it('refuses bad fields, naming each, and changes nothing', async () => {
    const before = await accountProfile(asOperator(prisma), mine.accountId);
    const error = await formError(() =>
      updateProfile(asOperator(prisma), mine.accountId, { name: ' ', companyName: 'x'.repeat(201), phone: 'call me' }),
    );
    expect(error.fields).toEqual({
      name: 'is required',
      companyName: 'must be at most 200 characters',
      phone: expect.stringMatching(/phone number/),
    });
    expect((await formError(() => updateProfile(asOperator(prisma), mine.accountId, { name: 'A\u0000B' }))).fields).toEqual({ name: 'must not contain control characters' });
    expect((await formError(() => updateProfile(asOperator(prisma), mine.accountId, { name: 'x'.repeat(101) }))).fields).toEqual({ name: 'must be at most 100 characters' });
    expect((await formError(() => updateProfile(asOperator(prisma), mine.accountId, { phone: '1'.repeat(41) }))).fields).toEqual({ phone: 'must be at most 40 characters' });
    expect(await accountProfile(asOperator(prisma), mine.accountId)).toEqual(before);
  });
});

describe('saved addresses', () => {
  let owner: TestKey;
  beforeAll(async () => {
    owner = await createTestKey(app.url, { owner: 'me-addresses@example.com', scopes: ['read:products'] });
  });

  it('refuses bad fields, naming each', async () => {
    const error = await formError(() =>
      createAddress(asOperator(prisma), owner.accountId, {
        label: 'x'.repeat(51),
        fullName: '',
        phone: 'abc',
        email: 'not-an-address',
        address: 'Str.\u0007 Mare',
        city: 'x'.repeat(101),
        postalCode: 'x'.repeat(21),
      } as AddressInput),
    );
    expect(error.fields).toEqual({
      label: 'must be at most 50 characters',
      fullName: 'is required',
      phone: expect.stringMatching(/phone number/),
      email: 'must be an e-mail address',
      address: 'must not contain control characters',
      city: 'must be at most 100 characters',
      county: 'is required',
      postalCode: 'must be at most 20 characters',
    });
    expect(await listAddresses(asOperator(prisma), owner.accountId)).toEqual([]);
    // Optional fields: empty is null, absent is the default.
    const saved = await createAddress(asOperator(prisma), owner.accountId, address({ label: undefined, email: '', companyName: ' ' }));
    expect(saved).toMatchObject({ label: '', email: null, companyName: null, isDefault: false });
    await deleteAddress(asOperator(prisma), owner.accountId, saved.id);
  });

  it('keeps at most one default: making one the default clears the others, also when requests race', async () => {
    const a = await createAddress(asOperator(prisma), owner.accountId, address({ label: 'A', isDefault: true }));
    const b = await createAddress(asOperator(prisma), owner.accountId, address({ label: 'B', isDefault: true }));
    const defaults = async () => (await listAddresses(asOperator(prisma), owner.accountId)).filter((x) => x.isDefault).map((x) => x.label);
    expect(await defaults()).toEqual(['B']);
    expect(await updateAddress(asOperator(prisma), owner.accountId, a.id, address({ label: 'A', isDefault: true }))).toMatchObject({ id: a.id, isDefault: true });
    expect(await defaults()).toEqual(['A']);
    // An edit that leaves isDefault out keeps it.
    expect(await updateAddress(asOperator(prisma), owner.accountId, a.id, address({ label: 'A2' }))).toMatchObject({ label: 'A2', isDefault: true });
    await updateAddress(asOperator(prisma), owner.accountId, b.id, address({ label: 'B', isDefault: false }));
    expect(await defaults()).toEqual(['A2']);

    await Promise.all(['C', 'D', 'E', 'F'].map((label) => createAddress(asOperator(prisma), owner.accountId, address({ label, isDefault: true }))));
    expect(await defaults()).toHaveLength(1);
  });

  it('never reads, changes or deletes another account’s address: it is not found', async () => {
    const foreign = await createAddress(asOperator(prisma), theirs.accountId, address({ label: 'Not yours', isDefault: true }));
    expect(await addressOf(asOperator(prisma), owner.accountId, foreign.id)).toBeNull();
    expect(await addressOf(asOperator(prisma), owner.accountId, 'not an id!')).toBeNull();
    expect(await updateAddress(asOperator(prisma), owner.accountId, foreign.id, address({ label: 'Taken', isDefault: true }))).toBeNull();
    expect(await deleteAddress(asOperator(prisma), owner.accountId, foreign.id)).toBe(false);
    expect(await addressOf(asOperator(prisma), theirs.accountId, foreign.id)).toEqual(foreign);
    // Its own default was not cleared by the other account's default either.
    const own = await createAddress(asOperator(prisma), owner.accountId, address({ label: 'Mine', isDefault: true }));
    expect(await addressOf(asOperator(prisma), theirs.accountId, foreign.id)).toMatchObject({ isDefault: true });

    expect(await deleteAddress(asOperator(prisma), owner.accountId, own.id)).toBe(true);
    expect(await addressOf(asOperator(prisma), owner.accountId, own.id)).toBeNull();
    expect(await deleteAddress(asOperator(prisma), owner.accountId, own.id)).toBe(false);
  });

  it(`saves at most ${MAX_ADDRESSES} addresses per account`, async () => {
    const full = await createTestKey(app.url, { owner: 'me-full@example.com', scopes: ['read:products'] });
    for (let i = 0; i < MAX_ADDRESSES; i++) await createAddress(asOperator(prisma), full.accountId, address({ label: `#${i}` }));
    const error = await formError(() => createAddress(asOperator(prisma), full.accountId, address({ label: 'one too many' })));
    expect(error.message).toMatch(/at most 50 addresses/);
    expect(await listAddresses(asOperator(prisma), full.accountId)).toHaveLength(MAX_ADDRESSES);
    expect((await app.get('/api/me/addresses', withKey(full.key))).body.data).toHaveLength(MAX_ADDRESSES);
  });
});
