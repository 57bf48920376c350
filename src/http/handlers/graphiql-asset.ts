// GraphiQL's scripts and styles, served from this origin (pages/graphiql.ts).
import { graphiqlAsset } from '../../pages/graphiql.ts';
import type { EndpointHandler } from '../endpoints.ts';
import { singleHeader } from '../incoming.ts';
import { sendGraphiql } from '../send.ts';

/** A name GraphiQL does not have is answered as the REST API answers its path (`otherwise`). */
export function answerGraphiqlAsset(deps: { otherwise: EndpointHandler<'api'> }): EndpointHandler<'graphiql-asset'> {
  return async (exchange) => {
    const { req, res, endpoint } = exchange;
    const asset = await graphiqlAsset(endpoint.asset, singleHeader(req, 'accept-encoding'), singleHeader(req, 'if-none-match'));
    if (asset) return sendGraphiql(res, asset, req.method === 'HEAD');
    return deps.otherwise({ ...exchange, endpoint: { kind: 'api', environment: endpoint.environment, path: endpoint.path } });
  };
}
