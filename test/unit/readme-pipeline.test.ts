import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PIPELINE } from '../../src/pipeline/pipeline.js';

// The README walks one request through each face. Its GraphQL and REST walks name the stages of
// the request pipeline (src/pipeline/pipeline.ts), in bold: they must name every stage, once, in
// the order the stages run.

const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
const walks = readme.slice(readme.indexOf('**One request through each face.**'), readme.indexOf('### Database and migrations'));

/** The walk of one face: its list item, up to the next. */
function walkOf(face: string): string {
  const start = walks.indexOf(`\n- ${face}, `);
  expect(start, `the README walks a ${face} request`).toBeGreaterThan(-1);
  const end = walks.indexOf('\n- ', start + 1);
  return walks.slice(start, end === -1 ? undefined : end);
}

/** The stage names a walk gives, in bold, in the order it gives them. */
const stagesNamed = (walk: string) => [...walk.matchAll(/\*\*([^*]+)\*\*/g)].map((m) => m[1]!.replace(/\s+/g, ' '));

describe('README: one request through each face', () => {
  for (const face of ['GraphQL', 'REST']) {
    it(`walks a ${face} request through the pipeline’s stages, in their order`, () => {
      expect(stagesNamed(walkOf(face))).toEqual(PIPELINE.map((stage) => stage.name));
    });
  }
});
