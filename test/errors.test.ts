import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './helpers/app.js';

// An unexpected failure (here: a table the app needs is gone) must answer 500 in the envelope
// without leaking SQL, table names, stack traces or file paths.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
  await app.sql.query('DROP TABLE "Favorite"');
});
afterAll(() => app?.close());

const LEAKS = /Favorite|SELECT|relation|prisma|\.ts|at \w+ \(|node_modules|postgres/i;

describe('unexpected errors', () => {
  it('REST answers 500 INTERNAL_ERROR with a generic message', async () => {
    const res = await app.get('/api/products');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ success: false, error: { code: 'INTERNAL_ERROR', message: 'An internal error occurred' } });
    expect(JSON.stringify(res.body)).not.toMatch(LEAKS);
  });

  it('GraphQL masks the error with code INTERNAL_ERROR', async () => {
    const res = await app.graphql('{ products { items { id _count { favorites } } } }');
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors[0]).toMatchObject({ message: 'An internal error occurred', extensions: { code: 'INTERNAL_ERROR' } });
    expect(JSON.stringify(res.body)).not.toMatch(LEAKS);
  });

  it('keeps serving what does not depend on the failure', async () => {
    const res = await app.get('/api/suppliers?limit=1');
    expect(res.status).toBe(200);
  });
});
