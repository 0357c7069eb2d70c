import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { timestampTz } from '../../src/db/prisma.js';

// A direct read's timestamptz values (src/db/prisma.ts): the text a UTC session sends is written
// as the ISO text the DateTime scalar sends; any other text is a Date from node-postgres's own
// parser. Either way the graph must send what it would send of node-postgres's Date.
const general = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (text: string) => Date;
const sent = (value: Date | string) => (typeof value === 'string' ? value : value.toISOString());

describe('timestamptz as a direct read holds it', () => {
  it.each([
    '2026-11-28 13:52:26.123+00',
    '2026-11-28 13:52:26+00',
    '2026-11-28 13:52:26.1+00',
    '2026-11-28 13:52:26.12+00',
    '1999-12-31 23:59:59.999+00',
    '0001-01-01 00:00:00+00',
  ])('%s, from a UTC session, is the ISO text itself', (text) => {
    const value = timestampTz(text);
    expect(typeof value).toBe('string');
    expect(value).toBe(general(text).toISOString());
  });

  it.each([
    '2026-11-28 13:52:26.123456+00',
    '2026-03-01 10:00:00.5+05:30',
    '2026-03-01 10:00:00-03',
    '0044-03-15 12:00:00+00 BC',
    '12026-01-01 00:00:00+00',
  ])('%s is a Date, the instant node-postgres reads', (text) => {
    const value = timestampTz(text);
    expect(value).toBeInstanceOf(Date);
    expect(sent(value)).toBe(general(text).toISOString());
  });

  it('infinity stays what node-postgres makes of it', () => {
    expect(timestampTz('infinity')).toEqual(general('infinity'));
  });
});
