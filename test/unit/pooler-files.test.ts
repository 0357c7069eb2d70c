import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { POOLER_FILES } from '../pooler-files.js';

// The list of files the pass behind PgBouncer runs (test/pooler-files.ts) names files that are
// there and that TEST_POOLER changes: a renamed or emptied file must not drop out of it unseen.

const root = path.resolve(import.meta.dirname, '../..');
const listed = Object.entries(POOLER_FILES);

describe('the files of the pass behind PgBouncer', () => {
  it('are integration test files of test/, each with its reason', () => {
    expect(listed.length).toBeGreaterThan(0);
    for (const [file, why] of listed) {
      expect(file).toMatch(/^test\/[a-z0-9-]+\.test\.ts$/);
      expect(fs.existsSync(path.join(root, file)), `${file} is listed in test/pooler-files.ts but does not exist`).toBe(true);
      expect(why.trim().length, `${file}: say why it runs behind the pooler`).toBeGreaterThan(10);
    }
  });

  it('each start their apps through test/helpers/app.ts, which TEST_POOLER puts behind the pooler', () => {
    for (const [file] of listed) {
      expect(fs.readFileSync(path.join(root, file), 'utf8'), `${file} starts no app with startTestApp: TEST_POOLER changes nothing in it`).toMatch(/\bstartTestApp\(/);
    }
  });
});
