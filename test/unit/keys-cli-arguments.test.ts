import { describe, expect, it } from 'vitest';
import { commandOf, durationSeconds, parseKeysArgs, UsageError, type KeysCommand } from '../../src/cli/keys-command.js';

// The keys CLI's command line (src/cli/keys-command.ts, parseKeysArgs): what each command reads from its
// arguments, and every mistake refused as a UsageError before a database is started for it.

const NOW = new Date('2026-03-01T12:00:00.000Z');
const parse = (...argv: string[]) => parseKeysArgs(argv, NOW);
const CREATE = ['create', '--owner', 'dev@example.com', '--plan', 'basic', '--scopes', 'read:products'];

/** The UsageError's message for a command line. */
function usage(...argv: string[]): string {
  try {
    parse(...argv);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
}

const created = (...extra: string[]) => (parse(...CREATE, ...extra) as Extract<KeysCommand, { command: 'create' }>).input;

describe('help', () => {
  it('is what no command, -h, --help, help, or -h/--help after any command asks for', () => {
    for (const argv of [[], ['-h'], ['--help'], ['help'], ['create', '--help'], ['list', '-h'], ['revoke', '--help'], ['member'], ['member', 'add', '-h']]) {
      expect(parse(...argv), argv.join(' ')).toEqual({ command: 'help' });
    }
  });
});

describe('create', () => {
  it('reads owner, plan and scopes, with --json off unless given', () => {
    expect(parse(...CREATE)).toEqual({
      command: 'create',
      json: false,
      input: { owner: 'dev@example.com', plan: 'BASIC', scopes: ['read:products'], rateLimit: undefined, rateWindowSeconds: undefined, expiresAt: undefined, name: undefined },
    });
    expect(parse(...CREATE, '--json')).toMatchObject({ command: 'create', json: true });
  });

  it.each(['--owner', '--plan', '--scopes'])('requires %s, and refuses it blank', (flag) => {
    const without = CREATE.filter((arg, i) => arg !== flag && CREATE[i - 1] !== flag);
    expect(usage(...without)).toBe(`${flag} is required`);
    const blank = CREATE.map((arg, i) => (CREATE[i - 1] === flag ? '  ' : arg));
    expect(usage(...blank)).toBe(`${flag} is required`);
  });

  it('takes a plan in any letter case, and only the three plans', () => {
    expect(created('--plan', 'PRO').plan).toBe('PRO');
    expect(created('--plan', 'Enterprise').plan).toBe('ENTERPRISE');
    expect(usage(...CREATE, '--plan', 'gold')).toBe('--plan must be basic, pro or enterprise, got "gold"');
    // A plan name is looked up in a Map: Object.prototype's members are no plans.
    expect(usage(...CREATE, '--plan', 'constructor')).toMatch(/--plan must be/);
  });

  it('splits the scopes at commas, leaving their checking to the key rules', () => {
    expect(created('--scopes', 'read:orders,write:orders,nonsense').scopes).toEqual(['read:orders', 'write:orders', 'nonsense']);
  });

  it('takes a limit of plain digits only', () => {
    expect(created('--limit', '250').rateLimit).toBe(250);
    for (const bad of ['1e3', '0x10', ' 12 ', '-1', '1.5', '', '99999999999999999999']) {
      expect(usage(...CREATE, `--limit=${bad}`)).toBe(`--limit must be a whole number, got ${JSON.stringify(bad)}`);
    }
  });

  it('reads a window with its unit into seconds', () => {
    expect(created('--window', '90s').rateWindowSeconds).toBe(90);
    expect(created('--window', '15m').rateWindowSeconds).toBe(900);
    expect(created('--window', '1h').rateWindowSeconds).toBe(3600);
    expect(created('--window', '2d').rateWindowSeconds).toBe(172_800);
  });

  it('refuses a window without a unit, or with another one', () => {
    for (const bad of ['60', '1w', '1.5h', 'h', '-1h']) expect(usage(...CREATE, `--window=${bad}`)).toMatch(/^--window must be a whole number with a unit s, m, h or d/);
  });

  it('reads --expires as a duration from now', () => {
    expect(created('--expires', '30d').expiresAt).toEqual(new Date('2026-03-31T12:00:00.000Z'));
    expect(created('--expires', '12h').expiresAt).toEqual(new Date('2026-03-02T00:00:00.000Z'));
  });

  it('reads --expires as an ISO date (midnight UTC) or date-time', () => {
    expect(created('--expires', '2027-01-15').expiresAt).toEqual(new Date('2027-01-15T00:00:00.000Z'));
    expect(created('--expires', '2027-01-15T08:30:00+02:00').expiresAt).toEqual(new Date('2027-01-15T06:30:00.000Z'));
    expect(created('--expires', '2027-01-15T08:30Z').expiresAt).toEqual(new Date('2027-01-15T08:30:00.000Z'));
  });

  it('refuses a date that does not exist rather than rolling it over into the next month', () => {
    expect(usage(...CREATE, '--expires', '2027-02-30')).toMatch(/^--expires must be a duration/);
    expect(usage(...CREATE, '--expires', '2027-13-01')).toMatch(/^--expires must be a duration/);
  });

  it('refuses an expiry that is neither a duration nor an ISO date', () => {
    for (const bad of ['tomorrow', '30', '15/01/2027', '2027-1-5']) expect(usage(...CREATE, '--expires', bad)).toMatch(/^--expires must be a duration/);
  });

  it('refuses options it does not know and arguments without an option', () => {
    expect(usage(...CREATE, '--colour', 'red')).toMatch(/Unknown option '--colour'/);
    expect(usage(...CREATE, 'stray')).toMatch(/Unexpected argument 'stray'/);
  });
});

describe('the other commands', () => {
  it('list: every key, or one owner’s', () => {
    expect(parse('list')).toEqual({ command: 'list', json: false });
    expect(parse('list', '--owner', 'dev@example.com', '--json')).toEqual({ command: 'list', json: true, owner: 'dev@example.com' });
  });

  it('revoke: exactly one key id, trimmed', () => {
    expect(parse('revoke', ' key-1 ')).toEqual({ command: 'revoke', json: false, id: 'key-1' });
    expect(usage('revoke')).toBe('revoke takes exactly one key id, got none');
    expect(usage('revoke', 'a', 'b')).toBe('revoke takes exactly one key id, got 2');
    expect(usage('revoke', '  ')).toMatch(/^revoke takes exactly one key id/);
  });

  it('invite: one e-mail address, stored lower-case', () => {
    expect(parse('invite', 'Dev@Example.COM')).toEqual({ command: 'invite', json: false, email: 'dev@example.com' });
    expect(usage('invite', 'not-an-address')).toBe('Expected an e-mail address, got "not-an-address"');
    expect(usage('invite')).toBe('invite takes exactly one e-mail address, got none');
  });

  it('plan: an e-mail address and basic or pro; enterprise is explained, not just refused', () => {
    expect(parse('plan', 'dev@example.com', 'Pro')).toEqual({ command: 'plan', json: false, email: 'dev@example.com', plan: 'PRO' });
    expect(usage('plan', 'dev@example.com', 'enterprise')).toMatch(/^enterprise is no dashboard plan.*create --plan enterprise/);
    expect(usage('plan', 'dev@example.com', 'gold')).toBe('The plan must be basic or pro, got "gold"');
    expect(usage('plan', 'dev@example.com')).toMatch(/got 1 argument/);
  });

  it('member add and remove: an owner’s address, and for add a supplier id of the API’s form', () => {
    expect(parse('member', 'add', '--owner', 'Clerk@Supplier.example', '--supplier', 'sup_1')).toEqual({
      command: 'member add',
      json: false,
      owner: 'clerk@supplier.example',
      supplierId: 'sup_1',
    });
    expect(usage('member', 'add', '--owner', 'clerk@supplier.example', '--supplier', 'sup 1')).toMatch(/^--supplier must be a supplier id/);
    expect(usage('member', 'add', '--owner', 'nobody', '--supplier', 's')).toBe('--owner must be an e-mail address, got "nobody"');
    expect(parse('member', 'remove', '--owner', 'clerk@supplier.example', '--json')).toEqual({ command: 'member remove', json: true, owner: 'clerk@supplier.example' });
  });

  it('member list: every membership, or one supplier’s', () => {
    expect(parse('member', 'list')).toEqual({ command: 'member list', json: false });
    expect(parse('member', 'list', '--supplier', 's1')).toEqual({ command: 'member list', json: false, supplierId: 's1' });
  });

  it('refuses a command it does not know, naming the ones it does', () => {
    expect(usage('delete')).toBe('Unknown command "delete": use create, list, revoke, invite, plan or member');
    expect(usage('member', 'kick')).toBe('Unknown member command "kick": use member add, member remove or member list');
  });
});

describe('durations', () => {
  it('refuses one too large to count in whole seconds', () => {
    expect(() => durationSeconds('--window', `${'9'.repeat(20)}d`)).toThrow(UsageError);
  });
});

describe('every refusal that needs no database', () => {
  // What `npm run keys` prints as "Error: <message> (see …)" with exit code 1, before it opens a
  // database (src/cli/keys-command.ts, commandOf: the arguments, then the key rules).
  // test/keys-cli.test.ts and test/members-cli.test.ts run one of each kind as a process.
  const ALPHA = 'sup_alpha';
  const refused: [string, string[], RegExp][] = [
    ['no command', ['frobnicate'], /Unknown command "frobnicate"/],
    ['a missing --owner', ['create', '--plan', 'pro', '--scopes', 'read:orders', '--json'], /--owner is required/],
    ['an unknown plan', ['create', '--owner', 'a@example.com', '--plan', 'gold', '--scopes', 'read:orders'], /--plan must be basic, pro or enterprise/],
    // Object.prototype's members are no plans (a lookup in a plain object found them).
    ...['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'].map((plan): [string, string[], RegExp] => [
      `the plan ${plan}`,
      ['create', '--owner', 'a@example.com', '--plan', plan, '--scopes', 'read:orders'],
      /--plan must be basic, pro or enterprise/,
    ]),
    ['an unknown scope', ['create', '--owner', 'a@example.com', '--plan', 'pro', '--scopes', 'read:orders,read:secrets', '--json'], /unknown scope "read:secrets"/],
    ['an unknown option', ['create', '--owner', 'a@example.com', '--plan', 'pro', '--scopes', 'read:orders', '--colour'], /Unknown option '--colour'/],
    ['a limit on a pro key', ['create', '--owner', 'a@example.com', '--plan', 'pro', '--scopes', 'read:orders', '--limit', '5'], /only enterprise keys/],
    ['an enterprise key without a window', ['create', '--owner', 'a@example.com', '--plan', 'enterprise', '--limit', '5', '--scopes', 'read:orders'], /needs its own rate limit and window/],
    ['a window without a unit', ['create', '--owner', 'a@example.com', '--plan', 'enterprise', '--limit', '5', '--window', '60', '--scopes', 'read:orders'], /--window must be a whole number with a unit/],
    ['a past expiry', ['create', '--owner', 'a@example.com', '--plan', 'pro', '--scopes', 'read:orders', '--expires', '2020-01-01'], /expires: must be in the future/],
    ['an impossible date', ['create', '--owner', 'a@example.com', '--plan', 'pro', '--scopes', 'read:orders', '--expires', '2099-02-30'], /--expires must be/],
    ['an owner that is no e-mail', ['create', '--owner', 'nobody', '--plan', 'pro', '--scopes', 'read:orders'], /must be an e-mail address/],
    ['a publishable key with other scopes', ['create', '--publishable', '--origins', 'https://shop.example', '--owner', 'a@example.com', '--plan', 'pro', '--scopes', 'read:products,read:orders'], /publishable key reads the catalogue only: "read:orders"/],
    ['a publishable key without origins', ['create', '--publishable', '--owner', 'a@example.com', '--plan', 'pro'], /--origins is required/],
    ['a publishable key with a path in an origin', ['create', '--publishable', '--origins', 'https://shop.example/app', '--owner', 'a@example.com', '--plan', 'pro'], /"https:\/\/shop.example\/app" must be an origin without a path/],
    ['a publishable key on plain http', ['create', '--publishable', '--origins', 'http://shop.example', '--owner', 'a@example.com', '--plan', 'pro'], /must be https \(http only for localhost/],
    ['origins for a secret key', ['create', '--origins', 'https://shop.example', '--owner', 'a@example.com', '--plan', 'pro', '--scopes', 'read:orders'], /--origins is for publishable keys: add --publishable/],
    ['revoke without an id', ['revoke'], /exactly one key id/],
    ['invite without an address', ['invite', '--json'], /invite takes exactly one e-mail address, got none/],
    ['invite of no e-mail', ['invite', 'nobody'], /Expected an e-mail address, got "nobody"/],
    ['the enterprise plan for the dashboard', ['plan', 'cli@example.com', 'enterprise'], /enterprise is no dashboard plan.*create --plan enterprise/],
    ['an unknown dashboard plan', ['plan', 'cli@example.com', 'gold'], /The plan must be basic or pro, got "gold"/],
    ['plan without a plan', ['plan', 'cli@example.com'], /plan takes an e-mail address and a plan/],
    ['add without --owner', ['member', 'add', '--supplier', ALPHA, '--json'], /--owner is required/],
    ['add without --supplier', ['member', 'add', '--owner', 'a@example.com'], /--supplier is required/],
    ['add with an empty --supplier', ['member', 'add', '--owner', 'a@example.com', '--supplier', ' '], /--supplier is required/],
    ['add with an owner that is no e-mail', ['member', 'add', '--owner', 'nobody', '--supplier', ALPHA], /--owner must be an e-mail address, got "nobody"/],
    ['add with a malformed supplier id', ['member', 'add', '--owner', 'a@example.com', '--supplier', "x' OR 1=1"], /--supplier must be a supplier id/],
    ['add with an unknown option', ['member', 'add', '--owner', 'a@example.com', '--supplier', ALPHA, '--force'], /Unknown option '--force'/],
    ['add with a positional argument', ['member', 'add', 'a@example.com', '--supplier', ALPHA], /Unexpected argument 'a@example.com'/],
    ['add with --owner lacking its value', ['member', 'add', '--supplier', ALPHA, '--owner'], /Option '--owner <value>' argument missing/],
    ['remove without --owner', ['member', 'remove', '--json'], /--owner is required/],
    ['remove with --supplier', ['member', 'remove', '--owner', 'a@example.com', '--supplier', ALPHA], /Unknown option '--supplier'/],
    ['list with --owner', ['member', 'list', '--owner', 'a@example.com'], /Unknown option '--owner'/],
    ['list with a malformed supplier id', ['member', 'list', '--supplier', 'a/b', '--json'], /--supplier must be a supplier id/],
    ['an unknown member command', ['member', 'join', '--owner', 'a@example.com'], /Unknown member command "join": use member add, member remove or member list/],
  ];

  it.each(refused)('refuses %s', (_, argv, message) => {
    let thrown: unknown;
    try {
      commandOf(argv, NOW);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    expect((thrown as UsageError).message).toMatch(message);
  });
});
