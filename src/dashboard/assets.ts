import crypto from 'node:crypto';
import { Response } from '../shared/fetch-api.js';

// The dashboard's stylesheet, its one script and its icon, served by the process itself (nothing
// from other hosts, no build step). The pages work without the script: it only adds the copy
// button's copy and moves the focus to a form's errors.

const CSS = `
:root { --ink: #1a1a1a; --muted: #4a4a4a; --line: #c9c9c9; --accent: #1d4ed8; --accent-dark: #1e3a8a; --bad: #a4001d; --bad-dark: #6e0013; --ok: #14532d; --ok-bg: #e6f4ea; --req: #1d4ed8; --lim: #b45309; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #fff; }
a { color: var(--accent); }
a:hover { color: var(--accent-dark); }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.skip { position: absolute; left: -999px; top: 0; background: #fff; padding: .5rem; }
.skip:focus { left: .5rem; }
.skip-label { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); white-space: nowrap; }
.top { display: flex; flex-wrap: wrap; align-items: center; gap: 1rem; padding: .75rem 1.5rem; border-bottom: 1px solid var(--line); }
.brand { font-weight: 700; text-decoration: none; color: var(--ink); }
.top nav ul { display: flex; flex-wrap: wrap; gap: .25rem 1rem; list-style: none; margin: 0; padding: 0; }
.top nav a[aria-current="page"] { font-weight: 700; text-decoration: none; color: var(--ink); }
.sign-out { margin-left: auto; display: flex; flex-wrap: wrap; align-items: center; gap: .5rem .75rem; min-width: 0; }
.who { color: var(--muted); overflow-wrap: anywhere; }
main { max-width: 60rem; padding: 1rem 1.5rem 3rem; }
h1 { font-size: 1.75rem; margin: .5rem 0 1rem; }
h2 { font-size: 1.25rem; margin: 1.5rem 0 .5rem; }
.notice { background: var(--ok-bg); color: var(--ok); padding: .5rem .75rem; border-left: 4px solid var(--ok); }
.warning { background: #fff7e6; border-left: 4px solid var(--lim); padding: .5rem .75rem; }
.error-summary { border: 3px solid var(--bad); padding: .5rem 1rem; margin-bottom: 1rem; }
.error-summary h2 { margin-top: 0; color: var(--bad); }
.form { max-width: 32rem; }
.field { margin-bottom: 1rem; }
.field label, fieldset legend { display: block; font-weight: 600; }
.hint, .optional { color: var(--muted); font-weight: 400; margin: 0; }
.error { color: var(--bad); font-weight: 600; margin: 0; }
.has-error input { border-color: var(--bad); }
input[type=text], input[type=email], input[type=password], input[type=tel], select { width: 100%; padding: .45rem; border: 1px solid #6b6b6b; border-radius: 4px; font: inherit; }
fieldset { border: 1px solid var(--line); border-radius: 4px; margin: 0 0 1rem; padding: .5rem 1rem; }
.checks label { display: block; font-weight: 400; }
.checks label .hint { display: block; margin: 0 0 .35rem 1.6rem; font-size: .9rem; }
button, .button { display: inline-block; background: var(--accent); color: #fff; border: 0; border-radius: 4px; padding: .5rem 1rem; font: inherit; cursor: pointer; text-decoration: none; }
button:hover, .button:hover { background: var(--accent-dark); color: #fff; }
/* Revoking and deleting are never the primary action: the danger style, on buttons and on links that lead to their confirmation. */
button.danger, .button.danger { background: var(--bad); }
button.danger:hover, .button.danger:hover { background: var(--bad-dark); }
.secondary { background: #fff; color: var(--accent); border: 1px solid var(--accent); }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
code, .key { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; overflow-wrap: anywhere; }
/* Example code wraps on a narrow screen rather than widening the page. */
pre { white-space: pre-wrap; overflow-wrap: anywhere; }
.key-box { display: flex; gap: .5rem; align-items: center; }
.key-box input { flex: 1; font-family: ui-monospace, Menlo, monospace; }
.status-active { color: var(--ok); font-weight: 600; }
.status-revoked, .status-expired { color: var(--bad); font-weight: 600; }
.history .note { white-space: pre-line; overflow-wrap: anywhere; }
.chart { max-width: 100%; height: auto; border: 1px solid var(--line); }
.chart .req { fill: var(--req); }
.chart .lim { fill: var(--lim); }
.chart .axis { stroke: #6b6b6b; }
.chart text { fill: var(--muted); }
.legend span::before { content: ""; display: inline-block; width: .8rem; height: .8rem; margin: 0 .3rem 0 1rem; vertical-align: middle; }
.legend .req::before { background: var(--req); }
.legend .lim::before { background: var(--lim); }
.meter { font-size: 1.1rem; }
.actions { display: flex; gap: .75rem; align-items: center; flex-wrap: wrap; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 1rem; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 1rem; }
/* What cannot be narrower than its content (the usage chart) scrolls in its own box, never the page. */
.scroll-x { overflow-x: auto; max-width: 100%; }
.scroll-x .chart { max-width: none; }
/* A phone: less padding, and forms and cards as wide as the screen. */
@media (max-width: 40rem) {
  .top { padding: .5rem .75rem; gap: .5rem; }
  main { padding: .75rem .75rem 2rem; }
  .cards { grid-template-columns: 1fr; }
  /* A table wider than the screen scrolls in its own box (its rows' links make it reachable by
     keyboard); positioned, so that its visually hidden labels stay inside that box too. */
  table { display: block; overflow-x: auto; position: relative; }
  th, td { padding: .3rem .35rem; }
  td code { overflow-wrap: normal; }
}
`;

const JS = `
// Copy buttons: <button data-copy="id-of-input">. The input stays selectable without this script.
document.addEventListener('click', async (event) => {
  const button = event.target.closest('button[data-copy]');
  if (!button) return;
  const input = document.getElementById(button.dataset.copy);
  const status = document.getElementById(button.dataset.copy + '-status');
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    if (status) status.textContent = 'Copied to the clipboard.';
  } catch {
    if (status) status.textContent = 'Copy did not work here: the text is selected, copy it with your keyboard.';
  }
});
// A chart wider than the screen opens on its newest hours, at its right end.
for (const box of document.querySelectorAll('.scroll-x')) box.scrollLeft = box.scrollWidth;
// A form with errors: move the focus to its summary, so a keyboard or screen-reader user starts there.
document.querySelector('.error-summary')?.focus();
`;

/** The icon the pages link (an "M" on the accent blue), for browsers that draw SVG icons. */
const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1d4ed8"/><path d="M8.5 23V10l7.5 7.5L23.5 10v13" fill="none" stroke="#fff" stroke-width="3.5" stroke-linecap="round" stroke-linejoin="round"/></svg>
`;

/**
 * The same icon at /favicon.ico, where browsers and other clients look without a link: FAVICON_SVG
 * drawn at 32×32 by Chromium, as a PNG in an ICO container (every client reads that format there).
 */
const FAVICON_ICO = new Uint8Array(Buffer.from(
  'AAABAAEAICAAAAEAIABoAgAAFgAAAIlQTkcNChoKAAAADUlIRFIAAAAgAAAAIAgGAAAAc3p69AAAAh1JREFUeJzMl0tIVFEYx//n3BturMCSaMqCiGzZJipqGUZhMlDQagpbzCJm0SJ6QIuWtWtREbMIyoIWCiOCiLhxJ4giojCiDuj4QMRx42tGvcfzXb3j6Nyr91x1jr/FzHl9/P/nu999HBMFXHg8FGHMCjOw27IbwuEyJSC6hOCJyZbqBmeQ0c/5R6nLppGNg7EalAIh2tfWy6LTrVfGOPVNM/evZOKE1DKN3F+7WVWbrAfHL+jAwksuOJ5BE6TNmRA3oAnSNuX1OAddSG0OzexpoPbuSXx7E8LDO+VQhWIotubW3rGsqi4p3CYqThno+X0VxpbFz39m8aMpAz/Enp7B28jZfP9eNIXxmVXXtZ4ZuHapLC9OvH9eiVdPKqAqToQqT3iuN6EAmSC8MuEmvh/KRUgmouHiTNCYqjihlAGHj/WbmYgnMnlxZ+zIDHR0L+D+zfIdJqhGDM6Kdr577aEYiCfm0ZNcxrvI9k4/vCje9ZeGWbluxbcBpRr43pixBbygOVqjgnINOAKFmQgqHsiAm4mg4oENOCY6exdBj9HBVBZBCWyAGDiAsMPxfhtqNTCSzmLd2mzT/3Daf7pVYo3T1bFPbhNLWYHRiZxdZF//z6F/ZAV+UYn1/B4oFVweEmagC6nNBWN90ARpy89y9hOaIG37bHixLtkmGw9QSgSa0y3Xw/ZtaAn2Wg4c/LHmW1ssWGtGjNqscELH8XwDAAD//3p4jmsAAAAGSURBVAMAgAjVcY5l/B0AAAAASUVORK5CYII=',
  'base64',
));

interface Asset {
  body: string | Uint8Array<ArrayBuffer>;
  type: string;
  etag: string;
}

const asset = (body: string | Uint8Array<ArrayBuffer>, type: string): Asset => ({ body, type, etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` });

const ASSETS: Record<string, Asset> = {
  'dashboard.css': asset(CSS, 'text/css; charset=utf-8'),
  'dashboard.js': asset(JS, 'text/javascript; charset=utf-8'),
  'favicon.svg': asset(FAVICON_SVG, 'image/svg+xml'),
};

const FAVICON = asset(FAVICON_ICO, 'image/x-icon');

/** An asset, revalidated by ETag: a new release changes it at once. */
function answer(found: Asset, request: Request): Response {
  const headers = { 'content-type': found.type, etag: found.etag, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' };
  if (request.headers.get('if-none-match') === found.etag) return new Response(null, { status: 304, headers });
  return new Response(request.method === 'HEAD' ? null : found.body, { headers });
}

/** An asset by file name, or null. */
export function serveAsset(name: string, request: Request): Response | null {
  return Object.hasOwn(ASSETS, name) ? answer(ASSETS[name]!, request) : null;
}

/** /favicon.ico. */
export const serveFavicon = (request: Request): Response => answer(FAVICON, request);
