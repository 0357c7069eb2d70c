import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { printedSchema } from '../../src/domain/schema.js';

describe('schema.graphql', () => {
  it('is the schema printed from code (run `npm run schema:print` after changing the schema)', () => {
    const committed = readFileSync(new URL('../../schema.graphql', import.meta.url), 'utf8');
    expect(committed).toBe(printedSchema());
  });
});
