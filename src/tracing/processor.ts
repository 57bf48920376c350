// Kassa's span processor: every span started while a request is served carries its request id
// (`kassa.request_id`, from the logger's request scope: the id the response's x-request-id gives),
// and no span leaves with a secret. Attribute values are scrubbed as log lines are (tokens,
// checkouts' client secrets in paths), and an outgoing request keeps only its origin: a webhook
// endpoint's URL may carry the receiver's own credentials (Discord and Slack URLs do).
import { SpanKind, type AttributeValue } from '@opentelemetry/api';
import type { Span, SpanProcessor } from '@opentelemetry/sdk-trace';
import { requestScope, scrubSecrets } from '../logger.ts';
import { requestIdAttribute } from './spans.ts';

const outgoingUrlAttributes = new Set(['http.url', 'url.full']);
const outgoingPathAttributes = new Set(['http.target', 'url.path', 'url.query']);

function originOnly(value: string): string {
  try {
    return new URL(value).origin;
  } catch {
    return '[redacted]';
  }
}

function scrubbed(value: AttributeValue): AttributeValue {
  if (typeof value === 'string') return scrubSecrets(value);
  if (Array.isArray(value)) return value.map((item) => (typeof item === 'string' ? scrubSecrets(item) : item)) as AttributeValue;
  return value;
}

export class KassaSpanProcessor implements SpanProcessor {
  onStart(span: Span): void {
    const scope = requestScope.getStore();
    if (scope) span.setAttribute(requestIdAttribute, scope.requestId);
  }

  onEnding(span: Span): void {
    const outgoing = span.kind === SpanKind.CLIENT;
    for (const [key, value] of Object.entries(span.attributes)) {
      if (value === undefined) continue;
      let clean = scrubbed(value);
      if (outgoing && typeof value === 'string' && outgoingUrlAttributes.has(key)) clean = originOnly(value);
      else if (outgoing && outgoingPathAttributes.has(key)) clean = '[redacted]';
      if (clean !== value) span.setAttribute(key, clean);
    }
    const name = scrubSecrets(span.name);
    if (name !== span.name) span.updateName(name);
  }

  onEnd(): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
