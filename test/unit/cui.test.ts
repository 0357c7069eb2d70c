import { describe, expect, it } from 'vitest';
import { cuiCheckDigit, isValidCui, normalizeCui, withCuiCheckDigit } from '../../src/rules/cui.js';

describe('cuiCheckDigit', () => {
  it('computes the check digit of well-known CUIs', () => {
    // 14399840 (Dante International), 18547290, 2816464 (Dedeman), 1590082 (OMV Petrom).
    expect(cuiCheckDigit('1439984')).toBe(0);
    expect(cuiCheckDigit('1854729')).toBe(0);
    expect(cuiCheckDigit('281646')).toBe(4);
    expect(cuiCheckDigit('159008')).toBe(2);
  });

  it('maps a remainder of 10 to 0', () => {
    // 1854729: weighted sum 111, 1110 mod 11 = 10.
    expect(cuiCheckDigit('1854729')).toBe(0);
  });

  it('aligns the key to the right, so leading zeros do not change the digit', () => {
    expect(cuiCheckDigit('001439984')).toBe(cuiCheckDigit('1439984'));
    expect(cuiCheckDigit('1')).toBe(cuiCheckDigit('000000001'));
  });

  it('rejects bodies that are not 1 to 9 digits', () => {
    for (const body of ['', '1234567890', '12a4', ' 123', '-1']) {
      expect(() => cuiCheckDigit(body)).toThrow(RangeError);
    }
  });

  it('agrees with an independent computation on many bodies', () => {
    const key = '753217532';
    for (let n = 1; n < 2_000_000; n += 7919) {
      const padded = String(n).padStart(9, '0');
      let sum = 0;
      for (let i = 0; i < 9; i++) sum += Number(padded[i]) * Number(key[i]);
      expect(cuiCheckDigit(String(n))).toBe(((sum * 10) % 11) % 10);
    }
  });
});

describe('isValidCui', () => {
  it('accepts real CUIs', () => {
    for (const cui of ['14399840', '18547290', '2816464', '1590082']) expect(isValidCui(cui)).toBe(true);
  });

  it('accepts the RO prefix and spaces', () => {
    expect(isValidCui('RO14399840')).toBe(true);
    expect(isValidCui('ro 2816464')).toBe(true);
    expect(isValidCui(' RO 1590082 ')).toBe(true);
  });

  it('rejects a wrong check digit', () => {
    for (const cui of ['14399841', '18547299', '2816465', '1590081']) expect(isValidCui(cui)).toBe(false);
  });

  it('rejects malformed input', () => {
    for (const cui of ['', '1', '01439984', '12345678901', 'RO', 'ROX1439984', '1439-9840', 'abc']) {
      expect(isValidCui(cui)).toBe(false);
    }
  });

  it('accepts every CUI built with withCuiCheckDigit and rejects its other last digits', () => {
    for (const body of ['1', '42', '3571113', '987654321']) {
      const cui = withCuiCheckDigit(body);
      expect(isValidCui(cui)).toBe(true);
      for (let d = 0; d <= 9; d++) {
        if (String(d) !== cui.slice(-1)) expect(isValidCui(body + String(d))).toBe(false);
      }
    }
  });
});

describe('normalizeCui', () => {
  it('returns the bare digits', () => {
    expect(normalizeCui('RO 14399840')).toBe('14399840');
    expect(normalizeCui('RO0123')).toBeNull();
  });
});
