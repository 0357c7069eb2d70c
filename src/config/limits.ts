// Every limit on what callers may do, in one table: what it counts, whose count it is, how many,
// over what window (for a budget, how fast it refills) and the setting that overrides it. The
// settings (./config.ts) take their defaults and bounds from here, the code that applies a limit
// reads its row, and docs/api.md and the README state the same numbers (test/unit/limits.test.ts).
//
// Not limits in this sense, so kept where they act: the gate's memory of checked keys
// (src/pipeline/gate.ts: how many keys, how long a check is trusted), which spares the database,
// not callers (a key not proven lately is charged to the anonymous request limit below); the
// GraphQL document bounds (GRAPHQL_MAX_DEPTH, _ALIASES, _TOKENS, _COST, _DIRECTIVES in
// ./config.ts), which bound one operation, not a rate; and what an account may hold (active keys,
// webhook endpoints), which its services count.

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** An environment variable (./config.ts) that sets a limit's `max`, within min–max. */
export interface LimitSetting {
  readonly name: string;
  readonly min: number;
  readonly max: number;
}

/** At most `max` of what it `counts` per `windowMs`, for each of what `per` names. */
export interface WindowLimit {
  /** What is counted, in the plural. */
  readonly counts: string;
  /** Whose are counted together. */
  readonly per: string;
  readonly max: number;
  readonly windowMs: number;
  readonly setting?: LimitSetting;
}

/**
 * A token bucket of GraphQL cost points: it holds `burst` times GRAPHQL_MAX_COST (so even the
 * dearest operation allowed fits a full one) and restores `restoreRate` points per second.
 */
export interface BudgetLimit {
  readonly counts: string;
  readonly per: string;
  readonly burst: number;
  readonly restoreRate: number;
}

/** At most `max` at once: held, not counted over a window. */
export interface OpenLimit {
  readonly counts: string;
  readonly per: string;
  readonly max: number;
  readonly setting?: LimitSetting;
}

export const LIMITS = deepFreeze({
  /**
   * Requests, REST and GraphQL alike, charged by the gate (src/pipeline/gate.ts) to one bucket per
   * caller (src/ratelimit/policy.ts). Fixed windows: a bucket's starts at its first request. An
   * Enterprise key carries its own limit and window (createApiKey requires them), so its row only
   * serves a key row that somehow lacks them: it then gets Pro's allowance, not unlimited.
   */
  requests: {
    ANONYMOUS: {
      counts: 'requests without a valid API key',
      per: 'client address (an IPv6 client: its /64)',
      max: 60,
      windowMs: MINUTE_MS,
      setting: { name: 'ANON_RATE_LIMIT', min: 30, max: 60 },
    },
    BASIC: { counts: 'requests', per: 'API key of the Basic plan', max: 1000, windowMs: HOUR_MS },
    PRO: { counts: 'requests', per: 'API key of the Pro plan', max: 5000, windowMs: HOUR_MS },
    ENTERPRISE: { counts: 'requests', per: 'API key of the Enterprise plan without its own limit', max: 5000, windowMs: HOUR_MS },
  },

  /**
   * Requests whose credentials fail (a key unknown, revoked, expired, empty, conflicting, or a
   * publishable key's wrong origin), charged by the gate to a bucket of their own per client: the
   * only bucket a key's lookup waits on, so neither the address's anonymous traffic can refuse a
   * valid key nor a flood of made-up keys reach the database past it. Fixed windows.
   */
  invalidKeys: {
    perClient: {
      counts: 'requests with an invalid API key',
      per: 'client address (an IPv6 client: its /64)',
      max: 30,
      windowMs: MINUTE_MS,
    },
  },

  /**
   * Publishable keys (`pk_`, for browser code): each visitor's requests are counted in a bucket of
   * their own, besides the key's plan bucket (which still holds the whole storefront's total), so
   * one visitor cannot spend the storefront's budget. A visitor is a client address (an IPv6
   * client: its /64); a request refused here is not charged to the key's bucket. Fixed windows.
   */
  publishable: {
    perVisitor: {
      counts: 'requests with a publishable key',
      per: 'publishable key and client address (an IPv6 client: its /64)',
      max: 120,
      windowMs: MINUTE_MS,
      setting: { name: 'PUBLISHABLE_VISITOR_LIMIT', min: 1, max: 100_000 },
    },
  },

  /**
   * GraphQL cost budgets (src/pipeline/graphql-cost-budget.ts), charged each operation's
   * estimated cost, in the request limit's bucket. An Enterprise key's is Pro's scaled by the
   * key's own request rate over Pro's, never less (costBudgetPolicy, src/ratelimit/policy.ts).
   */
  costBudgets: {
    ANONYMOUS: { counts: 'GraphQL cost points', per: 'client address (an IPv6 client: its /64)', burst: 1, restoreRate: 50 },
    BASIC: { counts: 'GraphQL cost points', per: 'API key', burst: 2, restoreRate: 100 },
    PRO: { counts: 'GraphQL cost points', per: 'API key', burst: 5, restoreRate: 500 },
    ENTERPRISE: { counts: 'GraphQL cost points', per: 'API key', burst: 5, restoreRate: 500 },
  },

  /**
   * Per-field limits on top of the request limits (src/ratelimit/field-limits.ts), by field.
   * Sliding windows: the `windowMs` before each call, refused calls counted. `counts` is also the
   * limit's name in RateLimit-Policy and its refusal's words ("Too many orders").
   */
  fields: {
    createOrder: {
      counts: 'orders',
      per: 'account (all of its API keys, REST and GraphQL together), or client address without a key',
      max: 20,
      windowMs: MINUTE_MS,
      setting: { name: 'ORDER_CREATE_LIMIT', min: 1, max: 100_000 },
    },
  },

  /**
   * Dashboard sign-in attempts (src/accounts/credentials.ts), counted whatever their outcome, a
   * password change's too: per client address (one guesser, many accounts) and per account e-mail
   * (many guessers, one account). A success counts too, so a shared office address gets some
   * headroom over one person's typos. Fixed windows.
   */
  signIn: {
    perIp: { counts: 'sign-in attempts', per: 'client address', max: 20, windowMs: 15 * MINUTE_MS },
    perAccount: { counts: 'sign-in attempts', per: 'account e-mail', max: 10, windowMs: 15 * MINUTE_MS },
  },

  /**
   * The dashboard's throttled forms (src/accounts/credentials.ts, declared on its route table),
   * counted whatever their outcome. Fixed windows.
   *
   * perIp: forms that make or unlock something (registration, setting or changing a password,
   * creating a key or a webhook endpoint): as with sign-in, a script cannot make accounts, keys
   * or endpoints at will (an account holds 20 keys, so accounts at will would be rate limits at
   * will).
   *
   * savesPerAccount: forms that only edit what a signed-in account already has (its profile, its
   * addresses): each save is a write, and each write makes every kept API answer stale (the
   * response cache's data revision), so one account saving in a loop (518 saves in 15 s) slows
   * every caller. Per account, not per address: the flood was one account's, and an office
   * behind one address keeps its perIp budget for keys. A person filling in forms sends a few a
   * minute at most; 60 in 15 minutes is four a minute throughout.
   */
  forms: {
    perIp: { counts: 'forms that make or unlock something', per: 'client address', max: 30, windowMs: 15 * MINUTE_MS },
    savesPerAccount: { counts: 'saves of the account’s own data', per: 'account', max: 60, windowMs: 15 * MINUTE_MS },
  },

  /**
   * Open GraphQL subscriptions (over SSE or a WebSocket), held by the live hub
   * (src/background/live-hub.ts) and counted across every instance in PostgreSQL
   * (src/background/live-slots.ts).
   */
  subscriptions: {
    perKey: {
      counts: 'open GraphQL subscription streams',
      per: 'API key, across all instances',
      max: 10,
      setting: { name: 'SUBSCRIPTIONS_PER_KEY', min: 1, max: 10_000 },
    },
  },

  /**
   * GraphQL over WebSocket (graphql-ws, src/pipeline/websocket.ts): the sockets one process holds, in
   * all and from one client (so that one client cannot take them all), and the operations one socket
   * runs at once. Each operation is also a request (the request limit above) and each subscription
   * a stream (subscriptions.perKey).
   */
  websocket: {
    sockets: { counts: 'open GraphQL WebSocket connections', per: 'server process', max: 10_000 },
    socketsPerAddress: { counts: 'open GraphQL WebSocket connections', per: 'client address (an IPv6 client: its /64), on one server process', max: 200 },
    operations: { counts: 'operations running at once (subscriptions, queries, mutations)', per: 'GraphQL WebSocket connection', max: 100 },
  },
} as const satisfies {
  requests: Readonly<Record<'ANONYMOUS' | 'BASIC' | 'PRO' | 'ENTERPRISE', WindowLimit>>;
  invalidKeys: Readonly<Record<string, WindowLimit>>;
  publishable: Readonly<Record<string, WindowLimit>>;
  costBudgets: Readonly<Record<'ANONYMOUS' | 'BASIC' | 'PRO' | 'ENTERPRISE', BudgetLimit>>;
  fields: Readonly<Record<string, WindowLimit>>;
  signIn: Readonly<Record<string, WindowLimit>>;
  forms: Readonly<Record<string, WindowLimit>>;
  subscriptions: Readonly<Record<string, OpenLimit>>;
  websocket: Readonly<Record<string, OpenLimit>>;
});

/**
 * The bounds of one GraphQL WebSocket connection that are sizes and times rather than counts
 * (src/pipeline/websocket.ts): a message larger than `messageBytes` closes the socket (1009, as the
 * WebSocket protocol has it: the same 1 MiB a /graphql POST body may have); `connection_init` must
 * come within `connectionInitMs` of the handshake (else 4408); the server pings every
 * `keepAliveMs` and drops a peer that has not answered the previous ping by the next one.
 */
export const WEBSOCKET_BOUNDS = deepFreeze({
  messageBytes: 1024 * 1024,
  connectionInitMs: 3_000,
  keepAliveMs: 12_000,
});

/** The name a per-field limit is applied by (`ctx.limitField(…, name)`). */
export type FieldLimitName = keyof typeof LIMITS.fields;

/** The table cannot be changed at run time, row by row. */
function deepFreeze<T extends object>(value: T): T {
  for (const member of Object.values(value)) if (typeof member === 'object' && member !== null) deepFreeze(member);
  return Object.freeze(value);
}
