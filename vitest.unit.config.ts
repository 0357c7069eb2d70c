import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';

const require = createRequire(import.meta.url);

// The unit tier (`npm run test:unit`): pure rules, no database, no server, no network. No global
// setup (vitest.config.ts's starts PostgreSQL); test/setup/unit.ts makes any socket a failure.
export default defineConfig({
  resolve: {
    // As in vitest.config.ts: one copy of graphql (its CommonJS entry, the one the dependencies
    // load), or the schema's objects and ours refuse each other.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/unit/**/*.test.ts'],
    setupFiles: ['test/setup/unit.ts'],
    testTimeout: 10_000,
  },
});
