import { LIVE_CHANNEL } from '../../src/background/live-hub.js';
import type { TestApp } from './app.js';
import { eventually } from './eventually.js';

/**
 * Waits until `instances` instances on the app's database LISTEN for changes. An instance starts
 * whether or not its first LISTEN succeeded (on a loaded machine it may try again a second later):
 * a change committed before then is heard by no subscription.
 */
export async function untilListening(app: TestApp, instances = 1): Promise<void> {
  const listening = async () =>
    (
      await app.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query LIKE $1`,
        [`%LISTEN ${LIVE_CHANNEL}%`],
      )
    ).rows[0]!.n;
  await eventually(`${instances} instance(s) LISTEN for changes`, listening, (n) => n >= instances, 15_000);
}
