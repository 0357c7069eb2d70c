import { createHash } from 'node:crypto';
import type { Caller } from '../context/actor.js';
import { Response } from '../shared/fetch-api.js';

// HTTP caching of GET /api responses: an ETag on every one (If-None-Match → 304), public caching
// for a few minutes of the catalogue read without a key (the spec advises clients to cache
// categories and suppliers), and private, always-revalidated caching of anything keyed.

/** Seconds a shared cache may keep an anonymous answer of these routes. */
const PUBLIC_MAX_AGE: Readonly<Record<string, number>> = {
  '/api/categories': 300,
  '/api/categories/:slug': 300,
  '/api/suppliers': 300,
  '/api/suppliers/:id': 300,
  '/api/products': 60,
  '/api/products/:slug': 60,
  '/api/products/:slug/reviews': 60,
  '/api/suppliers/:id/reviews': 60,
};

export function cacheControl(routePath: string, caller: Caller): string {
  if (caller.kind === 'key') return 'private, no-cache';
  const maxAge = PUBLIC_MAX_AGE[routePath];
  return maxAge === undefined ? 'private, no-cache' : `public, max-age=${maxAge}`;
}

/** A weak validator: equal bodies, equal ETags (the JSON is produced deterministically). */
export const etagOf = (body: string) => `W/"${createHash('sha1').update(body).digest('base64url')}"`;

/** If-None-Match: `*` or a list of (weak or strong) tags, compared weakly (RFC 9110 §13.1.2). */
export function matchesIfNoneMatch(header: string | null, etag: string): boolean {
  if (header === null) return false;
  if (header.trim() === '*') return true;
  const opaque = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => opaque(tag) === opaque(etag));
}

/**
 * The JSON answer to a GET, or 304 Not Modified when the client already holds it. Either way
 * with the ETag and caching headers; responses vary by key, since a key changes what is allowed.
 */
export function conditionalJson(request: Request, status: number, json: string, cache: string): Response {
  const etag = etagOf(json);
  const common = { etag, 'cache-control': cache, vary: 'Authorization, X-API-Key' };
  if (matchesIfNoneMatch(request.headers.get('if-none-match'), etag)) return new Response(null, { status: 304, headers: common });
  return new Response(json, { status, headers: { 'content-type': 'application/json; charset=utf-8', ...common } });
}
