import crypto from 'node:crypto';
import { Response } from '../shared/fetch-api.js';

// The dashboard's stylesheet and its one script, served by the process itself (nothing from other
// hosts, no build step). The pages work without the script: it only adds the copy button's copy.

const CSS = `
:root { --ink: #1a1a1a; --muted: #4a4a4a; --line: #c9c9c9; --accent: #1d4ed8; --accent-dark: #1e3a8a; --bad: #a4001d; --ok: #14532d; --ok-bg: #e6f4ea; --req: #1d4ed8; --lim: #b45309; }
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
.top nav ul { display: flex; gap: 1rem; list-style: none; margin: 0; padding: 0; }
.top nav a[aria-current="page"] { font-weight: 700; text-decoration: none; color: var(--ink); }
.sign-out { margin-left: auto; display: flex; align-items: center; gap: .75rem; }
.who { color: var(--muted); }
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
button, .button { display: inline-block; background: var(--accent); color: #fff; border: 0; border-radius: 4px; padding: .5rem 1rem; font: inherit; cursor: pointer; text-decoration: none; }
button:hover, .button:hover { background: var(--accent-dark); color: #fff; }
button.danger { background: var(--bad); }
.secondary { background: #fff; color: var(--accent); border: 1px solid var(--accent); }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
code, .key { font-family: ui-monospace, "SFMono-Regular", Menlo, monospace; }
.key-box { display: flex; gap: .5rem; align-items: center; }
.key-box input { flex: 1; font-family: ui-monospace, Menlo, monospace; }
.status-active { color: var(--ok); font-weight: 600; }
.status-revoked, .status-expired { color: var(--bad); font-weight: 600; }
.history .note { white-space: pre-line; overflow-wrap: anywhere; }
.chart { max-width: 100%; height: auto; border: 1px solid var(--line); }
.chart .req { fill: var(--req); }
.chart .lim { fill: var(--lim); }
.chart .axis { stroke: #6b6b6b; }
.chart text { font-size: 11px; fill: var(--muted); }
.legend span::before { content: ""; display: inline-block; width: .8rem; height: .8rem; margin: 0 .3rem 0 1rem; vertical-align: middle; }
.legend .req::before { background: var(--req); }
.legend .lim::before { background: var(--lim); }
.meter { font-size: 1.1rem; }
.actions { display: flex; gap: .75rem; align-items: center; flex-wrap: wrap; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(16rem, 1fr)); gap: 1rem; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 1rem; }
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
// A form with errors: move the focus to its summary, so a keyboard or screen-reader user starts there.
document.querySelector('.error-summary')?.focus();
`;

interface Asset {
  body: string;
  type: string;
  etag: string;
}

const asset = (body: string, type: string): Asset => ({ body, type, etag: `"${crypto.createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` });

const ASSETS: Record<string, Asset> = {
  'dashboard.css': asset(CSS, 'text/css; charset=utf-8'),
  'dashboard.js': asset(JS, 'text/javascript; charset=utf-8'),
};

/** An asset by file name, or null. Revalidated by ETag: a new release changes it at once. */
export function serveAsset(name: string, request: Request): Response | null {
  const found = Object.hasOwn(ASSETS, name) ? ASSETS[name]! : null;
  if (!found) return null;
  const headers = { 'content-type': found.type, etag: found.etag, 'cache-control': 'no-cache', 'x-content-type-options': 'nosniff' };
  if (request.headers.get('if-none-match') === found.etag) return new Response(null, { status: 304, headers });
  return new Response(request.method === 'HEAD' ? null : found.body, { headers });
}
