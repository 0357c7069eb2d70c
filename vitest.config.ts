import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/setup/global.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Test files share one PostgreSQL server but each gets its own database.
    pool: 'forks',
  },
});
