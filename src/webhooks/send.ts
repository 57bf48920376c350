// One HTTP POST to a webhook endpoint, as the delivery log records it. The connection goes only
// to an address the environment's destination policy allows (checked after DNS resolution), the
// whole exchange is bounded by the timeout, redirects are not followed, and only the first 2 KB
// of the answer are kept.
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { addressRefusal, guardedLookup, type DestinationPolicy } from './destinations.ts';

export const responseExcerptBytes = 2048;

export interface SendResult {
  /** The HTTP status, or null when no answer came (refused, unreachable, timed out). */
  httpCode: number | null;
  /** The start of the answer's body, or what went wrong before an answer came. */
  response: string | null;
  durationMs: number;
}

/** Connection pools of one environment: a pooled connection was opened under its own policy only. */
export interface Agents {
  http: http.Agent;
  https: https.Agent;
}

export function newAgents(): Agents {
  return { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
}

export async function send(
  target: string,
  body: string,
  headers: Record<string, string>,
  options: { policy: DestinationPolicy; timeoutMs: number; agents: Agents },
): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return { httpCode: null, response: 'The endpoint URL is not a valid URL: not delivered', durationMs: 0 };
  }
  // A literal address is never looked up, so it is checked here.
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const refused = isIP(host) ? addressRefusal(host, options.policy) : null;
  if (refused) return { httpCode: null, response: `${host} is ${refused}: not delivered`, durationMs: 0 };
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { httpCode: null, response: `${url.protocol} is not http or https: not delivered`, durationMs: 0 };

  const secure = url.protocol === 'https:';
  const payload = Buffer.from(body, 'utf8');
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve({ ...result, durationMs: elapsed() });
    };
    let request: http.ClientRequest;
    const deadline = setTimeout(() => {
      request.destroy();
      finish({ httpCode: null, response: `Timed out: no complete answer within ${options.timeoutMs} ms.` });
    }, options.timeoutMs);
    // `pooled`: on a kept-alive connection, which the receiver may have closed just as it was reused.
    const post = (pooled: boolean) => {
      request = (secure ? https : http).request(url, {
        method: 'POST',
        agent: pooled ? (secure ? options.agents.https : options.agents.http) : false,
        lookup: guardedLookup(options.policy),
        headers: { 'content-type': 'application/json', 'content-length': payload.length, 'user-agent': 'Kassa-Webhooks/1', ...headers },
      });
      let answered = false;
      request.on('error', (error: NodeJS.ErrnoException) => {
        if (settled) return;
        // A reused connection the receiver had closed (its idle timeout) is reset before any answer:
        // the request never reached it, so it is sent again once, on a new connection.
        if (pooled && !answered && request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE')) return post(false);
        finish({ httpCode: null, response: error.code === 'EDESTINATIONREFUSED' ? error.message : `Connection failed: ${error.code ?? error.message}` });
      });
      request.on('response', (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => finish({ httpCode: response.statusCode ?? null, response: excerpt(Buffer.concat(chunks)) });
        response.on('data', (chunk: Buffer) => {
          chunks.push(chunk.subarray(0, responseExcerptBytes - size));
          size += chunk.length;
          // The status is known and the excerpt full: the rest is not read.
          if (size >= responseExcerptBytes) {
            done();
            response.destroy();
          }
        });
        response.on('end', done);
        response.on('close', done);
      });
      request.end(payload);
    };
    post(true);
  });
}

/** Text a database column can hold: valid UTF-8 (a cut character is replaced), no NUL. */
function excerpt(bytes: Buffer): string | null {
  if (bytes.length === 0) return null;
  return bytes.toString('utf8').replace(/\u0000/g, '');
}
