import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { GRAPHIQL_ASSETS_PREFIX, renderLocalGraphiQL, serveGraphiQLAsset } from '../../src/http/graphiql.js';

// GraphiQL's page and assets from node_modules: the page names nothing off our origin, every
// asset it names is served, compressed when asked, cached for good under a versioned path.
// (test/browser.test.ts loads it in Chromium with every other host blocked.)

const serve = (path: string, init?: RequestInit) => {
  const url = new URL(path, 'http://127.0.0.1');
  return serveGraphiQLAsset(new Request(url, init), url);
};

describe('renderLocalGraphiQL', () => {
  const page = renderLocalGraphiQL({ title: 'Marketplace <API>', defaultQuery: '# </script><script>alert(1)</script>\n{ a }' });

  it('refers only to assets on our own origin, each of which is served', async () => {
    expect(page).not.toMatch(/https?:\/\//);
    const refs = [...page.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThanOrEqual(4);
    for (const ref of refs) {
      expect(ref.startsWith(GRAPHIQL_ASSETS_PREFIX)).toBe(true);
      expect((await serve(ref))?.status).toBe(200);
    }
  });

  it('carries the options as data that no string in them can break out of', () => {
    expect(page).toContain('<title>Marketplace &#60;API&#62;</title>');
    expect(page.match(/<\/script>/g)).toHaveLength(3); // the options' element and the two scripts
    const json = /<script type="application\/json" id="graphiql-options">(.*?)<\/script>/s.exec(page)?.[1];
    expect(JSON.parse(json!)).toMatchObject({ defaultQuery: '# </script><script>alert(1)</script>\n{ a }' });
  });
});

describe('serveGraphiQLAsset', () => {
  it('serves the bundle with its type, an immutable cache lifetime, and gzip when accepted', async () => {
    const plain = (await serve(`${GRAPHIQL_ASSETS_PREFIX}yoga-graphiql.js`))!;
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(plain.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(plain.headers.get('content-encoding')).toBeNull();
    const text = await plain.text();
    expect(text).toContain('renderYogaGraphiQL');
    expect(Number(plain.headers.get('content-length'))).toBe(Buffer.byteLength(text));

    const zipped = (await serve(`${GRAPHIQL_ASSETS_PREFIX}yoga-graphiql.js`, { headers: { 'accept-encoding': 'gzip, br' } }))!;
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(zipped.headers.get('vary')).toBe('accept-encoding');
    const bytes = Buffer.from(await zipped.arrayBuffer());
    expect(bytes.length).toBeLessThan(Buffer.byteLength(text) / 2);
    expect(gunzipSync(bytes).toString('utf8')).toBe(text);
  });

  it('serves the workers, the styles and the icon', async () => {
    for (const [name, type] of [
      ['editor.worker.js', 'text/javascript; charset=utf-8'],
      ['json.worker.js', 'text/javascript; charset=utf-8'],
      ['graphql.worker.js', 'text/javascript; charset=utf-8'],
      ['graphiql.css', 'text/css; charset=utf-8'],
      ['favicon.ico', 'image/x-icon'],
    ] as const) {
      const res = (await serve(GRAPHIQL_ASSETS_PREFIX + name))!;
      expect([name, res.status, res.headers.get('content-type')]).toEqual([name, 200, type]);
      expect((await res.arrayBuffer()).byteLength).toBeGreaterThan(1000);
    }
  });

  it('answers HEAD without a body, 405 to other methods, 404 to unknown files and other versions, null elsewhere', async () => {
    const head = (await serve(`${GRAPHIQL_ASSETS_PREFIX}graphiql.css`, { method: 'HEAD' }))!;
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const post = (await serve(`${GRAPHIQL_ASSETS_PREFIX}graphiql.css`, { method: 'POST' }))!;
    expect([post.status, post.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect((await serve(`${GRAPHIQL_ASSETS_PREFIX}..%2F..%2Fpackage.json`))?.status).toBe(404);
    expect((await serve(`${GRAPHIQL_ASSETS_PREFIX}nothing.js`))?.status).toBe(404);
    expect((await serve('/graphiql/0.0.1/yoga-graphiql.js'))?.status).toBe(404);
    expect(await serve('/graphql')).toBeNull();
    expect(await serve('/api/products')).toBeNull();
  });
});

describe('graphiqlOptions', () => {
  it('opens with the anonymous limit as configured, the key header offered, and lines that fit the editor at 1280 px', async () => {
    const { graphiqlOptions } = await import('../../src/http/graphiql.js');
    const options = graphiqlOptions(42);
    expect(options.defaultQuery).toContain('# 42 requests a minute');
    expect(JSON.parse(options.headers!)).toEqual({ 'X-API-Key': '' });
    expect(options.shouldPersistHeaders).toBe(false);
    // About 50 characters show beside GraphiQL's toolbar at 1280 px (test/browser.test.ts measures it).
    for (const line of options.defaultQuery!.split('\n')) expect(line.length, line).toBeLessThanOrEqual(50);
  });
});
