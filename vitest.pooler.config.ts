import { defineConfig } from 'vitest/config';
import main from './vitest.config.js';
import { POOLER_FILES } from './test/pooler-files.js';
import { DurationsReporter } from './test/setup/durations-reporter.js';

// The pass behind PgBouncer (`npm run test:pooler`): the files of test/pooler-files.ts, each of
// their apps with DATABASE_URL on Debian's PgBouncer in transaction mode (TEST_POOLER=1,
// test/helpers/app.ts). The main config otherwise: its global setup, timeouts and pool.
export default defineConfig({
  ...main,
  test: {
    ...main.test,
    include: Object.keys(POOLER_FILES),
    env: { TEST_POOLER: '1' },
    reporters: ['default', new DurationsReporter('.reports/vitest-pooler.json')],
  },
});
