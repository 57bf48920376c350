// The REST API under /v1: its documentation without a token, then each route through the REST
// adapter (rest/adapter.ts), which runs the route's GraphQL operation.
import type { Context } from '../../context.ts';
import { KassaError } from '../../graphql/errors.ts';
import { restError } from '../../rest/adapter.ts';
import type { ApiReference } from '../../rest/reference.ts';
import { admitted, type EdgeEnvironments, type EndpointHandler } from '../endpoints.ts';
import { maxBodyBytes, readBody, singleHeader } from '../incoming.ts';
import { requestContext } from '../principal.ts';
import { send, sendStream } from '../send.ts';

/** The license key endpoints anyone may call without a token, limited per client address. */
const licenseEndpoint = /^\/v1\/customer-portal\/license-keys\/(validate|activate|deactivate)$/;

export function answerApi(deps: { environments: EdgeEnvironments; clock: () => Date; reference: ApiReference }): EndpointHandler<'api'> {
  return async (exchange) => {
    const { req, res, endpoint, url, facts, clientIp } = exchange;
    const served = deps.environments[endpoint.environment];
    const { path } = endpoint;
    const method = req.method ?? 'GET';
    // The REST documentation needs no token: answered before credentials are read.
    const documentation = deps.reference.serve({ method, path, ifNoneMatch: req.headers['if-none-match'] }, served.environment);
    if (documentation) {
      res.writeHead(documentation.status, documentation.headers).end(documentation.body);
      return;
    }
    let context: Context;
    try {
      context = await requestContext(served.environment, exchange, deps.clock);
    } catch (error) {
      if (!(error instanceof KassaError)) throw error;
      return send(res, restError(error.status, error.restError, error.message));
    }
    const { limiter } = served;
    const licenseCall = licenseEndpoint.test(path) && req.method === 'POST';
    if (!admitted(res, limiter, await limiter.charge([licenseCall ? limiter.license(clientIp) : null, limiter.principal(context.principal)], deps.clock().getTime()))) return;
    const body = await readBody(req);
    if (body === null) return send(res, restError(413, 'PayloadTooLarge', `The request body exceeds ${maxBodyBytes} bytes.`));
    const response = await served.rest(
      { method, path, query: url.searchParams, contentType: facts.mediaType, body, idempotencyKey: singleHeader(req, 'idempotency-key') },
      context,
    );
    if (response.stream) return sendStream(res, { ...response, stream: response.stream });
    send(res, response);
  };
}
