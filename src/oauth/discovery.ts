// What the provider supports, said once: OpenID Connect Discovery 1.0 (`openid-configuration`),
// the same document as OAuth 2.0 Authorization Server Metadata (RFC 8414), and the JWKS of the
// ID token signing keys. Every value here is read from the code that enforces it.
import type { Environment } from '../context.ts';
import { allScopes } from '../auth/scopes.ts';
import { supportedGrantTypes, supportedResponseTypes, tokenEndpointAuthMethods } from './clients.ts';
import { prompts } from './authorization-request.ts';
import type { OAuthResponse } from './http.ts';
import type { OAuthRoute } from './routes.ts';
import { publishedKeys } from './signing-keys.ts';

/** The claims an ID token or userinfo answer may carry. */
const claimsSupported = ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'sub_type', 'name', 'email', 'email_verified'];

export function providerMetadata(environment: Environment) {
  const issuer = environment.publicUrl;
  return {
    issuer,
    authorization_endpoint: `${issuer}/oauth2/authorize`,
    token_endpoint: `${issuer}/v1/oauth2/token`,
    userinfo_endpoint: `${issuer}/v1/oauth2/userinfo`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    registration_endpoint: `${issuer}/v1/oauth2/register`,
    revocation_endpoint: `${issuer}/v1/oauth2/revoke`,
    introspection_endpoint: `${issuer}/v1/oauth2/introspect`,
    scopes_supported: [...allScopes],
    response_types_supported: [...supportedResponseTypes],
    response_modes_supported: ['query'],
    grant_types_supported: [...supportedGrantTypes],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: [environment.config.idTokenSigningAlgorithm],
    token_endpoint_auth_methods_supported: [...tokenEndpointAuthMethods],
    revocation_endpoint_auth_methods_supported: [...tokenEndpointAuthMethods],
    introspection_endpoint_auth_methods_supported: [...tokenEndpointAuthMethods],
    code_challenge_methods_supported: ['S256'],
    claims_supported: claimsSupported,
    prompt_values_supported: [...prompts],
    authorization_response_iss_parameter_supported: true,
    claims_parameter_supported: false,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    require_request_uri_registration: false,
  };
}

/** Public, and the same for everyone: relying parties may cache it for a while (so no `Pragma: no-cache`). */
function publicJson(body: unknown, maxAgeSeconds: number): OAuthResponse {
  return {
    status: 200,
    headers: { 'content-type': 'application/json', 'cache-control': `public, max-age=${maxAgeSeconds}`, 'access-control-allow-origin': '*' },
    body: JSON.stringify(body),
  };
}

async function openidConfiguration(environment: Environment): Promise<OAuthResponse> {
  return publicJson(providerMetadata(environment), 3600);
}

async function jwks(environment: Environment, _request: unknown, now: Date): Promise<OAuthResponse> {
  return publicJson({ keys: await publishedKeys(environment.prisma, now) }, 300);
}

export const discoveryRoutes: OAuthRoute[] = [
  { method: 'GET', path: '/.well-known/openid-configuration', handler: openidConfiguration },
  { method: 'GET', path: '/.well-known/oauth-authorization-server', handler: openidConfiguration },
  { method: 'GET', path: '/.well-known/jwks.json', handler: jwks },
];
