import { createServer, maxHeaderSize, STATUS_CODES, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, validationError } from '../shared/errors.js';
import { errorBody } from '../rest/envelope.js';
import { graphqlErrorBody } from './graphql-errors.js';

// The Node HTTP listener in front of the app. Yoga's Node adapter builds each request's URL as
// `http://${Host header}${request-target}` and, when that is not a URL, answers 500 with the
// exception's stack as the body — before any plugin of ours runs. Node's parser lets such requests
// through: the asterisk form (`GET *`), the absolute form (`GET http://host/path`, which HTTP/1.1
// servers must accept), a Host header that is no host (`a b`, `[::1`, `x:99999`). A Host header
// with a path or query in it (`x/api/orders?`) would even change the path the app routes.
// Here the absolute form becomes the origin form, and anything else that cannot be a URL is a
// 400 VALIDATION_ERROR in the contract's shape.

/** RFC 3986 host (IP literal or reg-name without percent-encoding) and an optional port. */
const HOST = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9\-._~!$&'()*+,;=]+)(?::[0-9]{0,5})?$/;
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\//;

function parses(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/** Normalises the request in place; an error when it cannot be served at all (a WebSocket handshake's too, src/pipeline/websocket.ts). */
export function normaliseRequestTarget(req: IncomingMessage): AppError | undefined {
  // An empty Host is what a client sends for a target without authority: as if absent.
  if (req.headers.host === '') delete req.headers.host;
  const host = req.headers.host;
  if (host !== undefined && (!HOST.test(host) || !parses(`http://${host}/`))) {
    return validationError({ host: 'is not a valid host[:port]' }, 'Invalid Host header');
  }
  const target = req.url ?? '/';
  if (!target.startsWith('/')) {
    const absolute = ABSOLUTE_FORM.test(target) ? parses(target) : undefined;
    if (!absolute) return validationError({ target: 'must be a path (origin form) or an absolute URL' }, 'Malformed request target');
    req.url = `${absolute.pathname}${absolute.search}`;
  }
  if (!parses(`http://${host ?? 'localhost'}${req.url}`)) {
    return validationError({ target: 'is not a valid URL path' }, 'Malformed request target');
  }
  return notUtf8Parameter(req.url ?? '/');
}

/**
 * A query parameter whose percent-encoded bytes are not UTF-8 (`%FF`, or `%ED%A0%80`, a lone
 * surrogate): the URL parser would read each such byte as U+FFFD and the request would go on
 * with text the client never sent. Refused on every route, naming the parameter, as a body that
 * is not UTF-8 is. (Bytes that are not percent-encoded never get here: Node's parser refuses them.)
 */
function notUtf8Parameter(target: string): AppError | undefined {
  const query = target.indexOf('?');
  if (query < 0 || !target.includes('%', query)) return undefined;
  for (const pair of target.slice(query + 1).split('&')) {
    const equals = pair.indexOf('=');
    const [name, value] = equals < 0 ? [pair, ''] : [pair.slice(0, equals), pair.slice(equals + 1)];
    const decodedName = decodedUtf8(name);
    if (decodedName === undefined) return validationError({ query: 'has a parameter name that is not valid UTF-8' }, 'Malformed query string: a parameter name is not valid UTF-8');
    if (decodedUtf8(value) === undefined) {
      const shown = decodedName.slice(0, 100);
      return validationError({ [shown]: 'is not valid UTF-8' }, `Malformed query parameter "${shown}": its value is not valid UTF-8`);
    }
  }
  return undefined;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A query component decoded as URLSearchParams does (`+` is a space, a `%` that starts no escape
 * is itself), or undefined when its bytes are not UTF-8.
 */
function decodedUtf8(component: string): string | undefined {
  const bytes = Buffer.from(component.replace(/\+/g, ' '), 'latin1');
  const decoded: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const escape = bytes[i] === 0x25 ? /^[0-9A-Fa-f]{2}$/.exec(bytes.subarray(i + 1, i + 3).toString('latin1')) : null;
    if (escape) {
      decoded.push(parseInt(escape[0], 16));
      i += 2;
    } else decoded.push(bytes[i]!);
  }
  try {
    return strictUtf8.decode(Uint8Array.from(decoded));
  } catch {
    return undefined;
  }
}

/** The error body for a path: GraphQL's shape on /graphql, the REST envelope elsewhere. */
const bodyFor = (target: string, error: AppError) => (target.split('?')[0] === '/graphql' ? graphqlErrorBody(error) : errorBody(error));

function refuse(req: IncomingMessage, res: ServerResponse, error: AppError): void {
  const body = bodyFor(req.url ?? '', error);
  res.writeHead(error.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
}

/** Wraps the app's listener: `createServer(guardRequestTarget(app))`. */
export function guardRequestTarget(listener: (req: IncomingMessage, res: ServerResponse) => unknown): RequestListener {
  return (req, res) => {
    const error = normaliseRequestTarget(req);
    if (error) refuse(req, res, error);
    else void listener(req, res);
  };
}

/**
 * Requests Node's parser refuses before any listener sees them: a malformed request line or
 * header (HPE_* codes) and headers over --max-http-header-size. Node would answer them in plain
 * text; here they get the contract's JSON. Anything else (a reset or timed-out connection) is
 * answered as Node would.
 */
function answerClientError(error: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Duplex & { _httpMessage?: ServerResponse | null }): void {
  // Only on a connection that is still open and not in the middle of an answer (Node's own rule:
  // a kept-alive connection may have answered earlier requests).
  if (error.code === 'ECONNRESET' || !socket.writable || socket._httpMessage?.headersSent) {
    socket.destroy();
    return;
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    socket.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
    return;
  }
  const appError =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('HEADERS_TOO_LARGE', `Request headers too large: the request line and headers may take at most ${Math.floor(maxHeaderSize / 1024)} KiB`)
      : validationError({ request: 'is not a well-formed HTTP/1.1 request' }, 'Malformed HTTP request');
  // The packet Node was parsing starts the request, or continues one split across packets (a long
  // target or headers). Only a packet that starts with a method tells which request this is; a
  // HEAD, or a request whose method is unknown, gets no body (a HEAD client would read it as the
  // next answer), as from Node. The target picks the body's shape.
  const firstLine = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.subarray(0, 2048).toString('latin1').split('\r\n', 1)[0]! : '';
  const requestLine = /^([A-Z]+)(?: (\S*)|$)/.exec(firstLine);
  endWithError(socket, appError, requestLine && requestLine[1] !== 'HEAD' ? (requestLine[2] ?? '') : null);
}

/**
 * Answers `error` on a connection no HTTP response object owns (a request Node's parser refused, a
 * WebSocket handshake refused) and closes it: the contract's JSON for `target`'s path, no body
 * when `target` is null.
 */
export function endWithError(socket: Duplex, error: AppError, target: string | null): void {
  const body = target === null ? '' : JSON.stringify(bodyFor(target, error));
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
      (body ? 'Content-Type: application/json; charset=utf-8\r\n' : '') +
      'Cache-Control: no-store\r\n' +
      (error.retryAfter !== undefined ? `Retry-After: ${error.retryAfter}\r\n` : '') +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/** The service's HTTP server: the app behind guardRequestTarget, and Node's own refusals as JSON. */
export function createHttpServer(listener: (req: IncomingMessage, res: ServerResponse) => unknown): Server {
  const server = createServer(guardRequestTarget(listener));
  server.on('clientError', answerClientError);
  return server;
}
