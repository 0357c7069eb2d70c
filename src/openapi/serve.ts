import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { AppError } from '../shared/errors.js';
import { errorResponse } from '../rest/envelope.js';
import { restRoutes } from '../rest/routes.js';
import { schema } from '../domain/schema.js';
import { buildOpenApiDocument } from './document.js';
import { Response } from '../shared/fetch-api.js';

// The API's documentation, served by the API itself and needing nothing else:
//
//   GET|HEAD /api/openapi.json   the OpenAPI 3.1 document (built once, the same text as openapi.json)
//   GET|HEAD /api/docs           Swagger UI on that document
//   GET|HEAD /api/docs/<asset>   Swagger UI's script, style sheet and icons, from the swagger-ui-dist
//                                package in node_modules: no CDN, so the page works offline
//
// The gate leaves these paths unmetered (DOCS_PATHS in src/pipeline/gate.ts).

let documentText: string | undefined;

/** The OpenAPI document as JSON text, exactly as scripts/print-openapi.ts writes openapi.json. */
export function openApiJson(): string {
  documentText ??= `${JSON.stringify(buildOpenApiDocument({ schema, routes: restRoutes }), null, 2)}\n`;
  return documentText;
}

export const OPENAPI_PATH = '/api/openapi.json';
export const DOCS_PATH = '/api/docs';

const SWAGGER_UI_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/**
 * Only what the page needs: Swagger UI's own scripts, styles and inline styles, images from
 * itself or data: URLs (its icons), requests to this origin (the document, "Try it out").
 * No inline script: the page's start-up code is a file of its own.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Starts Swagger UI on the document; a file rather than an inline script, so the CSP needs no
 * 'unsafe-inline' for scripts.
 *
 * An operation a key is optional for lists the anonymous alternative beside the key schemes
 * (security [{}, ApiKeyAuth, BearerAuth]). Swagger UI counts that always-met {} as authorised and
 * draws a closed padlock, as if the operation were locked; it draws none only for [{}] alone. The
 * plugin shows such an operation's summary as [{}] alone: no padlock. The document, and the key a
 * reader authorises (still sent with every operation that lists it), are unchanged.
 */
const INIT_SCRIPT = `'use strict';
function KeyOptionalPlugin(system) {
  return {
    wrapComponents: {
      OperationSummary: function (Original) {
        return function (props) {
          var security = props.operationProps && props.operationProps.get('security');
          var anonymous = security && security.find(function (requirement) { return requirement.isEmpty(); });
          if (!anonymous) return system.React.createElement(Original, props);
          var operationProps = props.operationProps.set('security', system.Im.List([anonymous]));
          return system.React.createElement(Original, Object.assign({}, props, { operationProps: operationProps }));
        };
      }
    }
  };
}
window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(OPENAPI_PATH)},
    dom_id: '#swagger-ui',
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    plugins: [KeyOptionalPlugin],
    layout: 'BaseLayout',
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    persistAuthorization: false,
    tryItOutEnabled: false,
    // The online validator would be a request to another origin.
    validatorUrl: null
  });
});
`;

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function docsPage(): string {
  const asset = (name: string) => `${DOCS_PATH}/${name}`;
  // Without JavaScript the page still lists the endpoints, from the same document.
  const document = JSON.parse(openApiJson()) as { info: { title: string; version: string }; paths: Record<string, Record<string, { summary?: string }>> };
  const rows = Object.entries(document.paths).flatMap(([p, item]) =>
    Object.entries(item).map(([method, op]) => `<li><code>${method.toUpperCase()} ${escapeHtml(p)}</code> ${escapeHtml(op.summary ?? '')}</li>`),
  );
  const title = `${document.info.title} ${document.info.version}`;
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} — REST API reference</title>
<link rel="stylesheet" href="${asset('swagger-ui.css')}">
<link rel="icon" type="image/png" sizes="32x32" href="${asset('favicon-32x32.png')}">
<link rel="icon" type="image/png" sizes="16x16" href="${asset('favicon-16x16.png')}">
</head>
<body>
<div id="swagger-ui"></div>
<noscript>
<h1>${escapeHtml(title)}</h1>
<p>The OpenAPI document: <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a></p>
<ul>
${rows.join('\n')}
</ul>
</noscript>
<script src="${asset('swagger-ui-bundle.js')}"></script>
<script src="${asset('init.js')}"></script>
</body>
</html>
`;
}

interface Resource {
  type: string;
  load: () => Promise<Buffer>;
}

const fromPackage = (file: string, type: string): Resource => ({ type, load: () => readFile(path.join(SWAGGER_UI_DIR, file)) });
const fromText = (text: () => string, type: string): Resource => ({ type, load: async () => Buffer.from(text(), 'utf8') });

const RESOURCES: Record<string, Resource> = {
  [OPENAPI_PATH]: fromText(openApiJson, 'application/json; charset=utf-8'),
  [DOCS_PATH]: fromText(docsPage, 'text/html; charset=utf-8'),
  [`${DOCS_PATH}/`]: fromText(docsPage, 'text/html; charset=utf-8'),
  [`${DOCS_PATH}/init.js`]: fromText(() => INIT_SCRIPT, 'text/javascript; charset=utf-8'),
  [`${DOCS_PATH}/swagger-ui-bundle.js`]: fromPackage('swagger-ui-bundle.js', 'text/javascript; charset=utf-8'),
  [`${DOCS_PATH}/swagger-ui-bundle.js.map`]: fromPackage('swagger-ui-bundle.js.map', 'application/json; charset=utf-8'),
  [`${DOCS_PATH}/swagger-ui.css`]: fromPackage('swagger-ui.css', 'text/css; charset=utf-8'),
  [`${DOCS_PATH}/swagger-ui.css.map`]: fromPackage('swagger-ui.css.map', 'application/json; charset=utf-8'),
  [`${DOCS_PATH}/favicon-32x32.png`]: fromPackage('favicon-32x32.png', 'image/png'),
  [`${DOCS_PATH}/favicon-16x16.png`]: fromPackage('favicon-16x16.png', 'image/png'),
};

interface Loaded {
  body: Buffer;
  etag: string;
}

/**
 * Answers the documentation paths and returns null for every other path. Each resource is read
 * (or built) on its first request and kept in memory; responses carry an ETag, so a browser
 * revalidates with a 304 instead of downloading Swagger UI again.
 */
export function createDocsHandler(): (request: Request, url: URL) => Promise<Response | null> {
  const loaded = new Map<string, Promise<Loaded>>();
  const load = (key: string, resource: Resource) => {
    let entry = loaded.get(key);
    if (!entry) {
      entry = resource.load().then((body) => ({ body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` }));
      // A failed read is not kept: the next request tries again.
      entry.catch(() => loaded.delete(key));
      loaded.set(key, entry);
    }
    return entry;
  };

  return async (request, url) => {
    const resource = RESOURCES[url.pathname];
    if (!resource || request.method === 'OPTIONS') return null;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return errorResponse(new AppError('METHOD_NOT_ALLOWED', `${request.method} is not allowed on ${url.pathname}`), { allow: 'GET, HEAD' });
    }
    const { body, etag } = await load(url.pathname, resource);
    const headers: Record<string, string> = {
      'content-type': resource.type,
      'content-security-policy': DOCS_CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      // Revalidate every time: the document changes with the service, and a 304 costs nothing.
      'cache-control': 'no-cache',
      etag,
    };
    const match = request.headers.get('if-none-match');
    if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)) {
      return new Response(null, { status: 304, headers });
    }
    headers['content-length'] = String(body.byteLength);
    return new Response(request.method === 'HEAD' ? null : new Uint8Array(body), { status: 200, headers });
  };
}
