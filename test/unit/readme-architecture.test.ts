import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The README's architecture tree is the map a newcomer reads first: it must name every folder of
// src/ and nothing that is not there.

const root = path.resolve(import.meta.dirname, '../..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## Architecture'), readme.indexOf('### Database and migrations'));
const tree = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
/** The entries the tree lists under src/: `  name/` or `  name.ts`, each with a line saying what it holds. */
const listed = [...tree.matchAll(/^ {2}([a-z-]+\/|[a-z-]+\.ts) +\S/gm)].map((m) => m[1]!);

describe('README architecture', () => {
  it('lists every folder of src/ and the files at its top, each once, and nothing else', () => {
    const actual = fs
      .readdirSync(path.join(root, 'src'), { withFileTypes: true })
      .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name))
      .filter((name) => name.endsWith('/') || name.endsWith('.ts'));
    expect(new Set(listed).size).toBe(listed.length);
    expect([...listed].sort()).toEqual([...new Set([...actual, 'generated/'])].sort());
  });

  it('walks one request through each face', () => {
    for (const face of ['GraphQL', 'REST', 'Dashboard', 'CLI', 'Webhook worker']) expect(section).toContain(`- ${face}`);
  });
});
