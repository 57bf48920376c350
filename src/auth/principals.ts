// Principals from credentials: which organization, user or customer a bearer token stands for,
// looked up once and kept in the environment's principal cache (principal-cache.ts), and whether
// a principal is still live for a long-running stream.
import type { Db } from '../db/client.ts';
import type { Environment, Principal } from '../context.ts';
import { UnauthenticatedError } from '../graphql/errors.ts';
import { allScopes, type Scope } from './scopes.ts';
import { hashToken } from './tokens.ts';

/**
 * Resolves the principal behind a bearer token (http/request.ts `bearerToken`). No token means
 * anonymous; null, an Authorization header that is not a bearer token, and a token that names no
 * live token of this environment are refused outright.
 */
export async function resolvePrincipal(environment: Environment, token: string | null | undefined, now: Date): Promise<Principal> {
  if (token === undefined) return { kind: 'anonymous' };
  if (token === null) throw new UnauthenticatedError('The Authorization header must be "Bearer <token>".');
  const tokenHash = hashToken(token);
  const { principals, prisma } = environment;
  const cached = principals.get(tokenHash, now);
  if (cached) {
    await recordUse(prisma, cached, now);
    return cached.principal;
  }
  const generation = principals.currentGeneration;
  const found = await lookUpPrincipal(environment, token, tokenHash, now);
  if (!found) throw new UnauthenticatedError('The access token is invalid, expired or revoked.');
  principals.keep(tokenHash, found, generation);
  return found.principal;
}

/** Last use of an organization or personal token is kept to the minute: enough to tell a forgotten token from a busy one. */
async function recordUse(prisma: Db, entry: { principal: Principal; lastUsedAt: number | null }, now: Date) {
  const { principal } = entry;
  if (principal.kind !== 'organization' && principal.kind !== 'user') return;
  if (principal.credential !== 'oat' && principal.credential !== 'pat') return;
  if (entry.lastUsedAt !== null && now.getTime() - entry.lastUsedAt <= 60_000) return;
  entry.lastUsedAt = now.getTime();
  if (principal.credential === 'oat') await prisma.organizationAccessToken.update({ where: { id: principal.tokenId }, data: { lastUsedAt: now } });
  else await prisma.personalAccessToken.update({ where: { id: principal.tokenId }, data: { lastUsedAt: now } });
}

const memberships = { select: { memberships: { select: { organizationId: true } } } } as const;

async function lookUpPrincipal(environment: Environment, token: string, tokenHash: string, now: Date) {
  const { prisma, config } = environment;
  const live = { revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] };
  const kind = token.startsWith(`${config.tokenPrefix}_`) ? token.slice(config.tokenPrefix.length + 1).split('_', 1)[0] : '';
  switch (kind) {
    case 'oat': {
      const oat = await prisma.organizationAccessToken.findFirst({ where: { tokenHash, ...live } });
      if (!oat) return null;
      const entry = {
        principal: { kind: 'organization', organizationId: oat.organizationId, credential: 'oat', tokenId: oat.id, clientId: null, userId: null, scopes: new Set(oat.scopes as Scope[]) } as Principal,
        validUntil: oat.expiresAt?.getTime() ?? null,
        lastUsedAt: oat.lastUsedAt?.getTime() ?? null,
      };
      await recordUse(prisma, entry, now);
      return entry;
    }
    case 'us': {
      const session = await prisma.userSession.findFirst({ where: { tokenHash, revokedAt: null, expiresAt: { gt: now } }, include: { user: memberships } });
      if (!session) return null;
      const principal: Principal = {
        kind: 'user',
        userId: session.userId,
        credential: 'session',
        tokenId: session.id,
        clientId: null,
        organizationIds: session.user.memberships.map((m) => m.organizationId),
        scopes: new Set(allScopes),
      };
      return { principal, validUntil: session.expiresAt.getTime(), lastUsedAt: null };
    }
    case 'pat': {
      const pat = await prisma.personalAccessToken.findFirst({ where: { tokenHash, ...live }, include: { user: memberships } });
      if (!pat) return null;
      const entry = {
        principal: {
          kind: 'user',
          userId: pat.userId,
          credential: 'pat',
          tokenId: pat.id,
          clientId: null,
          organizationIds: pat.user.memberships.map((m) => m.organizationId),
          scopes: new Set(pat.scopes as Scope[]),
        } as Principal,
        validUntil: pat.expiresAt?.getTime() ?? null,
        lastUsedAt: pat.lastUsedAt?.getTime() ?? null,
      };
      await recordUse(prisma, entry, now);
      return entry;
    }
    case 'at': {
      const grant = await prisma.oAuthToken.findFirst({
        where: { accessTokenHash: tokenHash, revokedAt: null, accessExpiresAt: { gt: now }, client: { deletedAt: null } },
        include: { client: { select: { clientId: true } }, user: memberships },
      });
      if (!grant) return null;
      const organizationIds = grant.user.memberships.map((m) => m.organizationId);
      const scopes = new Set(grant.scopes as Scope[]);
      const validUntil = grant.accessExpiresAt.getTime();
      if (grant.subType === 'organization') {
        // The grant stands only while its user still belongs to the organization it was made for.
        if (!grant.organizationId || !organizationIds.includes(grant.organizationId)) return null;
        const principal: Principal = { kind: 'organization', organizationId: grant.organizationId, credential: 'oauth', tokenId: grant.id, clientId: grant.client.clientId, userId: grant.userId, scopes };
        return { principal, validUntil, lastUsedAt: null };
      }
      const principal: Principal = { kind: 'user', userId: grant.userId, credential: 'oauth', tokenId: grant.id, clientId: grant.client.clientId, organizationIds, scopes };
      return { principal, validUntil, lastUsedAt: null };
    }
    case 'cst': {
      const session = await prisma.customerSession.findFirst({
        where: { tokenHash, revokedAt: null, expiresAt: { gt: now }, customer: { deletedAt: null } },
        select: { id: true, customerId: true, checkoutId: true, expiresAt: true, customer: { select: { organizationId: true } } },
      });
      if (!session) return null;
      // No Core scope: the Customer Portal admits a customer by principal kind, and Core never does.
      const principal: Principal = {
        kind: 'customer',
        customerId: session.customerId,
        organizationId: session.customer.organizationId,
        sessionId: session.id,
        checkoutId: session.checkoutId,
        scopes: new Set(),
      };
      return { principal, validUntil: session.expiresAt.getTime(), lastUsedAt: null };
    }
    default:
      return null;
  }
}

/**
 * Whether the token behind `principal` still stands: not revoked or expired, and, for a user, still
 * a member of the organizations it reached. For a long-lived answer (a live event stream) that was
 * authorized once at its start.
 */
export async function principalStillLive(environment: Environment, principal: Principal, now: Date): Promise<boolean> {
  const { prisma } = environment;
  const live = { revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] };
  const memberOf = async (userId: string) => new Set((await prisma.organizationMember.findMany({ where: { userId }, select: { organizationId: true } })).map((m) => m.organizationId));
  switch (principal.kind) {
    case 'organization':
      if (principal.credential === 'oat') return (await prisma.organizationAccessToken.count({ where: { id: principal.tokenId, ...live } })) > 0;
      return (
        (await prisma.oAuthToken.count({ where: { id: principal.tokenId, revokedAt: null, accessExpiresAt: { gt: now }, client: { deletedAt: null } } })) > 0 &&
        (await memberOf(principal.userId!)).has(principal.organizationId)
      );
    case 'user': {
      const standing =
        principal.credential === 'session'
          ? await prisma.userSession.count({ where: { id: principal.tokenId, revokedAt: null, expiresAt: { gt: now } } })
          : principal.credential === 'pat'
            ? await prisma.personalAccessToken.count({ where: { id: principal.tokenId, ...live } })
            : await prisma.oAuthToken.count({ where: { id: principal.tokenId, revokedAt: null, accessExpiresAt: { gt: now }, client: { deletedAt: null } } });
      if (!standing) return false;
      const organizations = await memberOf(principal.userId);
      return principal.organizationIds.every((id) => organizations.has(id));
    }
    case 'customer':
      return (await prisma.customerSession.count({ where: { id: principal.sessionId, revokedAt: null, expiresAt: { gt: now }, customer: { deletedAt: null } } })) > 0;
    case 'system':
      return true;
    default:
      return false;
  }
}

