import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Caller } from '../../src/context/actor.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { LIMITS, WEBSOCKET_BOUNDS, type LimitSetting } from '../../src/config/limits.js';
import { PLAN_LIMITS } from '../../src/ratelimit/plans.js';
import { costBudgetPolicy, describeWindow, rateLimitPolicy } from '../../src/ratelimit/policy.js';

// The table of limits (src/config/limits.ts): every row well formed, each setting's default and
// bounds taken from its row, the rate limiter reading the same numbers, and docs/api.md and the
// README stating them where they state them.

interface Row {
  counts: string;
  per: string;
  max?: number;
  windowMs?: number;
  burst?: number;
  restoreRate?: number;
  setting?: LimitSetting;
}

const ROWS: Array<[string, Row]> = Object.entries(LIMITS).flatMap(([group, members]) =>
  Object.entries(members as Record<string, Row>).map(([name, row]): [string, Row] => [`${group}.${name}`, row]),
);
const SETTINGS = ROWS.flatMap(([name, row]) => (row.setting ? [[name, row.setting, row.max!] as const] : []));
const DEFAULTS = loadConfig({});

const accepts = (name: string, value: number) => (loadConfig({ [name]: String(value) }) as unknown as Record<string, number>)[name];
const refuses = (name: string, value: number) => expect(() => loadConfig({ [name]: String(value) })).toThrow(ConfigError);

describe('the table of limits', () => {
  it('says of every limit what it counts and whose', () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(13);
    for (const [name, row] of ROWS) {
      expect(row.counts, name).toMatch(/\S/);
      expect(row.per, name).toMatch(/\S/);
    }
  });

  it('counts whole numbers over whole seconds (Retry-After and RateLimit-Policy say seconds)', () => {
    for (const [name, row] of ROWS) {
      if (row.max !== undefined) expect(Number.isSafeInteger(row.max) && row.max >= 1, name).toBe(true);
      if (row.windowMs !== undefined) expect(Number.isSafeInteger(row.windowMs / 1000) && row.windowMs > 0, name).toBe(true);
      if (row.burst !== undefined) {
        // A budget of less than GRAPHQL_MAX_COST could refuse an operation that is allowed to run.
        expect(Number.isInteger(row.burst) && row.burst >= 1, name).toBe(true);
        expect(Number.isInteger(row.restoreRate) && row.restoreRate! > 0, name).toBe(true);
      }
      // A limit is counted over a window, refilled at a rate, or held open: one of the three.
      expect([row.windowMs, row.restoreRate].filter((v) => v !== undefined).length, name).toBeLessThanOrEqual(1);
    }
  });

  it('cannot be changed at run time, row by row', () => {
    expect(Object.isFrozen(LIMITS)).toBe(true);
    for (const group of Object.values(LIMITS)) expect(Object.isFrozen(group)).toBe(true);
    for (const [name, row] of ROWS) {
      expect(Object.isFrozen(row), name).toBe(true);
      if (row.setting) expect(Object.isFrozen(row.setting), name).toBe(true);
    }
  });

  it('gives each setting its row’s max as its default, within the setting’s bounds', () => {
    expect(SETTINGS.map(([, setting]) => setting.name)).toEqual(['ANON_RATE_LIMIT', 'PUBLISHABLE_VISITOR_LIMIT', 'ORDER_CREATE_LIMIT', 'SUBSCRIPTIONS_PER_KEY']);
    for (const [name, setting, max] of SETTINGS) {
      expect((DEFAULTS as unknown as Record<string, number>)[setting.name], name).toBe(max);
      expect(setting.min <= max && max <= setting.max, name).toBe(true);
      expect(accepts(setting.name, setting.min)).toBe(setting.min);
      expect(accepts(setting.name, setting.max)).toBe(setting.max);
      refuses(setting.name, setting.min - 1);
      refuses(setting.name, setting.max + 1);
    }
  });

  it('is what the rate limiter applies', () => {
    const anonymous: Caller = { kind: 'anonymous', ip: '192.0.2.1' };
    expect(rateLimitPolicy(anonymous, { anonymousLimit: DEFAULTS.ANON_RATE_LIMIT })).toMatchObject({
      limit: LIMITS.requests.ANONYMOUS.max,
      windowMs: LIMITS.requests.ANONYMOUS.windowMs,
    });
    for (const plan of ['BASIC', 'PRO', 'ENTERPRISE'] as const) {
      const row = LIMITS.requests[plan];
      expect(PLAN_LIMITS[plan]).toEqual({ limit: row.max, windowSeconds: row.windowMs / 1000 });
    }
    const basic = costBudgetPolicy({ kind: 'key', ip: '', keyId: 'k', accountId: 'a', plan: 'BASIC', scopes: [], rateLimit: null, rateWindowSeconds: null }, DEFAULTS.GRAPHQL_MAX_COST);
    expect(basic).toMatchObject({ limit: LIMITS.costBudgets.BASIC.burst * DEFAULTS.GRAPHQL_MAX_COST, restoreRate: LIMITS.costBudgets.BASIC.restoreRate });
  });
});

// ----- what the documents state -----

/** A document with every run of white space as one space: a statement may wrap. */
const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8').replace(/\s+/g, ' ');
/** "1 minute", "1 hour", "15 minutes". */
const spanOf = (ms: number) => (/^\d/.test(describeWindow(ms)) ? describeWindow(ms) : `1 ${describeWindow(ms)}`);
const minutesOf = (ms: number) => `${ms / 60_000} min`;
const grouped = (n: number, separator: string) => n.toLocaleString('en-US').replaceAll(',', separator);
const range = (setting: LimitSetting) => `${setting.min}–${setting.max}`;

const { ANONYMOUS: anonymous, BASIC: basic, PRO: pro } = LIMITS.requests;
const orders = LIMITS.fields.createOrder;
const visitor = LIMITS.publishable.perVisitor;
const streams = LIMITS.subscriptions.perKey;
const { signIn, forms, costBudgets } = LIMITS;
const invalidKeys = LIMITS.invalidKeys.perClient;
const maxCost = DEFAULTS.GRAPHQL_MAX_COST;
const budgetOf = (plan: keyof typeof costBudgets) => costBudgets[plan].burst * maxCost;
const budgetCells = (plan: keyof typeof costBudgets) =>
  `${costBudgets[plan].burst === 1 ? '' : `${costBudgets[plan].burst} × `}\`GRAPHQL_MAX_COST\` (${grouped(budgetOf(plan), ' ')}) | ${costBudgets[plan].restoreRate} |`;

const STATED: Record<string, string[]> = {
  'docs/api.md': [
    // Rate limits
    `| no key | ${anonymous.max} (\`ANON_RATE_LIMIT\`, ${range(anonymous.setting)}) | ${spanOf(anonymous.windowMs)} |`,
    `| ${invalidKeys.max} | ${spanOf(invalidKeys.windowMs)} | client IP (an IPv6 client: its /64), a bucket of its own |`,
    `invalid-key bucket (${invalidKeys.max} a ${describeWindow(invalidKeys.windowMs)})`,
    `| Basic key | ${grouped(basic.max, ',')} | ${spanOf(basic.windowMs)} | key |`,
    `| Pro key | ${grouped(pro.max, ',')} | ${spanOf(pro.windowMs)} | key |`,
    `| \`X-RateLimit-Limit\` | \`${pro.max}\` |`,
    `"pro";q=${pro.max};w=${pro.windowMs / 1000}`,
    `| publishable key, per visitor | ${visitor.max} (\`PUBLISHABLE_VISITOR_LIMIT\`, ${range(visitor.setting)}) | ${spanOf(visitor.windowMs)} |`,
    `"at most ${visitor.max} requests per ${describeWindow(visitor.windowMs)} per visitor (client address) for this publishable key"`,
    `\`RateLimit-Policy: "publishable-visitor";q=${visitor.max};w=${visitor.windowMs / 1000}\``,
    `"at most ${anonymous.max} requests per ${describeWindow(anonymous.windowMs)} per client address without an API key"`,
    `an account may create \`ORDER_CREATE_LIMIT\` orders per ${describeWindow(orders.windowMs)} (default ${orders.max})`,
    `it is the ${orders.windowMs / 1000} seconds before each attempt`,
    `"Too many orders: at most ${orders.max} orders per ${describeWindow(orders.windowMs)} per account`,
    `\`X-RateLimit-Limit: ${orders.max}\``,
    `\`RateLimit-Policy: "orders";q=${orders.max};w=${orders.windowMs / 1000}\``,
    // Calculated query costs
    `\`GRAPHQL_MAX_COST\` (default ${grouped(maxCost, ' ')})`,
    `| no key (per client address, like its request limit) | ${budgetCells('ANONYMOUS')}`,
    `| Basic key | ${budgetCells('BASIC')}`,
    `| Pro key | ${budgetCells('PRO')}`,
    `over Pro's (${pro.max} an ${describeWindow(pro.windowMs)}), never less | ${costBudgets.ENTERPRISE.restoreRate}, times the same |`,
    `"requested": 21, "actual": 21, "limit": ${budgetOf('BASIC')}, "remaining": ${budgetOf('BASIC') - 21}, "restoreRate": ${costBudgets.BASIC.restoreRate}`,
    `\`RateLimit-Policy: "cost-basic";q=${budgetOf('BASIC')};w=${budgetOf('BASIC') / costBudgets.BASIC.restoreRate}\``,
    `"limit":${budgetOf('BASIC')},"remaining":150,"restoreRate":${costBudgets.BASIC.restoreRate}`,
    // Subscriptions
    `at most \`SUBSCRIPTIONS_PER_KEY\` (default ${streams.max})`,
    `at most ${LIMITS.websocket.operations.max} operations running at once per socket`,
    `at most ${LIMITS.websocket.socketsPerAddress.max} sockets per client address on one server process`,
    `at most ${grouped(LIMITS.websocket.sockets.max, ',')} sockets per server process`,
    `a message of at most ${WEBSOCKET_BOUNDS.messageBytes / 1024 / 1024} MiB`,
    `\`connection_init\` within ${WEBSOCKET_BOUNDS.connectionInitMs / 1000} s of opening`,
    `the server pings every ${WEBSOCKET_BOUNDS.keepAliveMs / 1000} s`,
  ],
  'README.md': [
    `| \`ANON_RATE_LIMIT\` | \`${anonymous.max}\` | Requests per ${describeWindow(anonymous.windowMs)} per client IP without a key (${range(anonymous.setting)}) |`,
    `| \`ORDER_CREATE_LIMIT\` | \`${orders.max}\` | Orders per ${describeWindow(orders.windowMs)} per account |`,
    `| \`SUBSCRIPTIONS_PER_KEY\` | \`${streams.max}\` | Open GraphQL subscription streams one API key (a publishable key: each of its visitors) may have at once across all instances (${range(streams.setting)};`,
    `per client address (${signIn.perIp.max} per ${minutesOf(signIn.perIp.windowMs)}) and per account (${signIn.perAccount.max} per ${minutesOf(signIn.perAccount.windowMs)})`,
    `${forms.perIp.max} per client address per ${minutesOf(forms.perIp.windowMs)}`,
    `throttled per client address (${forms.perIp.max} per ${minutesOf(forms.perIp.windowMs)})`,
    `limited per account instead: ${forms.savesPerAccount.max} per ${minutesOf(forms.savesPerAccount.windowMs)}`,
    `they do not use up the address's ${forms.perIp.max}`,
    `{ "requested": 6, "actual": 6, "limit": ${budgetOf('ANONYMOUS')}, "remaining": ${budgetOf('ANONYMOUS') - 6}, "restoreRate": ${costBudgets.ANONYMOUS.restoreRate} }`,
  ],
};

describe('the documents', () => {
  it.each(Object.entries(STATED))('%s states the table’s numbers where it states them', (file, statements) => {
    const text = read(file);
    const missing = statements.filter((statement) => !text.includes(statement));
    expect(missing, `${file} no longer says these (or says other numbers)`).toEqual([]);
  });
});
