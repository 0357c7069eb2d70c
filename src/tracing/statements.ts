import { context, SpanKind, trace, type Span } from '@opentelemetry/api';
import { ATTR_DB_NAMESPACE, ATTR_DB_OPERATION_NAME, ATTR_DB_QUERY_TEXT, ATTR_DB_RESPONSE_STATUS_CODE, ATTR_DB_SYSTEM_NAME, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';
import pg from 'pg';
import { failed, tracer } from './spans.js';

// A span per SQL statement, whoever sends it: Prisma through its pg adapter (src/db/prisma.ts),
// the service's own reads (readDirect, the freshness reads of src/cache/freshness.ts, the
// replicas' checks), all of which end in node-postgres's Client#query. Installed by the SDK's
// start (./sdk.ts) and removed at its shutdown; with tracing off Client#query is untouched.
//
// A statement gets a span only under a live span (a request's, a delivery's): the background's
// polls and flushes, and a timer a request once armed, make none. Its text is the statement as
// sent: every statement of the service binds its values as parameters ($1, $2…), so the text
// holds none.

/** Longer statements are cut here: a span is not the place for a whole generated query. */
const STATEMENT_TEXT_LIMIT = 8000;

type Query = (this: pg.Client, ...args: unknown[]) => unknown;
type Connect = (this: pg.Pool, ...args: unknown[]) => unknown;

/** The statement's first word (SELECT, INSERT, WITH, BEGIN…), its operation. */
const operationOf = (text: string) => /^\s*([A-Za-z]+)/.exec(text)?.[1]?.toUpperCase() ?? 'SQL';

function statementSpan(client: pg.Client, text: string): Span {
  const operation = operationOf(text);
  return tracer.startSpan(`${operation} ${client.database ?? 'postgresql'}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      // `db.system` as the conventions before 1.26 named it, which most backends still read.
      'db.system': 'postgresql',
      [ATTR_DB_SYSTEM_NAME]: 'postgresql',
      [ATTR_DB_NAMESPACE]: client.database,
      [ATTR_DB_OPERATION_NAME]: operation,
      [ATTR_DB_QUERY_TEXT]: text.length > STATEMENT_TEXT_LIMIT ? `${text.slice(0, STATEMENT_TEXT_LIMIT)}…` : text,
      [ATTR_SERVER_ADDRESS]: client.host,
      [ATTR_SERVER_PORT]: client.port,
    },
  });
}

function ended(span: Span, error: unknown): void {
  if (error) {
    failed(span, error);
    // The SQLSTATE only: PostgreSQL's message and detail may quote a value.
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string') span.setAttribute(ATTR_DB_RESPONSE_STATUS_CODE, code);
  }
  span.end();
}

/** Wraps Client#query (and Pool#connect, see below); answers the undoing. */
export function traceStatements(): () => void {
  const query = pg.Client.prototype.query as unknown as Query;
  const connect = pg.Pool.prototype.connect as unknown as Connect;

  function tracedQuery(this: pg.Client, ...args: unknown[]): unknown {
    const [config] = args;
    const text = typeof config === 'string' ? config : (config as { text?: unknown } | null)?.text;
    // A submittable (a cursor, a stream) carries its own completion: left as it is.
    if (!trace.getActiveSpan()?.isRecording() || typeof text !== 'string' || typeof (config as { submit?: unknown }).submit === 'function') {
      return query.apply(this, args);
    }
    const span = statementSpan(this, text);
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      // The caller's continuation runs in its own context, not in whichever the socket's data arrives in.
      const callback = context.bind(context.active(), args[last] as (error: unknown, result: unknown) => void);
      args[last] = (error: unknown, result: unknown) => {
        ended(span, error);
        callback(error, result);
      };
      return query.apply(this, args);
    }
    let result: unknown;
    try {
      result = query.apply(this, args);
    } catch (error) {
      ended(span, error);
      throw error;
    }
    (result as Promise<unknown>).then(
      () => ended(span, undefined),
      (error: unknown) => ended(span, error),
    );
    return result;
  }

  // pg-pool hands a waiting caller the connection another caller released, inside that caller's
  // callback: bound here, a statement on it is the waiting caller's child, not the releaser's.
  function boundConnect(this: pg.Pool, ...args: unknown[]): unknown {
    if (typeof args[0] === 'function') args[0] = context.bind(context.active(), args[0] as () => void);
    return connect.apply(this, args);
  }

  const ownConnect = Object.hasOwn(pg.Pool.prototype, 'connect');
  pg.Client.prototype.query = tracedQuery as never;
  pg.Pool.prototype.connect = boundConnect as never;
  return () => {
    pg.Client.prototype.query = query as never;
    if (ownConnect) pg.Pool.prototype.connect = connect as never;
    else delete (pg.Pool.prototype as { connect?: unknown }).connect;
  };
}
