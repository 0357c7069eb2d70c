import { parseArgs } from 'node:util';
import { describeError, isEntryPoint, runCli, UsageError, withMigratedDatabase } from './run.js';
import { asAppError } from '../shared/errors.js';
import {
  createApiKey,
  listApiKeys,
  normaliseKeyInput,
  revokeApiKey,
  setAccountPlan,
  type ApiKeyView,
  type CreateApiKeyInput,
  type SelfServicePlan,
} from '../accounts/api-keys.js';
import { PASSWORD_LINK_TTL_MS, createPasswordLink } from '../accounts/credentials.js';
import { normaliseEmail } from '../shared/text.js';
import { addMember, listMembers, removeMember, type MembershipView } from '../accounts/members.js';
import { PUBLISHABLE_SCOPES, SCOPES } from '../auth/scopes.js';
import { ConfigError, loadConfig, type Config } from '../config/config.js';
import { createLogger } from '../config/logger.js';
import { runningServerUrl } from '../config/running-server.js';
import type { RequestContext } from '../context/context.js';
import { createContexts } from '../contexts.js';
import type { Plan } from '../context/actor.js';
import { DatabaseUrlError } from '../db/database.js';
import { MigrationError } from '../db/migrate.js';
import { configuredTimeouts, createPrisma } from '../db/prisma.js';
import { idParam } from '../shared/validation.js';

// `npm run --silent keys -- create|list|revoke|invite|plan|member …`: API key and account management against the database the
// server would use (same environment variables), whether or not the server runs: with no
// DATABASE_URL it joins the server's embedded PostgreSQL, or starts (and afterwards stops) it.
// With --json, stdout carries exactly one JSON document; every log line goes to stderr.

const LINK_TTL_DAYS = PASSWORD_LINK_TTL_MS / 86_400_000;

const USAGE = `Usage:
  npm run --silent keys -- create --owner EMAIL --plan basic|pro|enterprise --scopes S1,S2,…
                                  [--limit N --window 60s|15m|1h|1d] [--name TEXT]
                                  [--expires 30d|ISO-8601] [--json]
  npm run --silent keys -- create --publishable --origins https://shop.example[,…] --owner EMAIL
                                  --plan basic|pro|enterprise [--allow-server] [--allow-stock]
                                  [--scopes S1,…] [--name TEXT] [--expires …] [--json]
  npm run --silent keys -- list [--owner EMAIL] [--json]
  npm run --silent keys -- revoke ID [--json]
  npm run --silent keys -- invite EMAIL [--json]
  npm run --silent keys -- plan EMAIL basic|pro [--json]
  npm run --silent keys -- member add --owner EMAIL --supplier SUPPLIER_ID [--json]
  npm run --silent keys -- member remove --owner EMAIL [--json]
  npm run --silent keys -- member list [--supplier SUPPLIER_ID] [--json]

Manages API keys in the configured database (DATABASE_URL, or the embedded PostgreSQL under
DATA_DIR, started for the command if the server is not running), applying pending migrations first.

create   Creates a key, and the owner's account if it has none, and prints the key. The key is
         shown only this once: the database keeps only its hash.
           --owner     e-mail of the owning account
           --plan      basic (1000 requests/hour), pro (5000/hour) or enterprise (--limit/--window)
           --scopes    comma-separated: ${SCOPES.join(', ')}
           --limit     enterprise only: requests per window, 1–10000000
           --window    enterprise only: window length, 1s to 30d (units s, m, h, d)
           --name      a label for listings
           --expires   a duration from now (30d, 12h) or an ISO-8601 date/time
         With --publishable, a publishable key (pk_…) for browser code: it reads the catalogue
         only (${PUBLISHABLE_SCOPES.join(', ')}; read:stock only with --allow-stock), never
         orders, account data, webhooks or writes, and only from the pages of its origins.
           --origins       comma-separated origins its pages are served from:
                           https://host[:port] (http only for localhost), no path
           --allow-server  also accept requests without an Origin header (from a server)
           --allow-stock   stock records, and productChanged events of stock alone
           --scopes        optional: fewer of the catalogue scopes (default all of them)
list     Lists keys, newest first (never the keys themselves).
revoke   Revokes a key from now on; revoking it again changes nothing.
invite   Prints a link to set the password of the account with this e-mail (created if there is
         none) for the developer dashboard, at PUBLIC_URL (unset: the address of the server
         running on this DATA_DIR, else http://localhost:PORT). It is shown only this once, works
         once and expires in ${LINK_TTL_DAYS} days. Nothing is e-mailed: pass the link on yourself.
plan     Sets the plan of the keys an account creates in the dashboard from now on (its
         existing keys keep theirs). Enterprise keys are made with create --plan enterprise.
member   Who acts for a supplier (an account acts for one at most). From the next request on, a
         member's keys with read:orders read the supplier's orders, with write:orders move them,
         with write:products write its stock and prices (write:products: create --scopes only).
           add      makes the account with this e-mail (created if there is none) a member of the
                    supplier, which must exist and be active. Adding it again changes nothing; a
                    member of another supplier is refused: member remove it first.
           remove   ends the account's membership (no member: nothing changes).
           list     lists memberships, of one supplier with --supplier, by supplier then e-mail.

  --json       machine-readable output: one JSON object (an array for list, member list) on stdout
  -h, --help   show this help`;

export { UsageError };

export type KeysCommand =
  | { command: 'help' }
  | { command: 'create'; json: boolean; input: CreateApiKeyInput }
  | { command: 'list'; json: boolean; owner?: string }
  | { command: 'revoke'; json: boolean; id: string }
  | { command: 'invite'; json: boolean; email: string }
  | { command: 'plan'; json: boolean; email: string; plan: SelfServicePlan }
  | { command: 'member add'; json: boolean; owner: string; supplierId: string }
  | { command: 'member remove'; json: boolean; owner: string }
  | { command: 'member list'; json: boolean; supplierId?: string };

// A Map: `--plan constructor` must not find Object.prototype's member as a plan.
const PLANS = new Map<string, Plan>([['basic', 'BASIC'], ['pro', 'PRO'], ['enterprise', 'ENTERPRISE']]);
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** Parses the command line; `now` anchors a relative --expires. Throws UsageError. */
export function parseKeysArgs(argv: readonly string[], now: Date = new Date()): KeysCommand {
  const [command, ...rest] = argv;
  if (command === undefined || command === '-h' || command === '--help' || command === 'help') return { command: 'help' };
  switch (command) {
    case 'create': {
      const values = parse(rest, {
        owner: { type: 'string' },
        plan: { type: 'string' },
        scopes: { type: 'string' },
        limit: { type: 'string' },
        window: { type: 'string' },
        name: { type: 'string' },
        expires: { type: 'string' },
        publishable: { type: 'boolean' },
        origins: { type: 'string' },
        'allow-server': { type: 'boolean' },
        'allow-stock': { type: 'boolean' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      }).values;
      if (values.help) return { command: 'help' };
      const owner = required('--owner', values.owner);
      const planName = required('--plan', values.plan);
      const plan = PLANS.get(planName.toLowerCase());
      if (!plan) throw new UsageError(`--plan must be basic, pro or enterprise, got ${JSON.stringify(planName)}`);
      const publishable = values.publishable === true;
      if (!publishable) {
        for (const flag of ['origins', 'allow-server', 'allow-stock'] as const) {
          if (values[flag] !== undefined) throw new UsageError(`--${flag} is for publishable keys: add --publishable`);
        }
      }
      const scopes = publishable ? (values.scopes ?? '').split(',') : required('--scopes', values.scopes).split(',');
      return {
        command: 'create',
        json: values.json === true,
        input: {
          owner,
          plan,
          scopes,
          rateLimit: values.limit === undefined ? undefined : positiveInteger('--limit', values.limit),
          rateWindowSeconds: values.window === undefined ? undefined : durationSeconds('--window', values.window),
          expiresAt: values.expires === undefined ? undefined : expiry(values.expires, now),
          name: values.name,
          ...(publishable
            ? {
                publishable: {
                  origins: required('--origins', values.origins).split(','),
                  allowServer: values['allow-server'] === true,
                  allowStock: values['allow-stock'] === true,
                },
              }
            : {}),
        },
      };
    }
    case 'list': {
      const { values } = parse(rest, { owner: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
      if (values.help) return { command: 'help' };
      return { command: 'list', json: values.json === true, ...(values.owner === undefined ? {} : { owner: values.owner }) };
    }
    case 'revoke': {
      const { values, positionals } = parse(rest, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, true);
      if (values.help) return { command: 'help' };
      if (positionals.length !== 1 || positionals[0]!.trim() === '') {
        throw new UsageError(`revoke takes exactly one key id, got ${positionals.length === 0 ? 'none' : positionals.length}`);
      }
      return { command: 'revoke', json: values.json === true, id: positionals[0]!.trim() };
    }
    case 'invite': {
      const { values, positionals } = parse(rest, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, true);
      if (values.help) return { command: 'help' };
      if (positionals.length !== 1) throw new UsageError(`invite takes exactly one e-mail address, got ${positionals.length === 0 ? 'none' : positionals.length}`);
      return { command: 'invite', json: values.json === true, email: email(positionals[0]!) };
    }
    case 'plan': {
      const { values, positionals } = parse(rest, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } }, true);
      if (values.help) return { command: 'help' };
      if (positionals.length !== 2) throw new UsageError(`plan takes an e-mail address and a plan (basic or pro), got ${positionals.length} argument(s)`);
      const planName = positionals[1]!.trim().toLowerCase();
      if (planName === 'enterprise') {
        throw new UsageError('enterprise is no dashboard plan (its limits are per key): create enterprise keys with `create --plan enterprise --limit N --window W`');
      }
      const plan = PLANS.get(planName);
      if (plan === undefined || plan === 'ENTERPRISE') throw new UsageError(`The plan must be basic or pro, got ${JSON.stringify(positionals[1])}`);
      return { command: 'plan', json: values.json === true, email: email(positionals[0]!), plan };
    }
    case 'member':
      return parseMemberArgs(rest);
    default:
      throw new UsageError(`Unknown command ${JSON.stringify(command)}: use create, list, revoke, invite, plan or member`);
  }
}

function parseMemberArgs(argv: readonly string[]): KeysCommand {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '-h' || sub === '--help' || sub === 'help') return { command: 'help' };
  switch (sub) {
    case 'add': {
      const { values } = parse(rest, { owner: { type: 'string' }, supplier: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
      if (values.help) return { command: 'help' };
      const owner = email(required('--owner', values.owner), '--owner');
      return { command: 'member add', json: values.json === true, owner, supplierId: supplierId(required('--supplier', values.supplier)) };
    }
    case 'remove': {
      const { values } = parse(rest, { owner: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
      if (values.help) return { command: 'help' };
      return { command: 'member remove', json: values.json === true, owner: email(required('--owner', values.owner), '--owner') };
    }
    case 'list': {
      const { values } = parse(rest, { supplier: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
      if (values.help) return { command: 'help' };
      return {
        command: 'member list',
        json: values.json === true,
        ...(values.supplier === undefined ? {} : { supplierId: supplierId(values.supplier) }),
      };
    }
    default:
      throw new UsageError(`Unknown member command ${JSON.stringify(sub)}: use member add, member remove or member list`);
  }
}

type OptionSpec = Record<string, { type: 'string' | 'boolean'; short?: string }>;

function parse<O extends OptionSpec>(args: string[], options: O, allowPositionals = false) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function email(value: string, flag?: string): string {
  const address = normaliseEmail(value);
  if (address === null) throw new UsageError(`${flag ? `${flag} must be` : 'Expected'} an e-mail address, got ${JSON.stringify(value)}`);
  return address;
}

/** The API's rule for ids (src/shared/validation.ts): a typo is refused before the database starts. */
function supplierId(value: string): string {
  if (!idParam.safeParse(value).success) throw new UsageError(`--supplier must be a supplier id (1–100 letters, digits, "-" or "_"), got ${JSON.stringify(value)}`);
  return value;
}

function required(flag: string, value: string | undefined): string {
  if (value === undefined || value.trim() === '') throw new UsageError(`${flag} is required`);
  return value;
}

function positiveInteger(flag: string, value: string): number {
  // Digits only: Number() would also accept "1e3", "0x10", " 12 " and "".
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(`${flag} must be a whole number, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

/** `90s`, `15m`, `1h`, `30d` → seconds. A unit is required: would "60" be seconds or minutes? */
export function durationSeconds(flag: string, value: string): number {
  const match = /^(\d+)([smhd])$/.exec(value.trim());
  const seconds = match ? Number(match[1]) * UNIT_SECONDS[match[2]!]! : NaN;
  if (!Number.isSafeInteger(seconds)) {
    throw new UsageError(`${flag} must be a whole number with a unit s, m, h or d (60s, 15m, 1h, 1d), got ${JSON.stringify(value)}`);
  }
  return seconds;
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/** `--expires 30d` (from now) or an ISO-8601 date (midnight UTC) or date-time. */
function expiry(value: string, now: Date): Date {
  const text = value.trim();
  if (/^\d+[smhd]$/.test(text)) return new Date(now.getTime() + durationSeconds('--expires', text) * 1000);
  const match = ISO_DATE_TIME.exec(text);
  const date = match ? new Date(text) : null;
  // Date() rolls 2025-02-30 over into March instead of refusing it; the round trip catches that.
  const sameDay =
    date !== null && !Number.isNaN(date.getTime()) && match !== null && (match[0].length > 10 || date.toISOString().startsWith(text));
  if (!date || !sameDay) {
    throw new UsageError(`--expires must be a duration (30d, 12h) or an ISO-8601 date or date-time, got ${JSON.stringify(value)}`);
  }
  return date;
}

// ---------------------------------------------------------------------------------------------

interface Output {
  /** The result: the only thing written to stdout. */
  out: (text: string) => void;
  /** Progress and diagnostics. */
  log: (msg: string) => void;
}

/**
 * The command a command line asks for, with every mistake that needs no database refused as a
 * UsageError: the arguments (parseKeysArgs), and a new key's input by the key rules.
 */
export function commandOf(argv: readonly string[], now: Date = new Date()): KeysCommand {
  const cmd = parseKeysArgs(argv, now);
  // Refuse bad input before starting a database server for it.
  if (cmd.command === 'create') {
    try {
      normaliseKeyInput(cmd.input, now);
    } catch (error) {
      const refused = asAppError(error);
      if (refused) throw new UsageError(describeError(refused));
      throw error;
    }
  }
  return cmd;
}

async function main(argv: readonly string[], io: Output): Promise<void> {
  const cmd = commandOf(argv);
  if (cmd.command === 'help') {
    io.out(`${USAGE}\n`);
    return;
  }
  const config = loadConfig();
  const log = ['info', 'debug', 'trace'].includes(config.LOG_LEVEL) ? io.log : () => undefined;

  await withMigratedDatabase(config, { log, interrupted: { say: io.log, message: 'Interrupted.' } }, async ({ url }) => {
    const prisma = createPrisma({ url, poolMax: 1, timeouts: configuredTimeouts(config) });
    // The operator's context; stdout holds the result alone, so the services' logger says nothing.
    const operator = createContexts({ prisma, logger: createLogger('silent'), config }).contexts.forOperator();
    try {
      // Printed as soon as it exists: a failure while closing must not lose a created key.
      io.out(await run(cmd, operator, config));
    } finally {
      await prisma.$disconnect();
    }
  });
}

async function run(cmd: Exclude<KeysCommand, { command: 'help' }>, operator: RequestContext, config: Config): Promise<string> {
  switch (cmd.command) {
    case 'create': {
      const { key, record } = await createApiKey(operator, cmd.input);
      const { id, ...rest } = record;
      if (cmd.json) return json({ id, key, ...rest });
      return describeCreated(key, record);
    }
    case 'list': {
      const keys = await listApiKeys(operator, cmd.owner === undefined ? {} : { owner: cmd.owner });
      return cmd.json ? json(keys) : describeList(keys, operator.now());
    }
    case 'revoke': {
      const before = operator.now();
      const record = await revokeApiKey(operator, cmd.id);
      if (cmd.json) return json(record);
      const when = record.revokedAt!;
      return when < before
        ? `Key ${record.id} (${record.prefix}…, ${record.owner}) was already revoked at ${when.toISOString()}; nothing changed.\n`
        : `Revoked key ${record.id} (${record.prefix}…, ${record.owner}) at ${when.toISOString()}.\n`;
    }
    case 'invite': {
      const { token, expiresAt } = await createPasswordLink(operator, cmd.email);
      const link = await setPasswordLink(config, token);
      if (cmd.json) return json({ email: cmd.email, link, expiresAt });
      return [
        `A link to set the password of ${cmd.email}:`,
        '',
        `    ${link}`,
        '',
        `It is shown only this once and works once, until ${expiresAt.toISOString()} (${LINK_TTL_DAYS} days).`,
        'No e-mail has been sent: pass the link on yourself, privately.',
        '',
      ].join('\n');
    }
    case 'plan': {
      const result = await setAccountPlan(operator, cmd.email, cmd.plan);
      if (cmd.json) return json(result);
      const change = result.previousPlan === result.plan ? `was already ${result.plan}; nothing changed` : `is now ${result.plan} (was ${result.previousPlan})`;
      return `The dashboard plan of ${result.email} ${change}. Keys it creates from now on get this plan; existing keys keep theirs.\n`;
    }
    case 'member add': {
      const result = await addMember(operator, cmd.owner, cmd.supplierId);
      if (cmd.json) return json(result);
      const supplier = `the supplier ${result.supplierId} (${result.supplierName})`;
      if (!result.added) return `${result.email} already acts for ${supplier}, since ${result.since.toISOString()}; nothing changed.\n`;
      return [
        `${result.email} now acts for ${supplier}.`,
        ...(result.accountCreated ? [`The account ${result.accountId} was created for it (no password; \`keys invite\` gives one for the dashboard).`] : []),
        "From the next request on, its keys with read:orders read the supplier's orders, with write:orders",
        "move them, and with write:products write the supplier's stock and prices.",
        '',
      ].join('\n');
    }
    case 'member remove': {
      const result = await removeMember(operator, cmd.owner);
      if (cmd.json) return json(result);
      const { removed } = result;
      if (!removed) return `${result.email} acts for no supplier; nothing changed.\n`;
      return `${result.email} no longer acts for the supplier ${removed.supplierId} (${removed.supplierName}), from the next request on.\n`;
    }
    case 'member list': {
      const members = await listMembers(operator, cmd.supplierId === undefined ? {} : { supplierId: cmd.supplierId });
      return cmd.json ? json(members) : describeMembers(members, cmd.supplierId);
    }
  }
}

/**
 * The dashboard page a set-password token is used on: at PUBLIC_URL, else at the address of the
 * server running on this DATA_DIR (which may listen on a PORT other than this command's), else at
 * this machine's PORT.
 */
async function setPasswordLink(config: Config, token: string): Promise<string> {
  const base = (config.PUBLIC_URL ?? (await runningServerUrl(config.DATA_DIR)) ?? `http://localhost:${config.PORT}`).replace(/\/+$/, '');
  return `${base}/dashboard/set-password?token=${encodeURIComponent(token)}`;
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

function allowance(record: ApiKeyView): string {
  return `${record.limit} requests per ${formatWindow(record.window)}`;
}

function formatWindow(seconds: number): string {
  for (const [unit, size] of [['d', 86_400], ['h', 3600], ['m', 60]] as const) {
    if (seconds % size === 0) return `${seconds / size}${unit}`;
  }
  return `${seconds}s`;
}

function describeCreated(key: string, r: ApiKeyView): string {
  return [
    `Created ${r.kind === 'publishable' ? 'a publishable' : 'an'} API key for ${r.owner}:`,
    '',
    `    ${key}`,
    '',
    'Store it now: it is shown only this once. Only its hash is kept, so it cannot be recovered;',
    'if it is lost, revoke it and create another.',
    ...(r.kind === 'publishable'
      ? ['It is made to be seen in browser code: it reads the catalogue only, from the pages of its origins.']
      : []),
    '',
    `  id       ${r.id}`,
    ...(r.name ? [`  name     ${r.name}`] : []),
    `  plan     ${r.plan} (${allowance(r)})`,
    `  scopes   ${r.scopes.join(', ')}`,
    ...(r.kind === 'publishable'
      ? [`  origins  ${r.origins.join(', ')}`, `  server   ${r.allowServer ? 'allowed (requests without an Origin)' : 'refused (browsers only)'}`]
      : []),
    `  expires  ${r.expiresAt ? r.expiresAt.toISOString() : 'never'}`,
    '',
  ].join('\n');
}

function describeMembers(members: MembershipView[], supplierId: string | undefined): string {
  if (members.length === 0) return supplierId === undefined ? 'No supplier members.\n' : `The supplier ${supplierId} has no members.\n`;
  return table(
    ['SUPPLIER', 'COMPANY', 'EMAIL', 'ACCOUNT', 'SINCE'],
    members.map((m) => [m.supplierId, m.supplierName, m.email, m.accountId, m.since.toISOString()]),
  );
}

function describeList(keys: ApiKeyView[], now: Date): string {
  if (keys.length === 0) return 'No API keys.\n';
  const rows = keys.map((k) => [
    k.id,
    `${k.prefix}…`,
    k.owner,
    k.plan,
    `${k.limit}/${formatWindow(k.window)}`,
    k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : k.expiresAt && k.expiresAt.getTime() <= now.getTime() ? 'expired' : 'active',
    k.lastUsedAt ? k.lastUsedAt.toISOString() : 'never',
    k.kind === 'publishable' ? `publishable ${k.origins.join(',')}${k.allowServer ? ' +server' : ''}` : 'secret',
    k.scopes.join(','),
  ]);
  return table(['ID', 'PREFIX', 'OWNER', 'PLAN', 'LIMIT', 'STATUS', 'LAST USED', 'KIND', 'SCOPES'], rows);
}

/** Columns padded to their widest cell; the last one is not padded. */
function table(header: string[], rows: string[][]): string {
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i]!.length)));
  return all.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ')).join('\n') + '\n';
}

if (isEntryPoint(import.meta.url)) {
  // Whatever a library prints with console.log goes to stderr: with --json, stdout must hold
  // nothing but the result.
  const stdoutWrite = process.stdout.write.bind(process.stdout);
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  const io: Output = { out: (text) => void stdoutWrite(text), log: (msg) => void process.stderr.write(`${msg}\n`) };
  runCli(() => main(process.argv.slice(2), io), {
    help: 'npm run keys -- --help',
    expected: [ConfigError, DatabaseUrlError, MigrationError],
    failure: 'keys failed',
  });
}
