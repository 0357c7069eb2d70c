// Romanian company tax identifier (CUI / cod de identificare fiscală). The last digit is a check
// digit over the others; catching a mistyped CUI early is cheaper than a rejected invoice.

/** ANAF's control key, applied right-aligned to the digits that precede the check digit. */
const CONTROL_KEY = [7, 5, 3, 2, 1, 7, 5, 3, 2] as const;

/** A CUI has 2 to 10 digits in all, so its body (without the check digit) has 1 to 9. */
const BODY = /^\d{1,9}$/;

/**
 * Check digit for a CUI body (every digit but the last): weighted sum with 753217532
 * right-aligned, times 10, modulo 11; a result of 10 becomes 0.
 */
export function cuiCheckDigit(body: string): number {
  if (!BODY.test(body)) throw new RangeError(`A CUI body has 1 to 9 digits, got ${JSON.stringify(body)}`);
  const padded = body.padStart(CONTROL_KEY.length, '0');
  let sum = 0;
  for (let i = 0; i < CONTROL_KEY.length; i++) sum += Number(padded[i]) * CONTROL_KEY[i]!;
  const rest = (sum * 10) % 11;
  return rest === 10 ? 0 : rest;
}

/** The full CUI for a body: the body followed by its check digit. */
export function withCuiCheckDigit(body: string): string {
  return body + String(cuiCheckDigit(body));
}

/**
 * The digits of a CUI as written on invoices, or null when it is not well formed. Accepts the
 * "RO" prefix that VAT payers print in front of it, and surrounding or inner spaces.
 */
export function normalizeCui(input: string): string | null {
  const match = /^(?:RO)?(\d{2,10})$/i.exec(input.replace(/\s+/g, ''));
  const digits = match?.[1];
  if (digits === undefined || digits.startsWith('0')) return null;
  return digits;
}

/** True when the CUI is well formed and its last digit is the right check digit. */
export function isValidCui(input: string): boolean {
  const digits = normalizeCui(input);
  if (digits === null) return false;
  return cuiCheckDigit(digits.slice(0, -1)) === Number(digits.slice(-1));
}
