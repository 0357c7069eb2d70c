// API keys: how they look, how they are stored and how a presented one is checked.
//
// A key is `mk_` + 43 base64url characters (32 random bytes, 256 bits). The database keeps only
// the SHA-256 of the whole key (to find it) and its first 12 characters (to tell keys apart in
// listings). The key itself exists in memory once, when it is generated, and nowhere else:
// nothing here logs, stores or echoes it. Creating, listing and revoking keys is
// src/accounts/api-keys.ts.

import { hashToken, randomToken, TOKEN_BODY } from '../shared/tokens.js';
import type { KeyCaller } from '../context/actor.js';
import type { PrismaClient } from '../db/prisma.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { KeyCache, KeyFreshness } from './key-cache.js';

export const KEY_PREFIX = 'mk_';
/** Characters shown in listings: `mk_` plus 9 of the random part, 54 bits — enough to tell keys apart, far too few to guess the rest. */
export const DISPLAY_PREFIX_LENGTH = 12;
const KEY_PATTERN = new RegExp(`^${KEY_PREFIX}${TOKEN_BODY}$`);

export interface GeneratedKey {
  /** The secret: hand it to the user once, never store or log it. */
  key: string;
  /** SHA-256 of `key`, lower-case hex: what the database stores. */
  hash: string;
  /** The first DISPLAY_PREFIX_LENGTH characters of `key`. */
  prefix: string;
}

export function generateApiKey(): GeneratedKey {
  const key = KEY_PREFIX + randomToken();
  return { key, hash: hashApiKey(key), prefix: key.slice(0, DISPLAY_PREFIX_LENGTH) };
}

/** The SHA-256 of the whole key, prefix included (hashToken: why unsalted and fast). */
export function hashApiKey(key: string): string {
  return hashToken(key);
}

/** A cheap format check, so a malformed token is refused without touching the database. */
export function looksLikeApiKey(token: string): boolean {
  return KEY_PATTERN.test(token);
}

/**
 * What checking a key reads of it. The "ApiKey" trigger (migration api_key_notify) notifies a
 * change to any of these columns, so that every instance's key cache forgets the key:
 * test/key-cache.test.ts holds the two lists together.
 */
export const CHECKED_COLUMNS = {
  id: true,
  accountId: true,
  plan: true,
  scopes: true,
  rateLimit: true,
  rateWindowSeconds: true,
  expiresAt: true,
  revokedAt: true,
} as const satisfies Prisma.ApiKeySelect;

export type CheckedKey = Prisma.ApiKeyGetPayload<{ select: typeof CHECKED_COLUMNS }>;

/**
 * The caller a presented token stands for: a known key that is neither revoked nor expired.
 * Anything else, malformed tokens included, is null; a malformed token costs no query.
 *
 * The lookup is by the hash of the token through the unique index, never by comparing a stored
 * secret with the token, so a constant-time comparison has nothing to protect: the timing of an
 * index probe reveals at most something about the hash of the guess, which says nothing about
 * any real key. With a cache (src/auth/key-cache.ts) a key already checked costs no query; its
 * expiry is still compared with the clock on every request.
 */
export async function authenticateKey(
  prisma: PrismaClient,
  token: string,
  ip: string,
  cache?: KeyCache<CheckedKey>,
  freshness?: KeyFreshness,
): Promise<KeyCaller | null> {
  if (!looksLikeApiKey(token)) return null;
  const hash = hashApiKey(token);
  const load = () => prisma.apiKey.findUnique({ where: { hash }, select: CHECKED_COLUMNS });
  const row = cache ? await cache.get(hash, load, freshness) : await load();
  if (!row || row.revokedAt !== null) return null;
  if (row.expiresAt !== null && row.expiresAt.getTime() <= Date.now()) return null;
  return {
    kind: 'key',
    ip,
    keyId: row.id,
    accountId: row.accountId,
    plan: row.plan,
    scopes: row.scopes,
    rateLimit: row.rateLimit,
    rateWindowSeconds: row.rateWindowSeconds,
  };
}
