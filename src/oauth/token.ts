// The token endpoint (RFC 6749 §3.2): `authorization_code` and `refresh_token` grants, for an
// authenticated client. Answers are RFC 6749 §5.1 bodies, never cached.
import type { Environment } from '../context.ts';
import type { OAuthClient } from '../generated/prisma/client.ts';
import { authenticateClient } from './clients.ts';
import { InvalidRequest, UnauthorizedClient, UnsupportedGrantType } from './errors.ts';
import { accessTokenLifetimeSeconds, exchangeAuthorizationCode, refreshTokens, type IssuedTokens } from './grants.ts';
import { formBody, json, type OAuthRequest } from './http.ts';
import { issueIdToken } from './id-token.ts';
import type { OAuthRoute } from './routes.ts';

const grantTypes = ['authorization_code', 'refresh_token'] as const;
type GrantType = (typeof grantTypes)[number];

function checkGrantType(form: URLSearchParams): GrantType {
  const grantType = form.get('grant_type');
  if (!grantType) throw new InvalidRequest('grant_type is missing: use authorization_code or refresh_token.');
  if (!(grantTypes as readonly string[]).includes(grantType)) throw new UnsupportedGrantType(`grant_type "${grantType}" is not supported: use authorization_code or refresh_token.`);
  return grantType as GrantType;
}

function checkClientMayUseGrant(client: OAuthClient, grantType: GrantType): void {
  if (!client.grantTypes.includes(grantType)) throw new UnauthorizedClient(`This client is not registered for the ${grantType} grant.`);
}

async function tokenResponse(environment: Environment, client: OAuthClient, issued: IssuedTokens, now: Date) {
  const { record } = issued;
  const body: Record<string, unknown> = {
    access_token: issued.accessToken,
    token_type: 'Bearer',
    expires_in: accessTokenLifetimeSeconds,
    scope: record.scopes.join(' '),
  };
  // RFC 6749 §5.1: refresh_token is left out, not null, for a client without the refresh grant
  // (OAuth libraries refuse a refresh_token that is not a string).
  if (issued.refreshToken !== null) body.refresh_token = issued.refreshToken;
  if (record.scopes.includes('openid')) {
    const grant = { subType: record.subType as 'user' | 'organization', userId: record.userId, organizationId: record.organizationId, scopes: record.scopes };
    body.id_token = await issueIdToken(environment, { clientId: client.clientId, grant, nonce: issued.nonce, authTime: record.authTime }, now);
  }
  return json(200, body);
}

async function token(environment: Environment, request: OAuthRequest, now: Date) {
  const form = formBody(request);
  const client = await authenticateClient(environment, request, form, now);
  const grantType = checkGrantType(form);
  checkClientMayUseGrant(client, grantType);
  const issued =
    grantType === 'authorization_code'
      ? await exchangeAuthorizationCode(environment, client, { code: form.get('code'), redirectUri: form.get('redirect_uri'), codeVerifier: form.get('code_verifier') }, now)
      : await refreshTokens(environment, client, { refreshToken: form.get('refresh_token'), scope: form.get('scope') }, now);
  return tokenResponse(environment, client, issued, now);
}

export const tokenRoutes: OAuthRoute[] = [{ method: 'POST', path: '/v1/oauth2/token', handler: token }];
