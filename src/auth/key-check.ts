// API keys: how they look, how they are stored and how a presented one is checked.
//
// A key is `mk_` (secret, for servers) or `pk_` (publishable, for browser code) + 43 base64url
// characters (32 random bytes, 256 bits). The database keeps only
// the SHA-256 of the whole key (to find it) and its first 12 characters (to tell keys apart in
// listings). The key itself exists in memory once, when it is generated, and nowhere else:
// nothing here logs, stores or echoes it. Creating, listing and revoking keys is
// src/accounts/api-keys.ts.

import { hashToken, randomToken, TOKEN_BODY } from '../shared/tokens.js';
import { publishableScopes } from './scopes.js';
import type { KeyCaller, PublishableRules } from '../context/actor.js';
import { AppError } from '../shared/errors.js';
import type { PrismaClient } from '../db/prisma.js';
import type { Prisma } from '../generated/prisma/client.js';
import type { KeyCache, KeyFreshness } from './key-cache.js';

export type KeyKind = 'SECRET' | 'PUBLISHABLE';

export const KEY_PREFIX = 'mk_';
/** A publishable key's prefix: made to be seen in a page's code, and seen to be one. */
export const PUBLISHABLE_KEY_PREFIX = 'pk_';
const PREFIXES: Record<KeyKind, string> = { SECRET: KEY_PREFIX, PUBLISHABLE: PUBLISHABLE_KEY_PREFIX };
/** Characters shown in listings: `mk_` plus 9 of the random part, 54 bits — enough to tell keys apart, far too few to guess the rest. */
export const DISPLAY_PREFIX_LENGTH = 12;
const KEY_PATTERN = new RegExp(`^(?:${KEY_PREFIX}|${PUBLISHABLE_KEY_PREFIX})${TOKEN_BODY}$`);

export interface GeneratedKey {
  /** The secret: hand it to the user once, never store or log it. */
  key: string;
  /** SHA-256 of `key`, lower-case hex: what the database stores. */
  hash: string;
  /** The first DISPLAY_PREFIX_LENGTH characters of `key`. */
  prefix: string;
}

export function generateApiKey(kind: KeyKind = 'SECRET'): GeneratedKey {
  const key = PREFIXES[kind] + randomToken();
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
  kind: true,
  origins: true,
  allowServer: true,
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
  // The kind is the row's, and the token must say the same: a `pk_` token is never a secret key.
  const publishable = row.kind === 'PUBLISHABLE';
  if (token.startsWith(PUBLISHABLE_KEY_PREFIX) !== publishable) return null;
  return {
    kind: 'key',
    ip,
    keyId: row.id,
    accountId: row.accountId,
    plan: row.plan,
    // Read-only by construction: whatever the row says, a publishable key carries catalogue scopes only.
    scopes: publishable ? publishableScopes(row.scopes) : row.scopes,
    rateLimit: row.rateLimit,
    rateWindowSeconds: row.rateWindowSeconds,
    ...(publishable ? { publishable: { origins: row.origins, allowServer: row.allowServer } } : {}),
  };
}

// Publishable keys are bound to the origins their owner lists. An origin is kept and compared in
// one form, scheme://host[:port] as browsers send it (lower case, no default port, no path).

/**
 * An origin a publishable key may list, normalised, or what is wrong with it: https, or http for
 * a page on this machine (localhost, 127.0.0.1, [::1]) during development; no path, query,
 * fragment, credentials or wildcard.
 */
export function normaliseOrigin(text: string): { origin: string } | { problem: string } {
  const raw = text.trim();
  const shown = JSON.stringify(raw);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { problem: `${shown} is not an origin (scheme://host[:port], such as https://shop.example)` };
  }
  const local = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && local)) {
    return { problem: `${shown} must be https (http only for localhost, 127.0.0.1 or [::1])` };
  }
  if (url.username || url.password) return { problem: `${shown} must not hold credentials` };
  // `https://a.example/` is the origin with the slash URL always adds; anything longer is a path.
  if (url.pathname !== '/' || url.search || url.hash || raw.endsWith('?') || raw.endsWith('#')) {
    return { problem: `${shown} must be an origin without a path, query or fragment (scheme://host[:port])` };
  }
  if (raw.includes('*')) return { problem: `${shown} must name one origin: wildcards are not accepted` };
  return { origin: url.origin };
}

/**
 * Why a publishable key's request from `origin` (its Origin header, null when it has none) is
 * refused, or null when it is accepted. Every face asks it (the gate: HTTP and the WebSocket
 * handshake). An opaque origin (`Origin: null`: a sandboxed frame, a file) is never listed.
 */
export function publishableOriginRefusal(rules: PublishableRules, origin: string | null): AppError | null {
  if (origin === null) {
    if (rules.allowServer) return null;
    return new AppError('FORBIDDEN', 'This publishable key is accepted only from the pages of its origins, and the request has no Origin header (its owner can allow server use)');
  }
  const normalised = normaliseOrigin(origin);
  if ('origin' in normalised && rules.origins.includes(normalised.origin)) return null;
  return new AppError('FORBIDDEN', `This publishable key is not accepted from the origin ${JSON.stringify(origin.slice(0, 200))}: its owner lists the origins it may be used from`);
}
