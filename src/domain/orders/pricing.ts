import { allocate, money, round2, sum, ZERO, type Money, type MoneyLike } from '../../rules/money.js';

// The money rule of an order, in one pure function (docs/api.md, "Order totals"). Every amount is an
// exact decimal rounded to the cent, a tie away from zero.

export interface PricingLine {
  /** Unit price, snapshotted from the catalogue. */
  price: MoneyLike;
  quantity: number;
  /** The product's VAT rate as a fraction (0.21). */
  vatRate: MoneyLike;
}

export interface PricingCoupon {
  type: 'PERCENTAGE' | 'FIXED';
  /** Percent (0–100) for PERCENTAGE, RON for FIXED. */
  value: MoneyLike;
}

export interface ShippingRule {
  /** Flat fee per order. */
  fee: MoneyLike;
  /** Shipping is free when the subtotal after discount reaches this; null: never free. */
  freeThreshold: MoneyLike | null;
}

export interface PricedLine {
  price: Money;
  quantity: number;
  /** price × quantity */
  total: Money;
  /** This line's share of the order's discount. */
  discount: Money;
  vatRate: Money;
  /** round((total − discount) × vatRate, 2) */
  tax: Money;
}

export interface PricedOrder {
  lines: PricedLine[];
  subtotal: Money;
  discount: Money;
  shippingCost: Money;
  tax: Money;
  total: Money;
}

export function couponDiscount(coupon: PricingCoupon | null, subtotal: Money): Money {
  if (!coupon) return ZERO;
  const raw = coupon.type === 'PERCENTAGE' ? round2(subtotal.times(coupon.value).dividedBy(100)) : round2(coupon.value);
  // A discount never makes the goods cost less than nothing.
  return raw.lessThan(subtotal) ? raw : subtotal;
}

export function shippingCost(rule: ShippingRule, subtotalAfterDiscount: Money): Money {
  if (rule.freeThreshold !== null && subtotalAfterDiscount.greaterThanOrEqualTo(rule.freeThreshold)) return ZERO;
  return round2(rule.fee);
}

export function priceOrder(lines: readonly PricingLine[], coupon: PricingCoupon | null, shipping: ShippingRule): PricedOrder {
  const totals = lines.map((l) => round2(money(l.price).times(l.quantity)));
  const subtotal = sum(totals);
  const discount = couponDiscount(coupon, subtotal);
  // VAT is due on what the buyer pays for each line, so the discount is spread over the lines
  // in proportion to their totals before each line's VAT is rounded.
  const shares = allocate(discount, totals);
  const priced = lines.map((l, i): PricedLine => {
    const total = totals[i]!;
    const share = shares[i]!;
    const vatRate = money(l.vatRate);
    return { price: round2(l.price), quantity: l.quantity, total, discount: share, vatRate, tax: round2(total.minus(share).times(vatRate)) };
  });
  const tax = sum(priced.map((l) => l.tax));
  const shippingFee = shippingCost(shipping, subtotal.minus(discount));
  return { lines: priced, subtotal, discount, shippingCost: shippingFee, tax, total: subtotal.minus(discount).plus(shippingFee).plus(tax) };
}
