import { describe, expect, it } from 'vitest';
import { priceUpdateInput } from '../../src/domain/inventory/inventory.service.js';
import { couponDiscount, priceOrder, shippingCost, type PricingLine } from '../../src/domain/orders/pricing.js';
import { money, round2, sum } from '../../src/rules/money.js';
import { AppError } from '../../src/shared/errors.js';
import { parseInput } from '../../src/shared/validation.js';
import { VAT_RATES } from '../../src/rules/vat.js';
import { WORKED_EXAMPLE_TOTALS } from '../helpers/orders.js';

// An order's money (src/domain/orders/pricing.ts, docs/api.md "Order totals") and the VAT rates a
// product may carry (src/rules/vat.ts): the totals always agree with their parts, to the cent.

const SHIPPING = { fee: '19.90', freeThreshold: '300.00' };
const fixed = (amount: { toFixed(n: number): string }) => amount.toFixed(2);

describe('VAT rates', () => {
  it('are Romania’s since August 2025: 21 % standard, 11 % reduced, and exempt', () => {
    expect(VAT_RATES).toEqual({ STANDARD: '0.21', REDUCED: '0.11', EXEMPT: '0.00' });
  });

  /** What a supplier's price update makes of `raw`, or the details of its refusal. */
  function priceUpdate(raw: Record<string, unknown>): unknown {
    try {
      const parsed = parseInput(priceUpdateInput, raw, 'is not a recognised field', true);
      return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, v === null ? null : String(v)]));
    } catch (error) {
      if (error instanceof AppError) return error.details;
      throw error;
    }
  }

  it('may be set by a price update however the number is written, compared exactly', () => {
    for (const written of [0.21, '0.21', '0.210', 0.11, '0', 0]) expect(priceUpdate({ vatRate: written }), String(written)).toHaveProperty('vatRate');
  });

  it('are the only rates a price update takes', () => {
    for (const other of [0.19, '21', '0.2100001', -0.21, 'standard']) {
      expect(priceUpdate({ vatRate: other }), String(other)).toEqual({ vatRate: 'must be one of the VAT rates 0.21, 0.11, 0' });
    }
  });

  it('come with a price update’s other rules: a positive price, a reference price above it, something to change', () => {
    // One rule in one sentence, whichever bound is crossed.
    const rule = 'must be a decimal number greater than 0 and at most 9999999999.99, with at most 2 decimals';
    for (const price of ['0', 0, -1, '-0.01', '10.001', '10000000000']) expect(priceUpdate({ price }), String(price)).toEqual({ price: rule });
    expect(priceUpdate({ compareAtPrice: 0 })).toEqual({ compareAtPrice: rule });
    expect(priceUpdate({ price: '10.00', compareAtPrice: '10.00' })).toEqual({ compareAtPrice: 'must be greater than price, or null' });
    expect(priceUpdate({ price: '10.00', compareAtPrice: null })).toEqual({ price: '10', compareAtPrice: null });
    expect(priceUpdate({})).toEqual({ input: 'must set at least one of price, compareAtPrice, vatRate' });
  });
});

describe('a coupon', () => {
  it('takes a percentage of the subtotal, rounded to the cent', () => {
    expect(fixed(couponDiscount({ type: 'PERCENTAGE', value: '15' }, money('33.33')))).toBe('5.00');
    expect(fixed(couponDiscount({ type: 'PERCENTAGE', value: '12.5' }, money('0.04')))).toBe('0.01');
  });

  it('never takes more than the goods cost', () => {
    expect(fixed(couponDiscount({ type: 'FIXED', value: '50' }, money('20.00')))).toBe('20.00');
    expect(fixed(couponDiscount({ type: 'PERCENTAGE', value: '150' }, money('20.00')))).toBe('20.00');
  });

  it('is nothing when there is none', () => {
    expect(fixed(couponDiscount(null, money('20.00')))).toBe('0.00');
  });
});

describe('shipping', () => {
  it('is free from the threshold on, the threshold itself included', () => {
    expect(fixed(shippingCost(SHIPPING, money('300.00')))).toBe('0.00');
    expect(fixed(shippingCost(SHIPPING, money('299.99')))).toBe('19.90');
  });

  it('is never free without a threshold', () => {
    expect(fixed(shippingCost({ fee: '19.90', freeThreshold: null }, money('1000000')))).toBe('19.90');
  });

  it('is judged on the subtotal after the discount', () => {
    const lines = [{ price: '100.00', quantity: 3, vatRate: '0.21' }];
    expect(fixed(priceOrder(lines, null, SHIPPING).shippingCost)).toBe('0.00');
    expect(fixed(priceOrder(lines, { type: 'FIXED', value: '0.01' }, SHIPPING).shippingCost)).toBe('19.90');
  });
});

describe('an order’s totals', () => {
  /** Seeded lines of the kinds the catalogue has, so that a failing case can be replayed. */
  function* orders(seed: number, count: number): Generator<PricingLine[]> {
    let state = seed;
    const next = () => (state = (state * 48_271) % 2_147_483_647) / 2_147_483_647;
    const rates = Object.values(VAT_RATES);
    for (let i = 0; i < count; i++) {
      yield Array.from({ length: 1 + Math.floor(next() * 5) }, () => ({
        price: (1 + Math.floor(next() * 99_999) / 100).toFixed(2),
        quantity: 1 + Math.floor(next() * 20),
        vatRate: rates[Math.floor(next() * rates.length)]!,
      }));
    }
  }
  const coupons = [null, { type: 'PERCENTAGE' as const, value: '7' }, { type: 'PERCENTAGE' as const, value: '33.3' }, { type: 'FIXED' as const, value: '25' }];

  it('always add up: total = subtotal − discount + shipping + VAT, and each total is the sum of its lines', () => {
    let n = 0;
    for (const lines of orders(42, 200)) {
      const priced = priceOrder(lines, coupons[n++ % coupons.length]!, SHIPPING);
      expect(fixed(priced.total)).toBe(fixed(priced.subtotal.minus(priced.discount).plus(priced.shippingCost).plus(priced.tax)));
      expect(fixed(priced.subtotal)).toBe(fixed(sum(priced.lines.map((l) => l.total))));
      expect(fixed(priced.discount)).toBe(fixed(sum(priced.lines.map((l) => l.discount))));
      expect(fixed(priced.tax)).toBe(fixed(sum(priced.lines.map((l) => l.tax))));
    }
  });

  it('charge each line’s VAT on what the buyer pays for it, rounded per line', () => {
    for (const lines of orders(7, 100)) {
      const priced = priceOrder(lines, { type: 'PERCENTAGE', value: '10' }, SHIPPING);
      for (const line of priced.lines) {
        expect(fixed(line.total)).toBe(fixed(line.price.times(line.quantity)));
        expect(fixed(line.tax)).toBe(fixed(round2(line.total.minus(line.discount).times(line.vatRate))));
        expect(line.discount.greaterThan(line.total)).toBe(false);
      }
    }
  });

  it('charge no VAT on an exempt line, nor on a line the discount pays for entirely', () => {
    const exempt = priceOrder([{ price: '80.00', quantity: 1, vatRate: VAT_RATES.EXEMPT }], null, SHIPPING);
    expect(fixed(exempt.tax)).toBe('0.00');
    const free = priceOrder([{ price: '80.00', quantity: 1, vatRate: VAT_RATES.STANDARD }], { type: 'PERCENTAGE', value: '100' }, SHIPPING);
    expect([fixed(free.discount), fixed(free.tax), fixed(free.total)]).toEqual(['80.00', '0.00', '19.90']);
  });

  it('charge no VAT on shipping (docs/api.md, Order totals)', () => {
    const priced = priceOrder([{ price: '10.00', quantity: 1, vatRate: VAT_RATES.STANDARD }], null, SHIPPING);
    expect([fixed(priced.tax), fixed(priced.shippingCost), fixed(priced.total)]).toEqual(['2.10', '19.90', '32.00']);
  });

  it('prices the worked example of docs/api.md', () => {
    const priced = priceOrder(
      [
        { price: '19.99', quantity: 3, vatRate: '0.21' },
        { price: '7.45', quantity: 5, vatRate: '0.11' },
        { price: '12.50', quantity: 1, vatRate: '0' },
      ],
      { type: 'PERCENTAGE', value: '10' },
      { fee: '24.90', freeThreshold: '500' },
    );
    expect(priced.lines.map((l) => [l.total.toFixed(2), l.discount.toFixed(2), l.tax.toFixed(2)])).toEqual([
      ['59.97', '6.00', '11.33'],
      ['37.25', '3.73', '3.69'],
      ['12.50', '1.24', '0.00'],
    ]);
    expect({
      subtotal: priced.subtotal.toNumber(),
      discount: priced.discount.toNumber(),
      shippingCost: priced.shippingCost.toNumber(),
      tax: priced.tax.toNumber(),
      total: priced.total.toNumber(),
    }).toEqual(WORKED_EXAMPLE_TOTALS);
  });

  it('caps a fixed discount at the subtotal and waives shipping from the threshold after discount', () => {
    const lines = [{ price: '250.00', quantity: 2, vatRate: '0.21' }];
    const shipping = { fee: '24.90', freeThreshold: '500.00' };
    expect(priceOrder(lines, null, shipping).shippingCost.toFixed(2)).toBe('0.00');
    const fixed = priceOrder(lines, { type: 'FIXED', value: '0.01' }, shipping);
    expect(fixed.shippingCost.toFixed(2)).toBe('24.90');
    expect(fixed.tax.toFixed(2)).toBe('105.00'); // (500 − 0.01) × 0.21 = 104.9979
    const all = priceOrder(lines, { type: 'FIXED', value: '9000' }, shipping);
    expect([all.discount.toFixed(2), all.tax.toFixed(2), all.total.toFixed(2)]).toEqual(['500.00', '0.00', '24.90']);
  });
});
