import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { GraphiQLOptions } from 'graphql-yoga';
import { Response } from '../shared/fetch-api.js';

// GraphiQL with no CDN. Yoga's own page loads GraphiQL's script, styles and editor workers from
// unpkg.com, which these machines (and many deployments) cannot reach: the page stays blank.
// @graphql-yoga/render-graphiql carries the same build, versioned with Yoga, as strings; its own
// renderer would inline all of it (about 9 MB) into every page. Here the page is small and
// refers to the assets on our own origin, served once per version and cached by the browser.
//
// Wiring: createYoga({ renderGraphiQL: renderLocalGraphiQL, … }) and, before the app's "not
// found" answer, `const asset = await serveGraphiQLAsset(request, url); if (asset) return asset`.

const VERSION = (createRequire(import.meta.url)('@graphql-yoga/render-graphiql/package.json') as { version: string }).version;

/** Where the assets live; the version in the path lets the browser keep them for good. */
export const GRAPHIQL_ASSETS_PREFIX = `/graphiql/${VERSION}/`;

/** Monaco asks for a worker by label; these are the labels of the yoga-graphiql build. */
const WORKERS = {
  editorWorkerService: 'editor.worker.js',
  json: 'json.worker.js',
  graphql: 'graphql.worker.js',
} as const;

/**
 * Runs before the bundle: tells Monaco where its workers are, then renders GraphiQL once the
 * page is parsed, with the options the page carries as JSON. A file rather than an inline script,
 * so a Content-Security-Policy of `script-src 'self'` allows the page.
 */
const BOOT_JS = `(function () {
  var prefix = ${JSON.stringify(GRAPHIQL_ASSETS_PREFIX)};
  var workers = ${JSON.stringify(WORKERS)};
  self.MonacoEnvironment = {
    globalAPI: false,
    getWorkerUrl: function (_moduleId, label) { return prefix + (workers[label] || workers.editorWorkerService); },
  };
  document.addEventListener('DOMContentLoaded', function () {
    var options = JSON.parse(document.getElementById('graphiql-options').textContent);
    YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), options);
  });
})();
`;

interface Asset {
  type: string;
  body: Buffer;
  /** Compressed once, on the first request that accepts it. */
  gzipped?: Promise<Buffer>;
}

let assets: Promise<Map<string, Asset>> | undefined;

/** The build is about 9 MB of strings: loaded on the first request for it, not at start. */
function loadAssets(): Promise<Map<string, Asset>> {
  assets ??= import('@graphql-yoga/render-graphiql/graphiql').then((build) => {
    const javascript = 'text/javascript; charset=utf-8';
    const text = (type: string, content: string): Asset => ({ type, body: Buffer.from(content, 'utf8') });
    const favicon = /^data:([^;,]+);base64,(.*)$/s.exec(build.favicon);
    const map = new Map<string, Asset>([
      ['boot.js', text(javascript, BOOT_JS)],
      ['yoga-graphiql.js', text(javascript, build.js)],
      ['graphiql.css', text('text/css; charset=utf-8', build.css)],
      [WORKERS.editorWorkerService, text(javascript, build.editorWorkerService)],
      [WORKERS.json, text(javascript, build.jsonWorker)],
      [WORKERS.graphql, text(javascript, build.graphqlWorker)],
    ]);
    if (favicon?.[1] && favicon[2]) map.set('favicon.ico', { type: favicon[1], body: Buffer.from(favicon[2], 'base64') });
    return map;
  });
  return assets;
}

const gzipAsync = promisify(gzip);

/** Answers GET/HEAD under GRAPHIQL_ASSETS_PREFIX; null for any other path. */
export async function serveGraphiQLAsset(request: Request, url: URL): Promise<Response | null> {
  if (!url.pathname.startsWith('/graphiql/')) return null;
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return new Response('Method not allowed', { status: 405, headers: { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' } });
  }
  // Another version's path (a page cached across an upgrade) is not found rather than answered
  // with this version's files under a name promising something else.
  const asset = url.pathname.startsWith(GRAPHIQL_ASSETS_PREFIX)
    ? (await loadAssets()).get(url.pathname.slice(GRAPHIQL_ASSETS_PREFIX.length))
    : undefined;
  if (!asset) return new Response('Not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } });

  const headers: Record<string, string> = {
    'content-type': asset.type,
    'cache-control': 'public, max-age=31536000, immutable',
    'x-content-type-options': 'nosniff',
    vary: 'accept-encoding',
  };
  let body = asset.body;
  // The script is 5 MB as text and about a quarter of that compressed.
  if (asset.body.length > 1024 && /\bgzip\b/.test(request.headers.get('accept-encoding') ?? '')) {
    asset.gzipped ??= gzipAsync(asset.body);
    body = await asset.gzipped;
    headers['content-encoding'] = 'gzip';
  }
  headers['content-length'] = String(body.length);
  return new Response(request.method === 'HEAD' ? null : new Uint8Array(body), { status: 200, headers });
}

/** Yoga's `renderGraphiQL`: the page, with GraphiQL's options as data, not as code. */
export function renderLocalGraphiQL(options: GraphiQLOptions): string {
  const title = escapeHtml(options.title ?? 'GraphiQL');
  const asset = (name: string) => GRAPHIQL_ASSETS_PREFIX + name;
  // JSON in a script element ends at the first "</script": escape "<" so no string can end it.
  const data = JSON.stringify(options).replace(/</g, '\\u003c');
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <title>${title}</title>
    <link rel="icon" href="${options.favicon ? escapeHtml(options.favicon) : asset('favicon.ico')}" />
    <link rel="stylesheet" href="${asset('graphiql.css')}" />
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>GraphiQL needs JavaScript.</noscript>
    <div id="root">Loading ${title}…</div>
    <script type="application/json" id="graphiql-options">${data}</script>
    <script src="${asset('boot.js')}"></script>
    <script src="${asset('yoga-graphiql.js')}"></script>
  </body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** What the playground opens with: a first query to run, and where the REST API is. */
export const DEFAULT_QUERY = /* GraphQL */ `# The marketplace catalogue. Try the REST API too: GET /api/products
query FeaturedProducts {
  products(featured: true, limit: 5, sortBy: POPULAR) {
    items {
      name
      nameEn
      price
      supplier { companyName city verified }
      category { name }
    }
    meta { total totalPages }
  }
}
`;
