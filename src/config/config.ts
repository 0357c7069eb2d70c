import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { createClientIpResolver } from '../shared/client-ip.js';
import { LIMITS, type LimitSetting } from './limits.js';

/** Defaults of DB_CONNECT_TIMEOUT_MS and DB_STATEMENT_TIMEOUT_MS, also DB_TIMEOUTS' (src/db/prisma.ts). */
export const DB_CONNECT_TIMEOUT_DEFAULT_MS = 2_000;
export const DB_STATEMENT_TIMEOUT_DEFAULT_MS = 4_000;

// Every environment variable the service reads, parsed and validated once. The README's
// configuration table lists the same names; keep the two in step.

/** A yes/no variable: true, false, 1 or 0. */
const flag = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** Seconds between webhook attempts: from 10 s up to a day, 3 days in all, then the delivery has failed. */
const DEFAULT_RETRY_SCHEDULE = [10, 60, 300, 1800, 3600, 7200, 14_400, 28_800, 43_200, 72_000, 86_400];

/** A limit's setting (./limits.ts): a whole number within the row's bounds, the row's own `max` when unset. */
const limitSetting = ({ max, setting }: { max: number; setting: LimitSetting }) => z.coerce.number().int().min(setting.min).max(setting.max).default(max);

/** The schemes libpq and node-postgres read as PostgreSQL. */
const POSTGRES_SCHEMES = ['postgresql:', 'postgres:'];

/** More worker processes than this is a typo, not a machine. */
const MAX_WEB_CONCURRENCY = 256;

/** A cursor secret shorter than this could be guessed offline from one issued cursor. */
const MIN_CURSOR_SECRET_LENGTH = 32;
const MAX_CURSOR_SECRET_LENGTH = 1024;
/** Every secret is tried on every refused cursor: a handful covers any rotation. */
const MAX_CURSOR_SECRETS = 8;

/**
 * A PostgreSQL URL. Another scheme (mysql://) would be read as PostgreSQL's and fail later, on
 * port 5432. The value itself is never echoed: it carries the password.
 */
const postgresUrl = z
  .string()
  .url()
  .refine((url) => !URL.canParse(url) || POSTGRES_SCHEMES.includes(new URL(url).protocol), {
    error: (issue) => `must be a postgresql:// or postgres:// URL (postgresql://user:pass@host:5432/db), not ${new URL(issue.input as string).protocol}//`,
  });

/** An http:// or https:// URL (`collector:4318` parses as a URL of scheme `collector:`). */
const httpUrl = z
  .string()
  .url()
  .refine((url) => !URL.canParse(url) || ['http:', 'https:'].includes(new URL(url).protocol), { error: 'must be an http:// or https:// URL (http://collector:4318)' });

const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(4000),
  HOST: z.string().min(1).default('0.0.0.0'),
  /** The address people reach the service at, for links it prints; unset: the running server's own address (keys invite), else http://localhost:PORT. */
  PUBLIC_URL: z.string().url().optional(),
  /** Any PostgreSQL server, or a pooler in front of one; when unset the embedded server under DATA_DIR is used. */
  DATABASE_URL: postgresUrl.optional(),
  /**
   * A session connection to the same database (the server itself, or a pooler in session mode),
   * for what a transaction pooler cannot carry: migrations (advisory lock), LISTEN for key changes
   * and the webhook outbox, the demo data. Unset: DATABASE_URL.
   */
  DATABASE_DIRECT_URL: postgresUrl.optional(),
  /**
   * Streaming replicas of the primary, comma-separated, each validated like DATABASE_URL: the
   * catalogue's reads go to them (src/db/replicas.ts). Never echoed: they carry passwords.
   */
  DATABASE_READ_URLS: z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return undefined;
      const urls = text.split(',').map((part) => part.trim()).filter(Boolean);
      for (const [i, url] of urls.entries()) {
        const checked = postgresUrl.safeParse(url);
        if (!checked.success) {
          ctx.addIssue({ code: 'custom', message: `URL ${i + 1}: ${checked.error.issues[0]?.message ?? 'invalid'}` });
          return z.NEVER;
        }
      }
      return urls.length ? urls : undefined;
    }),
  /** A replica whose replay is further behind the primary than this, in seconds, is skipped. */
  DATABASE_REPLICA_MAX_LAG_SECONDS: z.coerce.number().min(0.5).max(3600).default(5),
  DATA_DIR: z.string().min(1).default('./.data'),
  /** Port of the embedded PostgreSQL; 0 picks a free one. */
  EMBEDDED_PG_PORT: z.coerce.number().int().min(0).max(65535).default(0),
  DB_POOL_MAX: z.coerce.number().int().min(1).max(200).default(10),
  /**
   * Bound on opening one database connection, in ms (every pool, listener and check). 2 s: a
   * stopped server is refused at once anyway; an unreachable host costs this long; a loaded machine
   * (SCRAM, a fork per connection) can take over 1 s to open one, which must not become a 503.
   */
  DB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(DB_CONNECT_TIMEOUT_DEFAULT_MS),
  /** A statement running longer than this, in ms, is cancelled on the server and answered 503. */
  DB_STATEMENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DB_STATEMENT_TIMEOUT_DEFAULT_MS),
  /** Seed value of the demo catalogue: the same value always yields the same rows. */
  SEED: z.coerce.number().int().min(0).default(42),
  SEED_PRODUCTS: z.coerce.number().int().min(0).default(1200),
  /**
   * Seed the demo catalogue into a database with no products, and mint and print a demo key.
   * Unset: on for the embedded database outside production, off otherwise (resolved below).
   */
  DEMO_DATA: flag.optional(),
  /** Renamed DEMO_DATA, whose default differs: refused rather than silently ignored. */
  SEED_ON_START: z.undefined({ error: 'was replaced by DEMO_DATA (true or false); unset, demo data is seeded only into the embedded database outside production' }).optional(),
  /** Requests per window for callers without a key, per client address; bounds and window in ./limits.ts. */
  ANON_RATE_LIMIT: limitSetting(LIMITS.requests.ANONYMOUS),
  /** Requests per window a publishable key takes from one client address; window in ./limits.ts. */
  PUBLISHABLE_VISITOR_LIMIT: limitSetting(LIMITS.publishable.perVisitor),
  /** Proxies whose X-Forwarded-For is believed: comma-separated IPs/CIDRs or loopback, linklocal, uniquelocal. */
  TRUSTED_PROXIES: z
    .string()
    .optional()
    .superRefine((value, ctx) => {
      try {
        createClientIpResolver(value);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: error instanceof Error ? error.message : String(error) });
      }
    }),
  /** Shared rate-limit state for several instances; unset: in process memory. */
  REDIS_URL: z.string().url().optional(),
  /**
   * Longest an instance keeps a checked API key in memory, in seconds; 0 checks every request in
   * the database. Kept keys are forgotten the moment they change (PostgreSQL LISTEN/NOTIFY).
   */
  KEY_CACHE_SECONDS: z.coerce.number().int().min(0).max(86_400).default(60),
  /** The response cache (src/cache/response-cache.ts): on by default, `off` keeps no answer. */
  RESPONSE_CACHE: z.enum(['on', 'off']).default('on'),
  /** Bytes the in-memory response cache may hold per process (ignored when REDIS_URL is set). */
  RESPONSE_CACHE_MAX_BYTES: z.coerce.number().int().min(1_048_576).max(17_179_869_184).default(67_108_864),
  /** Open GraphQL subscriptions one API key may have at once across all instances (counted in the database); one more is refused. */
  SUBSCRIPTIONS_PER_KEY: limitSetting(LIMITS.subscriptions.perKey),
  /** Orders one account may create per window, through REST and GraphQL together. */
  ORDER_CREATE_LIMIT: limitSetting(LIMITS.fields.createOrder),
  /**
   * Secrets of the GraphQL connection cursors, comma-separated: the first signs, every one
   * verifies (rotation: add the new one second, then move it first, then drop the old one).
   * Unset: one generated secret, kept in the database and shared by every instance. The values
   * are never echoed, not even in this error.
   */
  CURSOR_SECRETS: z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined) return undefined;
      const secrets = text.split(',').map((part) => part.trim());
      if (secrets.length > MAX_CURSOR_SECRETS || secrets.some((s) => s.length < MIN_CURSOR_SECRET_LENGTH || s.length > MAX_CURSOR_SECRET_LENGTH)) {
        ctx.addIssue({ code: 'custom', message: `must be 1–${MAX_CURSOR_SECRETS} comma-separated secrets of ${MIN_CURSOR_SECRET_LENGTH}–${MAX_CURSOR_SECRET_LENGTH} characters each` });
        return z.NEVER;
      }
      return secrets;
    }),
  /** Origins allowed by CORS: comma-separated, or * for any (no credentials are used, so * is safe). */
  CORS_ORIGINS: z.string().default('*'),
  /** Deepest field nesting a GraphQL operation may have (introspection's __schema not counted). */
  GRAPHQL_MAX_DEPTH: z.coerce.number().int().min(1).max(1000).default(10),
  /** Aliases one GraphQL operation may use. */
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(0).max(10_000).default(15),
  /** Lexical tokens a GraphQL document may have; checked while parsing, so a huge document stops early. */
  GRAPHQL_MAX_TOKENS: z.coerce.number().int().min(1).max(1_000_000).default(2000),
  /** Estimated objects one GraphQL operation may resolve: list sizes multiplied down the query (README). */
  GRAPHQL_MAX_COST: z.coerce.number().int().min(1).max(100_000_000).default(10_000),
  /** Directives (@include, @skip, …) one GraphQL operation may use. */
  GRAPHQL_MAX_DIRECTIVES: z.coerce.number().int().min(0).max(10_000).default(20),
  /** Operations in one batched (JSON array) GraphQL request; 0 turns batching off. */
  GRAPHQL_BATCH_LIMIT: z.coerce.number().int().min(0).max(100).default(0),
  /** Schema introspection (and so GraphiQL's docs and autocompletion); unset: on, production included (the schema is public). */
  GRAPHQL_INTROSPECTION: flag.optional(),
  /** Documents the automatic persisted queries protocol may register (a table shared by every instance); the least recently used go first. */
  PERSISTED_QUERIES_MAX: z.coerce.number().int().min(1).max(10_000_000).default(10_000),
  /** How often each instance writes the uses of persisted queries it answered from its memory, so eviction is least recently used across instances. */
  PERSISTED_USE_FLUSH_MS: z.coerce.number().int().min(50).max(600_000).default(5_000),
  /** Trusted documents only: /graphql runs the documents of PERSISTED_DOCUMENTS and nothing else. */
  PERSISTED_ONLY: flag.default(false),
  /** The trusted-documents manifest: a JSON file `{ "<hash>": "<document>" }` (GraphQL Codegen's client preset writes it). */
  PERSISTED_DOCUMENTS: z.string().optional(),
  /**
   * Seconds to wait before each retry of a failed webhook delivery, comma-separated; after the
   * last one fails the delivery has failed, and an endpoint that failed throughout is disabled.
   * The default spreads 11 retries over 3 days.
   */
  WEBHOOK_RETRY_SCHEDULE: z
    .string()
    .default(DEFAULT_RETRY_SCHEDULE.join(','))
    .transform((text, ctx) => {
      const delays = text.split(',').map((part) => Number(part.trim()));
      if (delays.length > 50 || delays.some((d) => !Number.isFinite(d) || d < 0 || d > 7 * 86_400) || text.trim() === '') {
        ctx.addIssue({ code: 'custom', message: 'must be up to 50 comma-separated numbers of seconds, each 0–604800' });
        return z.NEVER;
      }
      return delays;
    }),
  /** Webhook targets on loopback, private and link-local addresses: for development and tests only. */
  WEBHOOK_ALLOW_PRIVATE: flag.default(false),
  /** This instance delivers webhooks (every instance may); false: it only writes events for others to deliver. */
  WEBHOOK_WORKER: flag.default(true),
  /** How long a receiver has to answer one webhook delivery. */
  WEBHOOK_TIMEOUT_SECONDS: z.coerce.number().min(0.1).max(60).default(10),
  /**
   * Worker processes serving the one port (node:cluster): a number, or `auto` for one per core
   * (os.availableParallelism()). 1: a single process, no cluster primary at all.
   */
  WEB_CONCURRENCY: z
    .string()
    .default('1')
    .transform((text, ctx) => {
      const value = text.trim();
      if (value === 'auto') return os.availableParallelism();
      if (/^[0-9]+$/.test(value) && Number(value) >= 1 && Number(value) <= MAX_WEB_CONCURRENCY) return Number(value);
      ctx.addIssue({ code: 'custom', message: `must be a whole number of worker processes from 1 to ${MAX_WEB_CONCURRENCY}, or auto (one per core)` });
      return z.NEVER;
    }),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // OpenTelemetry's own variables (its SDK's specification): tracing is on once an OTLP endpoint is
  // set, unless disabled. Those that decide it are checked here, so a typo fails the start instead
  // of tracing nothing; the finer ones (OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT,
  // OTEL_BSP_SCHEDULE_DELAY, OTEL_BSP_MAX_QUEUE_SIZE, OTEL_RESOURCE_ATTRIBUTES) are read by the SDK itself.
  /** The collector's OTLP/HTTP base URL: traces go to its /v1/traces. */
  OTEL_EXPORTER_OTLP_ENDPOINT: httpUrl.optional(),
  /** The full URL traces are sent to, used as given; wins over OTEL_EXPORTER_OTLP_ENDPOINT. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: httpUrl.optional(),
  /** `none` turns tracing off with an endpoint set; OTLP over HTTP (JSON) is the one exporter. */
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none']).default('otlp'),
  OTEL_SDK_DISABLED: flag.default(false),
  OTEL_SERVICE_NAME: z.string().max(200).default('marketplace-api'),
  OTEL_TRACES_SAMPLER: z
    .enum(['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'])
    .default('parentbased_always_on'),
  /** The ratio of the two `traceidratio` samplers, 0–1. */
  OTEL_TRACES_SAMPLER_ARG: z.coerce.number().min(0).max(1).default(1),
});

export type Config = Readonly<Omit<z.infer<typeof envSchema>, 'DATA_DIR' | 'DEMO_DATA' | 'SEED_ON_START'> & { DATA_DIR: string; DEMO_DATA: boolean }>;

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty variable means "not set", as in most shells' `VAR= cmd`.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new ConfigError(`Invalid configuration: ${problems}`);
  }
  const { SEED_ON_START: _renamed, ...values } = parsed.data;
  if (values.DATABASE_DIRECT_URL !== undefined && values.DATABASE_URL === undefined) {
    throw new ConfigError('Invalid configuration: DATABASE_DIRECT_URL: set DATABASE_URL too (the direct connection is to the same database; unset both for the embedded server)');
  }
  if (values.DATABASE_READ_URLS !== undefined && values.DATABASE_URL === undefined) {
    throw new ConfigError('Invalid configuration: DATABASE_READ_URLS: set DATABASE_URL too (replicas follow the primary DATABASE_URL names; the embedded server has none)');
  }
  return Object.freeze({
    ...values,
    DATA_DIR: path.resolve(values.DATA_DIR),
    // Demo rows and a key with write access have no place in a database the operator provides,
    // nor in production, unless asked for.
    DEMO_DATA: values.DEMO_DATA ?? (values.DATABASE_URL === undefined && values.NODE_ENV !== 'production'),
  });
}

/** Where webhooks may be sent: private targets only when allowed, https only in production. */
export const webhookPolicyOf = (config: Config) => ({ allowPrivate: config.WEBHOOK_ALLOW_PRIVATE, requireHttps: config.NODE_ENV === 'production' });

/** What tracing needs to start (src/tracing/sdk.ts); undefined when it is off, as it is unless an OTLP endpoint is set. */
export interface TracingSettings {
  /** Where spans are sent: the OTLP/HTTP traces URL. */
  tracesUrl: string;
  serviceName: string;
  sampler: Config['OTEL_TRACES_SAMPLER'];
  samplerRatio: number;
}

export function tracingOf(config: Config): TracingSettings | undefined {
  if (config.OTEL_SDK_DISABLED || config.OTEL_TRACES_EXPORTER === 'none') return undefined;
  const base = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  // As the specification has it: the signal's own URL as given, the base one with the signal's path.
  const tracesUrl = config.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`);
  if (tracesUrl === undefined) return undefined;
  return { tracesUrl, serviceName: config.OTEL_SERVICE_NAME, sampler: config.OTEL_TRACES_SAMPLER, samplerRatio: config.OTEL_TRACES_SAMPLER_ARG };
}
