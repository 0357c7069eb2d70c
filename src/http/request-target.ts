import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { validationError, type AppError } from '../errors.js';
import { errorBody } from '../rest/envelope.js';

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

/** Normalises the request in place; an error when it cannot be served at all. */
function checkRequest(req: IncomingMessage): AppError | undefined {
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
  return undefined;
}

function refuse(req: IncomingMessage, res: ServerResponse, error: AppError): void {
  const pathname = (req.url ?? '').split('?')[0];
  const body = pathname === '/graphql' ? { errors: [{ message: error.message, extensions: error.extensions }] } : errorBody(error);
  res.writeHead(error.status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : JSON.stringify(body));
}

/** Wraps the app's listener: `createServer(guardRequestTarget(app))`. */
export function guardRequestTarget(listener: (req: IncomingMessage, res: ServerResponse) => unknown): RequestListener {
  return (req, res) => {
    const error = checkRequest(req);
    if (error) refuse(req, res, error);
    else void listener(req, res);
  };
}
