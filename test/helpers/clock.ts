/**
 * A clock that moves only when told to, for the rate-limit stores' and the field limiter's `now`
 * option: a test ends a window by advancing it, exactly to the millisecond, instead of sleeping
 * through the window with a margin.
 */
export interface ManualClock {
  /** The current time, Unix ms. Pass it as `now` (it needs no `this`). */
  readonly now: () => number;
  /** Moves the clock forward by `ms` (≥ 0). */
  advance(ms: number): void;
  /** Moves the clock forward to `at` (Unix ms, not before the current time). */
  advanceTo(at: number): void;
}

/**
 * A manual clock starting at `start` (default: the real time now, so that timestamps it hands out
 * look like any other; graphql-rate-limit, under the field limits, also compares them with
 * Date.now()). It never goes back: a window cannot reopen by accident.
 */
export function manualClock(start = Date.now()): ManualClock {
  let current = start;
  const advanceTo = (at: number) => {
    if (!Number.isSafeInteger(at) || at < current) throw new RangeError(`A manual clock only moves forward, in whole ms: ${current} → ${at}`);
    current = at;
  };
  return {
    now: () => current,
    advance: (ms) => advanceTo(current + ms),
    advanceTo,
  };
}
