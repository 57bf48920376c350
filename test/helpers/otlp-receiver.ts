// An OTLP/HTTP trace receiver on 127.0.0.1, as a collector would run one: it takes the JSON
// encoding (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) at /v1/traces and keeps every span it is sent.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean | unknown[]>;
  serviceName: string | undefined;
}

export interface OtlpReceiver {
  /** What OTEL_EXPORTER_OTLP_ENDPOINT is set to: the exporter adds /v1/traces. */
  url: string;
  spans: ReceivedSpan[];
  /** Every request it was sent, by path. */
  requests: string[];
  close(): Promise<void>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: OtlpValue[] } };

function valueOf(value: OtlpValue): string | number | boolean | unknown[] {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  return (value.arrayValue?.values ?? []).map(valueOf);
}

const attributesOf = (list: { key: string; value: OtlpValue }[] = []) => Object.fromEntries(list.map(({ key, value }) => [key, valueOf(value)]));

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const requests: string[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    requests.push(`${req.method} ${req.url}`);
    if (req.url !== '/v1/traces' || !String(req.headers['content-type']).startsWith('application/json')) {
      res.writeHead(415).end();
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    for (const resourceSpans of body.resourceSpans ?? []) {
      const resource = attributesOf(resourceSpans.resource?.attributes);
      for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
        for (const span of scopeSpans.spans ?? []) {
          spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId || undefined,
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes),
            serviceName: resource['service.name'] as string | undefined,
          });
        }
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
