import type { TestApp } from './app.js';
import type { TestKey } from './keys.js';
import { sentSince } from './statements.js';

/** `init` with `key` as X-API-Key (none for null), beside the headers it has. */
export const as = (key: TestKey | null, init: RequestInit = {}) => ({ ...init, headers: { ...(key ? { 'x-api-key': key.key } : {}), ...(init.headers as Record<string, string>) } });

/** A request, the raw text of its answer, and how many SQL statements the app sent for it (timed flushes left out). */
export async function sent(app: TestApp, path: string, init: RequestInit = {}) {
  const before = app.statements.length;
  const res = await fetch(app.base + path, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, statements: sentSince(app.statements, before).length };
}
