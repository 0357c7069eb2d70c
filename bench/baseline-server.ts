import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import pg from 'pg';

// The hand-written baselines of the benchmark (bench/run.ts): the least a Node process can do to
// give the service's answers — node:http, one pg pool, the SQL each answer needs, and JSON
// byte-identical to the service's body (run.ts checks that before timing). No validation, keys,
// rate limits, logging, GraphQL or ORM: each ratio service/baseline is the price of all of those.
//
// It does the same work the service does wherever the service saves work:
// - the list's total is counted once per filter (all active products, or one category's subtree)
//   and kept while the catalogue revision stays the same, the revision read with each request, as
//   the service's kept totals do (src/domain/products/list-totals.ts; orders change stock only,
//   which moves neither revision);
// - the nested GraphQL list takes one SQL round trip per level: the page, then its suppliers,
//   categories and newest reviews (three statements, concurrently);
// - a page is found by its offset over the index alone, and only its own rows are read (PAGE_IDS).
//
//   GET  /api/products?limit=&page=[&sortBy=newest|price_asc|price_desc][&categoryId=]
//                                   one page with supplier, category and counts; categoryId takes
//                                   the category's whole subtree, as the service's filter does
//   GET  /api/products/:slug        one active product, the same representation
//   POST /graphql                   the bench's nested query, a page of 50: the query is fixed, only
//                                   its page is read from the body (variables.page, default 1)
//
// Environment: DATABASE_URL (required), PORT (0: any free port), DB_POOL_MAX (default 10).
// Prints "LISTENING <port>" on stdout once it accepts connections; stops on SIGTERM/SIGINT.

const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write('baseline-server: DATABASE_URL is required\n');
  process.exit(1);
}
const pool = new pg.Pool({ connectionString: url, max: Number(process.env.DB_POOL_MAX ?? 10) });

const PRODUCT_COLUMNS = `
  p.id, p.name, p."nameEn", p.slug, p.description, p.price::text AS price,
  p."compareAtPrice"::text AS "compareAtPrice", p."minOrder", p.stock, p.sku, p.images,
  p.specifications, p."isActive", p."isFeatured", p."viewCount", p."vatRate"::text AS "vatRate",
  p."vatCategory", p."createdAt", p."updatedAt",
  s.id AS s_id, s."companyName" AS s_company, s.verified AS s_verified, s.rating::text AS s_rating,
  c.id AS c_id, c.name AS c_name, c.slug AS c_slug,
  (SELECT count(*)::int FROM "Review" r WHERE r."productId" = p.id) AS n_reviews,
  (SELECT count(*)::int FROM "Favorite" f WHERE f."productId" = p.id) AS n_favorites
  FROM "Product" p
  JOIN "Supplier" s ON s.id = p."supplierId"
  JOIN "Category" c ON c.id = p."categoryId"`;

// A page is found by its offset on the index alone (ids only), then its rows are read, as a
// hand-written server pages deep: as one joined statement with OFFSET, PostgreSQL would read every
// skipped row with its supplier, category and counts (at 100,000 products, limit 100 at offset
// 17,400, the bench's deepest list page: 160–550 ms instead of 10–25 ms; page 1 the same).
const PAGE_IDS = (limit: string, offset: string) =>
  `SELECT id FROM "Product" WHERE "isActive" ORDER BY "createdAt" DESC, id ASC LIMIT ${limit} OFFSET ${offset}`;
const PAGE_SQL = `SELECT ${PRODUCT_COLUMNS} JOIN (${PAGE_IDS('$1', '$2')}) page ON page.id = p.id
  ORDER BY p."createdAt" DESC, p.id ASC`;

/** The list's sorts the bench sends (src/domain/products/products.service.ts, productOrders). */
const SORTS: Record<string, string> = {
  newest: '"createdAt" DESC, id ASC',
  price_asc: 'price ASC, id ASC',
  price_desc: 'price DESC, id ASC',
};
/** A category and all its descendants, active or not: what the service's categoryId filter takes. */
const SUBTREE = (param: string) => `WITH RECURSIVE tree AS (
    SELECT id FROM "Category" WHERE id = ${param}
    UNION
    SELECT c.id FROM "Category" c JOIN tree t ON c."parentId" = t.id
  )`;
/**
 * Any other list the bench's mixed workload sends: a sort, and optionally a category's subtree
 * (the subtree walked in the same statement, where the service reads it first in one of its own).
 */
function filteredPageSql(sort: string, category: boolean): string {
  const order = SORTS[sort]!;
  const where = category ? '"isActive" AND "categoryId" IN (SELECT id FROM tree)' : '"isActive"';
  return `${category ? SUBTREE('$3') : ''} SELECT ${PRODUCT_COLUMNS}
  JOIN (SELECT id FROM "Product" WHERE ${where} ORDER BY ${order} LIMIT $1 OFFSET $2) page ON page.id = p.id
  ORDER BY ${order.replace(/(^|, )/g, '$1p.')}`;
}
const FILTERED_PAGE_SQL = new Map<string, string>();
for (const sort of Object.keys(SORTS)) for (const category of [false, true]) FILTERED_PAGE_SQL.set(`${sort}/${category}`, filteredPageSql(sort, category));
const BY_SLUG_SQL = `SELECT ${PRODUCT_COLUMNS} WHERE p.slug = $1 AND p."isActive"`;

const NESTED_LIMIT = 50;
const NESTED_PAGE_SQL = `SELECT p.id, p.name, p.slug, p.price::text AS price, p."supplierId", p."categoryId"
  FROM "Product" p JOIN (${PAGE_IDS(String(NESTED_LIMIT), '$1')}) page ON page.id = p.id ORDER BY p."createdAt" DESC, p.id ASC`;
const SUPPLIERS_SQL = `SELECT id, "companyName", verified, rating::text AS rating FROM "Supplier" WHERE id = ANY($1)`;
const CATEGORIES_SQL = `SELECT id, name, slug FROM "Category" WHERE id = ANY($1)`;
const REVIEWS_SQL = `SELECT r.id, r.rating, r.title, r."createdAt", r."productId"
  FROM unnest($1::text[]) AS listed(id)
  CROSS JOIN LATERAL (SELECT * FROM "Review" WHERE "productId" = listed.id ORDER BY "createdAt" DESC, id ASC LIMIT 3) r`;

const REVISION_SQL = `SELECT epoch::text || '/' || revision::text AS at FROM "CatalogRevision" WHERE id = 1`;
const COUNT_SQL = 'SELECT count(*)::int AS n FROM "Product" WHERE "isActive"';
const CATEGORY_COUNT_SQL = `${SUBTREE('$1')} SELECT count(*)::int AS n FROM "Product" WHERE "isActive" AND "categoryId" IN (SELECT id FROM tree)`;

type Row = Record<string, unknown> & { createdAt: Date; updatedAt: Date };

const num = (v: unknown) => (v === null ? null : Number(v as string));

/** Same key order as the service's REST representation (src/rest/routes.ts, RestProduct). */
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

/**
 * The active products' total (or a category subtree's), counted once per filter and catalogue
 * revision (the revision is read every time).
 */
const kept = new Map<string, { at: string; total: Promise<number> }>();
async function activeTotal(categoryId?: string): Promise<number> {
  const { rows } = await pool.query<{ at: string }>(REVISION_SQL);
  const at = rows[0]?.at ?? '';
  const filter = categoryId ?? '';
  let entry = kept.get(filter);
  if (entry?.at !== at) {
    const count = categoryId ? pool.query<{ n: number }>(CATEGORY_COUNT_SQL, [categoryId]) : pool.query<{ n: number }>(COUNT_SQL);
    entry = { at, total: count.then((r) => r.rows[0]!.n) };
    kept.set(filter, entry);
  }
  return entry.total;
}

function send(res: ServerResponse, status: number, body: string) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function list(u: URL): Promise<string> {
  const page = Number(u.searchParams.get('page') ?? 1);
  const limit = Number(u.searchParams.get('limit') ?? 12);
  const sort = u.searchParams.get('sortBy') ?? 'newest';
  const categoryId = u.searchParams.get('categoryId') ?? undefined;
  if (!SORTS[sort]) throw new Error(`sortBy ${sort} is not one the baseline answers`);
  const items =
    sort === 'newest' && !categoryId
      ? pool.query<Row>(PAGE_SQL, [limit, (page - 1) * limit])
      : pool.query<Row>(FILTERED_PAGE_SQL.get(`${sort}/${Boolean(categoryId)}`)!, [limit, (page - 1) * limit, ...(categoryId ? [categoryId] : [])]);
  const [rows, total] = await Promise.all([items, activeTotal(categoryId)]);
  return JSON.stringify({ success: true, data: rows.rows.map(product), meta: { page, limit, total, totalPages: Math.ceil(total / limit) } });
}

async function bySlug(slug: string): Promise<string | null> {
  const { rows } = await pool.query<Row>(BY_SLUG_SQL, [slug]);
  return rows[0] ? JSON.stringify({ success: true, data: product(rows[0]) }) : null;
}

interface NestedRow {
  id: string;
  name: string;
  slug: string;
  price: string;
  supplierId: string;
  categoryId: string;
}

/** products(limit: 50, page: $page) { items { id name slug price supplier {…} category {…} reviews(limit: 3) {…} } meta { total } } */
async function nested(pageNumber: number): Promise<string> {
  const [page, total] = await Promise.all([pool.query<NestedRow>(NESTED_PAGE_SQL, [(pageNumber - 1) * NESTED_LIMIT]), activeTotal()]);
  const rows = page.rows;
  const [suppliers, categories, reviews] = await Promise.all([
    pool.query<{ id: string; companyName: string; verified: boolean; rating: string }>(SUPPLIERS_SQL, [[...new Set(rows.map((r) => r.supplierId))]]),
    pool.query<{ id: string; name: string; slug: string }>(CATEGORIES_SQL, [[...new Set(rows.map((r) => r.categoryId))]]),
    pool.query<{ id: string; rating: number; title: string; createdAt: Date; productId: string }>(REVIEWS_SQL, [rows.map((r) => r.id)]),
  ]);
  const supplierById = new Map(suppliers.rows.map((s) => [s.id, { id: s.id, companyName: s.companyName, verified: s.verified, rating: num(s.rating) }]));
  const categoryById = new Map(categories.rows.map((c) => [c.id, c]));
  const reviewsOf = new Map<string, unknown[]>();
  for (const r of reviews.rows) {
    const list = reviewsOf.get(r.productId) ?? [];
    list.push({ id: r.id, rating: r.rating, title: r.title, createdAt: r.createdAt.toISOString() });
    reviewsOf.set(r.productId, list);
  }
  const items = rows.map((p) => ({
    id: p.id,
    name: p.name,
    slug: p.slug,
    price: num(p.price),
    supplier: supplierById.get(p.supplierId),
    category: categoryById.get(p.categoryId),
    reviews: reviewsOf.get(p.id) ?? [],
  }));
  return JSON.stringify({ data: { products: { items, meta: { total } } } });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function handle(req: IncomingMessage, res: ServerResponse) {
  const u = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (req.method === 'GET' && u.pathname === '/api/products') return send(res, 200, await list(u));
  if (req.method === 'GET' && u.pathname.startsWith('/api/products/')) {
    const body = await bySlug(decodeURIComponent(u.pathname.slice('/api/products/'.length)));
    return body ? send(res, 200, body) : send(res, 404, '{"success":false}');
  }
  if (req.method === 'POST' && u.pathname === '/graphql') {
    // The query is the bench's fixed one; its page varies (the deep-pages workload).
    const { variables } = JSON.parse(await readBody(req)) as { variables?: { page?: number } };
    return send(res, 200, await nested(variables?.page ?? 1));
  }
  send(res, 404, '{"success":false}');
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
