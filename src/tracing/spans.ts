import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace, type Attributes, type Context, type Span, type SpanKind, type TextMapGetter } from '@opentelemetry/api';

// The spans the service makes, through OpenTelemetry's API alone. Until the SDK is started
// (./sdk.ts, only when OTEL_* configures tracing) the API's tracer is its no-op one: a span is a
// shared non-recording object, no context is kept, nothing is propagated or sent.

/** The service's tracer (the API's proxy: the SDK's once started, its no-op one until then). */
export const tracer = trace.getTracer('marketplace-api');

/**
 * Runs `work` in a span of its own, a child of the active one (or of `parent`), and ends the span
 * when it settles: a throw marks it as an error (its type only: a message may quote input).
 */
export function inSpan<T>(
  name: string,
  options: { attributes?: Attributes; kind?: SpanKind; parent?: Context },
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = options.parent ?? context.active();
  return tracer.startActiveSpan(name, { attributes: options.attributes, kind: options.kind }, parent, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Marks `span` as failed by `error`'s kind (its name or code), never its message. */
export function failed(span: Span, error: unknown): void {
  const kind = (error as { code?: unknown } | null)?.code ?? (error as { name?: unknown } | null)?.name;
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('error.type', typeof kind === 'string' || typeof kind === 'number' ? String(kind) : 'Error');
}

/** W3C trace context headers (`traceparent`, `tracestate`) as text, for a carrier that is not a request. */
export interface TraceHeaders {
  traceparent?: string;
  tracestate?: string;
}

/** The active trace's headers, to continue it elsewhere (empty while tracing is off). */
export function traceHeaders(active: Context = context.active()): TraceHeaders {
  const carrier: TraceHeaders = {};
  propagation.inject(active, carrier);
  return carrier;
}

const fromHeaders: TextMapGetter<Headers> = {
  keys: (headers) => [...headers.keys()],
  get: (headers, key) => headers.get(key) ?? undefined,
};

/** The trace a request's `traceparent` (and `tracestate`) continues; the root context when none, or while tracing is off. */
export const continuedFrom = (headers: Headers): Context => propagation.extract(ROOT_CONTEXT, headers, fromHeaders);

/** The trace stored headers continue (a webhook event's: the request that made it). */
export const continuedFromText = (headers: TraceHeaders): Context => propagation.extract(ROOT_CONTEXT, headers);
