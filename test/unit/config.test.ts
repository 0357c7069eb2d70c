import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, webhookPolicyOf } from '../../src/config/config.js';
import { configuredTimeouts, DB_TIMEOUTS } from '../../src/db/prisma.js';

// The configuration (src/config/config.ts): every environment variable read and checked once, at
// start, with a message that names each variable wrong and never echoes a password.

/** The message loadConfig refuses `env` with. */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

describe('the configuration', () => {
  it('has working defaults for a developer’s machine', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ NODE_ENV: 'development', PORT: 4000, HOST: '0.0.0.0', ANON_RATE_LIMIT: 60, RESPONSE_CACHE: 'on', KEY_CACHE_SECONDS: 60, WEB_CONCURRENCY: 1, LOG_LEVEL: 'info' });
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it('reads an empty variable as unset, as `VAR= cmd` means in a shell', () => {
    expect(loadConfig({ PORT: '', ANON_RATE_LIMIT: '' })).toMatchObject({ PORT: 4000, ANON_RATE_LIMIT: 60 });
  });

  it('sets the database connect and statement timeouts within bounds, defaulting to DB_TIMEOUTS', () => {
    expect(loadConfig({})).toMatchObject({ DB_CONNECT_TIMEOUT_MS: 2000, DB_STATEMENT_TIMEOUT_MS: 4000 });
    expect(DB_TIMEOUTS).toMatchObject({ connectMs: 2000, statementMs: 4000 });
    const config = loadConfig({ DB_CONNECT_TIMEOUT_MS: '5000', DB_STATEMENT_TIMEOUT_MS: '30000' });
    // The client-side bound on a query stays above the statement timeout.
    expect(configuredTimeouts(config)).toEqual({ ...DB_TIMEOUTS, connectMs: 5000, statementMs: 30_000, queryMs: 31_000 });
    const message = refusal({ DB_CONNECT_TIMEOUT_MS: '50', DB_STATEMENT_TIMEOUT_MS: '1h' });
    expect(message).toMatch(/DB_CONNECT_TIMEOUT_MS/);
    expect(message).toMatch(/DB_STATEMENT_TIMEOUT_MS/);
    expect(refusal({ DB_CONNECT_TIMEOUT_MS: '60001' })).toMatch(/DB_CONNECT_TIMEOUT_MS/);
  });

  it('cannot be changed once loaded', () => {
    expect(Object.isFrozen(loadConfig({}))).toBe(true);
  });

  it('resolves DATA_DIR to an absolute path', () => {
    expect(loadConfig({ DATA_DIR: 'data/here' }).DATA_DIR).toBe(path.resolve('data/here'));
  });

  it('names every variable that is wrong in one message', () => {
    const message = refusal({ PORT: '70000', ANON_RATE_LIMIT: '10', LOG_LEVEL: 'loud' });
    expect(message).toMatch(/^Invalid configuration: /);
    for (const name of ['PORT', 'ANON_RATE_LIMIT', 'LOG_LEVEL']) expect(message).toContain(`${name}:`);
  });

  it('keeps the anonymous limit within the 30 to 60 requests a minute the specification allows', () => {
    expect(loadConfig({ ANON_RATE_LIMIT: '30' }).ANON_RATE_LIMIT).toBe(30);
    expect(refusal({ ANON_RATE_LIMIT: '29' })).toContain('ANON_RATE_LIMIT');
    expect(refusal({ ANON_RATE_LIMIT: '61' })).toContain('ANON_RATE_LIMIT');
  });

  it('writes the uses of persisted queries every 5 s unless PERSISTED_USE_FLUSH_MS says otherwise, within 50 ms to 10 minutes', () => {
    expect(loadConfig({}).PERSISTED_USE_FLUSH_MS).toBe(5_000);
    expect(loadConfig({ PERSISTED_USE_FLUSH_MS: '50' }).PERSISTED_USE_FLUSH_MS).toBe(50);
    expect(refusal({ PERSISTED_USE_FLUSH_MS: '49' })).toContain('PERSISTED_USE_FLUSH_MS');
    expect(refusal({ PERSISTED_USE_FLUSH_MS: '600001' })).toContain('PERSISTED_USE_FLUSH_MS');
  });

  it('takes yes/no variables as true, false, 1 or 0 only', () => {
    expect(loadConfig({ PERSISTED_ONLY: '1', WEBHOOK_WORKER: 'false' })).toMatchObject({ PERSISTED_ONLY: true, WEBHOOK_WORKER: false });
    expect(refusal({ PERSISTED_ONLY: 'yes' })).toContain('PERSISTED_ONLY');
  });
});

describe('the database', () => {
  it('must be named by a PostgreSQL URL, and a refused one is not echoed', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://u:p@h:5432/db' }).DATABASE_URL).toBe('postgres://u:p@h:5432/db');
    const message = refusal({ DATABASE_URL: 'mysql://root:hunter2@db/shop' });
    expect(message).toMatch(/DATABASE_URL: must be a postgresql:\/\/ or postgres:\/\/ URL.*not mysql:\/\//);
    expect(message).not.toContain('hunter2');
  });

  it('needs DATABASE_URL for a direct connection to the same database', () => {
    expect(refusal({ DATABASE_DIRECT_URL: 'postgresql://u@h/db' })).toMatch(/DATABASE_DIRECT_URL: set DATABASE_URL too/);
  });

  it('seeds demo data into the embedded database outside production only, unless told', () => {
    expect(loadConfig({}).DEMO_DATA).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production' }).DEMO_DATA).toBe(false);
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@h/db' }).DEMO_DATA).toBe(false);
    expect(loadConfig({ DATABASE_URL: 'postgresql://u@h/db', DEMO_DATA: 'true' }).DEMO_DATA).toBe(true);
  });

  it('refuses the renamed SEED_ON_START rather than ignoring it', () => {
    expect(refusal({ SEED_ON_START: 'true' })).toMatch(/SEED_ON_START: was replaced by DEMO_DATA/);
  });
});

describe('processes and proxies', () => {
  it('runs a worker per core with WEB_CONCURRENCY=auto, and refuses 0 or more than 256', () => {
    expect(loadConfig({ WEB_CONCURRENCY: 'auto' }).WEB_CONCURRENCY).toBe(os.availableParallelism());
    expect(loadConfig({ WEB_CONCURRENCY: ' 4 ' }).WEB_CONCURRENCY).toBe(4);
    for (const bad of ['0', '257', '2.5', 'many']) expect(refusal({ WEB_CONCURRENCY: bad }), bad).toMatch(/WEB_CONCURRENCY: must be a whole number of worker processes from 1 to 256/);
  });

  it('refuses TRUSTED_PROXIES it cannot read, at start', () => {
    expect(refusal({ TRUSTED_PROXIES: '10.0.0.0/8,' })).toMatch(/TRUSTED_PROXIES: Invalid TRUSTED_PROXIES/);
    expect(loadConfig({ TRUSTED_PROXIES: 'loopback, 10.0.0.0/8' }).TRUSTED_PROXIES).toBe('loopback, 10.0.0.0/8');
  });
});

describe('webhooks', () => {
  it('retry over 3 days by default, and take a schedule of up to 50 delays of at most a week', () => {
    expect(loadConfig({}).WEBHOOK_RETRY_SCHEDULE).toEqual([10, 60, 300, 1800, 3600, 7200, 14_400, 28_800, 43_200, 72_000, 86_400]);
    expect(Math.round(loadConfig({}).WEBHOOK_RETRY_SCHEDULE.reduce((a, b) => a + b, 0) / 86_400)).toBe(3);
    expect(loadConfig({ WEBHOOK_RETRY_SCHEDULE: '0, 5,30' }).WEBHOOK_RETRY_SCHEDULE).toEqual([0, 5, 30]);
    for (const bad of ['-1', '604801', 'soon', Array(51).fill('1').join(',')]) expect(refusal({ WEBHOOK_RETRY_SCHEDULE: bad }), bad).toContain('WEBHOOK_RETRY_SCHEDULE');
  });

  it('go to private addresses only when allowed, and only over https in production', () => {
    expect(webhookPolicyOf(loadConfig({}))).toEqual({ allowPrivate: false, requireHttps: false });
    expect(webhookPolicyOf(loadConfig({ NODE_ENV: 'production', WEBHOOK_ALLOW_PRIVATE: 'true' }))).toEqual({ allowPrivate: true, requireHttps: true });
  });
});
