import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { ATTR_HTTP_REQUEST_METHOD, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_HTTP_ROUTE, ATTR_URL_PATH } from '@opentelemetry/semantic-conventions';
import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { continuedFrom, tracer } from '../tracing/spans.js';
import type { RequestState } from './request-state.js';

// A request's trace, for the observe stage (./observe.ts) when tracing is on: a server span per
// request, continuing the trace of its `traceparent` (W3C trace context) if it has one, with
// child spans for GraphQL's phases (parse, validate, execute, subscribe) through Yoga's
// instrumentation, which wraps each phase (and every stage's hooks in it) in the span's context:
// whatever runs there (the gate, the response cache, a statement) is its child. With tracing
// off the stage has none of this, and a request is not touched.

type Instrumentation = NonNullable<Plugin['instrumentation']>;
type Wrapped = () => Promise<void> | void;

/** Runs `run`, and ends `span` once what it answers settles (at once when it is no promise). */
function endWhenSettled(span: Span, run: Wrapped): Promise<void> | void {
  let outcome: Promise<void> | void;
  try {
    outcome = run();
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
    throw error;
  }
  // Yoga's phases answer a value, a promise, or a promise-like of their own making.
  if (typeof (outcome as PromiseLike<void> | undefined)?.then !== 'function') return void span.end();
  return Promise.resolve(outcome).finally(() => span.end());
}

/** `wrapped` in a child span of the active one, named `name`. */
const phase = (name: string) => (_payload: unknown, wrapped: Wrapped) => {
  const span = tracer.startSpan(name);
  return endWhenSettled(span, () => context.with(trace.setSpan(context.active(), span), wrapped));
};

interface Traced {
  span: Span;
  /** The GraphQL operation a /graphql request ran, `query Products`: the span's name. */
  operation?: string;
}

export function createRequestSpans() {
  const traced = new WeakMap<Request, Traced>();

  const instrumentation: Instrumentation = {
    request({ request }, wrapped) {
      const parent = continuedFrom(request.headers);
      const span = tracer.startSpan(
        request.method,
        // The path without its query string: that may carry search terms, or a key.
        { kind: SpanKind.SERVER, attributes: { [ATTR_HTTP_REQUEST_METHOD]: request.method, [ATTR_URL_PATH]: new URL(request.url).pathname.slice(0, 200) } },
        parent,
      );
      traced.set(request, { span });
      return endWhenSettled(span, () => context.with(trace.setSpan(parent, span), wrapped));
    },
    parse: phase('graphql.parse'),
    validate: phase('graphql.validate'),
    execute: phase('graphql.execute'),
    subscribe: phase('graphql.subscribe'),
  };

  /** The operation run, on its execute (or subscribe) span; a /graphql request is named by it (a batch by its first). */
  const named = ({ args }: { args: { document: Parameters<typeof getOperationAST>[0]; operationName?: string | null; contextValue: unknown } }) => {
    const operation = getOperationAST(args.document, args.operationName ?? undefined);
    if (!operation) return;
    const name = operation.name?.value;
    trace.getActiveSpan()?.setAttributes({ 'graphql.operation.type': operation.operation, ...(name ? { 'graphql.operation.name': name } : {}) });
    const state = args.contextValue as RequestState & { request?: Request };
    const request = state.request && traced.get(state.request);
    if (request && name && state.route?.face === 'graphql' && !request.operation) request.operation = `${operation.operation} ${name}`;
  };

  return {
    plugin: { instrumentation, onExecute: named, onSubscribe: named } satisfies Plugin,
    /** The request's span once answered: named by its operation or route (low-cardinality), with its status. */
    answered(request: Request, route: string, status: number, requestId: string): { traceId?: string; spanId?: string } {
      const found = traced.get(request);
      if (!found) return {};
      const { span, operation } = found;
      span.updateName(operation ?? `${request.method} ${route}`);
      span.setAttributes({ [ATTR_HTTP_ROUTE]: route, [ATTR_HTTP_RESPONSE_STATUS_CODE]: status, 'marketplace.request_id': requestId });
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      const { traceId, spanId } = span.spanContext();
      return { traceId, spanId };
    },
  };
}
