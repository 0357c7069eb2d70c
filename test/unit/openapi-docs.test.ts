import { describe, expect, it } from 'vitest';
import { createDocsHandler, DOCS_CSP, openApiJson } from '../../src/openapi/serve.js';

// The documentation's handler (src/openapi/serve.ts) called in process: openapi.json, the Swagger
// UI page and its assets, all from this server. Through the running app: test/openapi.test.ts.

describe('the docs handler', () => {
  const handler = createDocsHandler();
  const call = (path: string, init?: RequestInit) => {
    const url = new URL(path, 'http://127.0.0.1');
    return handler(new Request(url, init), url);
  };

  it('serves the document, the page and its assets from this server only', async () => {
    const json = await call('/api/openapi.json');
    expect(json?.status).toBe(200);
    expect(json?.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await json?.text()).toBe(openApiJson());

    const page = await call('/api/docs');
    expect(page?.status).toBe(200);
    expect(page?.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page?.headers.get('content-security-policy')).toBe(DOCS_CSP);
    expect(DOCS_CSP).toContain("script-src 'self'");
    expect(DOCS_CSP).not.toMatch(/https?:|\*/);
    const html = (await page?.text()) ?? '';
    // Every script, style sheet and icon the page loads is ours, and each is served.
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(urls.length).toBeGreaterThanOrEqual(4);
    for (const u of urls) {
      expect(u).toMatch(/^\/api\//);
      const asset = await call(u);
      expect(asset?.status, u).toBe(200);
      expect((await asset?.arrayBuffer())?.byteLength, u).toBeGreaterThan(0);
    }
    expect(html).not.toMatch(/<script>(?!<)/);
    // Without JavaScript, the endpoints are still listed.
    expect(html).toContain('GET /api/products/{slug}');
    expect((await call('/api/docs/'))?.status).toBe(200);
  });

  it('answers HEAD without a body, revalidation with 304, other methods with 405, other paths with null', async () => {
    const head = await call('/api/openapi.json', { method: 'HEAD' });
    expect(head?.status).toBe(200);
    expect(await head?.text()).toBe('');
    expect(Number(head?.headers.get('content-length'))).toBe(Buffer.byteLength(openApiJson()));
    const etag = head?.headers.get('etag') ?? '';
    expect((await call('/api/openapi.json', { headers: { 'if-none-match': etag } }))?.status).toBe(304);

    const post = await call('/api/docs', { method: 'POST' });
    expect(post?.status).toBe(405);
    expect(post?.headers.get('allow')).toBe('GET, HEAD');
    expect(await post?.json()).toMatchObject({ success: false, error: { code: 'METHOD_NOT_ALLOWED' } });

    expect(await call('/api/products')).toBeNull();
    expect(await call('/api/docs/../package.json')).toBeNull();
    expect(await call('/api/docs/swagger-initializer.js')).toBeNull();
  });
});
