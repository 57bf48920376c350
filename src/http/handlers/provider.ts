// The OAuth provider's endpoints and the hosted pages: the provider answers the parsed request and
// the edge writes its answer.
import type { Logger } from '../../logger.ts';
import type { Provider } from '../../oauth/provider.ts';
import type { EdgeEnvironments, EndpointHandler } from '../endpoints.ts';
import { readBody } from '../incoming.ts';

export function answerProvider(deps: { environments: EdgeEnvironments; provider: Provider; clock: () => Date; logger: Logger }): EndpointHandler<'provider'> {
  return async ({ req, res, endpoint, url, facts, requestId, clientIp }) => {
    const method = req.method ?? 'GET';
    const request = { method, path: endpoint.path, query: url.searchParams, facts, requestId, clientIp, readBody: (limit: number) => readBody(req, limit) };
    const answer = await deps.provider(deps.environments[endpoint.environment].environment, request, deps.clock(), deps.logger);
    res.writeHead(answer.status, answer.headers);
    res.end(method === 'HEAD' ? undefined : answer.body);
  };
}
