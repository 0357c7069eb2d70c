import { describe, expect, it } from 'vitest';
import { ENTERPRISE_LIMIT_MAX, ENTERPRISE_WINDOW_MAX_SECONDS, keyStatus, normaliseKeyInput, normaliseOwner, type CreateApiKeyInput } from '../../src/accounts/api-keys.js';
import { DISPLAY_PREFIX_LENGTH, generateApiKey, hashApiKey, looksLikeApiKey } from '../../src/auth/key-check.js';
import { AppError } from '../../src/shared/errors.js';

// A key's settings as the operator asks for them (src/accounts/api-keys.ts, normaliseKeyInput,
// checked before the CLI starts a database) and what a key looks like (src/auth/key-check.ts).

const NOW = new Date('2026-03-01T12:00:00.000Z');
const BASE: CreateApiKeyInput = { owner: 'dev@example.com', plan: 'BASIC', scopes: ['read:products'] };

/** The details of the VALIDATION_ERROR the settings are refused with. */
function problems(over: Partial<CreateApiKeyInput>): Record<string, unknown> {
  try {
    normaliseKeyInput({ ...BASE, ...over }, NOW);
  } catch (error) {
    if (error instanceof AppError && error.code === 'VALIDATION_ERROR') return error.details ?? {};
    throw error;
  }
  throw new Error('accepted');
}

describe('a key’s settings', () => {
  it('are stored normalised: the owner lower-case, no limit of its own, no expiry, no name', () => {
    expect(normaliseKeyInput({ ...BASE, owner: '  Dev@Example.COM ' }, NOW)).toEqual({
      owner: 'dev@example.com',
      plan: 'BASIC',
      scopes: ['read:products'],
      rateLimit: null,
      rateWindowSeconds: null,
      expiresAt: null,
      name: '',
      // A secret key: no origins, no server-use rule (those are a publishable key's).
      kind: 'SECRET',
      origins: [],
      allowServer: false,
    });
  });

  it('keep each scope once, in the order of the scope list, whatever order they were asked in', () => {
    expect(normaliseKeyInput({ ...BASE, scopes: [' write:orders', 'read:orders', 'write:orders', ''] }, NOW).scopes).toEqual(['read:orders', 'write:orders']);
  });

  it('refuse unknown scopes by name, and a key with none', () => {
    expect(problems({ scopes: ['read:products', 'read:everything', 'root'] }).scopes).toMatch(/^has the unknown scopes "read:everything", "root"; valid scopes: read:products/);
    expect(problems({ scopes: [' ', ''] }).scopes).toMatch(/^must include at least one scope/);
  });

  it('refuse an owner that is not an e-mail address, quoting it', () => {
    expect(problems({ owner: 'dev at example' }).owner).toBe('must be an e-mail address, got "dev at example"');
  });

  it('give an enterprise key its own limit and window, required and bounded', () => {
    expect(normaliseKeyInput({ ...BASE, plan: 'ENTERPRISE', rateLimit: 50_000, rateWindowSeconds: 3600 }, NOW)).toMatchObject({ rateLimit: 50_000, rateWindowSeconds: 3600 });
    expect(problems({ plan: 'ENTERPRISE' }).limit).toMatch(/needs its own rate limit and window/);
    expect(problems({ plan: 'ENTERPRISE', rateLimit: 10 }).limit).toMatch(/needs its own rate limit and window/);
  });

  it.each([
    [{ rateLimit: 0, rateWindowSeconds: 60 }, 'limit'],
    [{ rateLimit: ENTERPRISE_LIMIT_MAX + 1, rateWindowSeconds: 60 }, 'limit'],
    [{ rateLimit: 1.5, rateWindowSeconds: 60 }, 'limit'],
    [{ rateLimit: 10, rateWindowSeconds: 0 }, 'window'],
    [{ rateLimit: 10, rateWindowSeconds: ENTERPRISE_WINDOW_MAX_SECONDS + 1 }, 'window'],
  ])('refuse an enterprise allowance out of bounds: %j', (allowance, field) => {
    expect(Object.keys(problems({ plan: 'ENTERPRISE', ...allowance }))).toEqual([field]);
  });

  it('accept the enterprise bounds themselves', () => {
    const input = { ...BASE, plan: 'ENTERPRISE' as const };
    expect(() => normaliseKeyInput({ ...input, rateLimit: 1, rateWindowSeconds: 1 }, NOW)).not.toThrow();
    expect(() => normaliseKeyInput({ ...input, rateLimit: ENTERPRISE_LIMIT_MAX, rateWindowSeconds: ENTERPRISE_WINDOW_MAX_SECONDS }, NOW)).not.toThrow();
  });

  it('refuse a limit of its own on a basic or pro key, saying what the plan allows', () => {
    expect(problems({ plan: 'PRO', rateLimit: 10, rateWindowSeconds: 60 }).limit).toBe(
      'only enterprise keys take a custom rate limit or window; the pro plan allows 5000 requests per 1 h',
    );
    expect(problems({ rateWindowSeconds: 60 }).limit).toMatch(/the basic plan allows 1000 requests per 1 h/);
  });

  it('refuse an expiry now or in the past, or one that is no date', () => {
    expect(problems({ expiresAt: NOW }).expires).toBe('must be in the future, got 2026-03-01T12:00:00.000Z');
    expect(problems({ expiresAt: new Date('nonsense') }).expires).toBe('is not a valid date');
    expect(normaliseKeyInput({ ...BASE, expiresAt: new Date(NOW.getTime() + 1) }, NOW).expiresAt).toEqual(new Date(NOW.getTime() + 1));
  });

  it('take a name trimmed and NFC-normalised, up to 100 characters, without control or invisible characters', () => {
    expect(normaliseKeyInput({ ...BASE, name: '  Ca\u0306lin’s key ' }, NOW).name).toBe('Călin’s key');
    expect(problems({ name: 'x'.repeat(101) }).name).toBe('must be at most 100 characters');
    expect(problems({ name: 'tab\there' }).name).toBe('must not contain control characters');
    expect(problems({ name: 'evil\u202Egnp.exe' }).name).toMatch(/^must not contain invisible or direction-changing characters/);
  });

  it('name every broken rule at once', () => {
    expect(Object.keys(problems({ owner: 'x', plan: 'GOLD' as 'BASIC', scopes: [], expiresAt: NOW, name: '\u0000' })).sort()).toEqual([
      'expires',
      'name',
      'owner',
      'plan',
      'scopes',
    ]);
  });

  it('an owner alone is checked the same way', () => {
    expect(normaliseOwner(' Dev@Example.com')).toBe('dev@example.com');
    expect(() => normaliseOwner('dev')).toThrow('The owner must be an e-mail address');
  });
});

describe('a key’s status', () => {
  const at = (iso: string) => new Date(iso);
  it('is revoked once revoked, whatever its expiry', () => {
    expect(keyStatus({ revokedAt: at('2026-01-01T00:00:00Z'), expiresAt: at('2025-01-01T00:00:00Z') }, NOW)).toBe('revoked');
  });

  it('is expired from the very moment of its expiry', () => {
    expect(keyStatus({ revokedAt: null, expiresAt: NOW }, NOW)).toBe('expired');
    expect(keyStatus({ revokedAt: null, expiresAt: new Date(NOW.getTime() + 1) }, NOW)).toBe('active');
    expect(keyStatus({ revokedAt: null, expiresAt: null }, NOW)).toBe('active');
  });
});

describe('what a key looks like', () => {
  it('is mk_ and 43 base64url characters, shown by its first 12, stored only as its SHA-256', () => {
    const { key, hash, prefix } = generateApiKey();
    expect(key).toMatch(/^mk_[A-Za-z0-9_-]{43}$/);
    expect(prefix).toBe(key.slice(0, DISPLAY_PREFIX_LENGTH));
    expect(DISPLAY_PREFIX_LENGTH).toBe(12);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(hash).toBe(hashApiKey(key));
    expect(hash).not.toContain(key.slice(3));
  });

  it('is never the same twice', () => {
    const keys = new Set(Array.from({ length: 50 }, () => generateApiKey().key));
    expect(keys.size).toBe(50);
  });

  it('is told from a malformed token by its form alone, the last character included', () => {
    const { key } = generateApiKey();
    expect(looksLikeApiKey(key)).toBe(true);
    expect(looksLikeApiKey(key.slice(0, -1))).toBe(false);
    expect(looksLikeApiKey(`${key}A`)).toBe(false);
    // The two kinds' prefixes, and no other.
    expect(looksLikeApiKey(key.replace(/^mk_/, 'pk_'))).toBe(true);
    expect(looksLikeApiKey(key.replace(/^mk_/, 'sk_'))).toBe(false);
    // 32 bytes leave the last of 43 characters 4 bits: B (…0001) cannot end a key made here.
    expect(looksLikeApiKey(`${key.slice(0, -1)}B`)).toBe(false);
  });
});
