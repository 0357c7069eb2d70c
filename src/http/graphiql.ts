import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { introspectionFromSchema, type GraphQLSchema } from 'graphql';
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

/**
 * GraphiQL's name for its schema load (the `introspectionQueryName` option): the page answers that
 * request from GRAPHIQL_SCHEMA_PATH instead of /graphql, so loading the schema spends no one's
 * rate limit, however often GraphiQL reloads it.
 */
export const SCHEMA_LOAD_NAME = 'GraphiQLSchemaLoad';
/** The schema's introspection, as GraphiQL loads it: unmetered and revalidated by ETag. */
export const GRAPHIQL_SCHEMA_PATH = '/graphiql/schema.json';

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
  var schemaLoad = ${JSON.stringify(SCHEMA_LOAD_NAME)};
  var schemaUrl = ${JSON.stringify(GRAPHIQL_SCHEMA_PATH)};
  var realFetch = window.fetch.bind(window);
  function nameOf(init) {
    try { return JSON.parse(init.body).operationName; } catch (e) { return undefined; }
  }
  // GraphiQL's own schema load is answered by the schema file, which no rate limit counts; and a
  // key header left empty in the Headers pane is not sent (an empty key is refused, not anonymous).
  window.fetch = function (input, init) {
    if (init && typeof init.body === 'string' && nameOf(init) === schemaLoad) {
      return realFetch(schemaUrl, { headers: { accept: 'application/json' } }).then(function (answer) {
        return answer.ok ? answer : realFetch(input, init);
      });
    }
    if (init && init.headers && !(init.headers instanceof Headers) && !Array.isArray(init.headers)) {
      var headers = {};
      Object.keys(init.headers).forEach(function (name) {
        var value = init.headers[name];
        var isKey = /^(x-api-key|authorization)$/i.test(name);
        if (!(isKey && (value === '' || value === null || value === undefined))) headers[name] = value;
      });
      init = Object.assign({}, init, { headers: headers });
    }
    return realFetch(input, init);
  };
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

/**
 * GET GRAPHIQL_SCHEMA_PATH: the served schema's introspection result (every option GraphiQL can
 * ask for), built once. The schema is public (introspection is on): it costs a request nothing.
 * Null when introspection (or GraphiQL) is off, so that the path is not found and the page falls back to
 * /graphql, which refuses it as it refuses any introspection.
 */
export function createGraphiQLSchemaHandler(schema: GraphQLSchema, introspection: boolean) {
  let built: { body: string; etag: string } | undefined;
  return async (request: Request): Promise<Response | null> => {
    if (!introspection) return null;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return new Response('Method not allowed', { status: 405, headers: { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' } });
    }
    if (!built) {
      const body = JSON.stringify({ data: introspectionFromSchema(schema, { descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true }) });
      built = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    }
    const headers = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache', etag: built.etag, 'x-content-type-options': 'nosniff' };
    const matches = (request.headers.get('if-none-match') ?? '').split(',').some((tag) => tag.trim().replace(/^W\//, '') === built!.etag);
    if (matches) return new Response(null, { status: 304, headers });
    return new Response(request.method === 'HEAD' ? null : built.body, { status: 200, headers });
  };
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

/**
 * GraphiQL's options. It opens with a first query to run that says how to use a key, and its
 * Headers pane offers the key header: left empty, the page does not send it (BOOT_JS), so the
 * playground works anonymously until a key is typed in. Headers are not kept in the browser's
 * storage (GraphiQL's default), so a key does not outlive the tab.
 */
export function graphiqlOptions(anonymousPerMinute: number): GraphiQLOptions {
  const keyHeaders = JSON.stringify({ 'X-API-Key': '' }, null, 2);
  return {
    title: 'Marketplace API — GraphiQL',
    defaultQuery: defaultQuery(anonymousPerMinute),
    headers: keyHeaders,
    defaultHeaders: keyHeaders,
    defaultEditorToolsVisibility: 'headers',
    shouldPersistHeaders: false,
    introspectionQueryName: SCHEMA_LOAD_NAME,
    // Subscriptions over the WebSocket (src/pipeline/websocket.ts), which takes the Headers pane's key.
    subscriptionsProtocol: 'WS',
  };
}

/** What the playground opens with: a first query to run, how to send a key, where REST is. Lines fit the editor at 1280 px. */
export const defaultQuery = (anonymousPerMinute: number) => /* GraphQL */ `# The marketplace catalogue. Without a key:
# ${anonymousPerMinute} requests a minute (schema loads are free).
# A key goes in Headers below, as "X-API-Key".
# REST: GET /api/products (docs: /api/docs)
query FeaturedProducts {
  products(
    featured: true
    limit: 5
    sortBy: POPULAR
  ) {
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
