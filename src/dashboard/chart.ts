import type { HourUsage } from '../usage/read.js';
import { html, type Html } from './html.js';

// A key's requests and 429s per hour as an SVG bar chart, drawn on the server: no script, no
// library, readable by screen readers through its label and the table that follows it.

const BAR = 5;
const HEIGHT = 160;
const TOP = 10;
const BOTTOM = 22;
const LEFT = 44;
/** The labels' size, set on the SVG itself so that the room kept for them below is for this size. */
const FONT_PX = 11;
/** A day label ("Wed 30") starts this far right of its midnight tick. */
const LABEL_GAP = 2;
/** The widest a day label can be drawn: 6 characters at up to 0.75 em each (wide fonts included). */
const DAY_LABEL_MAX = Math.ceil(6 * 0.75 * FONT_PX);
/** Room right of the bars: a midnight can be the last hour, and its label must fit whole after it. */
const RIGHT = LABEL_GAP + DAY_LABEL_MAX - BAR;

const DAY = new Intl.DateTimeFormat('en-GB', { weekday: 'short', day: 'numeric', timeZone: 'UTC' });
const HOUR = new Intl.DateTimeFormat('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

/** A round top for the axis: 1, 2, 5 × a power of ten. */
function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((m) => m * power).find((top) => top >= value)!;
}

export function usageChart(hours: readonly HourUsage[]): Html {
  const requests = hours.reduce((sum, h) => sum + h.requests, 0);
  const limited = hours.reduce((sum, h) => sum + h.limited, 0);
  const top = niceMax(Math.max(...hours.map((h) => h.requests), 0));
  const plot = HEIGHT - TOP - BOTTOM;
  const width = LEFT + hours.length * BAR + RIGHT;
  const y = (n: number) => TOP + plot - (n / top) * plot;
  const days = hours.map((h, i) => ({ h, i })).filter(({ h }) => h.hour.getUTCHours() === 0);
  const label = `Requests per hour over the last ${hours.length / 24} days: ${requests} requests, ${limited} refused with 429`;
  // Drawn at its own size (scaled down to a phone's width its labels would be unreadable): a
  // narrow screen scrolls the chart in its box, which the keyboard can focus to scroll.
  return html`<figure>
<div class="scroll-x" tabindex="0" role="region" aria-label="Usage chart (scrolls sideways on a narrow screen)">
<svg class="chart" role="img" aria-labelledby="usage-title" viewBox="0 0 ${width} ${HEIGHT}" width="${width}" height="${HEIGHT}" font-size="${FONT_PX}">
  <title id="usage-title">${label}</title>
  <line class="axis" x1="${LEFT}" y1="${TOP + plot}" x2="${width}" y2="${TOP + plot}"/>
  <text x="${LEFT - 6}" y="${TOP + 4}" text-anchor="end">${top}</text>
  <text x="${LEFT - 6}" y="${TOP + plot}" text-anchor="end">0</text>
  ${hours.map((h, i) =>
    h.requests > 0
      ? html`<rect class="req" x="${LEFT + i * BAR}" y="${y(h.requests).toFixed(1)}" width="${BAR - 1}" height="${(TOP + plot - y(h.requests)).toFixed(1)}"/>${
          h.limited > 0 ? html`<rect class="lim" x="${LEFT + i * BAR}" y="${y(h.limited).toFixed(1)}" width="${BAR - 1}" height="${(TOP + plot - y(h.limited)).toFixed(1)}"/>` : ''
        }`
      : '',
  )}
  ${days.map(({ h, i }) => html`<line class="axis" x1="${LEFT + i * BAR}" y1="${TOP + plot}" x2="${LEFT + i * BAR}" y2="${TOP + plot + 4}"/><text x="${LEFT + i * BAR + LABEL_GAP}" y="${HEIGHT - 6}">${DAY.format(h.hour)}</text>`)}
</svg>
</div>
<figcaption class="legend"><span class="req">Requests</span><span class="lim">Refused (429)</span> · per hour, UTC · ${requests} requests, ${limited} refused</figcaption>
</figure>
${usageTable(hours)}`;
}

/** The same numbers as a table, for the hours that had any. */
function usageTable(hours: readonly HourUsage[]): Html {
  const busy = hours.filter((h) => h.requests > 0 || h.limited > 0).reverse();
  if (!busy.length) return html`<p>No requests with this key in the last ${hours.length / 24} days.</p>`;
  return html`<details>
<summary>Hourly numbers (${busy.length} ${busy.length === 1 ? 'hour' : 'hours'} with requests)</summary>
<table>
<caption class="hint">Newest first, UTC</caption>
<thead><tr><th scope="col">Hour</th><th scope="col">Requests</th><th scope="col">Refused (429)</th></tr></thead>
<tbody>${busy.map((h) => html`<tr><td>${HOUR.format(h.hour)}</td><td>${h.requests}</td><td>${h.limited}</td></tr>`)}</tbody>
</table>
</details>`;
}
