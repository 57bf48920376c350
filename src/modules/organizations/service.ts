// Organizations and their access tokens. A token's plaintext exists only in the create response;
// the database keeps its SHA-256.
import type { Config } from '../../config.ts';
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { generateToken, hashToken } from '../../auth/tokens.ts';
import { announcePrincipalChange, type PrincipalCache } from '../../auth/principal-cache.ts';
import { type Scope, isResourceScope, resourceScopes } from '../../auth/scopes.ts';
import { ResourceNotFoundError, ValidationIssues } from '../../graphql/errors.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { organizationFilter, owningOrganization } from './access.ts';

export function slugify(name: string): string {
  return name.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40) || 'organization';
}

/**
 * A new organization owned by `ownerId`, under the first free slug of its name. Two organizations
 * of one name created at once both look free at the same slug; the one that loses the unique
 * index tries the next.
 */
export async function createOrganization(prisma: Db, input: { name: string; ownerId: string }) {
  const base = slugify(input.name);
  for (let n = 1; ; n++) {
    const slug = n === 1 ? base : `${base}-${n}`;
    if (await prisma.organization.findUnique({ where: { slug }, select: { id: true } })) continue;
    try {
      return await prisma.$transaction(async (tx) => {
        const organization = await tx.organization.create({ data: { name: input.name, slug, members: { create: { userId: input.ownerId } } } });
        // The owner's sessions now reach one more organization.
        const sessions = await tx.userSession.findMany({ where: { userId: input.ownerId, revokedAt: null }, select: { tokenHash: true } });
        await announcePrincipalChange(tx as Db, sessions.map((s) => s.tokenHash));
        return organization;
      });
    } catch (error) {
      if ((error as { code?: string }).code !== 'P2002') throw error;
    }
  }
}

export async function listOrganizations(ctx: Context, args: PageArgs, query: object) {
  const window = pageWindow(args);
  const where = { id: organizationFilter(ctx) };
  const [items, total] = await Promise.all([
    ctx.prisma.organization.findMany({ ...query, where, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], ...window }),
    ctx.prisma.organization.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getOrganization(ctx: Context, id: string, query: object) {
  const organization = await ctx.prisma.organization.findFirst({ ...query, where: { id, AND: { id: organizationFilter(ctx) } } });
  if (!organization) throw new ResourceNotFoundError('Organization not found.');
  return organization;
}

export interface AccessTokenInput {
  organizationId?: string | null;
  comment: string;
  scopes: string[];
  expiresAt?: Date | null;
}

export async function issueAccessToken(prisma: Db, config: Config, organizationId: string, input: AccessTokenInput, now: Date) {
  const issues = new ValidationIssues();
  const unknown = input.scopes.filter((s) => !isResourceScope(s));
  if (unknown.length) issues.add(['input', 'scopes'], `Unknown scope(s) for an organization token: ${unknown.join(', ')}. Known scopes: ${resourceScopes.join(', ')}.`);
  if (input.scopes.length === 0) issues.add(['input', 'scopes'], 'Grant at least one scope.');
  if (input.comment.length > 200) issues.add(['input', 'comment'], 'String should have at most 200 characters', 'string_too_long');
  if (input.expiresAt && input.expiresAt <= now) issues.add(['input', 'expiresAt'], 'The expiry must be in the future.');
  issues.throwIfAny();
  const token = generateToken(config.tokenPrefix, 'oat');
  const record = await prisma.organizationAccessToken.create({
    data: {
      organizationId,
      comment: input.comment,
      scopes: [...new Set(input.scopes as Scope[])],
      expiresAt: input.expiresAt ?? null,
      tokenHash: hashToken(token),
    },
  });
  return { token, record };
}

export function createAccessToken(ctx: Context, input: AccessTokenInput) {
  const organizationId = owningOrganization(ctx, input.organizationId, ['input', 'organizationId']);
  return issueAccessToken(ctx.prisma, ctx.environment.config, organizationId, input, ctx.now());
}

export async function listAccessTokens(ctx: Context, args: PageArgs & { organizationId?: string[] | null }, query: object) {
  const window = pageWindow(args);
  const where = { organizationId: organizationFilter(ctx, args.organizationId), revokedAt: null };
  const [items, total] = await Promise.all([
    ctx.prisma.organizationAccessToken.findMany({ ...query, where, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], ...window }),
    ctx.prisma.organizationAccessToken.count({ where }),
  ]);
  return toPage(items, total, args);
}

/**
 * Ends a user's membership of an organization. Every live credential of the user may have reached
 * it (sessions, personal access tokens, OAuth access tokens, user- or organization-scoped), so
 * each is announced in the same transaction and forgotten by this process's cache after the
 * commit: a cached principal never outlives the membership. Returns whether there was one.
 */
export async function endMembership(prisma: Db, principals: PrincipalCache, input: { organizationId: string; userId: string }): Promise<boolean> {
  const ended = await prisma.$transaction(async (tx) => {
    const { count } = await tx.organizationMember.deleteMany({ where: input });
    if (count === 0) return null;
    const live = { userId: input.userId, revokedAt: null };
    const [sessions, personal, oauth] = await Promise.all([
      tx.userSession.findMany({ where: live, select: { tokenHash: true } }),
      tx.personalAccessToken.findMany({ where: live, select: { tokenHash: true } }),
      tx.oAuthToken.findMany({ where: live, select: { accessTokenHash: true } }),
    ]);
    const hashes = [...sessions.map((s) => s.tokenHash), ...personal.map((p) => p.tokenHash), ...oauth.map((o) => o.accessTokenHash)];
    await announcePrincipalChange(tx as Db, hashes);
    return hashes;
  });
  if (ended) principals.forget(ended);
  return ended !== null;
}

export async function revokeAccessToken(ctx: Context, id: string, query: object) {
  const where = { id, organizationId: organizationFilter(ctx), revokedAt: null };
  const revoked = await ctx.prisma.$transaction(async (tx) => {
    const { count } = await tx.organizationAccessToken.updateMany({ where, data: { revokedAt: ctx.now() } });
    if (count === 0) throw new ResourceNotFoundError('Organization access token not found.');
    const token = await tx.organizationAccessToken.findUniqueOrThrow({ ...query, where: { id } });
    await announcePrincipalChange(tx as Db, [token.tokenHash]);
    return token;
  });
  ctx.environment.principals.forget([revoked.tokenHash]);
  return revoked;
}
