// One offset page of a model's rows, loaded with the query plugin-prisma planned for the
// selection (its `select` or `include`): the one rule every offset list with relations follows.
//
// Prisma (relationJoins) loads relations in the page's own statement, as LATERAL joins and
// correlated subqueries (relation counts) beside the model's columns, with LIMIT/OFFSET on top:
//
//   Limit (50 rows)
//     -> Nested Loop Left Join                  ← 20,000 rows at page 400: every skipped row too
//          -> Index Scan on "Product"
//          -> Aggregate (3 newest reviews)      ← loops=20000
//
// PostgreSQL computes a row in full before OFFSET discards it, so the joins ran for every skipped
// row and a page's cost grew with its depth (the nested query's page 400 of 50 products: 641 ms,
// cold, against 2.5 ms for page 1; BENCHMARKS.md, issue 27). A page that skips rows and loads
// relations therefore takes two statements: its ids first (filters, order, skip and take, the id
// column only: what the sort's index answers, without the rows' heap or any join), then those
// rows by id with their relations, returned in the ids' order. A page that skips nothing, or loads
// no relation, is one statement, as before: there LIMIT stops the joins after the page's own rows.

/** The findMany arguments of a page: its filters and order, and its window. */
export interface PageQuery<Where> {
  where: Where;
  orderBy: unknown;
  skip: number;
  take: number;
}

/** The part of a Prisma model delegate a page needs. */
interface FindMany<Where, Row> {
  findMany(args: { where?: Where; orderBy?: never; select?: object; include?: object; skip?: number; take?: number }): PromiseLike<Row[]>;
}

/**
 * Whether a plugin-prisma query loads anything beyond the model's own columns: a relation or a
 * relation count (any selected member that is not `true`), or an `include`.
 */
export function loadsRelations(query: object): boolean {
  const { select, include } = query as { select?: Record<string, unknown>; include?: Record<string, unknown> };
  if (include && Object.keys(include).length) return true;
  if (!select) return false;
  for (const key in select) if (select[key] !== true && select[key] !== false && select[key] !== undefined) return true;
  return false;
}

/**
 * The rows of one offset page, with `query`'s relations, in the page's order; relations are
 * loaded for the page's rows only (see above). `delegate`: e.g. `ctx.prisma.product`.
 */
export async function findPage<Where, Row extends { id: string }>(
  delegate: FindMany<Where, Row>,
  page: PageQuery<Where>,
  query: object,
): Promise<Row[]> {
  const { where, orderBy, skip, take } = page;
  if (skip === 0 || !loadsRelations(query)) return delegate.findMany({ ...query, where, orderBy: orderBy as never, skip, take });
  const ids = (await delegate.findMany({ where, orderBy: orderBy as never, select: { id: true }, skip, take })).map((r) => r.id);
  return rowsInOrder(delegate, where, ids, query);
}

/**
 * The rows of `ids` that still match `where` (a row changed since its id was picked is left out
 * rather than shown unmatched), with `query`'s relations, in the order of `ids`.
 */
export async function rowsInOrder<Where, Row extends { id: string }>(
  delegate: FindMany<Where, Row>,
  where: Where,
  ids: readonly string[],
  query: object,
): Promise<Row[]> {
  if (!ids.length) return [];
  const rows = await delegate.findMany({ ...query, where: { AND: [where, { id: { in: ids } }] } as Where });
  const byId = new Map<string, Row>();
  for (const row of rows) byId.set(row.id, row);
  const ordered: Row[] = [];
  for (const id of ids) {
    const row = byId.get(id);
    if (row) ordered.push(row);
  }
  return ordered;
}
