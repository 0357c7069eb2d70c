// The benchmark's peer (bench/run.ts): PostGraphile 4, the GraphQL-over-PostgreSQL server teams
// pick, over the bench database's public schema, as its production settings serve it: no
// GraphiQL, no mutations, no query log, one pg pool of the service's size.
//
// Environment: DATABASE_URL (required), PORT (0: any free port), DB_POOL_MAX (default 10).
// Prints "LISTENING <port>" on stdout once it accepts connections; stops on SIGTERM/SIGINT.

import { createServer } from 'node:http';
import pg from 'pg';
import { postgraphile } from 'postgraphile';

const url = process.env.DATABASE_URL;
if (!url) {
  process.stderr.write('peer: DATABASE_URL is required\n');
  process.exit(1);
}
const pool = new pg.Pool({ connectionString: url, max: Number(process.env.DB_POOL_MAX ?? 10) });
const handler = postgraphile(pool, 'public', {
  graphiql: false,
  disableDefaultMutations: true,
  disableQueryLog: true,
  retryOnInitFail: false,
  setofFunctionsContainNulls: false,
  dynamicJson: true,
  ignoreRBAC: false,
  extendedErrors: [],
});
const server = createServer(handler);
server.keepAliveTimeout = 65_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
});
const stop = () => {
  server.close();
  server.closeAllConnections();
  void pool.end().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
