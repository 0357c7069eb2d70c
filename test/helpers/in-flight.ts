import http from 'node:http';
import net from 'node:net';

// Requests held in flight across a shutdown, and what a client sees of the listener meanwhile.

export interface Answer {
  status: number;
  body: string;
}

/**
 * A POST whose body is sent in two parts: `finish()` sends the rest; `answer` is the response;
 * `taken()` says whether the server has taken the request up. It sends Expect: 100-continue:
 * Node's server answers "100 Continue" as it hands the request to the app (in a cluster, the
 * worker's), so the client learns that the request is under way; until then it is a connection
 * the server may not even have accepted, or one it counts idle, which closing the listener or
 * the idle connections would drop.
 */
export function halfSent(port: number, pathname: string, body: string, headers: Record<string, string> = {}) {
  const bytes = Buffer.from(body);
  const cut = Math.floor(bytes.length / 2);
  // agent: false, one connection per request, closed after its response.
  const req = http.request({
    host: '127.0.0.1',
    port,
    method: 'POST',
    path: pathname,
    agent: false,
    headers: { 'content-type': 'application/json', 'content-length': String(bytes.length), expect: '100-continue', ...headers },
  });
  let taken = false;
  req.once('continue', () => (taken = true));
  const answer = new Promise<Answer>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  req.write(bytes.subarray(0, cut));
  return { answer, taken: () => taken, finish: () => req.end(bytes.subarray(cut)) };
}

/** 'connected', or the error code of a connection to `port` (ECONNREFUSED once nothing listens). */
function connectOutcome(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/**
 * The outcome of connecting to `port`, tried until it is refused or `ms` have passed: a service
 * logs that it is shutting down just before its listener closes.
 */
export async function outcomeUntilRefused(port: number, ms: number): Promise<string> {
  const deadline = Date.now() + ms;
  let outcome = await connectOutcome(port);
  while (outcome !== 'ECONNREFUSED' && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    outcome = await connectOutcome(port);
  }
  return outcome;
}
