import { describe, expect, it } from 'vitest';
import { corsOptions } from '../../src/http/cors.js';
import { restRoutes } from '../../src/rest/routes.js';

// CORS_ORIGINS as Yoga's cors options (src/http/cors.ts). What a browser then sees of a preflight:
// test/observability.test.ts.

describe('CORS options', () => {
  it('reads CORS_ORIGINS as a comma-separated list, blanks and spaces ignored', () => {
    expect(corsOptions('https://shop.example.com, https://admin.example.com,').origin).toEqual(['https://shop.example.com', 'https://admin.example.com']);
  });

  it('allows any origin once the list holds *', () => {
    expect(corsOptions('*').origin).toBe('*');
    expect(corsOptions('https://shop.example.com, *').origin).toBe('*');
  });

  it('allows /graphql’s methods and every REST route’s, each once', () => {
    const { methods } = corsOptions('*');
    expect(methods).toEqual(expect.arrayContaining(['GET', 'HEAD', 'POST', 'OPTIONS', ...restRoutes.map((r) => r.method)]));
    expect(methods).toContain('PATCH');
    expect(new Set(methods).size).toBe(methods.length);
  });
});
