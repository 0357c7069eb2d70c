import { describe, expect, it } from 'vitest';
import { cacheControl, cachingHeaders, conditionalJson, etagOf, matchesIfNoneMatch } from '../../src/rest/caching.js';

// HTTP caching of GET /api answers (src/rest/caching.ts): an ETag on each, 304 for a client that
// holds it, public caching only of what a caller without a key reads.

const catalogue = { cache: { publicMaxAge: 60 } };
const key = { kind: 'key' as const, ip: '', keyId: 'k', accountId: 'a', plan: 'BASIC' as const, scopes: [], rateLimit: null, rateWindowSeconds: null };

describe('Cache-Control', () => {
  it('lets shared caches keep the catalogue as read without a key, for as long as the route allows', () => {
    expect(cacheControl(catalogue, undefined)).toBe('public, max-age=60');
    expect(cacheControl(catalogue, { kind: 'anonymous', ip: '192.0.2.1' })).toBe('public, max-age=60');
  });

  it('keeps anything read with a key, or by a route without a public age, private and revalidated', () => {
    expect(cacheControl(catalogue, key)).toBe('private, no-cache');
    expect(cacheControl({}, undefined)).toBe('private, no-cache');
  });

  it('varies by key, since a key changes what may be seen', () => {
    expect(cachingHeaders('W/"x"', 'private, no-cache').vary).toBe('Authorization, X-API-Key');
  });
});

describe('ETags', () => {
  it('are weak, equal for equal bodies and different for different ones', () => {
    expect(etagOf('{"a":1}')).toMatch(/^W\/"[A-Za-z0-9_-]+"$/);
    expect(etagOf('{"a":1}')).toBe(etagOf(new TextEncoder().encode('{"a":1}')));
    expect(etagOf('{"a":1}')).not.toBe(etagOf('{"a":2}'));
  });

  it('hash text as UTF-8', () => {
    expect(etagOf('ăîșț')).toBe(etagOf(Buffer.from('ăîșț', 'utf8')));
  });
});

describe('If-None-Match', () => {
  const etag = 'W/"abc"';
  it('matches the tag weakly or strongly, in a list, or *', () => {
    for (const header of ['W/"abc"', '"abc"', '"x", W/"abc"', ' "y" ,"abc" ', '*']) expect(matchesIfNoneMatch(header, etag), header).toBe(true);
  });

  it('does not match other tags, or no header', () => {
    expect(matchesIfNoneMatch('"abcd"', etag)).toBe(false);
    expect(matchesIfNoneMatch('W/"ab"', etag)).toBe(false);
    expect(matchesIfNoneMatch(null, etag)).toBe(false);
  });
});

describe('a conditional answer', () => {
  const request = (headers: Record<string, string> = {}) => new Request('http://unit.test/api/products', { headers });

  it('answers JSON with its ETag and caching headers', async () => {
    const response = conditionalJson(request(), 200, '{"success":true}', 'public, max-age=60');
    expect(response.status).toBe(200);
    expect(response.headers.get('etag')).toBe(etagOf('{"success":true}'));
    expect(response.headers.get('cache-control')).toBe('public, max-age=60');
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await response.text()).toBe('{"success":true}');
  });

  it('answers 304 without a body to a client that holds it, with the same ETag', async () => {
    const etag = etagOf('{"success":true}');
    const response = conditionalJson(request({ 'if-none-match': etag }), 200, '{"success":true}', 'private, no-cache');
    expect(response.status).toBe(304);
    expect(response.headers.get('etag')).toBe(etag);
    expect(await response.text()).toBe('');
  });

  it('uses the ETag kept with a cached answer rather than hashing again', () => {
    const response = conditionalJson(request({ 'if-none-match': 'W/"kept"' }), 200, '{}', 'private, no-cache', 'W/"kept"');
    expect(response.status).toBe(304);
  });
});
