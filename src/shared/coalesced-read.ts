/**
 * A read that concurrent callers share, without ever answering a caller with a read that began
 * before it asked: at most one read runs; whoever asks while it runs shares the next one, which
 * starts as soon as it ends. Under load a per-request read (a revision, say) is then made about
 * once per read's round trip, not once per request, and each answer is still as of after the ask.
 */
export function coalescedRead<T>(read: () => Promise<T>): () => Promise<T> {
  let inFlight: Promise<T> | null = null;
  let next: Promise<T> | null = null;
  const current = (): Promise<T> => {
    if (!inFlight) {
      inFlight = read().finally(() => {
        inFlight = null;
      });
      return inFlight;
    }
    next ??= inFlight
      .catch(() => undefined)
      .then(() => {
        next = null;
        return current();
      });
    return next;
  };
  return current;
}
