import { describe, expect, it } from 'vitest';
import { checkEmail, emailText, nameProblem, nameText, normaliseEmail } from '../../src/shared/text.js';

// What people type about themselves and others (src/shared/text.ts): names and e-mail addresses
// that look like what they are, with nothing invisible or misleading in them.

const name = nameText(1, 20);
const parsedName = (value: unknown) => {
  const parsed = name.safeParse(value);
  return parsed.success ? parsed.data : parsed.error.issues.map((issue) => issue.message);
};

describe('names', () => {
  it('are trimmed and NFC-normalised, so a composed and a decomposed letter make one name', () => {
    expect(parsedName('  Ioana  ')).toBe('Ioana');
    expect(parsedName('S\u0326tefan')).toBe('\u0218tefan');
    expect(parsedName('Ș\u0074efan')).toBe(parsedName('S\u0326tefan'));
  });

  it('are refused blank, and over their length counted after trimming', () => {
    expect(parsedName('   ')).toEqual(['is required']);
    expect(parsedName(`  ${'x'.repeat(20)}  `)).toBe('x'.repeat(20));
    expect(parsedName('x'.repeat(21))).toEqual(['must be at most 20 characters']);
    expect(nameText(3, 10).safeParse('ab').error?.issues[0]?.message).toBe('must be at least 3 characters');
  });

  it('may be empty where the minimum is 0', () => {
    expect(nameText(0, 10).parse('  ')).toBe('');
  });

  it.each([
    ['NUL', '\u0000'],
    ['a tab', '\t'],
    ['a line break', '\n'],
    ['DEL', '\u007f'],
    ['an escape', '\u001b[31m'],
  ])('refuse %s as a control character', (_what, char) => {
    expect(nameProblem(`Ana${char}Pop`)).toBe('must not contain control characters');
    expect(parsedName(`Ana${char}Pop`)).toEqual(['must not contain control characters']);
  });

  it.each([
    ['a zero-width space', '\u200b'],
    ['a right-to-left override', '\u202e'],
    ['a byte-order mark', '\ufeff'],
    ['a soft hyphen', '\u00ad'],
    ['a zero-width joiner', '\u200d'],
  ])('refuse %s as invisible', (_what, char) => {
    expect(nameProblem(`Ana${char}Pop`)).toMatch(/^must not contain invisible or direction-changing characters/);
  });

  it('take letters, accents and scripts of every kind', () => {
    for (const ok of ['Ștefan Țepeș', 'Ελένη', 'Олег', '王小明', 'O’Brien-Smith', 'Ana 🌻']) expect(nameProblem(ok), ok).toBeNull();
  });

  it('must be text', () => {
    expect(parsedName(42)).toEqual(['must be text']);
  });
});

describe('e-mail addresses', () => {
  it('are stored trimmed and lower-case, so one address is one account', () => {
    expect(normaliseEmail('  Buyer@Example.COM ')).toBe('buyer@example.com');
    expect(normaliseEmail('buyer@example.com')).toBe(normaliseEmail('BUYER@EXAMPLE.COM'));
  });

  it.each(['plainaddress', '@example.com', 'buyer@', 'buyer@example', 'buyer@@example.com', 'buy er@example.com', 'buyer@example..com', 'buyer@.example.com'])(
    'refuse %j as no e-mail address',
    (raw) => {
      expect(checkEmail(raw)).toEqual({ problem: 'must be an e-mail address' });
    },
  );

  it('are at most 254 characters', () => {
    const local = 'a'.repeat(64);
    const address = (length: number) => `${local}@${'b'.repeat(length - local.length - 5)}.com`;
    expect(address(254)).toHaveLength(254);
    expect(checkEmail(address(254))).toEqual({ email: address(254) });
    expect(checkEmail(address(255))).toEqual({ problem: 'must be an e-mail address' });
  });

  it('refuse invisible and control characters, which make one address look like another', () => {
    expect(checkEmail('buyer\u200b@example.com')).toEqual({ problem: expect.stringMatching(/^must not contain invisible/) });
    expect(checkEmail('buyer\u0000@example.com')).toEqual({ problem: expect.stringMatching(/^must not contain invisible/) });
  });

  it('refuse a local part mixing Latin with Cyrillic or Greek look-alikes, naming the scripts', () => {
    expect(checkEmail('p\u0430ypal@example.com')).toEqual({ problem: expect.stringMatching(/^mixes Latin and Cyrillic letters before the @/) });
    expect(checkEmail('j\u03bfhn@example.com')).toEqual({ problem: expect.stringMatching(/^mixes Latin and Greek letters/) });
  });

  it('take an address written in one script, or mixing scripts only in the domain', () => {
    expect(checkEmail('олег@example.com')).toEqual({ email: 'олег@example.com' });
    expect(checkEmail('buyer@пример.рф')).toEqual({ email: 'buyer@пример.рф' });
  });

  it('as an optional form field, are checked and stored the same way', () => {
    expect(emailText().parse(' Office@Example.com ')).toBe('office@example.com');
    expect(emailText().safeParse('nope').error?.issues[0]?.message).toBe('must be an e-mail address');
    expect(emailText().safeParse(7).error?.issues[0]?.message).toBe('must be a string');
  });
});
