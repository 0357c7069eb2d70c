import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCompat as checkCompatHere } from '../scripts/check-compat.js';

// npm run check:compat (scripts/check-compat.ts): the schema and OpenAPI document against the
// ones committed at a git revision. As a process through the real code path on this tree (and once
// refusing a revision), then in this process with edited copies of the committed files given as
// the "current" documents, so no source file is touched.

const root = path.resolve(import.meta.dirname, '..');
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'; // git's empty tree: a revision with no files

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** The check as `npm run check:compat -- …` runs it: a process. */
function checkCompatProcess(args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(path.join(root, 'node_modules', '.bin', 'tsx'), ['scripts/check-compat.ts', ...args], { cwd: root, timeout: 90_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr });
    });
  });
}

/** The same check in this process (its exit code, what it wrote where). */
async function checkCompat(args: string[]): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const code = await checkCompatHere(args, { out: (text) => void (stdout += text), err: (text) => void (stderr += text) });
  return { code, stdout, stderr };
}

let dir: string;
const schemaText = fs.readFileSync(path.join(root, 'schema.graphql'), 'utf8');
const openApiText = fs.readFileSync(path.join(root, 'openapi.json'), 'utf8');

/** A file in the test's folder; its path. */
function write(name: string, text: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  return file;
}

/** openapi.json edited by `edit`. */
function openApi(name: string, edit: (doc: any) => void): string {
  const doc = JSON.parse(openApiText);
  edit(doc);
  return write(name, JSON.stringify(doc, null, 2));
}

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'check-compat-'));
});

afterAll(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('npm run check:compat', () => {
  it('passes on this tree: what the code builds is what HEAD has', async () => {
    const { code, stdout, stderr } = await checkCompatProcess([]);
    expect(stderr).toBe('');
    expect(stdout).toContain('at HEAD');
    expect(stdout).toMatch(/^0 breaking, 0 dangerous, 0 non-breaking change\(s\)$/m);
    expect(code).toBe(0);
  }, 120_000);

  it('names a removed GraphQL field and fails', async () => {
    // Product.nameEn, with its description on the line before it.
    const withoutField = schemaText.replace(/^type Product implements Node \{\n([\s\S]*?)\n {2}"""English name"""\n {2}nameEn: String!\n/m, 'type Product implements Node {\n$1');
    expect(withoutField).not.toBe(schemaText);
    const { code, stdout, stderr } = await checkCompat(['--current-schema', write('no-field.graphql', withoutField), '--current-openapi', path.join(root, 'openapi.json')]);
    expect(stdout).toContain("BREAKING GraphQL Product.nameEn: Field 'nameEn' was removed from object type 'Product'");
    expect(stdout).toMatch(/^1 breaking, 0 dangerous, 0 non-breaking change\(s\)$/m);
    expect(stderr).toContain('check:compat failed: 1 breaking change(s) against HEAD');
    expect(code).toBe(1);
  }, 120_000);

  it('names a removed REST path, a removed parameter and a new required parameter, and fails', async () => {
    const file = openApi('rest.json', (doc) => {
      delete doc.paths['/api/suppliers/{id}'];
      const list = doc.paths['/api/products'].get;
      list.parameters = list.parameters.filter((p: { name: string }) => p.name !== 'featured');
      doc.paths['/api/orders'].get.parameters.push({ name: 'region', in: 'query', required: true, schema: { type: 'string' } });
    });
    const { code, stdout } = await checkCompat(['--current-schema', path.join(root, 'schema.graphql'), '--current-openapi', file]);
    expect(stdout).toContain('BREAKING REST GET /api/suppliers/{id}: [Removed] operation GET /api/suppliers/{id}');
    expect(stdout).toContain('BREAKING REST GET /api/products: [Removed] optional query parameter `featured`');
    expect(stdout).toContain('BREAKING REST GET /api/orders: [Added] required query parameter `region`');
    expect(stdout).toMatch(/^3 breaking, /m);
    expect(code).toBe(1);
  }, 120_000);

  it('names a property removed from a response, and fails', async () => {
    const file = openApi('property.json', (doc) => {
      const product = doc.components.schemas.Product;
      delete product.properties.sku;
      product.required = product.required.filter((name: string) => name !== 'sku');
    });
    const { code, stdout } = await checkCompat(['--current-schema', path.join(root, 'schema.graphql'), '--current-openapi', file]);
    expect(stdout).toContain('BREAKING REST GET /api/products/{slug}: [Removed] property `sku` from `data` in Response 200 content (application/json)');
    expect(code).toBe(1);
  }, 120_000);

  it('lists additions as notes and passes', async () => {
    const withField = schemaText.replace(/^type Product implements Node \{\n/m, 'type Product implements Node {\n  color: String\n');
    const file = openApi('additions.json', (doc) => {
      doc.paths['/api/products'].get.parameters.push({ name: 'color', in: 'query', required: false, schema: { type: 'string' } });
    });
    const { code, stdout } = await checkCompat(['--current-schema', write('additions.graphql', withField), '--current-openapi', file]);
    expect(stdout).toContain("note     GraphQL Product.color: Field 'color' was added to object type 'Product'");
    expect(stdout).toContain('note     REST GET /api/products: [Added] optional query parameter `color`');
    expect(stdout).toMatch(/^0 breaking, 0 dangerous, 2 non-breaking change\(s\)$/m);
    expect(code).toBe(0);
  }, 120_000);

  it('says so when REF does not exist or lacks the files, with exit code 2', async () => {
    const current = ['--current-schema', path.join(root, 'schema.graphql'), '--current-openapi', path.join(root, 'openapi.json')];
    const missing = await checkCompatProcess(['--base', 'no-such-branch-anywhere', ...current]);
    expect(missing.stderr).toContain('check:compat: no such git revision: no-such-branch-anywhere');
    expect(missing.code).toBe(2);
    const empty = await checkCompat(['--base', EMPTY_TREE, ...current]);
    expect(empty.stderr).toContain(`check:compat: schema.graphql does not exist at ${EMPTY_TREE}`);
    expect(empty.code).toBe(2);
    const unknown = await checkCompat(['--bsae', 'HEAD']);
    expect(unknown.stderr).toContain("Unknown option '--bsae'");
    expect(unknown.code).toBe(2);
  }, 120_000);
});
