import http from 'node:http';
import type { AddressInfo } from 'node:net';

// A webhook receiver on a real socket: records every request it is sent and answers as the test
// tells it (a status, a body, or never).

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  at: number;
}

export type Answer = { status: number; body?: string } | 'hang';

export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  /** How the next requests are answered (default 204); `n` is the request's 1-based number. */
  answer: (request: Received, n: number) => Answer;
  /** Resolves with the received requests once `count` match `which`; fails after `timeoutMs`. */
  waitFor(which: (r: Received) => boolean, count?: number, timeoutMs?: number): Promise<Received[]>;
  close(): Promise<void>;
}

/**
 * An HTTP server on 127.0.0.1:`port` that reads each request's whole body before `onBody`
 * answers it; `close` ends its open connections too. The webhook and the OTLP receivers are one.
 */
export async function startBodyServer(
  onBody: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void,
  port = 0,
): Promise<{ port: number; close: () => Promise<void> }> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => onBody(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const hanging = new Set<http.ServerResponse>();
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    answer: () => ({ status: 204 }),
    async waitFor(which, count = 1, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = receiver.received.filter(which);
        if (found.length >= count) return found;
        if (Date.now() > deadline) throw new Error(`the receiver got ${found.length} of ${count} requests in ${timeoutMs} ms; all: ${JSON.stringify(receiver.received.map((r) => r.json?.type))}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      await server.close();
    },
  };
  const server = await startBodyServer((req, res, body) => {
    let json: unknown = null;
    try {
      json = JSON.parse(body);
    } catch {
      // recorded as text
    }
    const received: Received = { path: req.url ?? '', headers: req.headers, body, json, at: Date.now() };
    receiver.received.push(received);
    const answer = receiver.answer(received, receiver.received.length);
    if (answer === 'hang') {
      hanging.add(res);
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'text/plain' });
    res.end(answer.body ?? '');
  }, port);
  receiver.port = server.port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks`;
  return receiver;
}

/** A port nothing listens on (taken, then released): connections to it are refused. */
export async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
