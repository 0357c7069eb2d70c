import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { acceptsIncremental, completeData, isIncremental, type IncrementalPart } from '../../src/pipeline/graphql-incremental.js';

// The pure rules of incremental delivery (src/pipeline/graphql-incremental.ts): which requests ask
// for it, which clients can read it, and what its parts add up to.

describe('isIncremental', () => {
  it('finds @defer and @stream in the operation run, or in a fragment of the document', () => {
    expect(isIncremental(parse('{ a ... @defer { b } }'), undefined)).toBe(true);
    expect(isIncremental(parse('{ list @stream { id } }'), undefined)).toBe(true);
    expect(isIncremental(parse('{ a ...F } fragment F on Q { b ... @defer { c } }'), undefined)).toBe(true);
    expect(isIncremental(parse('{ a @include(if: true) ... @skip(if: false) { b } }'), undefined)).toBe(false);
    expect(isIncremental(parse('query A { a } query B { b ... @defer { c } }'), 'A')).toBe(false);
    expect(isIncremental(parse('query A { a } query B { b ... @defer { c } }'), 'B')).toBe(true);
  });
});

describe('acceptsIncremental', () => {
  it.each([
    [null, true],
    ['*/*', true],
    ['multipart/mixed', true],
    ['multipart/mixed;deferSpec=20220824,application/json', true],
    ['application/json, text/event-stream', true],
    ['Multipart/*', true],
    ['text/*', true],
    ['application/json', false],
    ['application/graphql-response+json, application/json;q=0.9', false],
    ['text/plain', false],
    ['', true],
  ])('%s: %s', (accept, expected) => {
    expect(acceptsIncremental(accept)).toBe(expected);
  });
});

describe('completeData', () => {
  it('merges deferred fragments at their paths and appends streamed items, overlapping fields item by item', () => {
    const parts: IncrementalPart[] = [
      { data: { product: { id: '1', reviews: [{ id: 'r1' }] }, list: [{ id: 'a' }] }, hasNext: true },
      { incremental: [{ data: { name: 'N', reviews: [{ rating: 5 }] }, path: ['product'] }, { items: [{ id: 'b' }, { id: 'c' }], path: ['list', 1] }], hasNext: true },
      { incremental: [{ data: { title: 'T' }, path: ['product', 'reviews', 0] }], hasNext: false },
    ];
    expect(completeData(parts)).toEqual({
      product: { id: '1', name: 'N', reviews: [{ id: 'r1', rating: 5, title: 'T' }] },
      list: [{ id: 'a' }, { id: 'b' }, { id: 'c' }],
    });
    // The parts themselves are left as they were sent.
    expect(parts[0]!.data).toEqual({ product: { id: '1', reviews: [{ id: 'r1' }] }, list: [{ id: 'a' }] });
  });

  it('merges a fragment deferred at the root, and skips one under a null parent', () => {
    expect(completeData([{ data: {}, hasNext: true }, { incremental: [{ data: { a: 1 }, path: [] }], hasNext: false }])).toEqual({ a: 1 });
    expect(completeData([{ data: { p: null }, hasNext: true }, { incremental: [{ data: { a: 1 }, path: ['p'] }], hasNext: false }])).toEqual({ p: null });
  });
});
