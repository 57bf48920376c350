// The ID token (OpenID Connect Core §2) and the claims about the user that it and the userinfo
// endpoint share. The subject is what the grant is about: the organization the user chose, or the
// user. Which claims are released follows the granted scopes (§5.4): `email` gives email and
// email_verified, `profile` gives name when the user has one.
import { SignJWT } from 'jose';
import type { Environment } from '../context.ts';
import type { Db } from '../db/client.ts';
import { activeSigningKey, idTokenLifetimeSeconds } from './signing-keys.ts';

export interface GrantSubject {
  subType: 'user' | 'organization';
  userId: string;
  organizationId: string | null;
  scopes: readonly string[];
}

/** `sub`: the organization for an organization-scoped grant, else the user (as introspection says too). */
export function subjectOf(grant: GrantSubject): string {
  return grant.subType === 'organization' ? grant.organizationId! : grant.userId;
}

/** The claims the grant's scopes release about its user, `sub` first. */
export async function identityClaims(prisma: Db, grant: GrantSubject): Promise<Record<string, unknown>> {
  const claims: Record<string, unknown> = { sub: subjectOf(grant) };
  const wantsEmail = grant.scopes.includes('email');
  const wantsProfile = grant.scopes.includes('profile');
  if (!wantsEmail && !wantsProfile) return claims;
  const user = await prisma.user.findUniqueOrThrow({ where: { id: grant.userId }, select: { email: true, emailVerified: true, name: true } });
  if (wantsProfile && user.name !== null) claims.name = user.name;
  if (wantsEmail) {
    claims.email = user.email;
    claims.email_verified = user.emailVerified;
  }
  return claims;
}

const seconds = (date: Date) => Math.floor(date.getTime() / 1000);

/** A signed ID token for `clientId`, issued by the environment at `now`. */
export async function issueIdToken(
  environment: Environment,
  issue: { clientId: string; grant: GrantSubject; nonce: string | null; authTime: Date },
  now: Date,
): Promise<string> {
  const key = await activeSigningKey(environment);
  const claims = await identityClaims(environment.prisma, issue.grant);
  const payload: Record<string, unknown> = { ...claims, auth_time: seconds(issue.authTime), sub_type: issue.grant.subType };
  if (issue.nonce !== null) payload.nonce = issue.nonce;
  const issuedAt = seconds(now);
  return new SignJWT(payload)
    .setProtectedHeader({ alg: key.algorithm, kid: key.kid, typ: 'JWT' })
    .setIssuer(environment.publicUrl)
    .setAudience(issue.clientId)
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + idTokenLifetimeSeconds)
    .sign(key.privateKey);
}
