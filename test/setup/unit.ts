import net from 'node:net';
import { afterEach, expect } from 'vitest';

// The unit tier's proof that it reaches nothing outside the process: no database or Redis is
// configured, and opening a connection (TCP or Unix socket: PostgreSQL, Redis, HTTP) or listening
// on one throws. A library that swallows the throw (and retries) still fails the test, which
// checks after each test that nothing tried.

for (const name of ['DATABASE_URL', 'DATABASE_DIRECT_URL', 'DATABASE_READ_URLS', 'REDIS_URL', 'TEST_DATABASE_URL']) delete process.env[name];

/** The connections tried during the current test; test/unit/no-network.test.ts reads it to test the guard itself. */
const CONNECTION_ATTEMPTS = Symbol.for('unit-tier.connection-attempts');
const attempts: string[] = [];
(globalThis as Record<symbol, unknown>)[CONNECTION_ATTEMPTS] = attempts;

/** Where a connect or listen call was going: a path, host:port or port, however it was called. */
function targetOf(args: unknown[]): string {
  // net.connect hands Socket#connect its arguments normalised: [options, callback].
  const [first, second] = Array.isArray(args[0]) ? (args[0] as unknown[]) : args;
  if (first && typeof first === 'object') {
    const { path, host, port } = first as { path?: string; host?: string; port?: string | number };
    return path ?? `${host ?? 'localhost'}:${String(port)}`;
  }
  return typeof second === 'string' ? `${second}:${String(first)}` : String(first);
}

function refuse(what: string, args: unknown[]): never {
  const target = targetOf(args);
  attempts.push(`${what} ${target}`);
  throw new Error(`The unit tier reaches no database, server or network: ${what} ${target} refused (test/setup/unit.ts)`);
}

net.Socket.prototype.connect = function connect(...args: unknown[]) {
  return refuse('connect', args);
} as typeof net.Socket.prototype.connect;
net.Server.prototype.listen = function listen(...args: unknown[]) {
  return refuse('listen', args);
} as typeof net.Server.prototype.listen;

afterEach(() => {
  const tried = attempts.splice(0);
  expect(tried, 'a unit test tried to open a connection').toEqual([]);
});
