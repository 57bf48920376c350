// GET /metrics, the operators' Prometheus metrics. Never public: on the main port only to a request
// bearing METRICS_TOKEN (a 404, as for any unknown path, when no token is configured); without a
// token on the listener METRICS_PORT opens, which serves nothing else.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from '../../logger.ts';
import type { Metrics } from '../../observability/metrics.ts';
import { restError } from '../../rest/adapter.ts';
import type { EndpointHandler } from '../endpoints.ts';
import { bearerToken } from '../request.ts';
import { send } from '../send.ts';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether `presented` is the token. Both are hashed first, so the comparison takes the same time whatever either holds. */
export function isMetricsToken(presented: string | null | undefined, token: string): boolean {
  return typeof presented === 'string' && timingSafeEqual(digest(presented), digest(token));
}

async function sendMetrics(req: IncomingMessage, res: ServerResponse, metrics: Metrics): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    return send(res, { ...restError(405, 'MethodNotAllowed', `${req.method} is not allowed on /metrics.`), headers: { allow: 'GET, HEAD' } });
  }
  const { contentType, body } = await metrics.scrape();
  res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : body);
}

/** /metrics on the main port. */
export function answerMetrics(deps: { metrics: Metrics; token: string | null }): EndpointHandler<'metrics'> {
  const { metrics, token } = deps;
  return async ({ req, res, facts }) => {
    if (token === null) return send(res, restError(404, 'ResourceNotFound', 'No endpoint at /metrics.'));
    if (!isMetricsToken(bearerToken(facts), token)) {
      return send(res, restError(401, 'Unauthorized', 'The metrics need the metrics token: send it as "Authorization: Bearer <METRICS_TOKEN>".'));
    }
    return sendMetrics(req, res, metrics);
  };
}

/** The listener METRICS_PORT opens: /metrics to anyone who can reach it (it binds to METRICS_HOST), nothing else. */
export function metricsListener(metrics: Metrics, logger: Logger): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const answered = path === '/metrics' ? sendMetrics(req, res, metrics) : Promise.resolve(send(res, restError(404, 'ResourceNotFound', `No endpoint at ${path}. This listener serves /metrics only.`)));
    answered.catch((error) => {
      logger.error({ err: error }, 'serving the metrics failed');
      if (!res.headersSent) send(res, restError(500, 'InternalServerError', 'The metrics could not be read.'));
      else res.destroy();
    });
  };
}
