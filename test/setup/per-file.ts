import { afterAll } from 'vitest';
import { stopPoolers } from '../helpers/app.js';
import { closeKeyClients } from '../helpers/keys.js';

// Run before each test file (vitest.config.ts, setupFiles). A worker runs its files one after
// another in one module cache (isolate: false), so what the helpers keep for a file (the key
// helper's database clients, the PgBouncer poolers of TEST_POOLER=1) is closed with that file.
afterAll(async () => {
  await Promise.all([closeKeyClients(), stopPoolers()]);
});
