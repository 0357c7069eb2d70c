import { Prisma } from '../generated/prisma/client.js';

// Money is exact decimal arithmetic, never binary floats: Prisma's own Decimal (decimal.js), so
// values read from NUMERIC columns need no conversion. The clone gets enough precision that a
// product of the largest operands (a 12-digit price × a 7-digit quantity × a VAT rate) is never
// rounded before we round it on purpose, and half-up rounding, which decimal.js defines as
// "away from zero" on a tie.
export const Money = Prisma.Decimal.clone({ precision: 50, rounding: Prisma.Decimal.ROUND_HALF_UP });
export type Money = InstanceType<typeof Money>;

export type MoneyLike = Money | Prisma.Decimal | string | number;

export const money = (value: MoneyLike): Money => new Money(value);

export const ZERO = money(0);

/**
 * A decimal written as text: digits with an optional point and exponent (`90.99`, `.5`, `1e3`),
 * as JSON and GraphQL write numbers. Bounded in length, so no client text costs much to read.
 */
const DECIMAL_TEXT = /^[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d{1,10})?$/i;

/**
 * The exact decimal a client sent, or undefined when it is no number: decimal text read digit
 * for digit (never through a binary float), a JS number as the shortest decimal that reads back
 * as it (what a JSON client wrote, for up to 15 significant digits), or a decimal already parsed.
 */
export function exactDecimal(value: unknown): Money | undefined {
  if (Money.isDecimal(value)) return value.isFinite() ? money(value) : undefined;
  if (typeof value === 'number') return Number.isFinite(value) ? money(value) : undefined;
  if (typeof value === 'string' && value.length <= 100 && DECIMAL_TEXT.test(value.trim())) return money(value.trim());
  return undefined;
}

/** The largest value a NUMERIC(12, 2) column holds. */
export const MONEY_MAX = money('9999999999.99');

/** Rounded to the cent, a tie away from zero (2.345 → 2.35, −2.345 → −2.35). */
export const round2 = (value: MoneyLike): Money => money(value).toDecimalPlaces(2, Money.ROUND_HALF_UP);

export const sum = (values: readonly MoneyLike[]): Money => values.reduce<Money>((acc, v) => acc.plus(v), ZERO);

/**
 * Splits `amount` (≥ 0, whole cents) over lines in proportion to `weights` (≥ 0) so that the
 * shares are whole cents and add up to `amount` exactly: each share is first rounded down to the
 * cent, then the cents left over go one each to the largest weights (the earlier line on a tie).
 * Fewer cents are left over than there are lines, so no line gets more than one extra cent.
 */
export function allocate(amount: MoneyLike, weights: readonly MoneyLike[]): Money[] {
  const total = sum(weights);
  const cents = money(amount).times(100);
  if (weights.length === 0) return [];
  if (total.isZero()) return weights.map(() => ZERO);
  const shares = weights.map((w) => cents.times(w).dividedBy(total).toDecimalPlaces(0, Money.ROUND_DOWN));
  let left = cents.minus(sum(shares)).toNumber();
  const byWeight = weights
    .map((w, index) => ({ w: money(w), index }))
    .sort((a, b) => b.w.comparedTo(a.w) || a.index - b.index);
  for (const { index } of byWeight) {
    if (left <= 0) break;
    shares[index] = shares[index]!.plus(1);
    left -= 1;
  }
  return shares.map((c) => c.dividedBy(100));
}

/** The exact string Prisma writes into a NUMERIC(12, 2) column. */
export const toColumn = (value: MoneyLike): string => round2(value).toFixed(2);
