import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { isPublicAddress, urlHost, urlProblem, type TargetPolicy } from './targets.js';

export type AttemptOutcome = 'success' | 'http_error' | 'timeout' | 'connection_error' | 'refused_target';

export interface SendResult {
  outcome: AttemptOutcome;
  /** HTTP status when the receiver answered. */
  statusCode: number | null;
  /** Short reason for failures; null on success. Never includes the URL (its query string may hold secrets). */
  error: string | null;
  /** The first 1024 bytes at most of the response body, decoded as UTF-8 without a broken trailing character; null when there was none. */
  responseBody: string | null;
  durationMs: number;
}

export const RESPONSE_BODY_LIMIT = 1024;
const USER_AGENT = 'marketplace-webhooks/1';
/** Code of the error our lookup fails a connection with, to tell a refusal from a network failure. */
const REFUSED_TARGET_CODE = 'ERR_WEBHOOK_TARGET';

/**
 * A `lookup` for http(s).request that fails the connection when any resolved address is not
 * public. Node then connects to exactly the addresses checked here, so a DNS answer that changes
 * between a check and the connection (rebinding) cannot slip a private address through.
 * Node 20 calls it with `options.all` (autoSelectFamily, the default) or without; both are answered.
 */
function guardedLookup(allowPrivate: boolean): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const first = addresses[0];
      if (first === undefined) return callback(Object.assign(new Error('no addresses'), { code: 'ENOTFOUND' }), '');
      if (!allowPrivate && addresses.some((a) => !isPublicAddress(a.address))) {
        return callback(Object.assign(new Error('resolves to a private address'), { code: REFUSED_TARGET_CODE }), '');
      }
      if (options.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  // autoSelectFamily reports a failure on every address as an AggregateError.
  const inner = (err as { errors?: unknown } | null)?.errors;
  return Array.isArray(inner) ? errorCode(inner[0]) : undefined;
}

/** Outcome and short reason for a request that failed before the receiver answered. */
function failureOf(err: unknown): { outcome: AttemptOutcome; error: string } {
  const code = errorCode(err);
  if (code === REFUSED_TARGET_CODE) return { outcome: 'refused_target', error: 'resolves to a private address' };
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    EPIPE: 'connection reset',
    ENOTFOUND: 'host does not resolve',
    EAI_AGAIN: 'host does not resolve (temporary DNS failure)',
    ETIMEDOUT: 'connection timed out',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
  };
  if (code !== undefined && reasons[code] !== undefined) return { outcome: 'connection_error', error: reasons[code] };
  if (code !== undefined && /TLS|SSL|CERT|SELF_SIGNED|UNABLE_TO_/.test(code)) {
    return { outcome: 'connection_error', error: `TLS failure (${code})` };
  }
  return { outcome: 'connection_error', error: code === undefined ? 'connection failed' : `connection failed (${code})` };
}

function duration(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * One POST of `body` to a webhook receiver. The target is checked again here (the URL, then every
 * address it resolves to at connect time), redirects are not followed, one deadline covers the
 * whole attempt and at most RESPONSE_BODY_LIMIT bytes of the answer are read. Never throws.
 */
export async function sendWebhook(
  url: string,
  body: string,
  headers: Record<string, string>,
  options: { timeoutMs: number; policy: TargetPolicy },
): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const refused = (error: string): SendResult => ({ outcome: 'refused_target', statusCode: null, error, responseBody: null, durationMs: elapsed() });

  const problem = urlProblem(url, options.policy);
  if (problem !== null) return refused(`url ${problem}`);
  const target = new URL(url);
  const host = urlHost(target);
  // Node never calls `lookup` for an IP literal, so the guard below would not see it.
  if (net.isIP(host) !== 0 && !options.policy.allowPrivate && !isPublicAddress(host)) return refused('is a private address');

  return new Promise<SendResult>((resolve) => {
    let settled = false;
    let request: http.ClientRequest | undefined;
    let response: http.IncomingMessage | undefined;
    const chunks: Buffer[] = [];
    let received = 0;

    const finish = (outcome: AttemptOutcome, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      // agent: false, so the socket is ours alone: closing it also stops whatever body is still coming.
      response?.destroy();
      request?.destroy();
      resolve({
        outcome,
        statusCode: response?.statusCode ?? null,
        error,
        // stream: true keeps back a trailing partial character instead of decoding it to U+FFFD.
        responseBody: received === 0 ? null : new TextDecoder('utf-8').decode(Buffer.concat(chunks), { stream: true }),
        durationMs: elapsed(),
      });
    };
    const finishAnswered = () => {
      const status = response?.statusCode ?? 0;
      if (status >= 200 && status < 300) finish('success', null);
      else if (status >= 300 && status < 400) finish('http_error', `redirects are not followed (${status})`);
      else finish('http_error', `answered ${status}`);
    };

    const deadline = setTimeout(() => finish('timeout', `timed out after ${duration(options.timeoutMs)}`), options.timeoutMs);

    try {
      const requestHeaders: Record<string, string | number> = {};
      for (const [name, value] of Object.entries(headers)) requestHeaders[name.toLowerCase()] = value;
      requestHeaders['content-type'] = 'application/json';
      requestHeaders['user-agent'] = USER_AGENT;
      requestHeaders['content-length'] = Buffer.byteLength(body);

      const transport = target.protocol === 'https:' ? https : http;
      request = transport.request({
        protocol: target.protocol,
        hostname: host,
        port: target.port === '' ? undefined : Number(target.port),
        path: `${target.pathname}${target.search}`,
        method: 'POST',
        headers: requestHeaders,
        // No pooling: every attempt resolves (and checks) the host afresh.
        agent: false,
        lookup: guardedLookup(options.policy.allowPrivate),
      });
      request.on('error', (err) => {
        if (response !== undefined) finishAnswered();
        else {
          const failure = failureOf(err);
          finish(failure.outcome, failure.error);
        }
      });
      request.on('close', () => {
        if (response === undefined) finish('connection_error', 'connection closed');
      });
      request.on('response', (res) => {
        response = res;
        res.on('data', (chunk: Buffer) => {
          const room = RESPONSE_BODY_LIMIT - received;
          chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
          received += Math.min(chunk.length, room);
          if (received >= RESPONSE_BODY_LIMIT) finishAnswered();
        });
        res.on('end', finishAnswered);
        // The receiver answered; a body cut short does not change that.
        res.on('error', finishAnswered);
        res.on('close', finishAnswered);
      });
      request.end(body);
    } catch (err) {
      // e.g. a header value Node refuses (ERR_INVALID_CHAR): nothing was sent.
      const code = errorCode(err);
      finish('connection_error', code === undefined ? 'invalid request' : `invalid request (${code})`);
    }
  });
}
