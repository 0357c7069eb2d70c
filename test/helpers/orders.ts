import type pg from 'pg';

// Known rows for order tests, made on the test's own copy of the seeded database: one supplier
// whose products, shipping rule and coupons have the values the worked example of docs/api.md uses.

export interface FixtureProduct {
  id: string;
  sku: string;
  slug: string;
}

export interface OrderFixture {
  supplierId: string;
  /** 19.99 RON, VAT 0.21, stock 1000, tracked */
  a: FixtureProduct;
  /** 7.45 RON, VAT 0.11, stock 1000, tracked */
  b: FixtureProduct;
  /** 12.50 RON, VAT 0, stock 2 but not tracked */
  c: FixtureProduct;
  /** 100.00 RON, VAT 0.21, stock 50, minOrder 10 */
  d: FixtureProduct;
  /** Tracked, 0.10 RON, VAT 0.21, stock 10: for concurrency */
  e: FixtureProduct;
  /** Inactive product of the same supplier */
  inactive: FixtureProduct;
  /** Active product of another active supplier */
  foreign: FixtureProduct;
  otherSupplierId: string;
  inactiveSupplierId: string;
}

/** Shipping: 24.90 RON per order, free from 500.00 RON after discount. */
export const SHIPPING_FEE = 24.9;
export const FREE_SHIPPING_FROM = 500;

export async function makeOrderFixture(sql: pg.Pool): Promise<OrderFixture> {
  const { rows: suppliers } = await sql.query<{ id: string }>(`
    SELECT s.id FROM "Supplier" s
    WHERE s."isActive" AND (SELECT count(*) FROM "Product" p WHERE p."supplierId" = s.id AND p."isActive") >= 6
      AND EXISTS (SELECT 1 FROM "Product" p WHERE p."supplierId" = s.id AND NOT p."isActive")
    ORDER BY s.id LIMIT 2`);
  const [supplier, other] = suppliers;
  if (!supplier || !other) throw new Error('seed has no supplier fit for the order fixture');
  const { rows: inactiveSuppliers } = await sql.query<{ id: string }>(`SELECT id FROM "Supplier" WHERE NOT "isActive" ORDER BY id LIMIT 1`);
  const { rows: products } = await sql.query<FixtureProduct>(
    `SELECT id, sku, slug FROM "Product" WHERE "supplierId" = $1 AND "isActive" ORDER BY id LIMIT 5`,
    [supplier.id],
  );
  const { rows: inactive } = await sql.query<FixtureProduct>(
    `SELECT id, sku, slug FROM "Product" WHERE "supplierId" = $1 AND NOT "isActive" ORDER BY id LIMIT 1`,
    [supplier.id],
  );
  const { rows: foreign } = await sql.query<FixtureProduct>(
    `SELECT id, sku, slug FROM "Product" WHERE "supplierId" = $1 AND "isActive" ORDER BY id LIMIT 1`,
    [other.id],
  );
  const [a, b, c, d, e] = products;
  if (!a || !b || !c || !d || !e || !inactive[0] || !foreign[0] || !inactiveSuppliers[0]) throw new Error('seed lacks fixture products');

  await sql.query(`UPDATE "Supplier" SET "shippingFee" = $2, "freeShippingThreshold" = $3 WHERE id = $1`, [
    supplier.id,
    SHIPPING_FEE,
    FREE_SHIPPING_FROM,
  ]);
  const set = (p: FixtureProduct, price: string, vatRate: string, stock: number, minOrder: number, trackInventory: boolean) =>
    sql.query(
      `UPDATE "Product" SET price = $2, "vatRate" = $3, stock = $4, "minOrder" = $5, "trackInventory" = $6 WHERE id = $1`,
      [p.id, price, vatRate, stock, minOrder, trackInventory],
    );
  await set(a, '19.99', '0.21', 1000, 1, true);
  await set(b, '7.45', '0.11', 1000, 1, true);
  await set(c, '12.50', '0.00', 2, 1, false);
  await set(d, '100.00', '0.21', 50, 10, true);
  await set(e, '0.10', '0.21', 10, 1, true);
  await sql.query(`UPDATE "Product" SET "minOrder" = 1, stock = 1000 WHERE id = $1`, [foreign[0].id]);

  const coupon = (code: string, type: 'PERCENTAGE' | 'FIXED', value: string, opts: { supplierId?: string | null; minSubtotal?: string; from?: string; until?: string | null; active?: boolean } = {}) =>
    sql.query(
      `INSERT INTO "Coupon" (id, code, type, value, "supplierId", "minSubtotal", "validFrom", "validUntil", "isActive")
       VALUES ($1, $1, $2, $3, $4, $5, now() + $6::interval, now() + $7::interval, $8)`,
      [code, type, value, opts.supplierId === undefined ? supplier.id : opts.supplierId, opts.minSubtotal ?? '0', opts.from ?? '-1 day', opts.until === undefined ? null : opts.until, opts.active ?? true],
    );
  await coupon('TEST10', 'PERCENTAGE', '10');
  await coupon('FIX30', 'FIXED', '30', { supplierId: null });
  await coupon('FIX5000', 'FIXED', '5000');
  await coupon('OTHER5', 'PERCENTAGE', '5', { supplierId: other.id });
  await coupon('MIN1000', 'PERCENTAGE', '5', { minSubtotal: '1000' });
  await coupon('LATER', 'PERCENTAGE', '5', { from: '1 day' });
  await coupon('PAST', 'PERCENTAGE', '5', { from: '-10 days', until: '-1 day' });
  await coupon('OFF', 'PERCENTAGE', '5', { active: false });

  return {
    supplierId: supplier.id,
    a,
    b,
    c,
    d,
    e,
    inactive: inactive[0],
    foreign: foreign[0],
    otherSupplierId: other.id,
    inactiveSupplierId: inactiveSuppliers[0].id,
  };
}

/** The worked example of docs/api.md (Order totals): 3 × A, 5 × B, 1 × C with coupon TEST10. */
export const workedExample = (f: OrderFixture) => ({
  supplierId: f.supplierId,
  items: [
    { productId: f.a.id, quantity: 3 },
    { productId: f.b.id, quantity: 5 },
    { productId: f.c.id, quantity: 1 },
  ],
  couponCode: 'TEST10',
});

export const WORKED_EXAMPLE_TOTALS = { subtotal: 109.72, discount: 10.97, shippingCost: 24.9, tax: 15.02, total: 138.67 };
