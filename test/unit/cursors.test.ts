import { describe, expect, it } from 'vitest';
import { createCursorSeal, cursorSealSource } from '../../src/graphql/cursors.js';
import { checkListArguments, readListArguments } from '../../src/graphql/field-rules.js';
import type { PrismaClient } from '../../src/db/prisma.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { AppError } from '../../src/shared/errors.js';

// Cursor sealing (src/graphql/cursors.ts) and the list arguments that carry cursors
// (src/graphql/field-rules.ts), without a schema or a database: only a cursor this service signed
// pages on, in the one form plugin-prisma issues, and each bad argument is named.

const KEY = 'unit-cursor-secret-0123456789abcdef';
const OLD_KEY = 'unit-cursor-secret-retired-0123456789';
/** plugin-prisma's raw cursor of a row with a string id. */
const rawOf = (id: string) => Buffer.from(`GPC:S:${id}`).toString('base64');
const seal = createCursorSeal([KEY]);

describe('sealing a cursor', () => {
  it('needs a secret', () => {
    expect(() => createCursorSeal([])).toThrow(/at least one secret/);
  });

  it('gives back exactly the raw cursor it signed, for every row id', () => {
    for (const id of ['a', 'ckx0000000000000000000001', 'with-dash_and_underscore', 'x'.repeat(100)]) {
      expect(seal.open(seal.sign(rawOf(id)))).toBe(rawOf(id));
    }
  });

  it('hands out URL-safe text: no +, / or = to escape in a query string', () => {
    for (let n = 0; n < 50; n++) expect(seal.sign(rawOf(`row-${n}-??>>`))).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('signs different rows differently, and one row the same way each time', () => {
    expect(seal.sign(rawOf('a'))).not.toBe(seal.sign(rawOf('b')));
    expect(createCursorSeal([KEY]).sign(rawOf('a'))).toBe(seal.sign(rawOf('a')));
  });

  it('opens nothing signed under another secret', () => {
    expect(createCursorSeal([OLD_KEY]).open(seal.sign(rawOf('a')))).toBeUndefined();
  });

  it('keeps cursors of a retired secret working while it is still listed, and signs with the first', () => {
    const issuedBefore = createCursorSeal([OLD_KEY]).sign(rawOf('a'));
    const rotated = createCursorSeal([KEY, OLD_KEY]);
    expect(rotated.open(issuedBefore)).toBe(rawOf('a'));
    expect(rotated.sign(rawOf('a'))).toBe(seal.sign(rawOf('a')));
    expect(seal.open(issuedBefore)).toBeUndefined();
  });

  it('refuses a cursor over 512 characters before hashing anything', () => {
    const sealed = seal.sign(rawOf('a'));
    const [body, tag] = sealed.split('.') as [string, string];
    expect(seal.open(`${'A'.repeat(600)}${body}.${tag}`)).toBeUndefined();
  });

  it.each([
    ['no dot', (s: string) => s.replace('.', '')],
    ['an empty body', (s: string) => `.${s.split('.')[1]}`],
    ['a tag one character short', (s: string) => s.slice(0, -1)],
    ['a tag one character long', (s: string) => `${s}A`],
    ['standard base64 characters', (s: string) => s.replace(/^./, '+')],
    ['a second dot', (s: string) => s.replace('.', '..')],
    ['the body of another row', (s: string) => `${seal.sign(rawOf('b')).split('.')[0]}.${s.split('.')[1]}`],
  ])('refuses a cursor with %s', (_what, forge) => {
    expect(seal.open(forge(seal.sign(rawOf('a'))))).toBeUndefined();
  });
});

describe('where the seal’s secret comes from', () => {
  /** A stand-in for the "ServerSecret" table: counts reads, fails the first `failures` of them. */
  function secretTable(failures = 0) {
    let value: string | undefined;
    const calls = { find: 0, create: 0 };
    const prisma = {
      serverSecret: {
        findUnique: async () => {
          calls.find++;
          if (calls.find <= failures) throw new Error('database away');
          return value === undefined ? null : { value };
        },
        createMany: async ({ data }: { data: { value: string }[] }) => {
          calls.create++;
          value ??= data[0]!.value;
          return { count: 1 };
        },
        findUniqueOrThrow: async () => ({ value: value! }),
      },
    };
    return { prisma: prisma as unknown as PrismaClient, calls };
  }

  it('uses the configured secrets at once, reading nothing', () => {
    const table = secretTable();
    const source = cursorSealSource([KEY], table.prisma);
    const configured = source() as ReturnType<typeof createCursorSeal>;
    expect(configured.sign(rawOf('a'))).toBe(seal.sign(rawOf('a')));
    expect(table.calls).toEqual({ find: 0, create: 0 });
  });

  it('without configured secrets, makes and keeps one secret on first need, read once for every caller', async () => {
    const table = secretTable();
    const source = cursorSealSource(undefined, table.prisma);
    expect(table.calls.find).toBe(0);
    const [a, b] = await Promise.all([source(), source()]);
    expect(a).toBe(b);
    expect(source()).toBe(a);
    expect(table.calls).toEqual({ find: 1, create: 1 });
    expect(a.open(a.sign(rawOf('x')))).toBe(rawOf('x'));
  });

  it('tries the read again on the next need after a failed one', async () => {
    const table = secretTable(1);
    const source = cursorSealSource([], table.prisma);
    await expect(source()).rejects.toThrow('database away');
    const sealed = await source();
    expect(sealed.open(sealed.sign(rawOf('x')))).toBe(rawOf('x'));
    expect(table.calls.find).toBe(2);
  });
});

describe('list arguments', () => {
  const issued = seal.sign(rawOf('p1'));

  it('passes a signed cursor on to plugin-prisma as the raw one inside', () => {
    expect(readListArguments({ first: 5, after: issued }, seal)).toEqual({ args: { first: 5, after: rawOf('p1') } });
    expect(readListArguments({ last: 5, before: issued }, seal)).toEqual({ args: { last: 5, before: rawOf('p1') } });
  });

  it('treats null as not given', () => {
    expect(readListArguments({ first: null, last: 3, after: null, before: undefined }, seal)).toEqual({ args: { first: null, last: 3, after: null, before: undefined } });
  });

  it.each([
    [0, 'must be an integer between 1 and 100'],
    [101, 'must be an integer between 1 and 100'],
    [-1, 'must be an integer between 1 and 100'],
  ])('refuses a size of %i rather than clamping it', (size, message) => {
    for (const name of ['limit', 'first', 'last']) expect(readListArguments({ [name]: size }, seal)).toEqual({ problems: { [name]: message } });
  });

  it('accepts the bounds of a page, 1 and 100', () => {
    expect(readListArguments({ first: 1 }, seal).problems).toBeUndefined();
    expect(readListArguments({ limit: 100 }, seal).problems).toBeUndefined();
  });

  it.each([
    ['first', 'last'],
    ['after', 'before'],
    ['first', 'before'],
    ['last', 'after'],
  ])('refuses %s together with %s, naming both', (a, b) => {
    const args = { first: 2, last: 2, after: issued, before: issued };
    const { problems } = readListArguments({ [a]: args[a as keyof typeof args], [b]: args[b as keyof typeof args] }, seal);
    expect(problems).toEqual({ [a]: `cannot be combined with ${b}`, [b]: `cannot be combined with ${a}` });
  });

  it('refuses plugin-prisma’s own unsigned cursor, and any cursor when the request has no seal', () => {
    expect(readListArguments({ after: rawOf('p1') }, seal).problems?.after).toMatch(/is not a cursor this API returned/);
    expect(readListArguments({ after: issued }, undefined).problems?.after).toMatch(/is not a cursor this API returned/);
  });

  it('refuses a signed cursor of any other form than a string id plugin-prisma pages by', () => {
    const signedOther = (raw: string) => readListArguments({ after: seal.sign(Buffer.from(raw).toString('base64')) }, seal).problems?.after;
    expect(signedOther('GPC:N:42')).toMatch(/is not a cursor/);
    expect(signedOther('GPC:S:not an id!')).toMatch(/is not a cursor/);
    expect(signedOther('GPC:S:')).toMatch(/is not a cursor/);
    expect(signedOther('GPC:S:ok_id-1')).toBeUndefined();
  });

  it('refuses a cursor that is not text', () => {
    expect(readListArguments({ after: 42 }, seal).problems?.after).toMatch(/is not a cursor/);
  });

  it('names every bad argument at once', () => {
    expect(Object.keys(readListArguments({ first: 0, last: 500, after: 'nope' }, seal).problems ?? {}).sort()).toEqual(['after', 'first', 'last']);
  });

  it('throws "Invalid cursor" when a cursor is bad, the generic message when only sizes are', () => {
    const thrown = (args: Record<string, unknown>) => {
      try {
        checkListArguments(args, seal);
      } catch (error) {
        return error as AppError;
      }
      throw new Error('accepted');
    };
    expect(thrown({ first: 1, after: 'nope' }).message).toBe('Invalid cursor');
    expect(thrown({ first: 1, after: 'nope' }).code).toBe('VALIDATION_ERROR');
    expect(thrown({ first: 0 }).message).toBe('Invalid request parameters');
    expect(checkListArguments({ first: 3, after: issued }, seal)).toEqual({ first: 3, after: rawOf('p1') });
  });
});

/** Two secrets as CURSOR_SECRETS takes them (32–1024 characters each). */
const SECRET_A = 'a-cursor-secret-of-32-characters-at-least-A';
const SECRET_B = 'a-cursor-secret-of-32-characters-at-least-B';
/** The shape of a signed cursor: the raw cursor's bytes and a 128-bit tag, both base64url. */
const SEALED = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/;

describe('the seal, and CURSOR_SECRETS', () => {
  const raw = rawOf('ckproduct0000000000000001');

  it('signs a raw cursor into a short URL-safe one, and opens it back', () => {
    const seal = createCursorSeal([SECRET_A]);
    const sealed = seal.sign(raw);
    expect(sealed).toMatch(SEALED);
    expect(sealed.length).toBeLessThanOrEqual(raw.length + 23);
    expect(seal.open(sealed)).toBe(raw);
    // The same cursor always signs the same: every instance with the secret hands out the same cursors.
    expect(seal.sign(raw)).toBe(sealed);
  });

  it('opens only what one of its secrets signed: the first signs, all verify', () => {
    const a = createCursorSeal([SECRET_A]);
    const rotated = createCursorSeal([SECRET_B, SECRET_A]);
    expect(rotated.open(a.sign(raw))).toBe(raw);
    const signedByRotated = rotated.sign(raw);
    expect(createCursorSeal([SECRET_B]).open(signedByRotated)).toBe(raw);
    expect(a.open(signedByRotated)).toBeUndefined();
  });

  it('refuses a cursor spelt another way than it was signed', () => {
    const seal = createCursorSeal([SECRET_A]);
    const sealed = seal.sign(raw);
    const [body, tag] = sealed.split('.') as [string, string];
    // The last character of base64url carries bits no byte uses: changing them decodes to the same bytes.
    const lastOf = (text: string) => text.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sameBytes = (text: string) =>
      [...alphabet].map((ch) => text.slice(0, -1) + ch).find((v) => v !== text && Buffer.from(v, 'base64url').equals(Buffer.from(text, 'base64url')));
    const tagTwin = sameBytes(tag);
    expect(tagTwin, `a tag ending in ${lastOf(tag)} has a twin`).toBeDefined();
    expect(seal.open(`${body}.${tagTwin}`)).toBeUndefined();
    const bodyTwin = sameBytes(body);
    if (bodyTwin) expect(seal.open(`${bodyTwin}.${tag}`)).toBeUndefined();
  });

  it('CURSOR_SECRETS: comma-separated, each of 32–1024 characters, never echoed when refused', () => {
    expect(loadConfig({ CURSOR_SECRETS: `${SECRET_B}, ${SECRET_A}` }).CURSOR_SECRETS).toEqual([SECRET_B, SECRET_A]);
    expect(loadConfig({}).CURSOR_SECRETS).toBeUndefined();
    expect(loadConfig({ CURSOR_SECRETS: '' }).CURSOR_SECRETS).toBeUndefined();
    for (const bad of ['too-short-a-secret', `${SECRET_A},`, `${SECRET_A},,${SECRET_B}`, 'x'.repeat(1025), Array(9).fill(SECRET_A).join(',')]) {
      let refusal: unknown;
      try {
        loadConfig({ CURSOR_SECRETS: bad });
      } catch (error) {
        refusal = error;
      }
      expect(refusal, bad).toBeInstanceOf(ConfigError);
      expect((refusal as Error).message).toBe('Invalid configuration: CURSOR_SECRETS: must be 1–8 comma-separated secrets of 32–1024 characters each');
    }
  });
});
