import { context, diag, DiagLogLevel, propagation, SpanKind, trace, type Attributes, type Context, type Link } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { PrismaInstrumentation } from '@prisma/instrumentation';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SamplingResult,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { TracingSettings } from '../config/config.js';
import type { Logger } from '../config/logger.js';
import { traceStatements } from './statements.js';

// OpenTelemetry's SDK, started once per process that serves requests (src/server.ts: the single
// process, or each worker of several) when OTEL_* configures tracing (src/config/config.ts,
// tracingOf): spans are batched and sent over OTLP/HTTP (JSON) to the collector. Loaded only
// then: with tracing off this module is never imported, and the API stays its no-op self.

export interface Tracing {
  /** Sends the spans still batched, then stops: run last at shutdown. */
  shutdown(): Promise<void>;
}

/**
 * The root spans kept: a request (SERVER) and a webhook delivery (CLIENT), what the service's own
 * work is made of. Prisma's instrumentation starts a span for any query, also for the background
 * ones (the webhook worker's polls every 2 s, the usage recorder's flushes): without a request or
 * a delivery above them they are not recorded, so the backend sees units of work, not a poll.
 */
class UnitsOfWork implements Sampler {
  constructor(private readonly inner: Sampler) {}
  shouldSample(parent: Context, traceId: string, name: string, kind: SpanKind, attributes: Attributes, links: Link[]): SamplingResult {
    if (trace.getSpanContext(parent) === undefined && kind !== SpanKind.SERVER && kind !== SpanKind.CLIENT) return { decision: SamplingDecision.NOT_RECORD };
    return this.inner.shouldSample(parent, traceId, name, kind, attributes, links);
  }
  toString() {
    return `UnitsOfWork{${this.inner.toString()}}`;
  }
}

/** OTEL_TRACES_SAMPLER and its ratio, as the specification defines them. */
function samplerOf({ sampler, samplerRatio }: TracingSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(samplerRatio);
  switch (sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

/** The SDK's own complaints (an unreachable collector, a full queue) go to the log, each at most once a minute. */
function logDiagnostics(logger: Logger): void {
  const said = new Map<string, number>();
  const say = (message: string) => {
    const now = Date.now();
    if ((said.get(message) ?? 0) > now - 60_000) return;
    said.set(message, now);
    logger.warn({ tracing: message }, 'tracing: spans may be lost');
  };
  const text = (args: unknown[]) => args.map((a) => (a instanceof Error ? a.message : typeof a === 'string' ? a : JSON.stringify(a))).join(' ').slice(0, 500);
  const ignore = () => undefined;
  diag.setLogger({ error: (...args) => say(text(args)), warn: (...args) => say(text(args)), info: ignore, debug: ignore, verbose: ignore }, DiagLogLevel.WARN);
}

/** Starts the SDK as `settings` say; until shutdown every span the service makes is recorded, sampled and sent. */
export function startTracing(settings: TracingSettings, logger: Logger): Tracing {
  logDiagnostics(logger);
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName }))
    // OTEL_RESOURCE_ATTRIBUTES, and OTEL_SERVICE_NAME once more: the operator's word wins.
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    sampler: new UnitsOfWork(samplerOf(settings)),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.tracesUrl }))],
  });
  // The API's globals: the tracer, the async context that carries the active span, W3C trace context.
  provider.register();
  // Prisma 7's client reads its tracing helper from a global, which this sets (no module hook:
  // it works under ESM and with the driver adapter). Its statement spans are left out: every
  // statement, Prisma's and the service's own, gets one span from ./statements.ts.
  const prisma = new PrismaInstrumentation({ ignoreSpanTypes: ['prisma:client:db_query'] });
  prisma.setTracerProvider(provider);
  prisma.enable();
  const untrace = traceStatements();
  return {
    async shutdown() {
      untrace();
      prisma.disable();
      await provider.shutdown().catch((error: unknown) => logger.warn({ err: error }, 'tracing: the last spans could not be sent'));
      trace.disable();
      context.disable();
      propagation.disable();
      diag.disable();
    },
  };
}
