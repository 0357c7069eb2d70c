import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { createApp } from '../../src/app.js';
import { createPrisma } from '../../src/db/prisma.js';
import { createLogger } from '../../src/logger.js';
import { createTestDatabase } from './db.js';

export interface TestApp {
  /** http://127.0.0.1:<port> */
  base: string;
  /** Direct SQL on the same database, to check what the API answers against the rows. */
  sql: pg.Pool;
  /** SQL statements the app has sent so far. */
  statements: string[];
  get(path: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: any }>;
  graphql(query: string, variables?: Record<string, unknown>): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** The real app over real HTTP on a fresh copy of the seeded database. */
export async function startTestApp(template: 'seeded' | 'migrated' = 'seeded'): Promise<TestApp> {
  const db = await createTestDatabase(template);
  const statements: string[] = [];
  const prisma = createPrisma({ url: db.url, poolMax: 5, onQuery: (sql) => statements.push(sql) });
  const app = createApp({ prisma, logger: createLogger(process.env.TEST_LOG_LEVEL ?? 'silent') });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sql = new pg.Pool({ connectionString: db.url, max: 2 });

  const get = async (path: string, init?: RequestInit) => {
    const res = await fetch(base + path, init);
    const text = await res.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: the test sees the raw text
    }
    return { status: res.status, headers: res.headers, body };
  };

  return {
    base,
    sql,
    statements,
    get,
    graphql: async (query, variables) => {
      const res = await get('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      return { status: res.status, body: res.body };
    },
    close: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await prisma.$disconnect();
      await sql.end();
      await db.drop();
    },
  };
}
