import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// docs/api.md opens with a table of contents: it must list every section, in order, with links
// that land on it, and the links into it from the README must land too.

const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
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

// docs/deploy.md backs each guarantee with the test that proves it: every test it names exists,
// and names the behaviour it is cited for; every setting it names is one the service reads.
describe('docs/deploy.md', () => {
  const deploy = read('docs/deploy.md');

  it('names only tests that exist', () => {
    const named = [...new Set([...deploy.matchAll(/`(test\/[\w.-]+\.test\.ts)`/g)].map((m) => m[1]!))];
    expect(named.length).toBeGreaterThanOrEqual(8);
    for (const file of named) expect(() => read(file), file).not.toThrow();
  });

  it('names only settings the service reads', () => {
    const config = read('src/config/config.ts');
    const settings = [...new Set([...deploy.matchAll(/`([A-Z][A-Z0-9]*_[A-Z0-9_]+)(?:=[^`]*)?`/g)].map((m) => m[1]!))];
    expect(settings).toEqual(expect.arrayContaining(['DATABASE_URL', 'DATABASE_DIRECT_URL', 'DATABASE_READ_URLS', 'WEB_CONCURRENCY', 'REDIS_URL']));
    for (const name of settings) expect(config, name).toContain(name);
  });

  it('has a contents list whose links land on its sections', () => {
    const headings = new Set(prose(deploy).flatMap((line) => /^## (.+)$/.exec(line)?.slice(1).map(anchorOf) ?? []));
    const links = [...deploy.matchAll(/^\d+\. \[.+\]\(#([^)]+)\)$/gm)].map((m) => m[1]!);
    expect(links.length).toBe(headings.size - 1);
    for (const anchor of links) expect(headings, anchor).toContain(anchor);
    // The indented entries: the sections within (the steps, the guarantees).
    const subheadings = new Set(prose(deploy).flatMap((line) => /^### (.+)$/.exec(line)?.slice(1).map(anchorOf) ?? []));
    const sublinks = [...deploy.matchAll(/^ +\d+\. \[.+\]\(#([^)]+)\)$/gm)].map((m) => m[1]!);
    expect(sublinks.length).toBe(subheadings.size);
    for (const anchor of sublinks) expect(subheadings, anchor).toContain(anchor);
  });
});

describe('README: what it says of the demo key', () => {
  it('names every scope the demo key gets beyond the read scopes (SELF_SERVICE_SCOPES)', async () => {
    const { SELF_SERVICE_SCOPES } = await import('../../src/auth/scopes.js');
    const readme = read('README.md').replace(/\s+/g, ' ');
    const sentence = /prints a demo key \(([^)]*)\)/.exec(readme)?.[1];
    expect(sentence, 'README: "prints a demo key (…)"').toBeDefined();
    expect(sentence).toContain('every read scope');
    for (const scope of SELF_SERVICE_SCOPES.filter((s) => !s.startsWith('read:'))) expect(sentence).toContain(`\`${scope}\``);
  });
});
