import { createRequire } from 'node:module';
import { configDefaults, defineConfig } from 'vitest/config';
import { DurationsReporter } from './test/setup/durations-reporter.js';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Node loads graphql's CommonJS entry for the dependencies (Pothos, Yoga); Vite would pick
    // its .mjs for our code, and two copies of graphql refuse each other's schema objects.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    // The unit tier has its own config (vitest.unit.config.ts), run first by `npm test`.
    exclude: [...configDefaults.exclude, 'test/unit/**'],
    globalSetup: ['test/setup/global.ts'],
    setupFiles: ['test/setup/per-file.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Test files share one PostgreSQL server but each gets its own database.
    pool: 'forks',
    // A worker runs its files one after another in one module cache: each file imported the app
    // afresh, about 3 s of CPU, 240 s of the main pass (measured 2026-11-29). Files clean up what
    // they start (apps, servers, tracing, environment) in afterAll, so none sees another's state.
    isolate: false,
    // Two files at once. vitest's default is one fewer than the cores (one on the 2-core
    // machines), while a file spends much of its time waiting on PostgreSQL, a child process or
    // a browser: two keep both cores busy (main pass 596 s with one, measured 2026-11-28).
    maxWorkers: 2,
    // Each file's time also goes to .reports/ (npx tsx scripts/slowest-tests.ts lists the slowest).
    reporters: ['default', new DurationsReporter('.reports/vitest-main.json')],
  },
});
