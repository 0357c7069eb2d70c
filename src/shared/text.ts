import { z } from 'zod';

// What people type: the control characters no text may hold, and names and e-mail addresses,
// which other people read (a buyer's name and e-mail are shown to the supplier), so such text
// must look like what it is.

// Control characters, by what a text may hold: every text the service reads is checked against
// one of these three sets. PostgreSQL refuses NUL, and none of them means anything in what
// people type.

/**
 * C0 controls (U+0000–U+001F) and DEL (U+007F): refused in one-line values (a search term, a
 * SKU, a coupon code, an endpoint's description). Its source is also the pattern the OpenAPI
 * document gives a text parameter (src/shared/validation.ts).
 */
export const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;
/** CONTROL_CHARS but tab, line feed and carriage return: for notes, which may span lines. */
export const CONTROL_CHARS_BUT_LINES = new RegExp(String.raw`(?![\t\n\r])${CONTROL_CHARS.source}`);
/**
 * Every control character (Cc): CONTROL_CHARS and the C1 controls (U+0080–U+009F), for names and
 * e-mail addresses, which other people read (a buyer's is shown to the supplier): NEL (U+0085)
 * breaks a line on some screens, CSI (U+009B) starts a terminal's escape sequence in a log. The
 * one-line values above keep admitting C1: refusing it there would refuse requests answered
 * today and change the published pattern.
 */
export const CONTROL_CHARS_WITH_C1 = /\p{Cc}/u;
/** What a value with a control character is told, whichever set it broke. */
export const CONTROL_CHARS_MESSAGE = 'must not contain control characters';
/**
 * Format characters (Cf): zero-width spaces and joiners, bidirectional overrides and isolates
 * (U+202E turns "moc.elpmaxe" into "example.com" on screen), the byte-order mark, soft hyphens.
 * Invisible, they make two different names look the same.
 */
export const FORMAT_CHARS = /\p{Cf}/u;

const FORMAT_MESSAGE = 'must not contain invisible or direction-changing characters (zero-width or bidirectional controls such as U+200B or U+202E)';

/**
 * A name (of a person, a company, a key, an address line): NFC-normalised (so a composed and a
 * decomposed "ă" are one name), trimmed, `min`–`max` characters, without control or format
 * characters. `min` 0 allows empty.
 */
export const nameText = (min: number, max: number) =>
  z
    .string({ error: 'must be text' })
    // overwrite, not transform: the bounds stay part of the schema the OpenAPI document shows.
    .overwrite((v) => v.normalize('NFC'))
    .trim()
    .min(min, min === 1 ? 'is required' : `must be at least ${min} characters`)
    .max(max, `must be at most ${max} characters`)
    .superRefine((v, ctx) => {
      const problem = nameProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    });

/** Why `text` is no acceptable name, or null (the same rules as nameText, for code outside zod). */
export function nameProblem(text: string): string | null {
  if (CONTROL_CHARS_WITH_C1.test(text)) return CONTROL_CHARS_MESSAGE;
  return FORMAT_CHARS.test(text) ? FORMAT_MESSAGE : null;
}

export const EMAIL_MAX = 254;
// Plausible, not RFC 5322: one @, no spaces, a dot in the domain. Enough to catch a swapped
// argument or a typo; whether the mailbox exists is not this service's business.
const EMAIL_PATTERN = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
/** Scripts with letters that look like Latin ones (Cyrillic а, Greek ο): mixed in one local part they spoof another address. */
const LOOKALIKE_SCRIPTS = [
  ['Latin', /\p{Script=Latin}/u],
  ['Cyrillic', /\p{Script=Cyrillic}/u],
  ['Greek', /\p{Script=Greek}/u],
] as const;

/**
 * An e-mail address as stored, or why it is not one. Addresses are compared NFC-normalised and
 * lower-cased, so `Buyer@Example.com` and `buyer@example.com` are one account rather than two that
 * each own half of someone's keys and orders; an address with invisible characters, or whose
 * local part mixes Latin, Cyrillic or Greek letters, is refused as a look-alike of another.
 */
export function checkEmail(raw: string): { email: string } | { problem: string } {
  const email = raw.normalize('NFC').trim().toLowerCase();
  if (CONTROL_CHARS_WITH_C1.test(email) || FORMAT_CHARS.test(email)) return { problem: FORMAT_MESSAGE };
  if (!email.length || email.length > EMAIL_MAX || !EMAIL_PATTERN.test(email)) return { problem: 'must be an e-mail address' };
  const local = email.slice(0, email.lastIndexOf('@'));
  const scripts = LOOKALIKE_SCRIPTS.filter(([, letters]) => letters.test(local)).map(([name]) => name);
  if (scripts.length > 1) return { problem: `mixes ${scripts.join(' and ')} letters before the @, which makes it look like another address: write it in one script` };
  return { email };
}

/** The stored form of an e-mail address, or null when `raw` is not an acceptable one (checkEmail says why). */
export function normaliseEmail(raw: string): string | null {
  const checked = checkEmail(raw);
  return 'email' in checked ? checked.email : null;
}

/** An optional e-mail field (an address book's, an order's): checked and stored as checkEmail does. */
export const emailText = () =>
  z.string({ error: 'must be a string' }).transform((raw, ctx) => {
    const checked = checkEmail(raw);
    if ('problem' in checked) {
      ctx.addIssue({ code: 'custom', message: checked.problem });
      return z.NEVER;
    }
    return checked.email;
  });
