// Rules for what people type about an account, shared by the keys CLI (api-keys.ts) and the
// dashboard (credentials.ts), so an address one accepts the other accepts too.

export const EMAIL_MAX = 254;
// Plausible, not RFC 5322: one @, no spaces, a dot in the domain. Enough to catch a swapped
// argument or a typo; whether the mailbox exists is not this service's business.
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
// eslint-disable-next-line no-control-regex
export const CONTROL_CHARS = /[\u0000-\u001f\u007f]/;

/**
 * The stored form of an e-mail address, or null when `raw` is not plausibly one. Addresses are
 * compared lower-cased, so `Buyer@Example.com` and `buyer@example.com` are one account rather
 * than two that each own half of someone's keys and orders.
 */
export function normaliseEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  return email.length > 0 && email.length <= EMAIL_MAX && EMAIL_PATTERN.test(email) ? email : null;
}
