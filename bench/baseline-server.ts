import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import pg from 'pg';

// The raw baseline of the benchmark (bench/run.ts): the least a Node process can do to answer
// GET /api/products?limit=12 — node:http, one pg pool, the same SQL the service needs (one page
// of active products, newest first, with supplier, category and counts, plus the total), and
// JSON byte-identical to the service's body. No validation, auth, rate limits, logging or
// GraphQL: the ratio service/baseline is the price of all of those.
//
// Environment: DATABASE_URL (required), PORT (0: any free port), DB_POOL_MAX (default 10).
// Prints "LISTENING <port>" on stdout once it accepts connections; stops on SIGTERM/SIGINT.

const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write('baseline-server: DATABASE_URL is required\n');
  process.exit(1);
}
const pool = new pg.Pool({ connectionString: url, max: Number(process.env.DB_POOL_MAX ?? 10) });

const PAGE_SQL = `
  SELECT p.id, p.name, p."nameEn", p.slug, p.description, p.price::text AS price,
         p."compareAtPrice"::text AS "compareAtPrice", p."minOrder", p.stock, p.sku, p.images,
         p.specifications, p."isActive", p."isFeatured", p."viewCount", p."vatRate"::text AS "vatRate",
         p."vatCategory", p."createdAt", p."updatedAt",
         s.id AS s_id, s."companyName" AS s_company, s.verified AS s_verified, s.rating::text AS s_rating,
         c.id AS c_id, c.name AS c_name, c.slug AS c_slug,
         (SELECT count(*)::int FROM "Review" r WHERE r."productId" = p.id) AS n_reviews,
         (SELECT count(*)::int FROM "Favorite" f WHERE f."productId" = p.id) AS n_favorites
    FROM "Product" p
    JOIN "Supplier" s ON s.id = p."supplierId"
    JOIN "Category" c ON c.id = p."categoryId"
   WHERE p."isActive"
   ORDER BY p."createdAt" DESC, p.id ASC
   LIMIT $1 OFFSET $2`;
const COUNT_SQL = 'SELECT count(*)::int AS n FROM "Product" WHERE "isActive"';

type Row = Record<string, unknown> & { createdAt: Date; updatedAt: Date };

const num = (v: unknown) => (v === null ? null : Number(v as string));

/** Same key order as the service's GraphQL selection (src/rest/routes.ts, RestProduct). */
function product(r: Row) {
  return {
    id: r.id,
    name: r.name,
    nameEn: r.nameEn,
    slug: r.slug,
    description: r.description,
    price: num(r.price),
    compareAtPrice: num(r.compareAtPrice),
    minOrder: r.minOrder,
    stock: r.stock,
    sku: r.sku,
    images: r.images,
    specifications: r.specifications,
    isActive: r.isActive,
    isFeatured: r.isFeatured,
    viewCount: r.viewCount,
    vatRate: num(r.vatRate),
    vatCategory: r.vatCategory,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt.toISOString(),
    supplier: { id: r.s_id, companyName: r.s_company, verified: r.s_verified, rating: num(r.s_rating) },
    category: { id: r.c_id, name: r.c_name, slug: r.c_slug },
    _count: { reviews: r.n_reviews, favorites: r.n_favorites },
  };
}

function send(res: ServerResponse, status: number, body: string) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function handle(req: IncomingMessage, res: ServerResponse) {
  const u = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (req.method !== 'GET' || u.pathname !== '/api/products') return send(res, 404, '{"success":false}');
  const page = Number(u.searchParams.get('page') ?? 1);
  const limit = Number(u.searchParams.get('limit') ?? 12);
  const [items, count] = await Promise.all([
    pool.query<Row>(PAGE_SQL, [limit, (page - 1) * limit]),
    pool.query<{ n: number }>(COUNT_SQL),
  ]);
  const total = count.rows[0]!.n;
  const body = JSON.stringify({ success: true, data: items.rows.map(product), meta: { page, limit, total, totalPages: Math.ceil(total / limit) } });
  send(res, 200, body);
}

const server = createServer((req, res) => {
  handle(req, res).catch((err: unknown) => {
    process.stderr.write(`baseline-server: ${err instanceof Error ? err.message : String(err)}\n`);
    if (!res.headersSent) send(res, 500, '{"success":false}');
  });
});
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
});

const stop = () => {
  server.close();
  server.closeAllConnections();
  void pool.end().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
