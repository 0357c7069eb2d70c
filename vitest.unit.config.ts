import { defineConfig } from 'vitest/config';
import main from './vitest.config.js';

// The unit tier (`npm run test:unit`): pure rules, no database, no server, no network. No global
// setup (vitest.config.ts's starts PostgreSQL); test/setup/unit.ts makes any socket a failure.
export default defineConfig({
  // The main config's graphql alias: one copy of graphql, or the schema's objects and ours refuse each other.
  resolve: main.resolve,
  test: {
    include: ['test/unit/**/*.test.ts'],
    setupFiles: ['test/setup/unit.ts'],
    // Pure tests share one module graph per worker: the schema and its plugins are imported once,
    // not once per file (on the 2-core machine, under load, about 7 s in all instead of 28 s).
    // So a unit test must not change a module's state for the files after it.
    isolate: false,
    testTimeout: 10_000,
  },
});
