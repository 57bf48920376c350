// What a user's consent produces: a one-time authorization code, exchanged for a family of tokens
// (an access token and a refresh token, replaced together on each refresh). The rules of the
// exchange are the token endpoint's steps (RFC 6749 §4.1.3 and §6, RFC 7636 §4.6, RFC 9700 §2.2.2
// and §4.14): each is a named check that refuses with invalid_grant.
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Environment } from '../context.ts';
import type { Db } from '../db/client.ts';
import type { OAuthAuthorizationCode, OAuthClient, OAuthToken } from '../generated/prisma/client.ts';
import { announcePrincipalChange } from '../auth/principal-cache.ts';
import { generateToken, hashToken } from '../auth/tokens.ts';
import type { AuthorizationRequest } from './authorization-request.ts';
import { InvalidGrant, InvalidRequest, InvalidScope } from './errors.ts';

/** RFC 6749 §4.1.2 says at most 10 minutes. */
export const codeLifetimeSeconds = 300;
export const accessTokenLifetimeSeconds = 3600;
export const refreshTokenLifetimeSeconds = 30 * 24 * 3600;

const pkceVerifier = /^[A-Za-z0-9\-._~]{43,128}$/;

/** Issues the code for an approved request; `organizationId` is the organization the user chose (sub_type organization). */
export async function issueAuthorizationCode(
  environment: Environment,
  request: AuthorizationRequest,
  consent: { userId: string; organizationId: string | null; authTime: Date },
  now: Date,
): Promise<string> {
  const code = generateToken(environment.config.tokenPrefix, 'ac');
  await environment.prisma.oAuthAuthorizationCode.create({
    data: {
      codeHash: hashToken(code),
      clientId: request.client.id,
      userId: consent.userId,
      organizationId: request.subType === 'organization' ? consent.organizationId : null,
      subType: request.subType,
      scopes: request.scopes,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      codeChallengeMethod: request.codeChallengeMethod,
      nonce: request.nonce,
      authTime: consent.authTime,
      expiresAt: new Date(now.getTime() + codeLifetimeSeconds * 1000),
    },
  });
  return code;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string | null;
  record: OAuthToken;
  /** The nonce of the authorization request, for the ID token of the first exchange. */
  nonce: string | null;
}

function newTokens(environment: Environment, client: OAuthClient, now: Date) {
  const accessToken = generateToken(environment.config.tokenPrefix, 'at');
  const refreshToken = client.grantTypes.includes('refresh_token') ? generateToken(environment.config.tokenPrefix, 'rt') : null;
  return {
    accessToken,
    refreshToken,
    data: {
      // The issue time is the `now` the expiries count from: introspection's exp - iat is the lifetime exactly.
      createdAt: now,
      accessTokenHash: hashToken(accessToken),
      accessExpiresAt: new Date(now.getTime() + accessTokenLifetimeSeconds * 1000),
      refreshTokenHash: refreshToken && hashToken(refreshToken),
      refreshExpiresAt: refreshToken && new Date(now.getTime() + refreshTokenLifetimeSeconds * 1000),
    },
  };
}

/** Ends every token of the given families and tells the principal caches. */
async function revokeWhere(tx: Db, where: { familyId: { in: string[] } }, now: Date): Promise<string[]> {
  const rows = await tx.oAuthToken.findMany({ where: { ...where, revokedAt: null }, select: { id: true, accessTokenHash: true } });
  if (rows.length === 0) return [];
  await tx.oAuthToken.updateMany({ where: { id: { in: rows.map((r) => r.id) } }, data: { revokedAt: now } });
  const hashes = rows.map((r) => r.accessTokenHash);
  await announcePrincipalChange(tx, hashes);
  return hashes;
}

// ---- authorization_code grant -------------------------------------------------------------

function checkCodeIssuedToClient(code: OAuthAuthorizationCode, client: OAuthClient): void {
  if (code.clientId !== client.id) throw new InvalidGrant('The authorization code was issued to another client.');
}

function checkCodeNotExpired(code: OAuthAuthorizationCode, now: Date): void {
  if (code.expiresAt <= now) throw new InvalidGrant('The authorization code has expired: start the authorization again.');
}

function checkRedirectUriMatches(code: OAuthAuthorizationCode, redirectUri: string | null): void {
  if (redirectUri === null) throw new InvalidRequest('redirect_uri is missing: send the redirect_uri of the authorization request.');
  if (redirectUri !== code.redirectUri) throw new InvalidGrant('redirect_uri differs from the one of the authorization request.');
}

/** RFC 7636 §4.6, and RFC 9700 §2.1.1: a verifier for a code issued without a challenge is refused too. */
function checkPkceVerifier(code: OAuthAuthorizationCode, verifier: string | null): void {
  if (code.codeChallenge === null) {
    if (verifier !== null) throw new InvalidGrant('code_verifier was sent, but the authorization request had no code_challenge.');
    return;
  }
  if (verifier === null) throw new InvalidGrant('code_verifier is missing: the authorization request carried a code_challenge.');
  if (!pkceVerifier.test(verifier)) throw new InvalidGrant('code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" or "~".');
  const computed = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const expected = Buffer.from(code.codeChallenge);
  if (computed.length !== expected.length || !timingSafeEqual(computed, expected)) throw new InvalidGrant('code_verifier does not match the code_challenge.');
}

/** Whether an organization grant's user still belongs to its organization; a user grant always stands. */
async function stillMember(db: Db, grant: { subType: string; userId: string; organizationId: string | null }): Promise<boolean> {
  if (grant.subType !== 'organization') return true;
  return grant.organizationId !== null && (await db.organizationMember.count({ where: { organizationId: grant.organizationId, userId: grant.userId } })) > 0;
}

/** The grant's organization is still the user's: a user who left it cannot keep acting for it. */
async function checkStillMember(tx: Db, grant: { subType: string; userId: string; organizationId: string | null }): Promise<void> {
  if (!(await stillMember(tx, grant))) throw new InvalidGrant('The user no longer belongs to the organization this grant was made for.');
}

/**
 * Exchanges a code for tokens, once. The code row is locked for the exchange, so of two concurrent
 * exchanges one gets the tokens and the other finds the code used; a used code is a replay, and
 * every token issued from it is revoked (RFC 6749 §4.1.2, RFC 9700 §4.5).
 */
export async function exchangeAuthorizationCode(
  environment: Environment,
  client: OAuthClient,
  params: { code: string | null; redirectUri: string | null; codeVerifier: string | null },
  now: Date,
): Promise<IssuedTokens> {
  if (!params.code) throw new InvalidRequest('code is missing.');
  const codeHash = hashToken(params.code);
  const outcome = await environment.prisma.$transaction(async (tx) => {
    const [locked] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM oauth_authorization_codes WHERE code_hash = ${codeHash} FOR UPDATE`;
    if (!locked) throw new InvalidGrant('The authorization code is unknown.');
    const code = await tx.oAuthAuthorizationCode.findUniqueOrThrow({ where: { id: locked.id } });
    checkCodeIssuedToClient(code, client);
    if (code.usedAt !== null) {
      // Every token descending from the code: the first one and all it was refreshed into.
      const families = await tx.oAuthToken.findMany({ where: { authorizationCodeId: code.id }, select: { familyId: true } });
      const revoked = await revokeWhere(tx as Db, { familyId: { in: families.map((f) => f.familyId) } }, now);
      return { replayed: true as const, revoked };
    }
    checkCodeNotExpired(code, now);
    checkRedirectUriMatches(code, params.redirectUri);
    checkPkceVerifier(code, params.codeVerifier);
    await checkStillMember(tx as Db, code);
    await tx.oAuthAuthorizationCode.update({ where: { id: code.id }, data: { usedAt: now } });
    const tokens = newTokens(environment, client, now);
    const record = await tx.oAuthToken.create({
      data: {
        familyId: randomUUID(),
        clientId: client.id,
        userId: code.userId,
        organizationId: code.organizationId,
        subType: code.subType,
        scopes: code.scopes,
        authorizationCodeId: code.id,
        authTime: code.authTime,
        ...tokens.data,
      },
    });
    return { replayed: false as const, issued: { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, record, nonce: code.nonce } };
  });
  if (outcome.replayed) {
    environment.principals.forget(outcome.revoked);
    throw new InvalidGrant('The authorization code was already used; every token issued from it has been revoked.');
  }
  return outcome.issued;
}

// ---- refresh_token grant ------------------------------------------------------------------

function checkRefreshIssuedToClient(token: OAuthToken, client: OAuthClient): void {
  if (token.clientId !== client.id) throw new InvalidGrant('The refresh token was issued to another client.');
}

function checkRefreshNotExpired(token: OAuthToken, now: Date): void {
  if (token.revokedAt !== null) throw new InvalidGrant('The refresh token has been revoked.');
  if (token.refreshExpiresAt === null || token.refreshExpiresAt <= now) throw new InvalidGrant('The refresh token has expired: authorize again.');
}

/** RFC 6749 §6: a refresh may narrow the scopes, never widen them. */
function checkScopeNotWidened(token: OAuthToken, requested: string | null): string[] {
  if (requested === null) return token.scopes;
  const scopes = [...new Set(requested.split(' ').filter(Boolean))];
  if (scopes.length === 0) throw new InvalidScope('scope is empty: omit it to keep the granted scopes.');
  const beyond = scopes.filter((s) => !token.scopes.includes(s));
  if (beyond.length) throw new InvalidScope(`The refresh asks for scope(s) never granted: ${beyond.join(' ')}.`);
  return scopes;
}

/**
 * Replaces a family's current tokens with new ones. A refresh token that was already exchanged is
 * a sign of theft (RFC 9700 §4.14.2): the whole family is revoked, the thief's tokens with the
 * client's.
 */
export async function refreshTokens(
  environment: Environment,
  client: OAuthClient,
  params: { refreshToken: string | null; scope: string | null },
  now: Date,
): Promise<IssuedTokens> {
  if (!params.refreshToken) throw new InvalidRequest('refresh_token is missing.');
  const refreshHash = hashToken(params.refreshToken);
  const outcome = await environment.prisma.$transaction(async (tx) => {
    const [locked] = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM oauth_tokens WHERE refresh_token_hash = ${refreshHash} FOR UPDATE`;
    if (!locked) throw new InvalidGrant('The refresh token is unknown.');
    const token = await tx.oAuthToken.findUniqueOrThrow({ where: { id: locked.id } });
    checkRefreshIssuedToClient(token, client);
    if (token.rotatedAt !== null) {
      const revoked = await revokeWhere(tx as Db, { familyId: { in: [token.familyId] } }, now);
      return { reused: true as const, revoked };
    }
    checkRefreshNotExpired(token, now);
    const scopes = checkScopeNotWidened(token, params.scope);
    await checkStillMember(tx as Db, token);
    await tx.oAuthToken.update({ where: { id: token.id }, data: { rotatedAt: now } });
    const tokens = newTokens(environment, client, now);
    const record = await tx.oAuthToken.create({
      data: {
        familyId: token.familyId,
        clientId: client.id,
        userId: token.userId,
        organizationId: token.organizationId,
        subType: token.subType,
        scopes,
        authTime: token.authTime,
        ...tokens.data,
      },
    });
    return { reused: false as const, issued: { accessToken: tokens.accessToken, refreshToken: tokens.refreshToken, record, nonce: null } };
  });
  if (outcome.reused) {
    environment.principals.forget(outcome.revoked);
    throw new InvalidGrant('The refresh token was already used; every token of its grant has been revoked.');
  }
  return outcome.issued;
}

// ---- revocation and introspection -----------------------------------------------------------

/** The token row an access or refresh token belongs to, with which of the two it is. */
export async function findToken(prisma: Db, token: string): Promise<{ record: OAuthToken; type: 'access_token' | 'refresh_token' } | null> {
  const hash = hashToken(token);
  const record = await prisma.oAuthToken.findFirst({ where: { OR: [{ accessTokenHash: hash }, { refreshTokenHash: hash }] } });
  if (!record) return null;
  return { record, type: record.accessTokenHash === hash ? 'access_token' : 'refresh_token' };
}

/** RFC 7009 §2.1: revoking either token of a grant ends the grant, every token of its family. */
export async function revokeFamily(environment: Environment, familyId: string, now: Date): Promise<void> {
  const revoked = await environment.prisma.$transaction((tx) => revokeWhere(tx as Db, { familyId: { in: [familyId] } }, now));
  environment.principals.forget(revoked);
}

/**
 * Whether a token is live now: not revoked, not expired, (for a refresh token) not yet exchanged,
 * and, for an organization grant, its user still a member: what the API itself would accept.
 */
export async function isActive(db: Db, found: { record: OAuthToken; type: 'access_token' | 'refresh_token' }, now: Date): Promise<boolean> {
  const { record, type } = found;
  if (record.revokedAt !== null) return false;
  const unexpired = type === 'access_token' ? record.accessExpiresAt > now : record.rotatedAt === null && record.refreshExpiresAt !== null && record.refreshExpiresAt > now;
  return unexpired && (await stillMember(db, record));
}
