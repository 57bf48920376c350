// Token revocation (RFC 7009). The client authenticates; the answer is 200 whether or not the token
// was live, so the endpoint tells nobody which tokens exist. A client can revoke only its own
// tokens: another client's token is left alone, with the same answer.
import type { Environment } from '../context.ts';
import { authenticateClient } from './clients.ts';
import { InvalidRequest, OAuthError } from './errors.ts';
import { findToken, revokeFamily } from './grants.ts';
import { formBody, json, type OAuthRequest } from './http.ts';
import type { OAuthRoute } from './routes.ts';

/** RFC 7009 §2.1 and RFC 7662 §2.1: the hint, if any, names a token type the server knows. */
export function checkTokenTypeHint(form: URLSearchParams): void {
  const hint = form.get('token_type_hint');
  if (hint !== null && hint !== 'access_token' && hint !== 'refresh_token') {
    throw new OAuthError('unsupported_token_type', `token_type_hint "${hint}" is not supported: use access_token or refresh_token.`);
  }
}

async function revoke(environment: Environment, request: OAuthRequest, now: Date) {
  const form = formBody(request);
  const client = await authenticateClient(environment, request, form, now);
  const token = form.get('token');
  if (!token) throw new InvalidRequest('token is missing: send the access or refresh token to revoke.');
  checkTokenTypeHint(form);
  const found = await findToken(environment.prisma, token);
  if (found && found.record.clientId === client.id && found.record.revokedAt === null) await revokeFamily(environment, found.record.familyId, now);
  return json(200, {});
}

export const revokeRoutes: OAuthRoute[] = [{ method: 'POST', path: '/v1/oauth2/revoke', handler: revoke }];
