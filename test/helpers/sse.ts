import type { TestApp } from './app.js';
import type { TestKey } from './keys.js';

// A real SSE client for GraphQL subscriptions: fetch with Accept: text/event-stream.

export interface SseEvent {
  event: string;
  data: any;
  at: number;
}

/** An open SSE stream: its status, the events so far, and the heartbeats (comment lines) seen. */
export class Stream {
  events: SseEvent[] = [];
  heartbeats = 0;
  ended = false;
  endedAt = 0;
  private waiters: (() => void)[] = [];
  constructor(
    readonly status: number,
    readonly contentType: string,
    body: ReadableStream<Uint8Array>,
    private readonly abort: AbortController,
  ) {
    void this.read(body);
  }

  private async read(body: ReadableStream<Uint8Array>) {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) this.heartbeats++;
            else if (line.startsWith('event:')) event = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).trim());
          }
          if (data.length) this.events.push({ event, data: data.join('\n') ? JSON.parse(data.join('\n')) : null, at: Date.now() });
          this.notify();
        }
      }
    } catch {
      // aborted by the test
    }
    this.ended = true;
    this.endedAt = Date.now();
    this.notify();
  }

  private notify() {
    for (const w of this.waiters.splice(0)) w();
  }

  /** Waits until `ok` holds of the events, at most `ms`. */
  async until(what: string, ok: (s: Stream) => boolean, ms = 5000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!ok(this)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`${what}: not within ${ms} ms; events ${JSON.stringify(this.events)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  nexts() {
    return this.events.filter((e) => e.event === 'next').map((e) => e.data);
  }

  close() {
    this.abort.abort();
  }
}

export async function subscribe(app: TestApp, query: string, variables: Record<string, unknown> = {}, key?: TestKey, headers: Record<string, string> = {}): Promise<Stream> {
  const abort = new AbortController();
  const res = await fetch(`${app.base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(key ? { 'x-api-key': key.key } : {}), ...headers },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  const stream = new Stream(res.status, res.headers.get('content-type') ?? '', res.body!, abort);
  // Yoga's first comment line says the stream is open; the subscription is set up before it.
  await stream.until('the stream opens', (s) => s.heartbeats > 0 || s.events.length > 0 || s.ended);
  return stream;
}

