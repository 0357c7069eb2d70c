// The write loop shared by counters kept in memory and written in batches (a key's last use, its
// hourly usage): flushes run one after another, a timer flushes while something is pending, and
// stopping writes what is left. What a batch is and how it is written is the caller's.

export interface BatchedFlush {
  /** Runs `write` after any flush in flight. Rejects if it fails (the caller keeps the batch). */
  flush(): Promise<void>;
  /** Stops the timer and flushes once more; a failure goes to onError. Later calls wait for that. */
  stop(): Promise<void>;
  readonly stopped: boolean;
}

export function batchedFlush(opts: {
  /** Writes everything pending; on failure, puts it back and rejects. */
  write: () => Promise<void>;
  hasPending: () => boolean;
  intervalMs: number;
  /** Told about a failed timed or final flush (they have nobody else to throw to). */
  onError: (error: unknown) => void;
}): BatchedFlush {
  // One after another: two overlapping writes of the same rows would only contend.
  let chain: Promise<void> = Promise.resolve();
  let stopped = false;
  const flush = (): Promise<void> => {
    const run = chain.catch(() => undefined).then(opts.write);
    chain = run;
    return run;
  };
  const timer = setInterval(() => {
    if (opts.hasPending()) flush().catch(opts.onError);
  }, opts.intervalMs);
  // Never the reason a process stays alive; stop() does the final write.
  timer.unref();
  return {
    flush,
    async stop() {
      if (stopped) return chain.catch(() => undefined);
      stopped = true;
      clearInterval(timer);
      await flush().catch(opts.onError);
    },
    get stopped() {
      return stopped;
    },
  };
}
