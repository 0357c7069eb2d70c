/**
 * Reads until `ok` holds, every `everyMs`, for at most `ms`; then throws naming `what` and the
 * last value read. For what the service does on its own time (a notification heard, a webhook
 * sent, a replica caught up).
 */
export async function eventually<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, ms = 10_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what}: still ${JSON.stringify(value)} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
