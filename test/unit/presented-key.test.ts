import { describe, expect, it } from 'vitest';
import { presentedKey } from '../../src/pipeline/presented-key.js';
import { AppError } from '../../src/shared/errors.js';

// Which API key a request presents (src/pipeline/presented-key.ts): X-API-Key or Authorization:
// Bearer, every copy of either counted, and disagreement refused rather than resolved.

const keyOf = (headers: Record<string, string>, raw?: string[]) => presentedKey(new Headers(headers), raw);

/** The refusal presentedKey throws, or the key it found. */
function outcome(headers: Record<string, string>, raw?: string[]): string | null | { refused: string } {
  try {
    return keyOf(headers, raw);
  } catch (error) {
    if (error instanceof AppError) return { refused: `${error.code}: ${error.message}` };
    throw error;
  }
}

const INVALID = { refused: 'UNAUTHORIZED: Invalid API key: unknown, revoked or expired' };
const CONFLICT = { refused: expect.stringMatching(/^UNAUTHORIZED: Conflicting credentials/) };

describe('the presented key', () => {
  it.each([
    ['X-API-Key', { 'x-api-key': 'mk_abc' }],
    ['Authorization: Bearer', { authorization: 'Bearer mk_abc' }],
    ['a bearer scheme in any letter case', { authorization: 'bEaReR mk_abc' }],
    ['spaces around the key', { authorization: 'Bearer    mk_abc  ', 'x-api-key': ' mk_abc ' }],
  ])('is read from %s', (_how, headers) => {
    expect(keyOf(headers)).toBe('mk_abc');
  });

  it('is none without either header, or with an Authorization of another scheme', () => {
    expect(keyOf({})).toBeNull();
    expect(keyOf({ authorization: 'Basic dXNlcjpwYXNz' })).toBeNull();
    expect(keyOf({ authorization: 'Bearerish mk_abc' })).toBeNull();
  });

  it('may be sent in both headers when it is the same key', () => {
    expect(keyOf({ 'x-api-key': 'mk_abc', authorization: 'Bearer mk_abc' })).toBe('mk_abc');
  });

  it('refuses two different keys, however they arrive', () => {
    expect(outcome({ 'x-api-key': 'mk_a', authorization: 'Bearer mk_b' })).toEqual(CONFLICT);
    // Repeated headers joined with a comma, as proxies and the Fetch API do.
    expect(outcome({ 'x-api-key': 'mk_a, mk_b' })).toEqual(CONFLICT);
    expect(outcome({ authorization: 'Bearer mk_a, Bearer mk_b' })).toEqual(CONFLICT);
    expect(keyOf({ 'x-api-key': 'mk_a, mk_a' })).toBe('mk_a');
  });

  it('refuses an empty key as invalid rather than reading it as no key', () => {
    expect(outcome({ 'x-api-key': '' })).toEqual(INVALID);
    expect(outcome({ authorization: 'Bearer' })).toEqual(INVALID);
    expect(outcome({ authorization: 'Bearer   ' })).toEqual(INVALID);
  });

  it('counts every line of Node’s raw headers, which the parsed headers reduce to the first', () => {
    const raw = ['Host', 'x', 'authorization', 'Bearer mk_a', 'AUTHORIZATION', 'Bearer mk_b'];
    expect(outcome({ authorization: 'Bearer mk_a' }, raw)).toEqual(CONFLICT);
    expect(keyOf({ authorization: 'Bearer mk_a' }, ['X-Api-Key', 'mk_a', 'X-API-KEY', 'mk_a'])).toBe('mk_a');
  });
});
