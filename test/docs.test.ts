import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// docs/api.md opens with a table of contents: it must list every section, in order, with links
// that land on it, and the links into it from the README must land too.

const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
const api = read('docs/api.md');

/** Lines outside fenced code blocks (a `## ` inside an example is no heading). */
function prose(markdown: string): string[] {
  let fenced = false;
  return markdown.split('\n').filter((line) => {
    if (line.startsWith('```')) fenced = !fenced;
    return !fenced;
  });
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

const sections = prose(api).flatMap((line) => /^## (.+)$/.exec(line)?.slice(1) ?? []);
const headingAnchors = new Set(prose(api).flatMap((line) => /^#{1,6} (.+)$/.exec(line)?.slice(1).map(anchorOf) ?? []));

/** The bullet list of links between the title and the first section. */
function tableOfContents(): { title: string; anchor: string }[] {
  const lines = api.split('\n');
  const end = lines.findIndex((line) => line.startsWith('## '));
  return lines.slice(0, end).flatMap((line) => {
    const entry = /^- \[(.+)\]\(#([^)]+)\)$/.exec(line);
    return entry ? [{ title: entry[1]!, anchor: entry[2]! }] : [];
  });
}

describe('docs/api.md', () => {
  it('has sections to list', () => {
    expect(sections.length).toBeGreaterThan(10);
    expect(sections).toEqual(expect.arrayContaining(['Acting for a supplier', 'Webhooks']));
  });

  it('lists every ## section in its table of contents, in order, each link landing on its section', () => {
    expect(tableOfContents()).toEqual(sections.map((title) => ({ title, anchor: anchorOf(title) })));
  });

  it('links only to its own headings, and so does the README into it', () => {
    const own = [...api.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
    const fromReadme = [...read('README.md').matchAll(/\]\(docs\/api\.md#([^)]+)\)/g)].map((m) => m[1]!);
    expect(fromReadme.length).toBeGreaterThan(0);
    for (const anchor of [...own, ...fromReadme]) expect(headingAnchors, anchor).toContain(anchor);
  });
});
