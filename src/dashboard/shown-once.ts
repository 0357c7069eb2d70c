import crypto from 'node:crypto';
import { expireCookie, setCookie, type SignedInVisit } from './visit.js';

// A secret the dashboard shows exactly once, after the redirect that answers its creation (Post/
// Redirect/Get): a new API key, or a new webhook endpoint's signing secret. The POST that creates
// it answers 303 to the thing's "created" page and hands the secret to the browser in a cookie:
//
// - sealed (AES-256-GCM) under a key derived from the session token, which the database does not
//   hold (only its hash), bound to what it was made for (kind and id): a copy of the cookie alone,
//   or of the database, reveals nothing, and it opens for this session only;
// - HttpOnly, SameSite=Strict, Path limited to that one page, Secure over HTTPS, for five minutes;
// - taken by the first GET of the page, which tells the browser to drop it: a reload finds nothing
//   and says the secret was shown once. A HEAD shows nothing, so it takes nothing. (The server
//   keeps no record of the taking: a copy of the cookie replayed with the session cookie within
//   those five minutes would open it again; but whoever holds the session cookie holds the
//   account already.)
//
// Why the browser and not a one-time record in the database: any instance can open it with no
// shared state but the request itself, and nothing needs sweeping; and the database keeps only a
// hash of an API key, which a record of the key, however brief, would break. Never in a URL (logs,
// history, Referer), and the page is no-store like every dashboard page.

export type ShownOnceKind = 'key' | 'webhook';

const COOKIE = 'mp_shown_once';
/** Long enough for a slow redirect, short enough that a secret never fetched does not linger. */
const LIFETIME_SECONDS = 5 * 60;
const SEAL_LABEL = 'marketplace dashboard shown-once v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The page that shows what was just created (a form sent again is sent there too), and the only path its cookie is sent to. */
export const createdPath = (kind: ShownOnceKind, id: string) => `/dashboard/${kind === 'key' ? 'keys' : 'webhooks'}/${id}/created`;

const sealKey = (sessionToken: string) => crypto.createHmac('sha256', sessionToken).update(SEAL_LABEL).digest();
const boundTo = (kind: ShownOnceKind, id: string) => Buffer.from(`${kind}:${id}`, 'utf8');

/** Keeps `secret` for the created page's first GET; answers that page's path, to redirect to. */
export function keepToShowOnce(visit: SignedInVisit, kind: ShownOnceKind, id: string, secret: string): string {
  const iv = crypto.randomBytes(IV_BYTES);
  const cipher = crypto.createCipheriv('aes-256-gcm', sealKey(visit.sessionToken), iv).setAAD(boundTo(kind, id));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  const value = Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
  const path = createdPath(kind, id);
  setCookie(visit, COOKIE, value, { path, maxAge: LIFETIME_SECONDS, sameSite: 'Strict' });
  return path;
}

/** The secret kept for this created page, once: null when it was shown already (or never kept for this session). */
export function takeShownOnce(visit: SignedInVisit, kind: ShownOnceKind, id: string): string | null {
  const value = visit.cookies.get(COOKIE);
  if (value === undefined || visit.request.method === 'HEAD') return null;
  expireCookie(visit, COOKIE, createdPath(kind, id), 'Strict');
  const bytes = Buffer.from(value, 'base64url');
  if (bytes.length <= IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = crypto.createDecipheriv('aes-256-gcm', sealKey(visit.sessionToken), bytes.subarray(0, IV_BYTES)).setAAD(boundTo(kind, id));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    // Sealed for another session (signed in anew since), another page, or tampered with.
    return null;
  }
}
