// `npx tsx bench/order-write-cost.ts [--orders 400] [--rounds 3]`
//
// What the response cache's triggers cost an order, measured in one run: the writes of one order
// (its row, an item, its first history entry, the product's stock taken) as one transaction, sent
// in a loop to a throwaway embedded PostgreSQL, with the triggers of migration *_cache_dependencies
// (tags per change) and, alternately, with the one-revision triggers they replaced (migration
// *_response_cache_revision), restored for the comparison. Statements per order are the same in
// both (the triggers run inside the commit); what differs is the commit's own work.

import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { migrate } from '../src/db/migrate.js';
import { seedDatabase } from '../src/seed/seed.js';

const { values: args } = parseArgs({ options: { orders: { type: 'string', default: '400' }, rounds: { type: 'string', default: '3' } } });
const ORDERS = Number(args.orders);
const ROUNDS = Number(args.rounds);

const TABLES = ['Category', 'Supplier', 'Product', 'Review', 'Favorite', 'Account', 'SupplierMember', 'Address', 'Order', 'OrderEvent', 'OrderItem', 'Coupon'];

const OLD_TRIGGERS = `
CREATE FUNCTION "bump_data_revision"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('marketplace.data_revision_bumped', true) IS DISTINCT FROM 'yes' THEN
    PERFORM set_config('marketplace.data_revision_bumped', 'yes', true);
    UPDATE "DataRevision" SET "revision" = "revision" + 1 WHERE "id" = 1;
  END IF;
  RETURN NULL;
END
$$;
${TABLES.map((t) => `CREATE CONSTRAINT TRIGGER "${t}_data_revision" AFTER INSERT OR UPDATE OR DELETE ON "${t}" DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "bump_data_revision"();`).join('\n')}
`;

const useOld = `${[...TABLES, 'ApiKey'].map((t) => `ALTER TABLE "${t}" DISABLE TRIGGER "${t}_cache_changed";`).join('\n')}
${TABLES.map((t) => `ALTER TABLE "${t}" ENABLE TRIGGER "${t}_data_revision";`).join('\n')}`;
const useNew = `${[...TABLES, 'ApiKey'].map((t) => `ALTER TABLE "${t}" ENABLE TRIGGER "${t}_cache_changed";`).join('\n')}
${TABLES.map((t) => `ALTER TABLE "${t}" DISABLE TRIGGER "${t}_data_revision";`).join('\n')}`;

async function main() {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mp-order-cost-'));
  const server = await startEmbeddedPostgres({ dataDir, ephemeral: true });
  try {
    const url = server.url('postgres');
    await migrate(url);
    await seedDatabase(url, { seed: 42, products: 2000 });
    const sql = new pg.Client({ connectionString: url });
    await sql.connect();
    await sql.query(OLD_TRIGGERS);
    const { rows: products } = await sql.query<{ id: string; supplierId: string }>(`SELECT id, "supplierId" FROM "Product" WHERE "isActive" ORDER BY id LIMIT 50`);
    const { rows: accounts } = await sql.query<{ id: string }>(`SELECT id FROM "Account" ORDER BY id LIMIT 1`);
    let buyer = accounts[0]?.id;
    if (!buyer) {
      buyer = 'bench-buyer';
      await sql.query(`INSERT INTO "Account" (id, email, "updatedAt") VALUES ($1, 'bench@example.com', now())`, [buyer]);
    }
    await sql.query(`UPDATE "Product" SET stock = 1000000`);

    let n = 0;
    async function orders(count: number): Promise<number[]> {
      const times: number[] = [];
      for (let i = 0; i < count; i++) {
        const product = products[i % products.length]!;
        const id = `bench-order-${n++}`;
        const started = performance.now();
        await sql.query('BEGIN');
        await sql.query(
          `INSERT INTO "Order" (id, "orderNumber", subtotal, total, "buyerId", "supplierId", "updatedAt") VALUES ($1, $1, 10, 10, $2, $3, now())`,
          [id, buyer, product.supplierId],
        );
        await sql.query(`INSERT INTO "OrderItem" (id, "orderId", "productId", quantity, price, total, "vatRate", tax) VALUES ($1, $1, $2, 1, 10, 10, 0.21, 2.1)`, [id, product.id]);
        await sql.query(`INSERT INTO "OrderEvent" (id, "orderId", status, actor, "accountId") VALUES ($1, $1, 'PENDING', 'BUYER', $2)`, [id, buyer]);
        await sql.query(`UPDATE "Product" SET stock = stock - 1, "updatedAt" = now() WHERE id = $1`, [product.id]);
        await sql.query('COMMIT');
        times.push(performance.now() - started);
      }
      return times;
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    const best: Record<'one revision' | 'tags', { median: number; mean: number }> = { 'one revision': { median: Infinity, mean: Infinity }, tags: { median: Infinity, mean: Infinity } };
    await orders(50);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, setup] of [['one revision', useOld], ['tags', useNew]] as const) {
        await sql.query(setup);
        const times = await orders(ORDERS);
        best[name] = { median: Math.min(best[name].median, median(times)), mean: Math.min(best[name].mean, mean(times)) };
      }
    }
    const { rows } = await sql.query<{ n: string }>(`SELECT count(*)::text AS n FROM "CacheChange"`);
    console.log(`orders per round: ${ORDERS}, rounds: ${ROUNDS} (best of each kept), 5 statements per order in both`);
    for (const [name, t] of Object.entries(best)) console.log(`${name.padEnd(13)} median ${t.median.toFixed(3)} ms, mean ${t.mean.toFixed(3)} ms per order transaction`);
    console.log(`CacheChange rows written: ${rows[0]!.n} (${(Number(rows[0]!.n) / (ORDERS * ROUNDS)).toFixed(1)} per order)`);
    await sql.end();
  } finally {
    await server.stop();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
