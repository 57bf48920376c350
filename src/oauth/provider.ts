// The OAuth 2.0 / OpenID Connect provider and the hosted pages, answering parsed requests: the
// endpoints (and pages) it serves are given to createProvider by the composition (server.ts).
import type { Environment } from '../context.ts';
import type { RequestFacts } from '../http/request.ts';
import type { Logger } from '../logger.ts';
import { OAuthError } from './errors.ts';
import { json, oauthErrorResponse, refuseNul, type OAuthResponse } from './http.ts';
import { matchOAuthRoute, oauthRouteTable, type OAuthRoute } from './routes.ts';

/** The largest body an OAuth endpoint or page reads. */
export const maxOAuthBodyBytes = 64 * 1024;

export interface ProviderRequest {
  method: string;
  /** The path under the environment's base. */
  path: string;
  query: URLSearchParams;
  /** What the request's headers say, parsed at the edge. */
  facts: RequestFacts;
  requestId: string;
  clientIp: string;
  /** The body, or null when it exceeds `limit` bytes. */
  readBody(limit: number): Promise<Buffer | null>;
}

export type Provider = (environment: Environment, request: ProviderRequest, now: Date, logger: Logger) => Promise<OAuthResponse>;

/** The provider over `routes`; each request is answered whatever happens: an OAuth error becomes its RFC body, anything else a logged 500. */
export function createProvider(routes: readonly OAuthRoute[]): Provider {
  const table = oauthRouteTable(routes);
  return async (environment, request, now, logger) => {
    const { method } = request;
    const match = matchOAuthRoute(table, method, request.path);
    if (match === null) return json(404, { error: 'ResourceNotFound', detail: `No endpoint at ${method} ${request.path}.` });
    if (match === 'method-not-allowed') return json(405, { error: 'MethodNotAllowed', detail: `${method} is not allowed on ${request.path}.` });
    const body = await request.readBody(maxOAuthBodyBytes);
    if (body === null) return json(413, { error: 'invalid_request', error_description: `The request body exceeds ${maxOAuthBodyBytes} bytes.` });
    try {
      refuseNul(request.query);
      return await match.route.handler(
        environment,
        { method, path: request.path, params: match.params, query: request.query, facts: request.facts, body, clientIp: request.clientIp, requestId: request.requestId },
        now,
      );
    } catch (error) {
      if (!(error instanceof OAuthError)) {
        logger.error({ err: error, requestId: request.requestId }, 'unexpected error');
        error = new OAuthError('server_error', `An unexpected error occurred. Quote request id ${request.requestId} when reporting it.`, 500);
      }
      return oauthErrorResponse(error as OAuthError);
    }
  };
}
