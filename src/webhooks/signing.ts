// Standard Webhooks signing (https://www.standardwebhooks.com): the receiver checks
// `v1,<base64 HMAC-SHA256(key, "<webhook-id>.<webhook-timestamp>.<body>")>`. The key is the UTF-8
// bytes of the endpoint's secret string, which is what `validateEvent` of the official client
// derives from the secret it is given.
import { createHmac } from 'node:crypto';

export interface SignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The headers that let the receiver verify `body` as event `id`, sent at `at`. */
export function signatureHeaders(secret: string, id: string, at: Date, body: string): SignatureHeaders {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const signature = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
