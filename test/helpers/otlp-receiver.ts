import { startBodyServer } from './receiver.js';

// An OpenTelemetry collector as far as the service can tell: a real OTLP/HTTP receiver on a real
// socket, accepting POST /v1/traces in OTLP's JSON encoding (what the service's exporter sends),
// and keeping every span it is sent, decoded.

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: number;
  /** The resource's attributes (service.name…). */
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** http://127.0.0.1:<port>: OTEL_EXPORTER_OTLP_ENDPOINT. */
  endpoint: string;
  spans: ReceivedSpan[];
  /** Every request body received, as sent (to look for what must never be in one). */
  bodies: string[];
  /** Requests received on any other path or method. */
  strays: string[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}

const valueOf = (v: OtlpValue): unknown =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue ?? v.arrayValue?.values?.map(valueOf);

const attributesOf = (list: { key: string; value: OtlpValue }[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, valueOf(a.value)]));

/** Spans from an ExportTraceServiceRequest in OTLP/JSON (ids as hex, as the JSON encoding has them). */
function spansOf(body: any): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((rs: any) => {
    const resource = attributesOf(rs.resource?.attributes);
    return (rs.scopeSpans ?? []).flatMap((ss: any) =>
      (ss.spans ?? []).map((s: any) => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId || undefined,
        name: s.name,
        kind: s.kind,
        attributes: attributesOf(s.attributes),
        status: s.status?.code ?? 0,
        resource,
      })),
    );
  });
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = {
    endpoint: '',
    spans: [],
    bodies: [],
    strays: [],
    close: () => server.close(),
  };
  const server = await startBodyServer((req, res, body) => {
    if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
      receiver.strays.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      res.writeHead(404).end();
      return;
    }
    receiver.bodies.push(body);
    receiver.spans.push(...spansOf(JSON.parse(body)));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  receiver.endpoint = `http://127.0.0.1:${server.port}`;
  return receiver;
}
