// Token introspection (RFC 7662). The client authenticates and learns about its own tokens only:
// a token of another client, like an unknown, expired or revoked one, is `{"active": false}`.
import type { Environment } from '../context.ts';
import { authenticateClient } from './clients.ts';
import { InvalidRequest } from './errors.ts';
import { findToken, isActive } from './grants.ts';
import { formBody, json, type OAuthRequest } from './http.ts';
import { checkTokenTypeHint } from './revoke.ts';
import type { OAuthRoute } from './routes.ts';

async function introspect(environment: Environment, request: OAuthRequest, now: Date) {
  const form = formBody(request);
  const client = await authenticateClient(environment, request, form, now);
  const token = form.get('token');
  if (!token) throw new InvalidRequest('token is missing: send the access or refresh token to introspect.');
  checkTokenTypeHint(form);
  const found = await findToken(environment.prisma, token);
  if (!found || found.record.clientId !== client.id || !(await isActive(environment.prisma, found, now))) return json(200, { active: false });
  const { record, type } = found;
  const expiresAt = type === 'access_token' ? record.accessExpiresAt : record.refreshExpiresAt!;
  return json(200, {
    active: true,
    client_id: client.clientId,
    token_type: type,
    scope: record.scopes.join(' '),
    sub_type: record.subType,
    sub: record.subType === 'organization' ? record.organizationId : record.userId,
    aud: client.clientId,
    iss: environment.publicUrl,
    exp: Math.floor(expiresAt.getTime() / 1000),
    iat: Math.floor(record.createdAt.getTime() / 1000),
  });
}

export const introspectRoutes: OAuthRoute[] = [{ method: 'POST', path: '/v1/oauth2/introspect', handler: introspect }];
