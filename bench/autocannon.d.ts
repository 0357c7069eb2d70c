// The part of autocannon's API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  interface Histogram {
    average: number;
    p50: number;
    p99: number;
    total: number;
  }
  /** One request as autocannon builds it; setupRequest gets it with the defaults filled in. */
  export interface RequestData {
    method?: string;
    path?: string;
    body?: string | Buffer;
    headers?: Record<string, string>;
  }
  export interface Options {
    url: string;
    connections?: number;
    duration?: number;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    timeout?: number;
    requests?: (RequestData & { setupRequest?: (req: RequestData) => RequestData })[];
  }
  export interface Result {
    requests: Histogram;
    latency: Histogram;
    non2xx: number;
    errors: number;
    timeouts: number;
  }
  /** The run: a promise of its result, which stop() ends early. */
  export default function autocannon(options: Options): Promise<Result> & { stop(): void };
}
