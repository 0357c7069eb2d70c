import { defineConfig } from 'prisma/config';

// Prisma 7 CLI configuration. Migrations are applied by the application (src/db/migrate.ts);
// the CLI is used here only for `prisma generate`.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});
