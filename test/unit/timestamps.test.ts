import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { timestampTz } from '../../src/db/prisma.js';

// A direct read's timestamptz values (src/db/prisma.ts): the text a UTC session sends is read as
// the ISO string it is; any other text goes to node-postgres's own parser. Both must agree.
const general = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (text: string) => Date | number;

describe('timestamptz as a direct read parses it', () => {
  it.each([
    '2026-11-28 13:52:26.123+00',
    '2026-11-28 13:52:26+00',
    '2026-11-28 13:52:26.1+00',
    '2026-11-28 13:52:26.123456+00',
    '1999-12-31 23:59:59.999+00',
    '2026-03-01 10:00:00.5+05:30',
    '2026-03-01 10:00:00-03',
    '0044-03-15 12:00:00+00 BC',
  ])('%s is the instant node-postgres reads', (text) => {
    expect(timestampTz(text)).toEqual(general(text));
  });

  it('infinity stays what node-postgres makes of it', () => {
    expect(timestampTz('infinity')).toEqual(general('infinity'));
  });
});
