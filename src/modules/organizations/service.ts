// Organizations and their access tokens. A token's plaintext exists only in the create response;
// the database keeps its SHA-256. An organization's settings are JSON columns in the wire's own
// keys; docs/selling.md says which of them Kassa acts on and which it only keeps.
import type { Config } from '../../config.ts';
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { generateToken, hashToken } from '../../auth/tokens.ts';
import { announcePrincipalChange, type PrincipalCache } from '../../auth/principal-cache.ts';
import { type Scope, isResourceScope, resourceScopes } from '../../auth/scopes.ts';
import { recordEvents } from '../../events/outbox.ts';
import { NotPermittedError, RequestValidationError, ResourceNotFoundError, ValidationIssues, type Loc } from '../../graphql/errors.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { sortingOrderBy } from '../../graphql/sorting.ts';
import { isEmailAddress } from '../../email/address.ts';
import { organizationFilter, owningOrganization } from './access.ts';

export const organizationSortProperties = ['created_at', 'slug', 'name'] as const;

export function slugify(name: string): string {
  return name.toLowerCase().normalize('NFKD').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40) || 'organization';
}

/**
 * A new organization owned by `ownerId`, under the first free slug of its name (kassa bootstrap).
 * Two organizations of one name created at once both look free at the same slug; the one that
 * loses the unique index tries the next.
 */
export async function createOrganization(prisma: Db, input: { name: string; ownerId: string }) {
  const base = slugify(input.name);
  for (let n = 1; ; n++) {
    const slug = n === 1 ? base : `${base}-${n}`;
    if (await prisma.organization.findUnique({ where: { slug }, select: { id: true } })) continue;
    try {
      const { organization } = await insertOrganization(prisma, { name: input.name, slug }, input.ownerId);
      return organization;
    } catch (error) {
      if (!isSlugTaken(error)) throw error;
    }
  }
}

const isSlugTaken = (error: unknown) => (error as { code?: string }).code === 'P2002';

/**
 * The organization with its owner as member, in one transaction. Every live credential of the
 * owner that acts as the user (sessions, personal and user-scoped OAuth tokens) now reaches one
 * more organization, so each is announced; the caller forgets the returned hashes after the commit.
 */
async function insertOrganization(prisma: Db, data: Omit<Prisma.OrganizationCreateInput, 'members'>, ownerId: string, query: object = {}) {
  return prisma.$transaction(async (tx) => {
    const created = await tx.organization.create({ data: { ...data, members: { create: { userId: ownerId } } }, select: { id: true } });
    const credentials = await userCredentialHashes(tx as Db, ownerId);
    await announcePrincipalChange(tx as Db, credentials);
    const organization = await tx.organization.findUniqueOrThrow({ ...query, where: { id: created.id } });
    return { organization, credentials };
  });
}

/** The hashes of every live credential that acts as the user: sessions, personal access tokens, OAuth tokens. */
async function userCredentialHashes(tx: Db, userId: string): Promise<string[]> {
  const live = { userId, revokedAt: null };
  const [sessions, personal, oauth] = await Promise.all([
    tx.userSession.findMany({ where: live, select: { tokenHash: true } }),
    tx.personalAccessToken.findMany({ where: live, select: { tokenHash: true } }),
    tx.oAuthToken.findMany({ where: live, select: { accessTokenHash: true } }),
  ]);
  return [...sessions.map((s) => s.tokenHash), ...personal.map((p) => p.tokenHash), ...oauth.map((o) => o.accessTokenHash)];
}

export interface OrganizationListArgs extends PageArgs {
  slug?: string | null;
  sorting?: string[] | null;
}

export async function listOrganizations(ctx: Context, args: OrganizationListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.OrganizationWhereInput = { id: organizationFilter(ctx), ...(args.slug != null ? { slug: args.slug } : {}) };
  const orderBy = sortingOrderBy<(typeof organizationSortProperties)[number]>(args.sorting?.length ? args.sorting : ['created_at'], (property, sort) =>
    property === 'created_at' ? { createdAt: sort } : { [property]: sort },
  );
  const [items, total] = await Promise.all([
    ctx.prisma.organization.findMany({ ...query, where, orderBy: orderBy as Prisma.OrganizationOrderByWithRelationInput[], ...window }),
    ctx.prisma.organization.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getOrganization(ctx: Context, id: string, query: object) {
  const organization = await ctx.prisma.organization.findFirst({ ...query, where: { id, AND: { id: organizationFilter(ctx) } } });
  if (!organization) throw new ResourceNotFoundError('Organization not found.');
  return organization;
}

// ---------------------------------------------------------------------------------------------
// The organization's profile and settings

/** The settings as stored and sent: the wire's own keys. */
export interface SubscriptionSettings {
  allow_multiple_subscriptions: boolean;
  allow_customer_updates: boolean;
  proration_behavior: 'prorate' | 'invoice';
}

export interface SocialLinkInput {
  platform: string;
  url: string;
}

export interface OrganizationDetailsInput {
  about: string;
  productDescription: string;
  intendedUse: string;
  customerAcquisition: string[];
  futureAnnualRevenue: number;
  switching?: boolean | null;
  switchingFrom?: string | null;
  previousAnnualRevenue?: number | null;
}

/** OrganizationUpdate: only the fields given change; a settings object replaces the stored one whole. */
export interface OrganizationProfileInput {
  name?: string | null;
  avatarUrl?: string | null;
  email?: string | null;
  website?: string | null;
  socials?: SocialLinkInput[] | null;
  details?: OrganizationDetailsInput | null;
  featureSettings?: { issueFundingEnabled?: boolean | null } | null;
  subscriptionSettings?: { allowMultipleSubscriptions: boolean; allowCustomerUpdates: boolean; prorationBehavior: 'prorate' | 'invoice' } | null;
  notificationSettings?: { newOrder: boolean; newSubscription: boolean } | null;
}

export interface OrganizationCreateInput extends OrganizationProfileInput {
  name: string;
  slug: string;
}

const slugPattern = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const maxUrlLength = 2083;
const maxTextLength = 5000;

function checkUrl(issues: ValidationIssues, loc: Loc, url: string | null | undefined): void {
  if (url == null) return;
  let parsed: URL | null = null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || !parsed.hostname || url.length > maxUrlLength) {
    issues.add(loc, `Input should be a valid URL: http or https, at most ${maxUrlLength} characters`, 'url_parsing');
  }
}

function checkText(issues: ValidationIssues, loc: Loc, text: string): void {
  if (text.trim().length === 0) issues.add(loc, 'String should have at least 1 character', 'string_too_short');
  else if (text.length > maxTextLength) issues.add(loc, `String should have at most ${maxTextLength} characters`, 'string_too_long');
}

/** Every fault of a profile, at once; nothing is written while there is one. */
function checkProfile(issues: ValidationIssues, input: OrganizationProfileInput): void {
  if (input.name === null) issues.add(['input', 'name'], 'An organization always has a name.', 'missing');
  else if (input.name !== undefined) {
    const length = input.name.trim().length;
    if (length < 3) issues.add(['input', 'name'], 'String should have at least 3 characters', 'string_too_short');
    else if (input.name.length > 256) issues.add(['input', 'name'], 'String should have at most 256 characters', 'string_too_long');
  }
  if (input.email != null && !isEmailAddress(input.email.trim())) {
    issues.add(['input', 'email'], 'value is not a valid email address', 'value_error');
  }
  checkUrl(issues, ['input', 'avatarUrl'], input.avatarUrl);
  checkUrl(issues, ['input', 'website'], input.website);
  input.socials?.forEach((link, i) => checkUrl(issues, ['input', 'socials', i, 'url'], link.url));
  if (input.socials && input.socials.length > 20) issues.add(['input', 'socials'], 'List should have at most 20 items', 'too_long');
  const details = input.details;
  if (details) {
    checkText(issues, ['input', 'details', 'about'], details.about);
    checkText(issues, ['input', 'details', 'productDescription'], details.productDescription);
    checkText(issues, ['input', 'details', 'intendedUse'], details.intendedUse);
    for (const key of ['futureAnnualRevenue', 'previousAnnualRevenue'] as const) {
      if ((details[key] ?? 0) < 0) issues.add(['input', 'details', key], 'Input should be greater than or equal to 0', 'greater_than_equal');
    }
  }
  // Kassa bills a change of product one way: prorated, on the next order. A default it cannot
  // follow would make every plan change without an explicit behaviour fail.
  if (input.subscriptionSettings?.prorationBehavior === 'invoice') {
    issues.add(['input', 'subscriptionSettings', 'prorationBehavior'], 'Immediate invoicing of plan changes is not available; use prorate (billed on the next order).');
  }
}

function checkSlug(issues: ValidationIssues, slug: string): void {
  if (slug.length < 3 || slug.length > 64) issues.add(['input', 'slug'], 'A slug has 3 to 64 characters.', slug.length < 3 ? 'string_too_short' : 'string_too_long');
  else if (!slugPattern.test(slug)) issues.add(['input', 'slug'], 'A slug is lowercase letters, digits and single dashes between them, such as "acme-inc".', 'string_pattern_mismatch');
}

/** The columns a profile input writes; `now` stamps details the first time they are given. */
function profileData(input: OrganizationProfileInput, detailsSubmittedAt: Date | null, now: Date): Prisma.OrganizationUpdateInput {
  const data: Prisma.OrganizationUpdateInput = {};
  if (input.name != null) data.name = input.name.trim();
  if (input.avatarUrl !== undefined) data.avatarUrl = input.avatarUrl;
  if (input.email !== undefined) data.email = input.email?.trim() ?? null;
  if (input.website !== undefined) data.website = input.website;
  if (input.socials !== undefined) data.socials = (input.socials ?? []).map((link) => ({ platform: link.platform, url: link.url }));
  if (input.details) {
    const details = input.details;
    data.details = {
      about: details.about,
      product_description: details.productDescription,
      intended_use: details.intendedUse,
      customer_acquisition: details.customerAcquisition,
      future_annual_revenue: details.futureAnnualRevenue,
      switching: details.switching ?? true,
      switching_from: details.switchingFrom ?? null,
      previous_annual_revenue: details.previousAnnualRevenue ?? 0,
    };
    data.detailsSubmittedAt = detailsSubmittedAt ?? now;
  }
  if (input.featureSettings) data.featureSettings = { issue_funding_enabled: input.featureSettings.issueFundingEnabled ?? false };
  if (input.subscriptionSettings) {
    const settings = input.subscriptionSettings;
    data.subscriptionSettings = {
      allow_multiple_subscriptions: settings.allowMultipleSubscriptions,
      allow_customer_updates: settings.allowCustomerUpdates,
      proration_behavior: settings.prorationBehavior,
    } satisfies SubscriptionSettings;
  }
  if (input.notificationSettings) {
    data.notificationSettings = { new_order: input.notificationSettings.newOrder, new_subscription: input.notificationSettings.newSubscription };
  }
  return data;
}

/** The organization's subscription settings, as the subscription rules read them. */
export async function subscriptionSettingsOf(db: Db, organizationId: string): Promise<SubscriptionSettings> {
  const { subscriptionSettings } = await db.organization.findUniqueOrThrow({ where: { id: organizationId }, select: { subscriptionSettings: true } });
  return subscriptionSettings as unknown as SubscriptionSettings;
}

/** PATCH /v1/organizations/{id}: changes the profile and settings given, and records organization.updated with it. */
export async function updateOrganization(ctx: Context, id: string, input: OrganizationProfileInput, query: object) {
  const existing = await ctx.prisma.organization.findFirst({ where: { id, AND: { id: organizationFilter(ctx) } }, select: { id: true } });
  if (!existing) throw new ResourceNotFoundError('Organization not found.');
  const issues = new ValidationIssues();
  checkProfile(issues, input);
  issues.throwIfAny();
  return ctx.prisma.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM organizations WHERE id = ${id}::uuid FOR UPDATE`;
    const { detailsSubmittedAt } = await tx.organization.findUniqueOrThrow({ where: { id }, select: { detailsSubmittedAt: true } });
    await tx.organization.update({ where: { id }, data: profileData(input, detailsSubmittedAt, ctx.now()) });
    await recordEvents(ctx, tx as Db, ['organization.updated'], { organizationId: id, resource: 'organization', resourceId: id });
    return tx.organization.findUniqueOrThrow({ ...query, where: { id } });
  });
}

/** A user who signed up creates organizations once they have proved their address (modules/users/sign-up.ts). */
async function checkEmailVerified(prisma: Db, userId: string) {
  const user = await prisma.user.findUniqueOrThrow({ where: { id: userId }, select: { emailVerified: true } });
  if (!user.emailVerified) {
    throw new NotPermittedError('Verify your email address before creating an organization: follow the link in the email sent when you signed up.');
  }
}

/**
 * POST /v1/organizations/: a new organization with the signed-in user as its member. The slug is
 * the caller's; the unique index decides between two creates of one slug, and the loser hears
 * which field to change.
 */
export async function createOrganizationForUser(ctx: Context, input: OrganizationCreateInput, query: object) {
  const { principal } = ctx;
  if (principal.kind !== 'user') throw new NotPermittedError('Only a user creates organizations: an organization token acts for its own organization alone.');
  await checkEmailVerified(ctx.prisma, principal.userId);
  const issues = new ValidationIssues();
  checkSlug(issues, input.slug);
  checkProfile(issues, input);
  issues.throwIfAny();
  const now = ctx.now();
  const { name, ...profile } = profileData(input, null, now);
  const taken = () => RequestValidationError.at(['input', 'slug'], `An organization with the slug "${input.slug}" already exists; choose another.`, 'value_error');
  if (await ctx.prisma.organization.findUnique({ where: { slug: input.slug }, select: { id: true } })) throw taken();
  try {
    const { organization, credentials } = await insertOrganization(
      ctx.prisma,
      { ...(profile as Omit<Prisma.OrganizationCreateInput, 'members' | 'name' | 'slug'>), name: name as string, slug: input.slug },
      principal.userId,
      query,
    );
    ctx.environment.principals.forget(credentials);
    return organization;
  } catch (error) {
    if (isSlugTaken(error)) throw taken();
    throw error;
  }
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
    const hashes = await userCredentialHashes(tx as Db, input.userId);
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
