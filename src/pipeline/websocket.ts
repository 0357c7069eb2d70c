import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { parse, type DocumentNode, type GraphQLError, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import { CloseCode, handleProtocols, makeServer, type Context, type ExecutionResult, type FormattedExecutionResult, type SubscribePayload } from 'graphql-ws';
import { Repeater } from 'graphql-yoga';
import { WebSocketServer, type WebSocket } from 'ws';
import { LIMITS, WEBSOCKET_BOUNDS } from '../config/limits.js';
import type { Gate } from './gate.js';
import { recordRequest, requestIdOf, type ObserveDeps } from './observe.js';
import type { RequestState } from './request-state.js';
import { createHttpServer, endWithError, normaliseRequestTarget } from './request-target.js';
import { anonymousBucket } from '../shared/client-ip.js';
import { AppError, INTERNAL_MESSAGE, serviceUnavailable, validationError } from '../shared/errors.js';
import { hostOf } from '../shared/paths.js';

// GraphQL over WebSocket on /graphql, beside SSE: graphql-ws's protocol (subprotocol
// graphql-transport-ws) on ws's WebSocketServer, on the HTTP server's upgrade.
//
// graphql-ws speaks the protocol (connection_init and its acknowledgement, ping/pong, subscribe and
// complete by id, its close codes); the app runs every operation. Each one is sent through the app
// as an in-process request, POST /graphql with Accept: text/event-stream, made of the handshake's
// headers (its Origin and X-Forwarded-For among them) and the connection's credentials: so it
// passes every stage an HTTP request passes (src/pipeline/pipeline.ts): the gate (the key, its
// rate limit: each operation is one request), the body and document rules, persisted documents,
// the cost budget, execution with the fields' scopes, the response cache, the contract's error
// codes, the access log. Its answer (an SSE stream, or the gate's JSON refusal) is read back and
// sent as graphql-ws messages: each result a `next`, the end a `complete`; an answer without data
// (the operation was refused before it ran) an `error`. A subscription's stream is the live hub's
// (src/background/live-hub.ts) as over SSE: the per-key bound on open streams, and the end of a
// revoked or expired key's streams, hold for sockets as they do for SSE.
//
// The connection itself passes the gate once, at connection_init, with the same credentials: a
// key that is invalid, or conflicts with another presented, closes it with 4403 Forbidden.

/** The bounds of a connection (src/config/limits.ts); tests shorten the times. */
export interface WebSocketSettings {
  /** Open connections per process; one more handshake is answered 503. */
  maxSockets: number;
  /** Open connections per client address on one process; one more handshake from it is answered 429. */
  maxSocketsPerAddress: number;
  /** Operations one connection runs at once; one more is refused with an `error` message. */
  maxOperations: number;
  messageBytes: number;
  connectionInitMs: number;
  keepAliveMs: number;
}

const DEFAULTS: WebSocketSettings = {
  maxSockets: LIMITS.websocket.sockets.max,
  maxSocketsPerAddress: LIMITS.websocket.socketsPerAddress.max,
  maxOperations: LIMITS.websocket.operations.max,
  ...WEBSOCKET_BOUNDS,
};

/** How long a peer has to answer the server's close (shutting down) before its connection is cut. */
const CLOSE_GRACE_MS = 3_000;
/** A WebSocket close reason is at most 123 bytes of UTF-8. */
const MAX_CLOSE_REASON_BYTES = 123;
const GOING_AWAY = 'The server is shutting down: connect again (to another instance)';

/**
 * graphql-ws asks for a document to choose between execute and subscribe; the app parses and runs
 * the real one. Every operation is answered as a stream (one result for a query or mutation), so the
 * document graphql-ws sees is always this subscription.
 */
const STREAMED: DocumentNode = parse('subscription { operation }');

/** Headers of the handshake an operation does not carry: the WebSocket's own, and the ones each operation sets. */
const NOT_FORWARDED = new Set([
  'connection',
  'upgrade',
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  'sec-websocket-protocol',
  'content-length',
  'content-type',
  'transfer-encoding',
  'accept',
  'x-request-id',
]);
/** The credentials a connection_init payload, or an operation's `extensions.headers`, may present (names in any letter case). */
const CREDENTIAL_HEADERS = new Set(['x-api-key', 'authorization']);
/** What an HTTP header value may hold (RFC 9110 field-value, obs-text included). */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Upgrade headers dropped when an upgrade that is not a WebSocket's is answered as a plain request. */
const UPGRADE_HEADERS = new Set(['connection', 'upgrade', 'http2-settings']);

export interface GraphqlWebSocketDeps {
  /** The app: each operation is an in-process request to its /graphql, with `state` as its server context. */
  fetch: (request: Request, state: RequestState) => Response | Promise<Response>;
  /** The served schema, which graphql-ws's execution arguments carry (the app executes). */
  schema: GraphQLSchema;
  gate: Gate;
  /** The client's address, as the gate finds it (X-Forwarded-For from a trusted proxy, else the peer's). */
  clientIp: (request: Request, serverContext: unknown) => string;
  /** The origins CORS allows (src/http/cors.ts, from CORS_ORIGINS): a browser page of another is refused at the handshake. */
  allowedOrigins: '*' | readonly string[];
  /** The logger and the metrics requests are recorded with (the socket's own too). */
  observe: ObserveDeps;
  settings?: Partial<WebSocketSettings>;
}

export interface GraphqlWebSocket {
  /** Answers a WebSocket handshake (the HTTP server's `upgrade`). */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** The server is closing: every connection is closed with 1001 (and cut if its peer does not answer), new ones are refused. */
  goingAway(): void;
  /** Closes every connection and the WebSocket server (the app's dispose). */
  dispose(): Promise<void>;
}

/** One open connection. */
interface Connection {
  /** Its request id in the logs (the handshake's X-Request-ID, or one of ours); an operation's is this, a colon and its number. */
  id: string;
  openedAt: bigint;
  /** Where its operations are sent: /graphql on the handshake's Host. */
  url: string;
  remoteAddress: string | undefined;
  /** Header lines every operation carries: the handshake's (less NOT_FORWARDED), then connection_init's credentials. */
  lines: string[];
  /** Operations sent so far. */
  operations: number;
  /** Its client's address, as the per-address bound counts it (an IPv6 client: its /64). */
  address: string;
}

interface Extra {
  connection: Connection;
  socket: WebSocket;
}

/** What onSubscribe hands the stream that runs it. */
interface Operation {
  connection: Connection;
  payload: SubscribePayload;
}

/** An operation refused before it ran: its errors go in an `error` message. */
class OperationRefused extends Error {
  constructor(readonly errors: readonly GraphQLFormattedError[]) {
    super(errors[0]?.message ?? 'Refused');
  }
}

/** The request state of a socket's request: its peer's address and header lines, as the gate and clientIp read them from Node's request. */
const stateOf = (connection: Connection, lines: string[]): RequestState & { req: IncomingMessage } => ({
  req: { socket: { remoteAddress: connection.remoteAddress }, rawHeaders: lines } as unknown as IncomingMessage,
  transport: 'websocket',
});

function headersOf(lines: readonly string[]): Headers {
  const headers = new Headers();
  for (let i = 0; i + 1 < lines.length; i += 2) headers.append(lines[i]!, lines[i + 1]!);
  return headers;
}

/**
 * The credentials among `fields` (connection_init's payload, an operation's `extensions.headers`)
 * as header lines: X-API-Key and Authorization, in any letter case; other members are not
 * headers of ours and are ignored. A credential that is not a string a header could carry is refused.
 * `emptyIsAbsent`: an empty value is no credential (a form left empty) rather than an empty key.
 */
function credentialsIn(fields: unknown, where: string, { emptyIsAbsent = false } = {}): string[] | AppError {
  if (fields === undefined || fields === null) return [];
  if (typeof fields !== 'object' || Array.isArray(fields)) return validationError({ [where]: 'must be an object of header names and values' }, `Invalid ${where}`);
  const lines: string[] = [];
  for (const [name, value] of Object.entries(fields)) {
    if (!CREDENTIAL_HEADERS.has(name.toLowerCase())) continue;
    if (typeof value !== 'string' || !HEADER_VALUE.test(value)) {
      return validationError({ [`${where}.${name}`]: 'must be a string a header could carry' }, `Invalid ${name} in ${where}`);
    }
    if (emptyIsAbsent && value.trim() === '') continue;
    lines.push(name, value);
  }
  return lines;
}

/** The handshake's request id: its X-Request-ID when short and plain (given once), else one of ours. */
const handshakeRequestId = (request: IncomingMessage) => {
  const given = request.headers['x-request-id'];
  return requestIdOf(typeof given === 'string' ? given : undefined);
};

/** `message` within a close frame's 123 bytes: its first sentence if that fits, else cut short. */
function closeReason(message: string): string {
  if (Buffer.byteLength(message) <= MAX_CLOSE_REASON_BYTES) return message;
  const sentence = message.split('. ')[0]!;
  if (Buffer.byteLength(sentence) <= MAX_CLOSE_REASON_BYTES) return sentence;
  let cut = message;
  while (Buffer.byteLength(`${cut}…`) > MAX_CLOSE_REASON_BYTES) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/**
 * The close that says why the gate refused a connection: 4403 Forbidden for a key (invalid,
 * conflicting, or not allowed here), 4429 for a rate limit (graphql-ws's clients do not retry it),
 * 1013 Try Again Later when the key cannot be checked right now; the reason is the refusal's message.
 */
async function closeFor(refusal: Response): Promise<[number, string]> {
  const body = (await refusal.json().catch(() => null)) as { errors?: GraphQLFormattedError[] } | null;
  const error = body?.errors?.[0];
  const code = error?.extensions?.code;
  const closeCode = code === 'RATE_LIMIT_EXCEEDED' ? CloseCode.TooManyInitialisationRequests : code === 'SERVICE_UNAVAILABLE' ? 1013 : CloseCode.Forbidden;
  return [closeCode, closeReason(error?.message ?? 'Forbidden')];
}

/** The results of an SSE answer (`event: next` … `event: complete`), until it completes or `signal` aborts. */
async function* resultsOf(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<FormattedExecutionResult> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel().catch(() => undefined);
  signal.addEventListener('abort', cancel, { once: true });
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = '';
        const data: string[] = [];
        // Comment lines (`:`) are the stream's heartbeats: the socket has its own.
        for (const line of block.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
        }
        if (event === 'complete') return;
        if (event === 'next' && data.length) yield JSON.parse(data.join('\n')) as FormattedExecutionResult;
      }
    }
  } finally {
    signal.removeEventListener('abort', cancel);
    cancel();
  }
}

export function createGraphqlWebSocket(deps: GraphqlWebSocketDeps): GraphqlWebSocket {
  const settings: WebSocketSettings = { ...DEFAULTS, ...deps.settings };
  const { gate, observe } = deps;
  const { logger, metrics } = observe;
  const allowed = deps.allowedOrigins;
  let stopping = false;
  /** Open connections by client address. */
  const byAddress = new Map<string, number>();

  const wss = new WebSocketServer({ noServer: true, maxPayload: settings.messageBytes, handleProtocols, perMessageDeflate: false });

  /** A handshake answered (101, or a refusal): counted and logged like any request. */
  function recordHandshake(request: IncomingMessage, requestId: string, startedAt: bigint, status: number): void {
    const path = (request.url ?? '/').split('?')[0]!;
    recordRequest(observe, {
      requestId,
      method: request.method ?? 'GET',
      path,
      route: observe.routeOf(new URL(path, 'http://localhost')),
      status,
      seconds: Number(process.hrtime.bigint() - startedAt) / 1e9,
      fields: { transport: 'websocket' },
    });
  }

  /** Answers a refused handshake with the contract's JSON. */
  function refuse(request: IncomingMessage, socket: Duplex, startedAt: bigint, error: AppError): void {
    endWithError(socket, error, request.url ?? '/');
    recordHandshake(request, handshakeRequestId(request), startedAt, error.status);
  }

  // ws's own refusals of a malformed handshake (a method other than GET, no or a bad
  // Sec-WebSocket-Key, an unknown version), in the contract's JSON rather than ws's plain text.
  wss.on('wsClientError', (error, socket, request) => {
    refuse(request, socket, process.hrtime.bigint(), validationError({ handshake: error.message }, `Malformed WebSocket handshake: ${error.message}`));
  });

  /** connection_init: the gate admits the connection with its credentials, or it is closed saying why. */
  async function admit(ctx: Context<Record<string, unknown> | undefined, Extra>): Promise<boolean> {
    const { connection, socket } = ctx.extra;
    const credentials = credentialsIn(ctx.connectionParams, 'connection_init payload');
    if (credentials instanceof AppError) {
      socket.close(CloseCode.BadRequest, closeReason(credentials.message));
      return false;
    }
    connection.lines.push(...credentials);
    const request = new Request(connection.url, { headers: headersOf(connection.lines) });
    const { refused } = await gate.admit(request, stateOf(connection, connection.lines), 'graphql');
    if (!refused) return true;
    socket.close(...(await closeFor(refused)));
    return false;
  }

  /** The in-process request that runs an operation, or why its credentials are refused. */
  function requestFor({ connection, payload }: Operation, signal: AbortSignal): { request: Request; state: RequestState } | AppError {
    const { headers, ...extensions } = payload.extensions ?? {};
    // GraphiQL sends the headers of its Headers pane with each operation (extensions.headers): a key
    // left empty there is no key (its page does not send it over HTTP either), unlike an empty header.
    const credentials = credentialsIn(headers, 'extensions.headers', { emptyIsAbsent: true });
    if (credentials instanceof AppError) return credentials;
    connection.operations += 1;
    const lines = [
      ...connection.lines,
      ...credentials,
      'Content-Type', 'application/json',
      'Accept', 'text/event-stream',
      'X-Request-ID', `${connection.id}:${connection.operations}`,
    ];
    const body = JSON.stringify({
      query: payload.query,
      variables: payload.variables ?? undefined,
      operationName: payload.operationName ?? undefined,
      extensions: Object.keys(extensions).length ? extensions : undefined,
    });
    return { request: new Request(connection.url, { method: 'POST', headers: headersOf(lines), body, signal }), state: stateOf(connection, lines) };
  }

  /**
   * Runs an operation through the app and streams its results; ends when the answer completes, or
   * when graphql-ws returns the stream (the client completed it, or the socket closed), which
   * cancels the answer (a subscription's stream is then released, its slot freed).
   */
  function run(operation: Operation): Repeater<FormattedExecutionResult> {
    return new Repeater<FormattedExecutionResult>(async (push, stop) => {
      const abort = new AbortController();
      void stop.then(() => abort.abort());
      let first = true;
      /** Sends a result; false when it refused the operation (its first result, without data). */
      const deliver = async (result: FormattedExecutionResult): Promise<boolean> => {
        if (first && !('data' in result) && result.errors?.length) {
          stop(new OperationRefused(result.errors));
          return false;
        }
        first = false;
        await push(result);
        return true;
      };
      try {
        const made = requestFor(operation, abort.signal);
        if (made instanceof AppError) {
          stop(new OperationRefused([made.toJSON()]));
          return;
        }
        const response = await deps.fetch(made.request, made.state);
        if (response.headers.get('content-type')?.startsWith('text/event-stream') && response.body) {
          for await (const result of resultsOf(response.body, abort.signal)) if (!(await deliver(result))) return;
        } else {
          // A refusal before any GraphQL ran (the gate's 401, 429, 503) is JSON whatever was accepted.
          if (!(await deliver((await response.json()) as FormattedExecutionResult))) return;
        }
        stop();
      } catch (error) {
        stop(abort.signal.aborted ? undefined : error);
      }
    });
  }

  const protocol = makeServer<Record<string, unknown> | undefined, Extra>({
    connectionInitWaitTimeout: settings.connectionInitMs,
    onConnect: admit,
    onSubscribe(ctx, _id, payload) {
      // Counted with the one being subscribed.
      const running = Object.keys(ctx.subscriptions).length;
      if (running > settings.maxOperations) {
        return [
          new AppError(
            'RATE_LIMIT_EXCEEDED',
            `This connection already runs ${running - 1} operations, the most one GraphQL WebSocket connection may run at once: complete one before starting another`,
            { openOperations: running - 1, limit: settings.maxOperations },
          ),
        ];
      }
      return { schema: deps.schema, document: STREAMED, contextValue: { connection: ctx.extra.connection, payload } satisfies Operation };
    },
    // The app's results are already formatted (JSON read back): sent as they are.
    subscribe: (args) => run(args.contextValue as Operation) as unknown as AsyncIterable<ExecutionResult>,
    onNext: (_ctx, _id, _payload, _args, result) => result as FormattedExecutionResult,
    onError(_ctx, _id, _payload, errors: readonly GraphQLError[]) {
      const cause = errors[0]?.originalError;
      if (cause instanceof OperationRefused) return cause.errors;
      // Anything else that ended a stream is a failure of ours: logged, and masked as over HTTP.
      if (cause) {
        logger.error({ err: cause }, 'GraphQL WebSocket: an operation failed');
        return [{ message: INTERNAL_MESSAGE, extensions: { code: 'INTERNAL_ERROR' } }];
      }
      return undefined;
    },
  });

  /** A connection the handshake let in: heartbeats, the protocol, and a log line when it closes. */
  function opened(socket: WebSocket, request: IncomingMessage, connection: Connection): void {
    recordHandshake(request, connection.id, connection.openedAt, 101);
    metrics.websocketConnections.inc();
    byAddress.set(connection.address, (byAddress.get(connection.address) ?? 0) + 1);
    // The server pings; a peer that has not answered one by the next is gone (1006).
    let answered = true;
    socket.on('pong', () => (answered = true));
    const heartbeat = setInterval(() => {
      if (!answered) return void socket.terminate();
      answered = false;
      socket.ping();
    }, settings.keepAliveMs).unref();
    // A bad frame, an oversize message (1009), invalid UTF-8 (1007): ws closes the connection itself.
    socket.on('error', (error) => logger.debug({ err: error, requestId: connection.id }, 'GraphQL WebSocket: closed for a protocol error'));
    const closed = protocol.opened(
      {
        protocol: socket.protocol,
        // A send that fails means the connection is going: its close cleans up.
        send: (data) => new Promise<void>((resolve) => (socket.readyState === socket.OPEN ? socket.send(data, () => resolve()) : resolve())),
        close: (code, reason) => socket.close(code, reason),
        onMessage: (handle) =>
          socket.on('message', (data) => {
            handle(String(data)).catch((error: unknown) => {
              // graphql-ws throws for a message only a server sends (next, error, connection_ack): the client's mistake.
              if (error instanceof Error && error.message.startsWith('Unexpected message of type')) {
                socket.close(CloseCode.BadRequest, 'Invalid message received');
                return;
              }
              logger.error({ err: error, requestId: connection.id }, 'GraphQL WebSocket: handling a message failed');
              socket.close(CloseCode.InternalServerError, 'Internal server error');
            });
          }),
      },
      { connection, socket },
    );
    socket.once('close', (code, reason) => {
      clearInterval(heartbeat);
      metrics.websocketConnections.dec();
      const left = (byAddress.get(connection.address) ?? 1) - 1;
      if (left > 0) byAddress.set(connection.address, left);
      else byAddress.delete(connection.address);
      metrics.websocketCloses.inc({ code: String(code) });
      // Its whole life, beside the handshake's request line (whose time is the handshake's).
      logger.info(
        { requestId: connection.id, closeCode: code, operations: connection.operations, ms: Math.round(Number(process.hrtime.bigint() - connection.openedAt) / 1e6) },
        'websocket closed',
      );
      closed(code, reason.toString()).catch((error: unknown) => logger.error({ err: error }, 'GraphQL WebSocket: ending a closed connection’s operations failed'));
    });
  }

  function goingAway(): void {
    stopping = true;
    for (const client of wss.clients) client.close(1001, GOING_AWAY);
    setTimeout(() => {
      for (const client of wss.clients) client.terminate();
    }, CLOSE_GRACE_MS).unref();
  }

  return {
    handleUpgrade(request, socket, head) {
      const startedAt = process.hrtime.bigint();
      // A client gone mid-handshake.
      socket.on('error', () => socket.destroy());
      const targetError = normaliseRequestTarget(request);
      if (targetError) return refuse(request, socket, startedAt, targetError);
      if (request.url!.split('?')[0] !== '/graphql') {
        return refuse(request, socket, startedAt, new AppError('NOT_FOUND', 'No WebSocket endpoint here: GraphQL over WebSocket is served at /graphql'));
      }
      // A browser opens a WebSocket to any origin, and reads what comes back: CORS_ORIGINS holds
      // here too (a page of this server's own, GraphiQL's, is same-origin).
      const origin = request.headers.origin;
      if (origin !== undefined && allowed !== '*' && !allowed.includes(origin) && hostOf(origin) !== request.headers.host) {
        return refuse(request, socket, startedAt, new AppError('FORBIDDEN', `Origin ${origin.slice(0, 200)} is not allowed to use this API (CORS_ORIGINS)`));
      }
      if (stopping) return refuse(request, socket, startedAt, serviceUnavailable(GOING_AWAY, 1));
      const lines = request.rawHeaders.flatMap((line, i, all) => (i % 2 === 0 && !NOT_FORWARDED.has(line.toLowerCase()) ? [line, all[i + 1]!] : []));
      const url = `http://${request.headers.host ?? 'localhost'}/graphql`;
      const connection: Connection = {
        id: handshakeRequestId(request),
        openedAt: startedAt,
        url,
        remoteAddress: request.socket.remoteAddress,
        lines,
        operations: 0,
        address: anonymousBucket(deps.clientIp(new Request(url, { headers: headersOf(lines) }), { req: request })),
      };
      const fromAddress = byAddress.get(connection.address) ?? 0;
      if (fromAddress >= settings.maxSocketsPerAddress) {
        return refuse(
          request,
          socket,
          startedAt,
          new AppError('RATE_LIMIT_EXCEEDED', `This client address already has ${fromAddress} GraphQL WebSocket connections open on this server, the most it may: close one, or run several operations on one`, {
            openSockets: fromAddress,
            limit: settings.maxSocketsPerAddress,
          }),
        );
      }
      if (wss.clients.size >= settings.maxSockets) {
        return refuse(
          request,
          socket,
          startedAt,
          serviceUnavailable(`This server holds the most GraphQL WebSocket connections it may (${settings.maxSockets}): connect again later, or subscribe over SSE`, 1),
        );
      }
      wss.handleUpgrade(request, socket, head, (ws) => opened(ws, request, connection));
    },
    goingAway,
    async dispose() {
      goingAway();
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

/**
 * Serves GraphQL over WebSocket on `server` (src/server.ts, a cluster's worker, the tests' app):
 * WebSocket handshakes go to the app's socket server; closing `server` first closes every socket
 * with 1001 (Node's close waits for upgraded connections too, and has no event for its start).
 */
export function attachWebSocket(server: Server, app: ((req: IncomingMessage, res: ServerResponse) => unknown) & { websocket: GraphqlWebSocket }): void {
  const plain = createHttpServer(app);
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (request.headers.upgrade?.toLowerCase() === 'websocket') app.websocket.handleUpgrade(request, socket, head);
    else serveAsPlainRequest(plain, request, socket, head);
  });
  const close = server.close.bind(server);
  server.close = ((callback?: (error?: Error) => void) => {
    app.websocket.goingAway();
    return close(callback);
  }) as Server['close'];
}

/**
 * An upgrade to anything but WebSocket (`Upgrade: h2c`, which curl --http2 sends over http://): a
 * server may ignore it, and Node would have, were there no upgrade listener. The request, as
 * its bytes with its upgrade headers left out, goes to `plain`, a server without one, which answers
 * it like any request and then closes the connection.
 */
function serveAsPlainRequest(plain: Server, request: IncomingMessage, socket: Duplex, head: Buffer): void {
  let text = `${request.method} ${request.url} HTTP/${request.httpVersion}\r\n`;
  for (let i = 0; i + 1 < request.rawHeaders.length; i += 2) {
    const name = request.rawHeaders[i]!;
    if (!UPGRADE_HEADERS.has(name.toLowerCase())) text += `${name}: ${request.rawHeaders[i + 1]}\r\n`;
  }
  socket.unshift(Buffer.concat([Buffer.from(`${text}Connection: close\r\n\r\n`, 'latin1'), head]));
  plain.emit('connection', socket);
}
