// The OAuth 2.0 / OpenID Connect provider, assembled: each endpoint module registers its routes
// (src/oauth/routes.ts) when imported here.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Environment } from '../context.ts';
import type { Logger } from '../logger.ts';
import type { RequestFacts } from '../http/request.ts';
import { OAuthError } from './errors.ts';
import { json, oauthErrorResponse, refuseNul, type OAuthResponse } from './http.ts';
import { matchOAuthRoute } from './routes.ts';
import './authorize.ts';
import './token.ts';
import './revoke.ts';
import './introspect.ts';
import './registration.ts';
import './userinfo.ts';
import './discovery.ts';
import '../pages/sign-in.ts';
import '../pages/checkout.ts';
import '../pages/portal.ts';

/** The largest body an OAuth endpoint or page reads. */
export const maxOAuthBodyBytes = 64 * 1024;

export interface ProviderRequest {
  req: IncomingMessage;
  res: ServerResponse;
  /** The path under the environment's base. */
  path: string;
  query: URLSearchParams;
  /** What the request's headers say, parsed at the edge. */
  facts: RequestFacts;
  requestId: string;
  clientIp: string;
  readBody(limit: number): Promise<Buffer | null>;
}

/** Serves one request of the provider, whatever happens: an OAuth error becomes its RFC body, anything else a logged 500. */
export async function serveProvider(environment: Environment, request: ProviderRequest, now: Date, logger: Logger): Promise<void> {
  const { req, res } = request;
  const method = req.method ?? 'GET';
  let response: OAuthResponse;
  const match = matchOAuthRoute(method, request.path);
  if (match === null) response = json(404, { error: 'NotFound', detail: `No endpoint at ${method} ${request.path}.` });
  else if (match === 'method-not-allowed') response = json(405, { error: 'MethodNotAllowed', detail: `${method} is not allowed on ${request.path}.` });
  else {
    const body = await request.readBody(maxOAuthBodyBytes);
    if (body === null) response = json(413, { error: 'invalid_request', error_description: `The request body exceeds ${maxOAuthBodyBytes} bytes.` });
    else {
      try {
        refuseNul(request.query);
        response = await match.route.handler(
          environment,
          { method, path: request.path, params: match.params, query: request.query, facts: request.facts, body, clientIp: request.clientIp, requestId: request.requestId },
          now,
        );
      } catch (error) {
        if (!(error instanceof OAuthError)) {
          logger.error({ err: error, requestId: request.requestId }, 'unexpected error');
          error = new OAuthError('server_error', `An unexpected error occurred. Quote request id ${request.requestId} when reporting it.`, 500);
        }
        response = oauthErrorResponse(error as OAuthError);
      }
    }
  }
  res.writeHead(response.status, response.headers);
  res.end(method === 'HEAD' ? undefined : response.body);
}
