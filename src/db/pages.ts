import { Prisma } from '../generated/prisma/client.js';

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

// The ids statement is written here, in SQL with bound parameters, when the page's filters and
// order are plain column conditions (pageIdsSql): Prisma 7 compiles a query plan for each new
// (skip, take) pair, as it keeps them out of a plan's parameters, and a client paging through a
// catalogue asks for a new pair nearly every time (about 1.5 ms of CPU per compile, more than the
// statement itself). Anything else (a relation filter, OR, NOT, a text search) takes Prisma's
// findMany as before. test/pages.test.ts holds the two to the same ids.

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

/** The part of a Prisma client (or transaction client) that sends one statement of our own. */
export interface RawQuery {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): PromiseLike<T>;
}

/** A model's table and the columns a condition may name: its scalar fields (the schema maps no name). */
const SCALAR_FIELDS: Readonly<Record<Prisma.ModelName, ReadonlySet<string>>> = Object.fromEntries(
  Object.values(Prisma.ModelName).map((model) => [
    model,
    new Set(Object.values((Prisma as unknown as Record<string, Record<string, string>>)[`${model}ScalarFieldEnum`] ?? {})),
  ]),
) as unknown as Record<Prisma.ModelName, ReadonlySet<string>>;

const COMPARISONS: Record<string, string> = { equals: '=', gt: '>', gte: '>=', lt: '<', lte: '<=' };

/** A value bound as a parameter; undefined when it is not one we send as Prisma would. */
function parameter(value: unknown): string | number | boolean | undefined {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (Prisma.Decimal.isDecimal(value)) return value.toString();
  return undefined;
}

/** `where` as SQL over `fields` (its values appended to `values`), or null when it is not plain column conditions. */
function conditionSql(where: unknown, fields: ReadonlySet<string>, values: unknown[]): string | null {
  if (where === undefined) return 'TRUE';
  if (typeof where !== 'object' || where === null || Array.isArray(where)) return null;
  const parts: string[] = [];
  for (const [key, condition] of Object.entries(where as Record<string, unknown>)) {
    if (condition === undefined) continue;
    if (key === 'AND') {
      for (const member of Array.isArray(condition) ? condition : [condition]) {
        const sql = conditionSql(member, fields, values);
        if (sql === null) return null;
        parts.push(`(${sql})`);
      }
      continue;
    }
    if (!fields.has(key)) return null;
    const column = `"${key}"`;
    if (condition === null) {
      parts.push(`${column} IS NULL`);
      continue;
    }
    const direct = parameter(condition);
    if (direct !== undefined) {
      values.push(direct);
      parts.push(`${column} = $${values.length}`);
      continue;
    }
    if (typeof condition !== 'object' || Array.isArray(condition) || Prisma.Decimal.isDecimal(condition)) return null;
    for (const [op, operand] of Object.entries(condition as Record<string, unknown>)) {
      if (operand === undefined) continue;
      if (op === 'in') {
        // Text members only: the column's type (text, enum) is inferred for the array.
        if (!Array.isArray(operand) || !operand.every((m) => typeof m === 'string')) return null;
        values.push(operand);
        parts.push(`${column} = ANY($${values.length})`);
        continue;
      }
      const sqlOp = COMPARISONS[op];
      const bound = parameter(operand);
      if (!sqlOp || bound === undefined) return null;
      values.push(bound);
      parts.push(`${column} ${sqlOp} $${values.length}`);
    }
  }
  return parts.length ? parts.join(' AND ') : 'TRUE';
}

/** `orderBy` as SQL over `fields`, or null when it orders by anything but the model's own columns. */
function orderSql(orderBy: unknown, fields: ReadonlySet<string>): string | null {
  const terms: string[] = [];
  for (const term of Array.isArray(orderBy) ? orderBy : [orderBy]) {
    if (typeof term !== 'object' || term === null) return null;
    for (const [key, direction] of Object.entries(term as Record<string, unknown>)) {
      if (!fields.has(key) || (direction !== 'asc' && direction !== 'desc')) return null;
      terms.push(`"${key}" ${direction === 'asc' ? 'ASC' : 'DESC'}`);
    }
  }
  return terms.length ? terms.join(', ') : null;
}

/**
 * The statement that reads a page's ids (the order's columns, then LIMIT and OFFSET as
 * parameters), or null when its filters or order are more than plain column conditions.
 */
export function pageIdsSql(model: Prisma.ModelName, page: PageQuery<unknown>): { text: string; values: unknown[] } | null {
  const fields = SCALAR_FIELDS[model];
  const values: unknown[] = [];
  const where = conditionSql(page.where, fields, values);
  const order = orderSql(page.orderBy, fields);
  if (where === null || order === null) return null;
  values.push(page.take, page.skip);
  return { text: `SELECT "id" FROM "${model}" WHERE ${where} ORDER BY ${order} LIMIT $${values.length - 1} OFFSET $${values.length}`, values };
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
 * loaded for the page's rows only (see above). `db`: the context's client (or transaction),
 * `model` and `delegate` the same model, e.g. `'Product'` and `ctx.prisma.product`.
 */
export async function findPage<Where, Row extends { id: string }>(
  db: RawQuery,
  model: Prisma.ModelName,
  delegate: FindMany<Where, Row>,
  page: PageQuery<Where>,
  query: object,
): Promise<Row[]> {
  const { where, orderBy, skip, take } = page;
  if (skip === 0 || !loadsRelations(query)) return delegate.findMany({ ...query, where, orderBy: orderBy as never, skip, take });
  const sql = pageIdsSql(model, page);
  const idRows = sql
    ? await db.$queryRawUnsafe<{ id: string }[]>(sql.text, ...sql.values)
    : await delegate.findMany({ where, orderBy: orderBy as never, select: { id: true }, skip, take });
  return rowsInOrder(delegate, where, idRows.map((r) => r.id), query);
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
