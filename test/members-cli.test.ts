import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrisma, type PrismaClient } from '../src/db/prisma.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { runKeysCli } from './helpers/keys-cli.js';

// `npm run keys -- member …` as a real process against a database of its own, as in keys-cli.test.ts.

const cli = (args: string[]) => runKeysCli(['member', ...args], { DATABASE_URL: db.url });

let db: TestDatabase;
let prisma: PrismaClient;

interface MemberRow {
  accountId: string;
  supplierId: string;
  createdAt: Date;
}

const members = () => prisma.$queryRaw<MemberRow[]>`SELECT * FROM "SupplierMember" ORDER BY "supplierId", "accountId"`;
const accountId = async (email: string) => (await prisma.account.findUnique({ where: { email }, select: { id: true } }))?.id;

const supplier = (id: string, companyName: string, cui: string, isActive = true) => ({
  id,
  companyName,
  cui,
  address: 'Strada Exemplu 1',
  city: 'Cluj-Napoca',
  county: 'Cluj',
  cityKey: 'cluj-napoca',
  countyKey: 'cluj',
  searchText: companyName.toLowerCase(),
  phone: '0700000000',
  email: `${id}@example.com`,
  isActive,
});

const ALPHA = 'sup_alpha';
const BETA = 'sup_beta';
const GONE = 'sup_inactive';

beforeAll(async () => {
  db = await createTestDatabase('migrated');
  prisma = createPrisma({ url: db.url, poolMax: 1 });
  await prisma.supplier.createMany({
    data: [supplier(BETA, 'Beta Distributie SRL', '1001'), supplier(ALPHA, 'Alpha Trade SRL', '1002'), supplier(GONE, 'Closed Shop SRL', '1003', false)],
  });
  await prisma.account.create({ data: { email: 'existing@example.com', name: 'Existing' } });
});

afterAll(async () => {
  await prisma?.$disconnect();
  await db?.drop();
});

describe('keys member', () => {
  // The tests build on one another: add, add again, refuse, remove, list. Runs that change
  // nothing, each a process of its own, go at once (two cores at work, not one).
  it('add makes a new account (created) a member and prints the membership as JSON', async () => {
    const run = await cli(['add', '--owner', ' New.Member@Example.com ', '--supplier', ALPHA, '--json']);
    expect(run.stderr).not.toMatch(/Error/);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(Object.keys(out).sort()).toEqual(['accountCreated', 'accountId', 'added', 'email', 'since', 'supplierId', 'supplierName']);
    const id = await accountId('new.member@example.com');
    expect(out).toEqual({
      email: 'new.member@example.com',
      accountId: id,
      supplierId: ALPHA,
      supplierName: 'Alpha Trade SRL',
      since: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      added: true,
      accountCreated: true,
    });
    expect(await members()).toEqual([{ accountId: id, supplierId: ALPHA, createdAt: new Date(out.since as string) }]);
  });

  it('add makes an existing account a member, in words without --json', async () => {
    const run = await cli(['add', '--owner', 'existing@example.com', '--supplier', BETA]);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^existing@example\.com now acts for the supplier sup_beta \(Beta Distributie SRL\)\./);
    expect(run.stdout).not.toMatch(/was created/);
    expect(run.stdout).toMatch(/read:orders.*write:orders.*write:products/s);
    expect(await prisma.account.count({ where: { email: 'existing@example.com' } })).toBe(1);
    expect(await members()).toContainEqual(expect.objectContaining({ accountId: await accountId('existing@example.com'), supplierId: BETA }));
  });

  it('add again changes nothing and says so (exit 0)', async () => {
    const before = await members();
    const [json, text] = await Promise.all([
      cli(['add', '--owner', 'new.member@example.com', '--supplier', ALPHA, '--json']),
      cli(['add', '--owner', 'NEW.member@example.com', '--supplier', ALPHA]),
    ]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ added: false, accountCreated: false, supplierId: ALPHA, since: before.find((m) => m.supplierId === ALPHA)!.createdAt.toISOString() });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^new\.member@example\.com already acts for the supplier sup_alpha \(Alpha Trade SRL\), since .*; nothing changed\.\n$/);
    expect(await members()).toEqual(before);
  });

  it('add to another supplier is refused, naming the current one and `member remove` (exit 1, nothing changed)', async () => {
    const before = await members();
    const run = await cli(['add', '--owner', 'new.member@example.com', '--supplier', BETA, '--json']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/new\.member@example\.com already acts for the supplier sup_alpha \(Alpha Trade SRL\)/);
    expect(run.stderr).toMatch(/keys member remove --owner new\.member@example\.com/);
    expect(run.stderr).not.toMatch(/Usage:|\n\s+at /);
    expect(await members()).toEqual(before);
  });

  it.concurrent.for([
    ['an unknown supplier', 'no_such_supplier', /No supplier has the id "no_such_supplier"/],
    ['an inactive supplier', GONE, /The supplier sup_inactive \(Closed Shop SRL\) is inactive/],
  ] as const)('add to %s is refused (exit 1), and creates no account', async ([, id, message], { expect }) => {
    const before = await members();
    const run = await cli(['add', '--owner', 'stranger@example.com', '--supplier', id]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
    expect(run.stderr).not.toMatch(/Usage:|\n\s+at /);
    expect(await members()).toEqual(before);
    expect(await accountId('stranger@example.com')).toBeUndefined();
  });

  it('list prints every membership by supplier company name, then e-mail; --supplier filters', async () => {
    await cli(['add', '--owner', 'aaa@example.com', '--supplier', BETA]);
    const all = await cli(['list', '--json']);
    expect(all.code).toBe(0);
    const list = JSON.parse(all.stdout) as Record<string, unknown>[];
    expect(list.map((m) => [m.supplierName, m.email])).toEqual([
      ['Alpha Trade SRL', 'new.member@example.com'],
      ['Beta Distributie SRL', 'aaa@example.com'],
      ['Beta Distributie SRL', 'existing@example.com'],
    ]);
    for (const m of list) expect(Object.keys(m).sort()).toEqual(['accountId', 'email', 'since', 'supplierId', 'supplierName']);
    expect(list[2]).toEqual({
      email: 'existing@example.com',
      accountId: await accountId('existing@example.com'),
      supplierId: BETA,
      supplierName: 'Beta Distributie SRL',
      since: expect.any(String),
    });

    // The other lists read the same memberships: asked at once.
    const [betaRun, goneRun, text, goneText] = await Promise.all([
      cli(['list', '--supplier', BETA, '--json']),
      cli(['list', '--supplier', GONE, '--json']),
      cli(['list']),
      cli(['list', '--supplier', GONE]),
    ]);
    const beta = JSON.parse(betaRun.stdout) as { email: string }[];
    expect(beta.map((m) => m.email)).toEqual(['aaa@example.com', 'existing@example.com']);
    expect(JSON.parse(goneRun.stdout)).toEqual([]);

    expect(text.code).toBe(0);
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SUPPLIER\s+COMPANY\s+EMAIL\s+ACCOUNT\s+SINCE$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 3))).toEqual([
      [ALPHA, 'Alpha Trade SRL', 'new.member@example.com'],
      [BETA, 'Beta Distributie SRL', 'aaa@example.com'],
      [BETA, 'Beta Distributie SRL', 'existing@example.com'],
    ]);
    expect(goneText.stdout).toBe('The supplier sup_inactive has no members.\n');
  });

  it('remove ends the membership; then the account can join another supplier', async () => {
    const id = await accountId('new.member@example.com');
    const run = await cli(['remove', '--owner', 'New.Member@example.com', '--json']);
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(out).toEqual({
      email: 'new.member@example.com',
      accountId: id,
      removed: { email: 'new.member@example.com', accountId: id, supplierId: ALPHA, supplierName: 'Alpha Trade SRL', since: expect.any(String) },
    });
    expect((await members()).map((m) => m.accountId)).not.toContain(id);
    // The account stays: only its membership ended.
    expect(id).toBeDefined();
    expect(await accountId('new.member@example.com')).toBe(id);

    const moved = await cli(['add', '--owner', 'new.member@example.com', '--supplier', BETA, '--json']);
    expect(moved.code).toBe(0);
    expect(JSON.parse(moved.stdout)).toMatchObject({ supplierId: BETA, added: true, accountCreated: false });
    const text = await cli(['remove', '--owner', 'new.member@example.com']);
    expect(text.stdout).toBe('new.member@example.com no longer acts for the supplier sup_beta (Beta Distributie SRL), from the next request on.\n');
  });

  it('remove of an account that is no member changes nothing and says so (exit 0)', async () => {
    const before = await members();
    const [json, text] = await Promise.all([cli(['remove', '--owner', 'new.member@example.com', '--json']), cli(['remove', '--owner', 'new.member@example.com'])]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ email: 'new.member@example.com', accountId: await accountId('new.member@example.com'), removed: null });
    expect(text.code).toBe(0);
    expect(text.stdout).toBe('new.member@example.com acts for no supplier; nothing changed.\n');
    expect(await members()).toEqual(before);
  });

  it.concurrent('remove of an e-mail no account has is refused (exit 1), so a typo does not pass for success', async ({ expect }) => {
    const run = await cli(['remove', '--owner', 'typo@example.com']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/No account has the e-mail "typo@example.com"/);
    expect(await accountId('typo@example.com')).toBeUndefined();
  });

  // Two refusals as a process (every refusal of the member commands' arguments is in
  // test/unit/keys-cli-arguments.test.ts): a malformed id, and a command the CLI does not know.
  const bad: [string, string[], RegExp][] = [
    ['add with a malformed supplier id', ['add', '--owner', 'a@example.com', '--supplier', "x' OR 1=1"], /--supplier must be a supplier id/],
    ['an unknown member command', ['join', '--owner', 'a@example.com'], /Unknown member command "join": use member add, member remove or member list/],
  ];

  it.concurrent.for(bad)('refuses %s: one line on stderr naming the mistake and --help, nothing on stdout, exit code 1', async ([, args, message], { expect }) => {
    const run = await cli(args);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(message);
    // The mistake, and where the usage is: not the whole usage after it.
    expect(run.stderr).toMatch(/^Error: .* \(see `npm run keys -- --help`\)\n$/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('refused usage changes nothing in the database', async () => {
    // After the concurrent refusals above: no account a@example.com, no membership of it.
    expect(await accountId('a@example.com')).toBeUndefined();
    expect((await members()).map((m) => m.supplierId)).toEqual([BETA, BETA]);
  });

  it('member --help prints the help with the member commands', async () => {
    const run = await cli(['--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/member remove --owner EMAIL/);
    expect(run.stdout).toMatch(/member list \[--supplier SUPPLIER_ID\]/);
    expect(run.stdout).toMatch(/created if there is none/);
  });
});
