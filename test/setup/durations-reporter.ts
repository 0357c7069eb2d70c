import fs from 'node:fs';
import path from 'node:path';
import type { Reporter, TestModule, TestRunEndReason, Vitest } from 'vitest/node';

// Each test file's time, written as JSON beside the console's reporter (vitest.config.ts:
// .reports/vitest-main.json; vitest.pooler.config.ts: .reports/vitest-pooler.json), so the
// slowest files stay visible: `npx tsx scripts/slowest-tests.ts` lists them. A file's time is
// what it held a worker for: its environment and setup files, its import, its hooks and tests.
// The report is the last run's: a run of one file writes a report of that file.

export interface FileDuration {
  /** Relative to the repository's root. */
  file: string;
  state: string;
  tests: number;
  /** setupMs + importMs + runMs. */
  ms: number;
  /** The environment, the runner and the setup files. */
  setupMs: number;
  /** Importing the file (and what it imports), suite callbacks included. */
  importMs: number;
  /** Its hooks and tests. */
  runMs: number;
  /** Whole apps it started (startTestApp: a database clone, the service graph, a server). */
  appStarts: number;
}

export interface DurationsReport {
  /** The config the run used, e.g. vitest.config.ts. */
  config: string;
  startedAt: string;
  /** From vitest's start (global setup included) to the run's end. */
  wallMs: number;
  reason: TestRunEndReason;
  /** Slowest first. */
  files: FileDuration[];
}

/**
 * Where each start of a whole app is noted (a line naming its test file, test/helpers/app.ts),
 * emptied as a run begins and counted into the report as it ends.
 */
export const APP_STARTS_DIR = '.reports/app-starts';

function countAppStarts(root: string): Map<string, number> {
  const dir = path.resolve(root, APP_STARTS_DIR);
  const counts = new Map<string, number>();
  if (!fs.existsSync(dir)) return counts;
  for (const name of fs.readdirSync(dir)) {
    for (const file of fs.readFileSync(path.join(dir, name), 'utf8').split('\n').filter(Boolean)) counts.set(file, (counts.get(file) ?? 0) + 1);
  }
  return counts;
}

export class DurationsReporter implements Reporter {
  private vitest: Vitest | undefined;
  private started = Date.now();

  constructor(private readonly outputFile: string) {}

  onInit(vitest: Vitest): void {
    this.vitest = vitest;
    this.started = Date.now();
    fs.rmSync(path.resolve(vitest.config.root, APP_STARTS_DIR), { recursive: true, force: true });
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, _errors: unknown, reason: TestRunEndReason): void {
    const root = this.vitest?.config.root ?? process.cwd();
    const starts = countAppStarts(root);
    const files = modules.map((m): FileDuration => {
      const d = m.diagnostic();
      const setupMs = Math.round(d.environmentSetupDuration + d.prepareDuration + d.setupDuration);
      const importMs = Math.round(d.collectDuration);
      const runMs = Math.round(d.duration);
      const file = path.relative(root, m.moduleId).split(path.sep).join('/');
      return { file, state: m.state(), tests: [...m.children.allTests()].length, ms: setupMs + importMs + runMs, setupMs, importMs, runMs, appStarts: starts.get(file) ?? 0 };
    });
    files.sort((a, b) => b.ms - a.ms);
    const report: DurationsReport = {
      config: path.relative(root, this.vitest?.config.config ?? '') || '(none)',
      startedAt: new Date(this.started).toISOString(),
      wallMs: Date.now() - this.started,
      reason,
      files,
    };
    const out = path.resolve(root, this.outputFile);
    fs.mkdirSync(path.dirname(out), { recursive: true });
    fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  }
}
