// npm run check:compat [-- --base REF]: are the GraphQL schema and the OpenAPI document the code
// builds now compatible with the ones committed at REF (default HEAD)? Every breaking change is
// printed by name (the removed field, the operation and its parameter, the property of a
// response) and makes the exit code 1; dangerous and non-breaking changes are listed as warnings
// and notes and leave it 0. A REF or file that cannot be read is exit code 2.
//
// The graph is compared with @graphql-inspector/core (each change has a criticality), the REST
// document with api-smart-diff (OpenAPI 3.0 and 3.1; each change is breaking, non-breaking,
// deprecated, unclassified or an annotation such as a description).
//
// --current-schema FILE and --current-openapi FILE compare those files instead of what the code
// builds (the tests compare edited copies this way, without touching src/).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CriticalityLevel, diff as graphqlDiff } from '@graphql-inspector/core';
import { apiCompare, type Diff } from 'api-smart-diff';
import { buildSchema } from 'graphql';
import { isEntryPoint } from '../src/cli/run.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const SCHEMA_FILE = 'schema.graphql';
const OPENAPI_FILE = 'openapi.json';

type Level = 'breaking' | 'dangerous' | 'safe';
interface Finding {
  level: Level;
  face: 'GraphQL' | 'REST';
  /** Where: `Product.slug`, `GET /api/products`, `#/components/schemas/Product`. */
  where: string;
  message: string;
}

class UsageError extends Error {}

function usage(): string {
  return [
    'usage: npm run check:compat [-- --base REF] [--current-schema FILE] [--current-openapi FILE]',
    `  --base REF              the commit, branch or tag whose ${SCHEMA_FILE} and ${OPENAPI_FILE} are the reference (default HEAD)`,
    `  --current-schema FILE   compare this schema instead of the one the code builds`,
    `  --current-openapi FILE  compare this OpenAPI document instead of the one the code builds`,
  ].join('\n');
}

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
}

/** The file as committed at ref, or a UsageError naming what is missing. */
function committed(ref: string, file: string): string {
  try {
    git(['rev-parse', '--verify', '--quiet', `${ref}^{tree}`]);
  } catch {
    throw new UsageError(`no such git revision: ${ref} (give a commit, branch or tag with --base)`);
  }
  try {
    git(['cat-file', '-e', `${ref}:./${file}`]);
  } catch {
    throw new UsageError(`${file} does not exist at ${ref}: nothing to compare with`);
  }
  return git(['show', `${ref}:./${file}`]);
}

function readCurrent(file: string): string {
  try {
    return readFileSync(path.resolve(process.cwd(), file), 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
}

function parseJson(text: string, what: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new UsageError(`${what} is not JSON: ${(error as Error).message}`);
  }
}

function parseSchema(text: string, what: string) {
  try {
    return buildSchema(text);
  } catch (error) {
    throw new UsageError(`${what} is not a GraphQL schema: ${(error as Error).message}`);
  }
}

async function compareGraph(before: string, after: string, ref: string): Promise<Finding[]> {
  const changes = await graphqlDiff(parseSchema(before, `${SCHEMA_FILE} at ${ref}`), parseSchema(after, 'the current schema'));
  const level = (l: CriticalityLevel): Level =>
    l === CriticalityLevel.Breaking ? 'breaking' : l === CriticalityLevel.Dangerous ? 'dangerous' : 'safe';
  return changes.map((change) => ({
    level: level(change.criticality.level),
    face: 'GraphQL',
    where: change.path ?? '(schema)',
    message: change.message,
  }));
}

const VERBS: Record<string, string> = { add: 'Added', remove: 'Removed', replace: 'Replaced', rename: 'Renamed' };
const METHODS = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']);
type Json = Record<string, any>;

/** Where a change is, by operation when it is in one: `GET /api/products`. */
function restLocation(jsonPath: (string | number)[]): string {
  const [top, p, method] = jsonPath;
  if (top === 'paths' && typeof p === 'string') {
    return typeof method === 'string' && METHODS.has(method) ? `${method.toUpperCase()} ${p}` : p;
  }
  const pointer = jsonPath.map((part) => String(part).replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
  return `#/${pointer}`;
}

/**
 * api-smart-diff names a whole parameter that was added or removed "required" whether it is or
 * not: say it ourselves, from the parameter itself (a reference followed in its document).
 */
function parameterMessage(d: Diff, before: Json, after: Json): string | undefined {
  const { path: jsonPath, action } = d;
  if (jsonPath[0] !== 'paths' || jsonPath[jsonPath.length - 2] !== 'parameters') return undefined;
  if (action !== 'add' && action !== 'remove') return undefined;
  const doc = action === 'add' ? after : before;
  let param = (action === 'add' ? d.after : d.before) as Json | undefined;
  if (typeof param?.$ref === 'string') {
    param = String(param.$ref)
      .replace(/^#\//, '')
      .split('/')
      .reduce<any>((node, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  if (typeof param?.name !== 'string') return undefined;
  const what = `${param.required ? 'required' : 'optional'} ${param.in} parameter \`${param.name}\``;
  return `[${VERBS[action]}] ${what}`;
}

function compareRest(beforeText: string, afterText: string, ref: string): Finding[] {
  const before = parseJson(beforeText, `${OPENAPI_FILE} at ${ref}`);
  const after = parseJson(afterText, 'the current OpenAPI document');
  const { diffs } = apiCompare(before, after);
  const findings: Finding[] = [];
  for (const d of diffs) {
    if (d.type === 'annotation') continue; // descriptions, examples, summaries
    const level: Level = d.type === 'breaking' ? 'breaking' : d.type === 'non-breaking' ? 'safe' : 'dangerous';
    const message = parameterMessage(d, before, after) || d.description || `[${VERBS[d.action]}] ${restLocation(d.path)}`;
    findings.push({ level, face: 'REST', where: restLocation(d.path), message: d.type === 'deprecated' || d.type === 'unclassified' ? `${message} (${d.type})` : message });
  }
  return findings;
}

/** Where the check writes: its report, and what went wrong. */
export interface CompatOutput {
  out: (text: string) => void;
  err: (text: string) => void;
}

/** The check on a command line: its exit code (0 compatible, 1 breaking changes, 2 a usage or read error). */
export async function checkCompat(argv: string[], io: CompatOutput): Promise<number> {
  try {
    return await compare(argv, io);
  } catch (error) {
    const text = error instanceof UsageError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error);
    io.err(`check:compat: ${text}\n`);
    return 2;
  }
}

async function compare(argv: string[], io: CompatOutput): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        base: { type: 'string', default: 'HEAD' },
        'current-schema': { type: 'string' },
        'current-openapi': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}\n${usage()}`);
  }
  if (values.help) {
    io.out(`${usage()}\n`);
    return 0;
  }
  const ref = values.base;
  const baseSchema = committed(ref, SCHEMA_FILE);
  const baseOpenApi = committed(ref, OPENAPI_FILE);

  // The documents the code builds, exactly as schema:print and openapi:print write them.
  const currentSchema = values['current-schema']
    ? readCurrent(values['current-schema'])
    : (await import('../src/domain/schema.js')).printedSchema();
  const currentOpenApi = values['current-openapi']
    ? readCurrent(values['current-openapi'])
    : (await import('../src/openapi/serve.js')).openApiJson();

  const findings = [...(await compareGraph(baseSchema, currentSchema, ref)), ...compareRest(baseOpenApi, currentOpenApi, ref)];
  const breaking = findings.filter((f) => f.level === 'breaking');
  const dangerous = findings.filter((f) => f.level === 'dangerous');
  const safe = findings.filter((f) => f.level === 'safe');
  const line = (mark: string, f: Finding) => `${mark} ${f.face} ${f.where}: ${f.message}\n`;
  const out = { write: io.out };
  out.write(`Comparing the current schema and OpenAPI document with ${SCHEMA_FILE} and ${OPENAPI_FILE} at ${ref}\n`);
  for (const f of breaking) out.write(line('BREAKING', f));
  for (const f of dangerous) out.write(line('warning ', f));
  for (const f of safe) out.write(line('note    ', f));
  out.write(`${breaking.length} breaking, ${dangerous.length} dangerous, ${safe.length} non-breaking change(s)\n`);
  if (breaking.length > 0) {
    io.err(
      `check:compat failed: ${breaking.length} breaking change(s) against ${ref}. Clients written against ${ref} would break; ` +
        'keep the old field, path or parameter (deprecate it), or make the change in a new version.\n',
    );
    return 1;
  }
  return 0;
}

if (isEntryPoint(import.meta.url)) {
  // process.exitCode, not process.exit(): output to a pipe is written asynchronously.
  void checkCompat(process.argv.slice(2), { out: (text) => void process.stdout.write(text), err: (text) => void process.stderr.write(text) }).then((code) => {
    process.exitCode = code;
  });
}
