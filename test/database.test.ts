import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { openDatabase } from '../src/db/database.js';
import { alive } from './helpers/processes.js';

// Each test here runs its own embedded server in its own DATA_DIR: what is tested is the life
// cycle of that server, which the shared test server cannot show.

let dataDir: string;
beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'mp-data-'));
});
afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
});

const quiet = { log: () => undefined };
const configFor = (dir: string, env: Record<string, string> = {}) => loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'info', ...env });
const portOf = (url: string) => Number(new URL(url).port);
const pidFile = () => path.join(dataDir, 'pg', 'postmaster.pid');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function sql<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    return (await client.query<R>(text)).rows;
  } finally {
    await client.end();
  }
}

describe('openDatabase with the embedded server', () => {
  it('initialises and starts it, lets a second opener share it, and stops it with the first', async () => {
    const messages: string[] = [];
    const stdout = vi.spyOn(process.stdout, 'write');
    const first = await openDatabase(configFor(dataDir), { log: (m) => messages.push(m) });
    const stdoutWrites = stdout.mock.calls.map((call) => String(call[0]));
    stdout.mockRestore();

    expect(first.embedded).toBe(true);
    expect(new URL(first.url).pathname).toBe('/marketplace');
    const credentials = path.join(dataDir, 'pg-credentials.json');
    expect((await fs.stat(credentials)).mode & 0o777).toBe(0o600);
    const { password } = JSON.parse(await fs.readFile(credentials, 'utf8')) as { password: string };
    expect(password.length).toBeGreaterThanOrEqual(24);
    expect(decodeURIComponent(new URL(first.url).password)).toBe(password);
    // Its own messages are few and carry no secret; PostgreSQL's chatter stays out of stdout.
    expect(messages.join('\n')).not.toContain(password);
    expect(messages.some((m) => m.startsWith('[postgres]'))).toBe(false);
    expect(stdoutWrites.join('')).not.toMatch(/database system|initdb|PostgreSQL/);

    await sql(first.url, `CREATE TABLE kept (value text); INSERT INTO kept VALUES ('still here')`);

    const second = await openDatabase(configFor(dataDir), quiet);
    expect(portOf(second.url)).toBe(portOf(first.url));
    await second.close();
    expect(await sql(first.url, 'SELECT value FROM kept')).toEqual([{ value: 'still here' }]);

    await first.close();
    await expect(sql(first.url, 'SELECT 1')).rejects.toThrow();
    await expect(fs.access(pidFile())).rejects.toThrow();
    await first.close(); // idempotent
  });

  it('finds the data again after a restart, and forwards PostgreSQL output at LOG_LEVEL=debug', async () => {
    const messages: string[] = [];
    const db = await openDatabase(configFor(dataDir, { LOG_LEVEL: 'debug' }), { log: (m) => messages.push(m) });
    try {
      expect(await sql(db.url, 'SELECT value FROM kept')).toEqual([{ value: 'still here' }]);
      expect(messages.some((m) => m.startsWith('[postgres]') && m.includes('ready to accept connections'))).toBe(true);
    } finally {
      await db.close();
    }
  });

  it('starts after a crash that left postmaster.pid behind', async () => {
    const db = await openDatabase(configFor(dataDir), quiet);
    const pid = Number((await fs.readFile(pidFile(), 'utf8')).split('\n')[0]);
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
    expect(alive(pid)).toBe(false);
    await expect(fs.access(pidFile())).resolves.toBeUndefined();

    const again = await openDatabase(configFor(dataDir), quiet);
    try {
      expect(await sql(again.url, 'SELECT value FROM kept')).toEqual([{ value: 'still here' }]);
    } finally {
      await again.close();
      await db.close(); // its server is gone already: nothing to do, and no hang
    }
  });

  it('starts when the pid in a leftover postmaster.pid now belongs to another program', async () => {
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    try {
      const ready = `${other.pid}\n${path.join(dataDir, 'pg')}\n1700000000\n5432\n\n127.0.0.1\n  1234  5678\nready   \n`;
      await fs.writeFile(pidFile(), ready);
      const db = await openDatabase(configFor(dataDir), quiet);
      try {
        expect(await sql(db.url, 'SELECT value FROM kept')).toEqual([{ value: 'still here' }]);
        expect(alive(other.pid!)).toBe(true);
      } finally {
        await db.close();
      }
    } finally {
      other.kill();
    }
  });

  it('uses DATABASE_URL as given when it is set', async () => {
    const url = inject('pgAdminUrl');
    const db = await openDatabase(loadConfig({ DATABASE_URL: url, DATA_DIR: path.join(dataDir, 'unused') }), quiet);
    expect(db).toMatchObject({ url, embedded: false });
    await db.close();
    await expect(fs.access(path.join(dataDir, 'unused'))).rejects.toThrow();
  });
});
