// The slowest test files of the last vitest run, from the report test/setup/durations-reporter.ts
// writes: `npx tsx scripts/slowest-tests.ts [.reports/vitest-main.json] [count]` (the pass behind
// PgBouncer: .reports/vitest-pooler.json).
import fs from 'node:fs';
import type { DurationsReport } from '../test/setup/durations-reporter.js';

const [reportPath = '.reports/vitest-main.json', countArg = '15'] = process.argv.slice(2);
const count = Number(countArg);
if (!Number.isInteger(count) || count < 1) throw new Error(`count: a whole number above 0, not ${countArg}`);
if (!fs.existsSync(reportPath)) {
  process.stderr.write(`${reportPath}: no report yet; a vitest run writes it (npm test, npx vitest run, npm run test:pooler)\n`);
  process.exit(1);
}
const report = JSON.parse(fs.readFileSync(reportPath, 'utf8')) as DurationsReport;
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const sum = report.files.reduce((total, f) => total + f.ms, 0);
const starts = report.files.reduce((total, f) => total + (f.appStarts ?? 0), 0);
const width = Math.max(...report.files.slice(0, count).map((f) => f.file.length), 4);

const lines = [
  `${report.config}, ${report.startedAt}: ${report.files.length} files, ${seconds(sum)} in workers, ${seconds(report.wallMs)} wall (${report.reason}); ${starts} whole apps started by ${report.files.filter((f) => f.appStarts).length} files`,
  `${'file'.padEnd(width)}  ${'total'.padStart(8)}  ${'import'.padStart(8)}  ${'tests'.padStart(8)}  count  apps  state`,
  ...report.files
    .slice(0, count)
    .map((f) => `${f.file.padEnd(width)}  ${seconds(f.ms).padStart(8)}  ${seconds(f.importMs).padStart(8)}  ${seconds(f.runMs).padStart(8)}  ${String(f.tests).padStart(5)}  ${String(f.appStarts ?? 0).padStart(4)}  ${f.state}`),
];
process.stdout.write(`${lines.join('\n')}\n`);
