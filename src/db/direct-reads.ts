import { Prisma } from '../generated/prisma/client.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import { readDirect } from './prisma.js';

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

/** A model's fields as the schema declares them (one source for what a statement may name). */
interface DataField {
  name: string;
  kind: 'scalar' | 'enum' | 'object';
  type: string;
  isList: boolean;
  isRequired: boolean;
  relationName?: string;
  relationFromFields?: string[];
}

const DATAMODEL = getDatamodel().datamodel.models as unknown as Record<string, { fields: DataField[] }>;
const FIELDS: Record<string, Map<string, DataField>> = Object.fromEntries(
  Object.entries(DATAMODEL).map(([model, { fields }]) => [model, new Map(fields.map((f) => [f.name, f]))]),
);

/** A model's table and the columns a condition may name: its scalar fields (the schema maps no name). */
const SCALAR_FIELDS: Readonly<Record<Prisma.ModelName, ReadonlySet<string>>> = Object.fromEntries(
  Object.values(Prisma.ModelName).map((model) => [model, new Set(DATAMODEL[model]!.fields.filter((f) => f.kind !== 'object').map((f) => f.name))]),
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
function conditionSql(where: unknown, fields: ReadonlySet<string>, values: unknown[], qualifier = ''): string | null {
  if (where === undefined) return 'TRUE';
  if (typeof where !== 'object' || where === null || Array.isArray(where)) return null;
  const parts: string[] = [];
  for (const [key, condition] of Object.entries(where as Record<string, unknown>)) {
    if (condition === undefined) continue;
    if (key === 'AND') {
      for (const member of Array.isArray(condition) ? condition : [condition]) {
        const sql = conditionSql(member, fields, values, qualifier);
        if (sql === null) return null;
        parts.push(`(${sql})`);
      }
      continue;
    }
    if (!fields.has(key)) return null;
    const column = `${qualifier}"${key}"`;
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
function orderSql(orderBy: unknown, fields: ReadonlySet<string>, qualifier = ''): string | null {
  const terms: string[] = [];
  for (const term of Array.isArray(orderBy) ? orderBy : [orderBy]) {
    if (typeof term !== 'object' || term === null) return null;
    for (const [key, direction] of Object.entries(term as Record<string, unknown>)) {
      if (!fields.has(key) || (direction !== 'asc' && direction !== 'desc')) return null;
      terms.push(`${qualifier}"${key}" ${direction === 'asc' ? 'ASC' : 'DESC'}`);
    }
  }
  return terms.length ? terms.join(', ') : null;
}

/**
 * `orderBy` as SQL (orderSql) when it ends by id, a total order: rows read apart (a page's ids,
 * then its rows; a relation's rows) come back in one order only, the one Prisma gives. Else null.
 */
function totalOrderSql(orderBy: unknown, fields: ReadonlySet<string>, qualifier: string): string | null {
  const order = orderSql(orderBy, fields, qualifier);
  return order && /"id" (ASC|DESC)$/.test(order) ? order : null;
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
  const read = pageReadSql(model, page, query);
  if (read) {
    const rows = await readDirect(db, read.text, read.values);
    if (rows) return rows.map(read.row) as Row[];
  }
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

// ---------------------------------------------------------------------------------------------
// A whole page in one statement of our own
//
// Prisma's findMany costs most of a list request's CPU (at 50 products with supplier, category
// and two counts: about 5 ms against 1.6 ms for the same rows read by node-postgres, measured in
// one process, issue 27): it compiles the query, has PostgreSQL build JSON for each relation,
// parses it and maps every value. When plugin-prisma's query for the page is plain — columns, to-one
// relations joined by their foreign key, relation counts — and the page's filters and order are
// plain column conditions (pageIdsSql), the page is read as one statement: its ids (as pageIdsSql
// picks them) joined to their rows, relations and counts, in the page's order, with values of the
// types Prisma's results hold, decimals and timestamps as the graph sends them (src/db/prisma.ts,
// readDirect). Anything else, or a transaction's client, takes the way above. test/pages.test.ts
// holds both ways to the same rows.

/** Scalar types read directly: each comes back as Prisma's results hold it, a Decimal and a DateTime as the graph sends them (readDirect's parsers). */
const DIRECT_TYPES = new Set(['String', 'Int', 'Float', 'Boolean', 'DateTime', 'Decimal', 'Json', 'BigInt']);
/** List columns read directly (as JSON, which holds them exactly). */
const DIRECT_LIST_TYPES = new Set(['String', 'Int']);

const readsDirectly = (f: DataField) =>
  f.kind === 'enum' ? !f.isList : f.kind === 'scalar' && (f.isList ? DIRECT_LIST_TYPES : DIRECT_TYPES).has(f.type);

/** Fills one result object from a row (an array of the statement's columns). */
type Fill = (target: Record<string, unknown>, row: unknown[]) => void;

interface Statement {
  columns: string[];
  joins: string[];
}

/** The relation field on the other side of `field`, the one holding the foreign key; undefined if none or composite. */
function foreignKeyOf(model: string, field: DataField): string | undefined {
  const other = DATAMODEL[field.type]?.fields.find(
    (f) => f.relationName === field.relationName && f !== field && f.kind === 'object' && f.type === model && f.relationFromFields?.length === 1,
  );
  return other?.relationFromFields![0];
}

/**
 * The columns and joins that read `select` of `model` (aliased `alias`) into `statement`, and how a
 * row fills the result, or null when it selects anything but columns, to-one relations by a
 * single foreign key (every relation of the schema references the related model's id), relation
 * counts and plain to-many relations (listRelationSql).
 */
function selectionSql(model: string, select: Record<string, unknown> | undefined, alias: string, statement: Statement): Fill | null {
  const fields = FIELDS[model];
  if (!fields) return null;
  // No select: every scalar field, as findMany returns.
  const chosen = select ?? Object.fromEntries([...fields.values()].filter((f) => f.kind !== 'object').map((f) => [f.name, true]));
  const fills: Fill[] = [];
  /** The plain columns: [field, index in the row]. */
  const columns: [string, number][] = [];
  for (const [name, value] of Object.entries(chosen)) {
    if (value === false || value === undefined) continue;
    if (name === '_count') {
      const counted = (value as { select?: Record<string, unknown> }).select;
      if (typeof value !== 'object' || value === null || !counted || Object.keys(value).length !== 1) return null;
      const counts: [string, number][] = [];
      for (const [relation, wanted] of Object.entries(counted)) {
        if (wanted === false || wanted === undefined) continue;
        const field = fields.get(relation);
        const foreignKey = field?.kind === 'object' && field.isList && wanted === true ? foreignKeyOf(model, field) : undefined;
        if (!field || !foreignKey) return null;
        counts.push([relation, statement.columns.length]);
        statement.columns.push(`(SELECT count(*)::int FROM "${field.type}" WHERE "${foreignKey}" = ${alias}."id")`);
      }
      fills.push((target, row) => {
        const count: Record<string, unknown> = {};
        for (const [relation, at] of counts) count[relation] = row[at];
        target._count = count;
      });
      continue;
    }
    const field = fields.get(name);
    if (!field) return null;
    if (field.kind !== 'object') {
      if (value !== true || !readsDirectly(field)) return null;
      // A list as JSON: JSON.parse reads it several times faster than node-postgres's array parser.
      const column = field.isList ? `to_json(${alias}."${name}")` : `${alias}."${name}"`;
      columns.push([name, statement.columns.push(column) - 1]);
      continue;
    }
    if (field.isList) {
      const fill = listRelationSql(model, field, value, alias, statement);
      if (!fill) return null;
      fills.push(fill);
      continue;
    }
    // A to-one relation through a foreign key of this model's.
    const from = field.relationFromFields;
    if (from?.length !== 1) return null;
    const nested = value === true ? undefined : (value as { select?: Record<string, unknown> }).select;
    if (value !== true && (typeof value !== 'object' || value === null || !nested || Object.keys(value).length !== 1)) return null;
    const joined = `j${statement.joins.length + 1}`;
    statement.joins.push(`${field.isRequired ? 'JOIN' : 'LEFT JOIN'} "${field.type}" ${joined} ON ${joined}."id" = ${alias}."${from[0]}"`);
    // An optional relation's id tells a missing (null) relation from a row of nulls.
    const presence = field.isRequired ? -1 : statement.columns.push(`${joined}."id"`) - 1;
    const fill = selectionSql(field.type, nested, joined, statement);
    if (!fill) return null;
    fills.push((target, row) => {
      if (presence >= 0 && row[presence] === null) {
        target[name] = null;
        return;
      }
      const related: Record<string, unknown> = {};
      fill(related, row);
      target[name] = related;
    });
  }
  const fillColumns = columnsFill(columns);
  return (target, row) => {
    fillColumns(target, row);
    for (const fill of fills) fill(target, row);
  };
}

/**
 * Copies the plain columns of a row into the result: one function written for the selection, a
 * store per field, rather than a closure per field storing under a name it holds. A page of 100
 * products with 25 columns made 2,500 such calls, each a store by a key the engine could not
 * foresee. The names are the schema's own fields (DATAMODEL), written as JSON string literals.
 */
function columnsFill(columns: [string, number][]): Fill {
  const body = columns.map(([name, at]) => `target[${JSON.stringify(name)}] = row[${at}];`).join('\n');
  return new Function('target', 'row', body) as Fill;
}

/** Column types a list relation's rows may select: those JSON holds exactly, as Prisma's results hold them. */
const JSON_TYPES = new Set(['String', 'Int', 'Boolean']);

/**
 * A to-many relation (a category's children) as one column of `statement`: its rows' columns as
 * a JSON array of arrays, filtered and ordered in SQL, and how a row fills the relation's field;
 * null unless it selects plain columns of JSON_TYPES (or enums), filters by equality to a boolean
 * or null (written into the statement: no parameter), and orders by columns, ending by id (so
 * that its order is total, and Prisma's). Nothing else: no page of it, no relation beneath it.
 */
function listRelationSql(model: string, field: DataField, value: unknown, alias: string, statement: Statement): Fill | null {
  const foreignKey = foreignKeyOf(model, field);
  const fields = FIELDS[field.type];
  if (!foreignKey || !fields || typeof value !== 'object' || value === null) return null;
  const { select, where, orderBy, ...rest } = value as { select?: Record<string, unknown>; where?: Record<string, unknown>; orderBy?: unknown };
  if (Object.keys(rest).length || !select) return null;
  const names: string[] = [];
  for (const [name, wanted] of Object.entries(select)) {
    if (wanted === false || wanted === undefined) continue;
    const column = fields.get(name);
    if (wanted !== true || !column || column.isList || !(column.kind === 'enum' || (column.kind === 'scalar' && JSON_TYPES.has(column.type)))) return null;
    names.push(name);
  }
  const related = `r${statement.columns.length + 1}`;
  const conditions = [`${related}."${foreignKey}" = ${alias}."id"`];
  for (const [name, condition] of Object.entries(where ?? {})) {
    if (condition === undefined) continue;
    if (!fields.has(name) || fields.get(name)!.kind === 'object' || !(condition === true || condition === false || condition === null)) return null;
    conditions.push(`${related}."${name}" ${condition === null ? 'IS NULL' : `= ${condition ? 'TRUE' : 'FALSE'}`}`);
  }
  const order = totalOrderSql(orderBy ?? [], SCALAR_FIELDS[field.type as Prisma.ModelName], `${related}.`);
  if (!names.length || !order) return null;
  const at =
    statement.columns.push(
      `(SELECT coalesce(json_agg(json_build_array(${names.map((n) => `${related}."${n}"`).join(', ')}) ORDER BY ${order}), '[]'::json)` +
        ` FROM "${field.type}" ${related} WHERE ${conditions.join(' AND ')})`,
    ) - 1;
  return (target, row) => {
    target[field.name] = (row[at] as unknown[][]).map((values) => {
      const item: Record<string, unknown> = {};
      for (let i = 0; i < names.length; i++) item[names[i]!] = values[i];
      return item;
    });
  };
}

/** A read of our own: its statement, and how each row becomes the object findMany would return. */
export interface DirectRead {
  text: string;
  values: unknown[];
  row: (row: unknown[]) => Record<string, unknown>;
}

/** A plain selection as SQL: its columns and its joins (aliased t), and how a row fills a result. */
interface Selection {
  columns: string;
  joins: string;
  fill: Fill;
}

/**
 * A frozen query's selection, by the query's identity: plugin-prisma hands a document's field the
 * same frozen query on every execution (vendor/README.md, change 4), so a route builds its SQL once.
 */
const selections = new WeakMap<object, Map<Prisma.ModelName, Selection | null>>();

/** The columns and joins of `query` on `model` (aliased t), or null when it is more than plain. */
function plainSelection(model: Prisma.ModelName, query: object): Selection | null {
  if (!Object.isFrozen(query)) return selectionOf(model, query);
  let byModel = selections.get(query);
  if (!byModel) selections.set(query, (byModel = new Map()));
  let selection = byModel.get(model);
  if (selection === undefined) byModel.set(model, (selection = selectionOf(model, query)));
  return selection;
}

function selectionOf(model: Prisma.ModelName, query: object): Selection | null {
  const { select, include, ...rest } = query as { select?: Record<string, unknown>; include?: Record<string, unknown> };
  if (Object.keys(rest).length || (include && Object.keys(include).length)) return null;
  const statement: Statement = { columns: [], joins: [] };
  const fill = selectionSql(model, select, 't', statement);
  if (!fill || !statement.columns.length) return null;
  return { columns: statement.columns.join(', '), joins: statement.joins.map((join) => ` ${join}`).join(''), fill };
}

/** How a row of a selection's columns (in order) becomes the object findMany would return. */
function rowOf(fill: Fill): (row: unknown[]) => Record<string, unknown> {
  return (row) => {
    const result: Record<string, unknown> = {};
    fill(result, row);
    return result;
  };
}

function directRead(text: string, values: unknown[], fill: Fill): DirectRead {
  return { text, values, row: rowOf(fill) };
}

/**
 * The statement that reads a whole page (see above) and how each of its rows becomes the result
 * object findMany would return, or null when the page cannot be read that way: its filters, its
 * order (which must end in a total order, by id, so that the page and its rows agree) or its
 * query are more than plain.
 */
export function pageReadSql(model: Prisma.ModelName, page: PageQuery<unknown>, query: object): DirectRead | null {
  const ids = pageIdsSql(model, page);
  const order = totalOrderSql(page.orderBy, SCALAR_FIELDS[model], 't.');
  if (!ids || !order) return null;
  const selection = plainSelection(model, query);
  if (!selection) return null;
  const text =
    `SELECT ${selection.columns} FROM (${ids.text}) page JOIN "${model}" t ON t."id" = page."id"${selection.joins} ORDER BY ${order}`;
  return directRead(text, ids.values, selection.fill);
}

/**
 * `query`'s selection of `model` for a statement of the caller's own that picks the rows (a
 * ranking, say) and reads them as `t`: the columns to select, the joins to add after `t`, and how
 * a row of those columns (in order) becomes the object findMany would return; null when the query
 * is more than plain (see above).
 */
export function plainRead(model: Prisma.ModelName, query: object): { columns: string; joins: string; row: (row: unknown[]) => Record<string, unknown> } | null {
  const selection = plainSelection(model, query);
  if (!selection) return null;
  const { columns, joins, fill } = selection;
  return { columns, joins, row: rowOf(fill) };
}

/**
 * The statement that reads every row `where` finds, in `orderBy`'s order (which must end by id, a
 * total order), as findMany would answer it, or null when `where`, the order or `query` is more
 * than plain. For lists returned whole (the category tree).
 */
export function allReadSql(model: Prisma.ModelName, where: unknown, orderBy: unknown, query: object): DirectRead | null {
  const values: unknown[] = [];
  const condition = conditionSql(where, SCALAR_FIELDS[model], values, 't.');
  const order = totalOrderSql(orderBy, SCALAR_FIELDS[model], 't.');
  const selection = plainSelection(model, query);
  if (condition === null || !order || !selection) return null;
  const text = `SELECT ${selection.columns} FROM "${model}" t${selection.joins} WHERE ${condition} ORDER BY ${order}`;
  return directRead(text, values, selection.fill);
}

/**
 * Every row `where` finds, in `orderBy`'s order, with `query`'s relations: read in one statement
 * of our own where it can be (see above), findMany otherwise.
 */
export async function findAll<Where, Row>(
  db: RawQuery,
  model: Prisma.ModelName,
  delegate: FindMany<Where, Row>,
  where: Where,
  orderBy: unknown,
  query: object,
): Promise<Row[]> {
  const read = allReadSql(model, where, orderBy, query);
  const rows = read && (await readDirect(db, read.text, read.values));
  if (rows) return rows.map(read.row) as Row[];
  return delegate.findMany({ ...query, where, orderBy: orderBy as never });
}

/**
 * The statement that reads the one row `where` finds by a unique column (a product by its slug),
 * as findFirst would answer it, or null when `where` or `query` is more than plain.
 */
export function uniqueReadSql(model: Prisma.ModelName, where: object, query: object): DirectRead | null {
  const values: unknown[] = [];
  const condition = conditionSql(where, SCALAR_FIELDS[model], values, 't.');
  const selection = plainSelection(model, query);
  if (condition === null || !selection) return null;
  const text = `SELECT ${selection.columns} FROM "${model}" t${selection.joins} WHERE ${condition} LIMIT 2`;
  return directRead(text, values, selection.fill);
}

/**
 * The row a unique column finds (`where` names one, with plain conditions beside it), with
 * `query`'s relations, read in one statement of our own where it can be (see above); findFirst
 * otherwise. More than one row would mean the column is not unique: findFirst then decides.
 */
export async function findUnique<Row>(
  db: RawQuery,
  model: Prisma.ModelName,
  delegate: { findFirst(args: object): PromiseLike<Row | null> },
  where: object,
  query: object,
): Promise<Row | null> {
  const read = uniqueReadSql(model, where, query);
  const rows = read && (await readDirect(db, read.text, read.values));
  if (rows && rows.length <= 1) return (rows[0] ? read.row(rows[0]) : null) as Row | null;
  return delegate.findFirst({ ...query, where });
}
