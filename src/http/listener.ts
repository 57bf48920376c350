// Every request's way in: its request id, its client address and its log line, then the answer of
// its endpoint. An error no handler answered is logged and answered 500 with the request id.
import type { BlockList } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { requestScope, type Logger } from '../logger.ts';
import { restError } from '../rest/adapter.ts';
import { clientIpOf } from './client-ip.ts';
import { isClientDisconnect } from './disconnects.ts';
import type { Exchange } from './endpoints.ts';
import { requestIdOf, requestTarget } from './incoming.ts';
import type { Endpoint } from './router.ts';
import { send } from './send.ts';

export interface ListenerOptions {
  route(method: string, pathname: string): Endpoint;
  answer(exchange: Omit<Exchange, 'facts'>): Promise<void>;
  logger: Logger;
  trustedProxies: BlockList;
  /** False once the server is shutting down: each answer then closes its connection. */
  accepting(): boolean;
  /** Hears of every answered request, for the metrics. */
  answered(request: { method: string; endpoint: Endpoint; status: number; seconds: number; streamed: boolean }): void;
}

export function requestListener({ route, answer, logger, trustedProxies, accepting, answered }: ListenerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const requestId = requestIdOf(req);
    res.setHeader('x-request-id', requestId);
    if (!accepting()) res.setHeader('connection', 'close');
    const started = performance.now();
    const url = requestTarget(req.url ?? '/');
    const endpoint = route(req.method ?? 'GET', url.pathname);
    const environmentName = 'environment' in endpoint ? endpoint.environment : undefined;
    res.on('finish', () => {
      const streamed = String(res.getHeader('content-type') ?? '').startsWith('text/event-stream');
      answered({ method: req.method ?? 'GET', endpoint, status: res.statusCode, seconds: (performance.now() - started) / 1000, streamed });
      logger.info(
        { requestId, environment: environmentName, method: req.method, path: url.pathname, status: res.statusCode, ms: Math.round(performance.now() - started) },
        'request',
      );
    });
    let failed = false;
    res.on('close', () => {
      // Closed before it was finished, and not by a failure of ours: the client went away.
      if (!res.writableFinished && !failed) logger.debug({ requestId, environment: environmentName, method: req.method, path: url.pathname, ms: Math.round(performance.now() - started) }, 'client disconnected');
    });
    const clientIp = clientIpOf(req, trustedProxies);
    requestScope.run({ requestId, environment: environmentName ?? 'production' }, () => {
      answer({ req, res, url, endpoint, requestId, clientIp }).catch((error) => {
        // Logged as what it is when the response closes: nothing more can be sent to that client.
        if (isClientDisconnect(error, req, res)) return;
        failed = true;
        logger.error({ err: error, requestId }, 'unexpected error');
        if (!res.headersSent && !res.destroyed) send(res, restError(500, 'InternalServerError', `An unexpected error occurred. Quote request id ${requestId} when reporting it.`));
        else res.destroy();
      });
    });
  };
}
