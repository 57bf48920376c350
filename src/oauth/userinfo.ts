// The userinfo endpoint (OpenID Connect Core §5.3): the claims an OAuth access token's scopes release
// about its user. Only an access token from an OpenID Connect request (scope `openid`) is answered;
// any other token is refused as RFC 6750 §3.1 says, with a Bearer challenge.
import type { Environment } from '../context.ts';
import { resolvePrincipal } from '../auth/principals.ts';
import { bearerToken } from '../http/request.ts';
import { KassaError } from '../graphql/errors.ts';
import { OAuthError, InvalidToken } from './errors.ts';
import { json, oauthErrorResponse, type OAuthRequest, type OAuthResponse } from './http.ts';
import { identityClaims } from './id-token.ts';
import type { OAuthRoute } from './routes.ts';

class InsufficientScope extends OAuthError {
  constructor(description: string) {
    super('insufficient_scope', description, 403);
  }
}

async function oauthGrantOf(environment: Environment, request: OAuthRequest, now: Date) {
  if (!request.facts.authorization) throw new InvalidToken('Send the access token as "Authorization: Bearer <token>".');
  let principal;
  try {
    principal = await resolvePrincipal(environment, bearerToken(request.facts), now);
  } catch (error) {
    if (error instanceof KassaError) throw new InvalidToken('The access token is invalid, expired or revoked.');
    throw error;
  }
  if ((principal.kind !== 'organization' && principal.kind !== 'user') || principal.credential !== 'oauth') {
    throw new InvalidToken('userinfo answers OAuth access tokens only, not organization, personal or session tokens.');
  }
  if (!principal.scopes.has('openid')) throw new InsufficientScope('The access token was not granted the openid scope.');
  return principal.kind === 'organization'
    ? { subType: 'organization' as const, userId: principal.userId!, organizationId: principal.organizationId, scopes: [...principal.scopes] }
    : { subType: 'user' as const, userId: principal.userId, organizationId: null, scopes: [...principal.scopes] };
}

async function userinfo(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  try {
    const grant = await oauthGrantOf(environment, request, now);
    return json(200, await identityClaims(environment.prisma, grant));
  } catch (error) {
    if (error instanceof OAuthError) return oauthErrorResponse(error, 'Bearer');
    throw error;
  }
}

export const userinfoRoutes: OAuthRoute[] = [
  { method: 'GET', path: '/v1/oauth2/userinfo', handler: userinfo },
  { method: 'POST', path: '/v1/oauth2/userinfo', handler: userinfo },
];
