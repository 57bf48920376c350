// The request context: built once per request, the same for GraphQL and REST. Services read it;
// nothing below this module reads HTTP headers.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Config, EnvironmentName } from './config.ts';
import type { Db } from './db/client.ts';
import type { LiveEvents } from './events/live.ts';
import type { PaymentProcessor } from './modules/payments/processor.ts';
import { hashToken } from './auth/tokens.ts';
import type { PrincipalCache } from './auth/principal-cache.ts';
import { UnauthenticatedError } from './graphql/errors.ts';
import { type Scope, allScopes } from './auth/scopes.ts';

export interface Environment {
  name: EnvironmentName;
  prisma: Db;
  config: Config;
  /** Charges payments; null where no processor is configured (checkouts that need payment are refused). */
  paymentProcessor: PaymentProcessor | null;
  /** Where this environment is reached from outside, e.g. `https://pay.example.com/sandbox`. */
  publicUrl: string;
  /** Principals of tokens already resolved (see principal-cache.ts for why it is exact). */
  principals: PrincipalCache;
  /** The live stream of the environment's committed events (GraphQL `coreEvents`). */
  live: LiveEvents;
}

export type Principal =
  | { kind: 'anonymous' }
  | { kind: 'organization'; organizationId: string; tokenId: string; scopes: ReadonlySet<Scope> }
  | { kind: 'user'; userId: string; sessionId: string; organizationIds: string[]; scopes: ReadonlySet<Scope> }
  /** `checkoutId`: a session handed to a checkout's buyer, which reaches only what that checkout bought. */
  | { kind: 'customer'; customerId: string; organizationId: string; sessionId: string; checkoutId: string | null; scopes: ReadonlySet<Scope> }
  /** Kassa itself acting for an organization (rendering event payloads, background jobs); never from a token. */
  | { kind: 'system'; organizationId: string; scopes: ReadonlySet<Scope> };

export interface Context {
  environment: Environment;
  prisma: Db;
  principal: Principal;
  requestId: string;
  clientIp: string;
  now(): Date;
}

/** Request-scoped values the logger stamps on every line written while serving the request. */
export const requestScope = new AsyncLocalStorage<{ requestId: string; environment: EnvironmentName }>();

export function bearerToken(authorization: string | undefined): string | undefined | null {
  if (authorization === undefined || authorization === '') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  return match ? match[1] : null;
}

/**
 * Resolves the principal behind an `Authorization` header. No header means anonymous; a header
 * that names no live token of this environment is refused outright.
 */
export async function resolvePrincipal(environment: Environment, authorization: string | undefined, now: Date): Promise<Principal> {
  const token = bearerToken(authorization);
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

/** Last use of an organization token is kept to the minute: enough to tell a forgotten token from a busy one. */
async function recordUse(prisma: Db, entry: { principal: Principal; lastUsedAt: number | null }, now: Date) {
  if (entry.principal.kind !== 'organization' || (entry.lastUsedAt !== null && now.getTime() - entry.lastUsedAt <= 60_000)) return;
  entry.lastUsedAt = now.getTime();
  await prisma.organizationAccessToken.update({ where: { id: entry.principal.tokenId }, data: { lastUsedAt: now } });
}

async function lookUpPrincipal(environment: Environment, token: string, tokenHash: string, now: Date) {
  const { prisma, config } = environment;
  const live = { revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] };
  if (token.startsWith(`${config.tokenPrefix}_oat_`)) {
    const oat = await prisma.organizationAccessToken.findFirst({ where: { tokenHash, ...live } });
    if (!oat) return null;
    const entry = {
      principal: { kind: 'organization', organizationId: oat.organizationId, tokenId: oat.id, scopes: new Set(oat.scopes as Scope[]) } as Principal,
      validUntil: oat.expiresAt?.getTime() ?? null,
      lastUsedAt: oat.lastUsedAt?.getTime() ?? null,
    };
    await recordUse(prisma, entry, now);
    return entry;
  }
  if (token.startsWith(`${config.tokenPrefix}_us_`)) {
    const session = await prisma.userSession.findFirst({
      where: { tokenHash, revokedAt: null, expiresAt: { gt: now } },
      include: { user: { select: { memberships: { select: { organizationId: true } } } } },
    });
    if (!session) return null;
    const principal: Principal = {
      kind: 'user',
      userId: session.userId,
      sessionId: session.id,
      organizationIds: session.user.memberships.map((m) => m.organizationId),
      scopes: new Set(allScopes),
    };
    return { principal, validUntil: session.expiresAt.getTime(), lastUsedAt: null };
  }
  if (token.startsWith(`${config.tokenPrefix}_cst_`)) {
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
  return null;
}

/**
 * Whether the token behind `principal` still stands: not revoked or expired, and, for a user, still
 * a member of the organizations it reached. For a long-lived answer (a live event stream) that was
 * authorized once at its start.
 */
export async function principalStillLive(environment: Environment, principal: Principal, now: Date): Promise<boolean> {
  const { prisma } = environment;
  switch (principal.kind) {
    case 'organization':
      return (await prisma.organizationAccessToken.count({ where: { id: principal.tokenId, revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] } })) > 0;
    case 'user': {
      const session = await prisma.userSession.findFirst({
        where: { id: principal.sessionId, revokedAt: null, expiresAt: { gt: now } },
        select: { user: { select: { memberships: { select: { organizationId: true } } } } },
      });
      const memberOf = new Set(session?.user.memberships.map((m) => m.organizationId));
      return session !== null && principal.organizationIds.every((id) => memberOf.has(id));
    }
    case 'customer':
      return (await prisma.customerSession.count({ where: { id: principal.sessionId, revokedAt: null, expiresAt: { gt: now }, customer: { deletedAt: null } } })) > 0;
    case 'system':
      return true;
    default:
      return false;
  }
}

/** The context Kassa acts in on its own, for one organization: background jobs, event rendering. */
export function systemContext(environment: Environment, prisma: Db, organizationId: string, now: () => Date, requestId: string): Context {
  return { environment, prisma, principal: { kind: 'system', organizationId, scopes: new Set(allScopes) }, requestId, clientIp: '', now };
}
