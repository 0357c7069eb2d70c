import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

// The deploy guide (docs/deploy.md) and the script that runs it (scripts/deploy-local.sh, run by
// test/deploy.test.ts) must not drift apart. The mechanism, in two rules:
// - every line of each ```bash block of the guide is a line of the script (both trimmed): the guide
//   writes its commands with the variables the script sets (``` sh blocks are for a real machine
//   only, e.g. systemctl, and are not checked), so a command changed in one and not the other fails here;
// - each file the guide shows is the file the script uses: a fenced block right after
//   `<!-- file: PATH -->` holds PATH's content exactly, and the script reads PATH.
// The script may do more than the guide (free ports, rewriting files for its directory, the
// supervisor loop standing in for systemd): those lines say so in comments there.

const guide = fs.readFileSync('docs/deploy.md', 'utf8');
const script = fs.readFileSync('scripts/deploy-local.sh', 'utf8');
const scriptLines = new Set(script.split('\n').map((line) => line.trim()));

const blocks = (lang: string) => [...guide.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```$', 'gm'))].map((m) => m[1]!);

describe('the deploy guide and scripts/deploy-local.sh', () => {
  it('has every command of the guide’s bash blocks in the script, as written', () => {
    const commands = blocks('bash');
    expect(commands.length).toBeGreaterThanOrEqual(6);
    const missing = commands.flatMap((block) => block.split('\n').map((line) => line.trim()).filter((line) => line && !scriptLines.has(line)));
    expect(missing).toEqual([]);
  });

  it('shows the very files the script uses', () => {
    const shown = [...guide.matchAll(/^<!-- file: (\S+) -->\n```\w*\n([\s\S]*?)^```$/gm)].map((m) => ({ path: m[1]!, text: m[2]! }));
    expect(shown.map((f) => f.path).sort()).toEqual(['docs/deploy/env.example', 'docs/deploy/marketplace-api.service', 'docs/deploy/pgbouncer.ini']);
    for (const { path, text } of shown) {
      expect(text, path).toBe(fs.readFileSync(path, 'utf8'));
      expect(script, `the script uses ${path}`).toContain(`$APP_DIR/${path}`);
    }
  });

  it('runs the unit file’s ExecStart under its supervisor, and the unit uses the env file', () => {
    const unit = fs.readFileSync('docs/deploy/marketplace-api.service', 'utf8');
    expect(unit).toMatch(/^ExecStart=\S+/m);
    expect(unit).toMatch(/^EnvironmentFile=\/etc\/marketplace-api\/env$/m);
    expect(script).toContain("sed -n 's/^ExecStart=//p'");
  });

  it('sets pool_mode = transaction in the example PgBouncer file (PgBouncer’s default is session)', () => {
    expect(fs.readFileSync('docs/deploy/pgbouncer.ini', 'utf8')).toMatch(/^pool_mode = transaction$/m);
  });
});
