// Writes openapi.json, the OpenAPI document built from the REST routes and the schema.
// test/openapi.test.ts fails when the checked-in file is stale.
import { writeFileSync } from 'node:fs';
import { openApiJson } from '../src/openapi/serve.js';

writeFileSync(new URL('../openapi.json', import.meta.url), openApiJson());
process.stdout.write('openapi.json written\n');
