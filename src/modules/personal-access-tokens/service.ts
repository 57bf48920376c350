// Personal access tokens: a user's own tokens for scripts and tools (`<prefix>_pat_…`). A token acts
// as its user, for every organization they belong to, limited to its scopes. Its plaintext exists
// only in the create response; the database keeps its SHA-256.
import type { Config } from '../../config.ts';
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { generateToken, hashToken } from '../../auth/tokens.ts';
import { announcePrincipalChange } from '../../auth/principal-cache.ts';
import { identityScopes, resourceScopes, type Scope } from '../../auth/scopes.ts';
import { NotPermittedError, ResourceNotFoundError, ValidationIssues } from '../../graphql/errors.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';

/** What a personal token may hold: the Core API's scopes, and reading the user's own account. */
export const personalAccessTokenScopes: readonly Scope[] = [...resourceScopes, 'user:read'];
export const maxCommentLength = 200;

export interface PersonalAccessTokenInput {
  comment: string;
  scopes: string[];
  /** Null: the token works until it is revoked. */
  expiresAt?: Date | null;
}

/** Scopes must come from the catalogue, and sign-in scopes (openid, profile, email) belong to OAuth clients only. */
function checkScopes(issues: ValidationIssues, scopes: string[]) {
  const loc = ['input', 'scopes'];
  if (scopes.length === 0) issues.add(loc, 'Grant at least one scope.');
  const signInOnly = scopes.filter((s) => (identityScopes as readonly string[]).includes(s) && s !== 'user:read');
  if (signInOnly.length) {
    issues.add(loc, `Scope(s) ${signInOnly.join(', ')} are for OAuth clients signing a user in, not for a personal access token; use user:read to read the account.`);
  }
  const unknown = scopes.filter((s) => !(personalAccessTokenScopes as readonly string[]).includes(s) && !signInOnly.includes(s));
  if (unknown.length) issues.add(loc, `Unknown scope(s) for a personal access token: ${unknown.join(', ')}. Known scopes: ${personalAccessTokenScopes.join(', ')}.`);
}

function checkComment(issues: ValidationIssues, comment: string) {
  if (comment.length > maxCommentLength) issues.add(['input', 'comment'], `String should have at most ${maxCommentLength} characters`, 'string_too_long');
}

/** An expiry already past would mint a token that never works. */
function checkExpiry(issues: ValidationIssues, expiresAt: Date | null | undefined, now: Date) {
  if (expiresAt && expiresAt <= now) issues.add(['input', 'expiresAt'], 'The expiry must be in the future (or null for a token that works until revoked).');
}

export async function issuePersonalAccessToken(prisma: Db, config: Config, userId: string, input: PersonalAccessTokenInput, now: Date) {
  const issues = new ValidationIssues();
  checkComment(issues, input.comment);
  checkScopes(issues, input.scopes);
  checkExpiry(issues, input.expiresAt, now);
  issues.throwIfAny();
  const token = generateToken(config.tokenPrefix, 'pat');
  const record = await prisma.personalAccessToken.create({
    data: { userId, comment: input.comment, scopes: [...new Set(input.scopes)], expiresAt: input.expiresAt ?? null, tokenHash: hashToken(token) },
  });
  return { token, record };
}

export async function listUserTokens(prisma: Db, userId: string, args: PageArgs & { includeRevoked?: boolean | null }, query: object = {}) {
  const window = pageWindow(args);
  const where = { userId, ...(args.includeRevoked ? {} : { revokedAt: null }) };
  const [items, total] = await Promise.all([
    prisma.personalAccessToken.findMany({ ...query, where, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], ...window }),
    prisma.personalAccessToken.count({ where }),
  ]);
  return toPage(items, total, args);
}

/**
 * Revokes one of the user's live tokens and announces it in the same transaction. Another user's
 * token, or one already revoked, is answered as not found. The caller forgets the hash in its own
 * process once this returns.
 */
export async function revokeUserToken(prisma: Db, userId: string, id: string, now: Date, query: object = {}) {
  return prisma.$transaction(async (tx) => {
    const { count } = await tx.personalAccessToken.updateMany({ where: { id, userId, revokedAt: null }, data: { revokedAt: now } });
    if (count === 0) throw new ResourceNotFoundError('Personal access token not found.');
    const token = await tx.personalAccessToken.findUniqueOrThrow({ ...query, where: { id } });
    await announcePrincipalChange(tx as Db, [token.tokenHash]);
    return token;
  });
}

/** The user acting: personal tokens are managed by their user only (the field's auth rules admit sessions only). */
function actingUserId(ctx: Context): string {
  if (ctx.principal.kind !== 'user') throw new NotPermittedError('Only a user has personal access tokens.');
  return ctx.principal.userId;
}

export function createPersonalAccessToken(ctx: Context, input: PersonalAccessTokenInput) {
  return issuePersonalAccessToken(ctx.prisma, ctx.environment.config, actingUserId(ctx), input, ctx.now());
}

export function listPersonalAccessTokens(ctx: Context, args: PageArgs & { includeRevoked?: boolean | null }, query: object) {
  return listUserTokens(ctx.prisma, actingUserId(ctx), args, query);
}

export async function revokePersonalAccessToken(ctx: Context, id: string, query: object) {
  const revoked = await revokeUserToken(ctx.prisma, actingUserId(ctx), id, ctx.now(), query);
  ctx.environment.principals.forget([revoked.tokenHash]);
  return revoked;
}
