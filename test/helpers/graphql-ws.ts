import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';

// GraphQL over WebSocket as its clients speak it: graphql-ws's own client on Node's `ws`, one
// socket per client, each from a client address of its own (the suite runs behind a trusted
// loopback proxy, as test/helpers/app.ts has it), so that refused keys of one test never use up
// another's anonymous allowance.

/** What a client needs of a server: where it listens (a TestApp, or a started service). */
export interface Listening {
  /** http://host:port */
  base: string;
}

export const wsUrl = (app: Listening, path = '/graphql') => `${app.base.replace(/^http/, 'ws')}${path}`;

let clientSeq = 0;
/** A client address of its own, for X-Forwarded-For. */
export const nextAddress = () => {
  const n = ++clientSeq;
  return `10.250.${(n >> 8) & 255}.${n & 255}`;
};

export interface Closed {
  code: number;
  reason: string;
}

export interface WsClient {
  client: Client;
  /** Close events of its socket, as the client saw them. */
  closes: Closed[];
  /** Resolves once the server has acknowledged connection_init, or rejects with the close that refused it. */
  acknowledged: Promise<void>;
  dispose(): Promise<void>;
}

export interface ConnectOptions {
  /** connection_init's payload. */
  init?: Record<string, unknown>;
  /** The handshake's headers (X-Forwarded-For is added unless given). */
  headers?: Record<string, string>;
}

/** A graphql-ws client of `app` that connects at once and never retries: a refusal is seen as it is. */
export function connect(app: Listening, opts: ConnectOptions = {}): WsClient {
  const headers = { 'x-forwarded-for': nextAddress(), ...opts.headers };
  const closes: Closed[] = [];
  let settle: { resolve: () => void; reject: (closed: Closed) => void };
  const acknowledged = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  acknowledged.catch(() => undefined);
  const client = createClient({
    url: wsUrl(app),
    webSocketImpl: class extends WebSocket {
      constructor(url: string, protocols?: string | string[]) {
        super(url, protocols, { headers });
      }
    },
    connectionParams: opts.init,
    lazy: false,
    retryAttempts: 0,
    onNonLazyError: () => undefined,
    on: {
      connected: () => settle.resolve(),
      closed: (event) => {
        const closed = { code: (event as Closed).code, reason: String((event as Closed).reason) };
        closes.push(closed);
        settle.reject(closed);
      },
    },
  });
  return { client, closes, acknowledged, dispose: async () => client.dispose() };
}

/** One operation's messages as a client sees them: its results, then its end. */
export class Operation {
  results: FormattedExecutionResult[] = [];
  /** What ended it in error: the `error` message's errors, or the socket's close. */
  error: unknown;
  completed = false;
  endedAt = 0;
  private waiters: (() => void)[] = [];
  readonly stop: () => void;

  constructor(client: Client, query: string, variables?: Record<string, unknown>, extensions?: Record<string, unknown>) {
    this.stop = client.subscribe<Record<string, unknown>, Record<string, unknown>>(
      { query, variables, extensions },
      {
        next: (result) => {
          this.results.push(result);
          this.notify();
        },
        error: (error) => {
          this.error = error;
          this.endedAt = Date.now();
          this.notify();
        },
        complete: () => {
          this.completed = true;
          this.endedAt = Date.now();
          this.notify();
        },
      },
    );
  }

  get ended() {
    return this.completed || this.error !== undefined;
  }

  /** The `error` message's errors (an operation refused before it ran). */
  get refusal(): any[] | undefined {
    return Array.isArray(this.error) ? this.error : undefined;
  }

  private notify() {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits until `ok` holds, at most `ms`. */
  async until(what: string, ok: (op: Operation) => boolean, ms = 10_000): Promise<this> {
    const deadline = Date.now() + ms;
    while (!ok(this)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what}: not within ${ms} ms; results ${JSON.stringify(this.results).slice(0, 1000)}, error ${JSON.stringify(this.error)?.slice(0, 500)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this;
  }
}

/** Runs an operation to its end (a query, a mutation, or a subscription refused at once). */
export async function run(client: Client, query: string, variables?: Record<string, unknown>, extensions?: Record<string, unknown>): Promise<Operation> {
  return new Operation(client, query, variables, extensions).until('the operation ends', (op) => op.ended);
}
