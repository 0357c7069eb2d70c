// Bearer secrets: API keys (src/auth/key-check.ts, this with a prefix), dashboard session cookies and
// set-password links (src/accounts). Each is 32 random bytes, shown to its holder once, and
// stored only as its SHA-256, so a copy of the database opens nothing.

import crypto from 'node:crypto';

const TOKEN_BYTES = 32;
/**
 * The random part as a pattern: 32 bytes are 43 base64url characters without padding. The last
 * one carries only 4 bits, so it is one of the 16 characters whose 2 low bits are zero: anything
 * else was not made here.
 */
export const TOKEN_BODY = '[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]';
const TOKEN_PATTERN = new RegExp(`^${TOKEN_BODY}$`);

/** 32 random bytes as 43 base64url characters. */
export function randomToken(): string {
  return crypto.randomBytes(TOKEN_BYTES).toString('base64url');
}

/** A new secret and the hash to store for it. */
export function newToken(): { token: string; hash: string } {
  const token = randomToken();
  return { token, hash: hashToken(token) };
}

/**
 * SHA-256, lower-case hex. Unsalted and fast on purpose: 256 random bits leave no dictionary to
 * attack (neither a salt nor a slow hash would add anything), and the hash must be found through
 * a unique index.
 */
export function hashToken(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A format check, so a malformed token is refused without a query. */
export function looksLikeToken(token: unknown): token is string {
  return typeof token === 'string' && TOKEN_PATTERN.test(token);
}
