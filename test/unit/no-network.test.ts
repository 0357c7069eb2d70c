import http from 'node:http';
import { Redis } from 'ioredis';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';

// The unit tier's guard (test/setup/unit.ts), tested: a unit test that reaches for a database, a
// Redis or a server fails, even when the library it used swallows the error.

/** Where the guard records attempts (not imported: importing a setup file would run it again). */
const CONNECTION_ATTEMPTS = Symbol.for('unit-tier.connection-attempts');
/** The attempts the guard recorded in this test, taken so that its own check after the test passes. */
const takeAttempts = () => ((globalThis as Record<symbol, unknown>)[CONNECTION_ATTEMPTS] as string[]).splice(0);

describe('the unit tier reaches nothing outside the process', () => {
  it('configures no database and no Redis', () => {
    const config = loadConfig();
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
  });

  it('refuses a PostgreSQL connection over TCP, naming where it went', async () => {
    const client = new pg.Client({ connectionString: 'postgresql://u@127.0.0.1:5432/db' });
    await expect(client.connect()).rejects.toThrow(/reaches no database.*127\.0\.0\.1:5432/);
    expect(takeAttempts()).toEqual(['connect 127.0.0.1:5432']);
  });

  it('refuses a PostgreSQL connection over a Unix socket', async () => {
    const client = new pg.Client({ host: '/tmp', database: 'db' });
    await expect(client.connect()).rejects.toThrow(/reaches no database/);
    expect(takeAttempts()).toEqual(['connect /tmp/.s.PGSQL.5432']);
  });

  it('records a Redis connection even though ioredis swallows the error and retries', async () => {
    const redis = new Redis('redis://127.0.0.1:6379', { maxRetriesPerRequest: 0, retryStrategy: () => null });
    redis.on('error', () => undefined);
    await new Promise((resolve) => redis.once('end', resolve));
    expect(takeAttempts()).toContain('connect 127.0.0.1:6379');
  });

  it('refuses to listen', () => {
    expect(() => http.createServer().listen(0)).toThrow(/reaches no database, server or network: listen 0/);
    expect(takeAttempts()).toEqual(['listen 0']);
  });
});
