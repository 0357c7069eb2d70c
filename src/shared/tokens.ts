// Bearer secrets of the dashboard: session cookies and set-password links. Like API keys
// (src/auth/keys.ts) they are 32 random bytes, shown to their holder once, and stored only as
// their SHA-256, so a copy of the database opens no session and sets no password.

import crypto from 'node:crypto';

const TOKEN_BYTES = 32;
// 32 bytes are 43 base64url characters without padding; the last one carries 4 bits, so only
// these 16 characters can end a token made here.
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

/** A new secret (43 base64url characters) and the hash to store for it. */
export function newToken(): { token: string; hash: string } {
  const token = crypto.randomBytes(TOKEN_BYTES).toString('base64url');
  return { token, hash: hashToken(token) };
}

/**
 * SHA-256, lower-case hex. Unsalted and fast on purpose: 256 random bits leave no dictionary to
 * attack, and the hash must be found through a unique index.
 */
export function hashToken(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

/** A format check, so a malformed token is refused without a query. */
export function looksLikeToken(token: unknown): token is string {
  return typeof token === 'string' && TOKEN_PATTERN.test(token);
}
