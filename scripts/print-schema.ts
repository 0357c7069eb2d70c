// Writes schema.graphql from the code-first schema. test/unit/schema.test.ts fails when it is stale.
import { writeFileSync } from 'node:fs';
import { printedSchema } from '../src/domain/schema.js';

writeFileSync(new URL('../schema.graphql', import.meta.url), printedSchema());
process.stdout.write('schema.graphql written\n');
