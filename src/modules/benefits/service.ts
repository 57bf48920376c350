// Benefits: what a product entitles its buyer to. A benefit's `properties` are kept in wire form
// (snake_case), checked here per type. Attaching benefits to a product, and deleting one, schedule
// a grant sync for every purchase of the products concerned (see grants.ts).
import type { Context } from '../../context.ts';
import { reach } from '../../auth/reach.ts';
import type { Db } from '../../db/client.ts';
import type { BenefitType, Prisma } from '../../generated/prisma/client.ts';
import { recordEvents, type EventType } from '../../events/outbox.ts';
import { NotPermittedError, ResourceNotFoundError, ValidationIssues, type Loc } from '../../graphql/errors.ts';
import { metadataWhere, type Metadata } from '../../graphql/metadata.ts';
import { wireOnlyValue } from '../../graphql/wire-values.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { escapeLike, sortingOrderBy } from '../../graphql/sorting.ts';
import { enqueueJob } from '../../jobs/runner.ts';
import { organizationFilter, owningOrganization } from '../organizations/access.ts';
import { assertDownloadableFiles } from '../files/service.ts';


export interface BenefitPropertiesInput {
  note?: string | null;
  prefix?: string | null;
  expires?: { ttl: number; timeframe: 'year' | 'month' | 'day' } | null;
  activations?: { limit: number; enableCustomerAdmin: boolean } | null;
  limitUsage?: number | null;
  archived?: Record<string, unknown> | null;
  files?: string[] | null;
  meterId?: string | null;
  units?: number | null;
  rollover?: boolean | null;
}

export interface BenefitCreateInput {
  type: BenefitType;
  description: string;
  organizationId?: string | null;
  metadata?: Metadata | null;
  properties: BenefitPropertiesInput;
}

export interface BenefitUpdateInput {
  type?: BenefitType | null;
  description?: string | null;
  metadata?: Metadata | null;
  properties?: BenefitPropertiesInput | null;
}

export const benefitSortProperties = ['created_at', 'description', 'type'] as const;

export interface BenefitListArgs extends PageArgs {
  organizationId?: string[] | null;
  type?: BenefitType[] | null;
  id?: string[] | null;
  query?: string | null;
  metadata?: Record<string, unknown> | null;
  sorting?: string[] | null;
}

export async function recordBenefitEvents(ctx: Context, db: Db, types: EventType[], benefit: { id: string; organizationId: string }) {
  await recordEvents(ctx, db, types, { organizationId: benefit.organizationId, resourceId: benefit.id, resource: 'benefit' });
}

function checkDescription(issues: ValidationIssues, description: string | null | undefined) {
  if (description == null) return;
  const length = description.trim().length;
  if (length < 3 || length > 42) issues.add(['input', 'description'], 'The description must be 3 to 42 characters long.', 'string_too_short');
}

/** The stored (wire) properties of a benefit of `type`, or the issues that prevent them. */
async function storedProperties(db: Db, organizationId: string, type: BenefitType, input: BenefitPropertiesInput, issues: ValidationIssues): Promise<object> {
  const loc: Loc = ['input', 'properties'];
  switch (type) {
    case 'custom':
      return { note: input.note ?? null };
    case 'license_keys': {
      const { prefix = null, expires = null, activations = null, limitUsage = null } = input;
      if (prefix != null && !/^[A-Za-z0-9_-]{1,24}$/.test(prefix)) issues.add([...loc, 'prefix'], 'The prefix must be 1 to 24 letters, digits, "_" or "-".');
      if (expires && (!Number.isInteger(expires.ttl) || expires.ttl < 1 || expires.ttl > 1000)) issues.add([...loc, 'expires', 'ttl'], 'The ttl must be a whole number from 1 to 1000.');
      if (activations && (activations.limit < 1 || activations.limit > 50)) issues.add([...loc, 'activations', 'limit'], 'The activation limit must be from 1 to 50.');
      if (limitUsage != null && limitUsage < 1) issues.add([...loc, 'limitUsage'], 'The usage limit must be at least 1.');
      return {
        prefix,
        expires: expires ? { ttl: expires.ttl, timeframe: expires.timeframe } : null,
        activations: activations ? { limit: activations.limit, enable_customer_admin: activations.enableCustomerAdmin } : null,
        limit_usage: limitUsage,
      };
    }
    case 'downloadables': {
      const files = input.files ?? [];
      if (files.length === 0) issues.add([...loc, 'files'], 'List should have at least 1 item after validation, not 0', 'too_short');
      else if (new Set(files).size !== files.length) issues.add([...loc, 'files'], 'Each file may be listed once.');
      else await assertDownloadableFiles(db, organizationId, files);
      const archived = Object.fromEntries(Object.entries(input.archived ?? {}).filter(([id, value]) => files.includes(id) && value === true));
      return { files, archived };
    }
    case 'meter_credit': {
      const { meterId, units, rollover } = input;
      if (!meterId) issues.add([...loc, 'meterId'], 'Field required', 'missing');
      else {
        const meter = await db.meter.findFirst({ where: { id: meterId, organizationId }, select: { archivedAt: true } });
        if (!meter) issues.add([...loc, 'meterId'], 'Meter not found.');
        else if (meter.archivedAt) issues.add([...loc, 'meterId'], 'This meter is archived: unarchive it to credit it.');
      }
      if (units == null) issues.add([...loc, 'units'], 'Field required', 'missing');
      else if (!Number.isInteger(units) || units < 1) issues.add([...loc, 'units'], 'Input should be greater than 0', 'greater_than');
      if (rollover == null) issues.add([...loc, 'rollover'], 'Field required', 'missing');
      return { meter_id: meterId, units, rollover };
    }
    default:
      issues.add(['input', 'type'], `Benefits of type ${type} need an integration this server does not have; use custom, license_keys, downloadables or meter_credit.`);
      return {};
  }
}

export async function createBenefit(ctx: Context, input: BenefitCreateInput, query: object) {
  const organizationId = owningOrganization(ctx, input.organizationId, ['input', 'organizationId']);
  const issues = new ValidationIssues();
  checkDescription(issues, input.description);
  const type = (wireOnlyValue(ctx, ['input', 'type']) as BenefitType | undefined) ?? input.type;
  const properties = await storedProperties(ctx.prisma, organizationId, type, input.properties, issues);
  issues.throwIfAny();
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const benefit = await db.benefit.create({
      data: { organizationId, type: input.type, description: input.description.trim(), properties, metadata: input.metadata ?? {}, createdAt: ctx.now() },
    });
    await recordBenefitEvents(ctx, db, ['benefit.created'], benefit);
    return db.benefit.findUniqueOrThrow({ ...query, where: { id: benefit.id } });
  });
}

export async function listBenefits(ctx: Context, args: BenefitListArgs, query: object) {
  const where: Prisma.BenefitWhereInput = {
    organizationId: organizationFilter(ctx, args.organizationId),
    deletedAt: null,
    ...(args.type?.length ? { type: { in: args.type } } : {}),
    ...(args.id?.length ? { id: { in: args.id } } : {}),
    ...(args.query ? { description: { contains: escapeLike(args.query), mode: 'insensitive' } } : {}),
    AND: metadataWhere(args.metadata),
  };
  const orderBy = sortingOrderBy<(typeof benefitSortProperties)[number]>(args.sorting?.length ? args.sorting : ['-created_at'], (property, sort) =>
    property === 'created_at' ? { createdAt: sort } : property === 'description' ? { description: sort } : { type: sort },
  );
  const [items, total] = await Promise.all([
    ctx.prisma.benefit.findMany({ ...query, where, orderBy: [...(orderBy as Prisma.BenefitOrderByWithRelationInput[]), { id: 'asc' }], ...pageWindow(args) }),
    ctx.prisma.benefit.count({ where }),
  ]);
  return toPage(items, total, args);
}

async function findBenefit(ctx: Context, db: Db, id: string) {
  const benefit = await db.benefit.findFirst({ where: { id, organizationId: organizationFilter(ctx), deletedAt: null } });
  if (!benefit) throw new ResourceNotFoundError('Benefit not found.');
  return benefit;
}

export async function getBenefit(ctx: Context, id: string, query: object) {
  await findBenefit(ctx, ctx.prisma, id);
  return ctx.prisma.benefit.findUniqueOrThrow({ ...query, where: { id } });
}

export async function updateBenefit(ctx: Context, id: string, input: BenefitUpdateInput, query: object) {
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const benefit = await findBenefit(ctx, db, id);
    await db.$executeRaw`SELECT id FROM benefits WHERE id = ${id}::uuid FOR UPDATE`;
    const issues = new ValidationIssues();
    if (input.type && input.type !== benefit.type) issues.add(['input', 'type'], `This benefit is of type ${benefit.type}; its type cannot change.`);
    checkDescription(issues, input.description);
    const data: Prisma.BenefitUpdateInput = {};
    if (input.description != null) data.description = input.description.trim();
    if (input.metadata != null) data.metadata = input.metadata;
    if (input.properties != null) data.properties = await storedProperties(db, benefit.organizationId, benefit.type, input.properties, issues);
    issues.throwIfAny();
    await db.benefit.update({ where: { id }, data });
    await recordBenefitEvents(ctx, db, ['benefit.updated'], benefit);
    if (input.properties != null) await scheduleBenefitSync(ctx, db, id);
    return db.benefit.findUniqueOrThrow({ ...query, where: { id } });
  });
}

/**
 * Deletes a benefit: it leaves every product, and every grant of it is revoked (by the grant sync
 * of each purchase that held it, scheduled in the same transaction).
 */
export async function deleteBenefit(ctx: Context, id: string): Promise<boolean> {
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const benefit = await findBenefit(ctx, db, id);
    if (!benefit.deletable) throw new NotPermittedError('This benefit cannot be deleted.');
    // Rendered while it can still be read: a deleted benefit is not found by its GET.
    await recordBenefitEvents(ctx, db, ['benefit.updated'], benefit);
    await db.benefit.update({ where: { id }, data: { deletedAt: ctx.now() } });
    await db.productBenefit.deleteMany({ where: { benefitId: id } });
    await scheduleBenefitSync(ctx, db, id);
    return true;
  });
}

/** Schedules the grant sync of every purchase that holds a grant of the benefit. */
async function scheduleBenefitSync(ctx: Context, db: Db, benefitId: string) {
  const holders = await db.benefitGrant.findMany({ where: { benefitId }, select: { subscriptionId: true, orderId: true }, distinct: ['scopeId'] });
  for (const holder of holders) {
    await enqueueJob(db, 'benefits.sync', holder.subscriptionId ? { subscriptionId: holder.subscriptionId } : { orderId: holder.orderId }, ctx.now());
  }
}

/**
 * Sets the benefits a product grants, in order. Every purchase of the product then has its grants
 * brought in line: new benefits are granted, removed ones revoked.
 */
export async function setProductBenefits(ctx: Context, productId: string, benefitIds: string[], query: object) {
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const locked = await db.$queryRaw<{ organization_id: string }[]>`SELECT organization_id FROM products WHERE id = ${productId}::uuid FOR UPDATE`;
    if (!locked.length || !organizationFilter(ctx).in.includes(locked[0].organization_id)) throw new ResourceNotFoundError('Product not found.');
    const organizationId = locked[0].organization_id;
    const issues = new ValidationIssues();
    if (new Set(benefitIds).size !== benefitIds.length) issues.add(['input', 'benefits'], 'Each benefit may be listed once.');
    const benefits = await db.benefit.findMany({ where: { id: { in: benefitIds }, organizationId, deletedAt: null }, select: { id: true } });
    benefitIds.forEach((id, i) => {
      if (!benefits.some((b) => b.id === id)) issues.add(['input', 'benefits', i], 'Benefit not found.');
    });
    issues.throwIfAny();
    await db.productBenefit.deleteMany({ where: { productId } });
    await db.productBenefit.createMany({ data: benefitIds.map((benefitId, position) => ({ productId, benefitId, position })) });
    await db.product.update({ where: { id: productId }, data: { modifiedAt: ctx.now() } });
    await enqueueJob(db, 'benefits.sync-product', { productId }, ctx.now());
    return db.product.findUniqueOrThrow({ ...query, where: { id: productId } });
  });
}

export interface GrantListArgs extends PageArgs {
  isGranted?: boolean | null;
  customerId?: string[] | null;
}

export async function listBenefitGrants(ctx: Context, benefitId: string, args: GrantListArgs, query: object) {
  await findBenefit(ctx, ctx.prisma, benefitId);
  const where: Prisma.BenefitGrantWhereInput = {
    AND: [
      reach(ctx).benefitGrant,
      { benefitId },
      args.customerId?.length ? { customerId: { in: args.customerId } } : {},
      args.isGranted == null ? {} : args.isGranted ? { grantedAt: { not: null }, revokedAt: null } : { OR: [{ grantedAt: null }, { revokedAt: { not: null } }] },
    ],
  };
  const [items, total] = await Promise.all([
    ctx.prisma.benefitGrant.findMany({ ...query, where, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], ...pageWindow(args) }),
    ctx.prisma.benefitGrant.count({ where }),
  ]);
  return toPage(items, total, args);
}

// ---- The signed-in customer's grants (Customer Portal) ----

export const customerBenefitGrantSortProperties = ['granted_at', 'type', 'organization'] as const;

export interface CustomerGrantListArgs extends PageArgs {
  type?: BenefitType[] | null;
  benefitId?: string[] | null;
  organizationId?: string[] | null;
  checkoutId?: string[] | null;
  orderId?: string[] | null;
  subscriptionId?: string[] | null;
  sorting?: string[] | null;
}

/** A customer holds a grant until it is revoked; a revoked grant leaves the portal, as on Polar. */
const held: Prisma.BenefitGrantWhereInput = { revokedAt: null };

export async function listCustomerBenefitGrants(ctx: Context, args: CustomerGrantListArgs, query: object) {
  const where: Prisma.BenefitGrantWhereInput = {
    AND: [
      reach(ctx).benefitGrant,
      held,
      args.type?.length ? { benefit: { type: { in: args.type } } } : {},
      args.benefitId?.length ? { benefitId: { in: args.benefitId } } : {},
      args.organizationId?.length ? { organizationId: { in: args.organizationId } } : {},
      args.checkoutId?.length ? { OR: [{ order: { checkoutId: { in: args.checkoutId } } }, { subscription: { checkoutId: { in: args.checkoutId } } }] } : {},
      args.orderId?.length ? { orderId: { in: args.orderId } } : {},
      args.subscriptionId?.length ? { subscriptionId: { in: args.subscriptionId } } : {},
    ],
  };
  const orderBy = sortingOrderBy<(typeof customerBenefitGrantSortProperties)[number]>(args.sorting?.length ? args.sorting : ['-granted_at'], (property, sort) =>
    property === 'granted_at' ? { grantedAt: sort } : property === 'type' ? { benefit: { type: sort } } : { benefit: { organization: { slug: sort } } },
  );
  const [items, total] = await Promise.all([
    ctx.prisma.benefitGrant.findMany({ ...query, where, orderBy: orderBy as Prisma.BenefitGrantOrderByWithRelationInput[], ...pageWindow(args) }),
    ctx.prisma.benefitGrant.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getCustomerBenefitGrant(ctx: Context, id: string, query: object) {
  const grant = await ctx.prisma.benefitGrant.findFirst({ ...query, where: { AND: [reach(ctx).benefitGrant, held, { id }] } });
  if (!grant) throw new ResourceNotFoundError('Benefit grant not found.');
  return grant;
}

/**
 * The customer's change to their grant, as the client library sends it: the benefit's type, and
 * for Discord and GitHub the account to connect. Kassa grants neither (it has no integration with
 * them), so connecting an account is refused (NOT_PERMITTED); the other types have nothing a
 * customer changes, and their grant is answered as it is. A type that is not the grant's is a
 * validation error. Nothing is written either way.
 */
export async function updateCustomerBenefitGrant(ctx: Context, id: string, input: { benefitType: BenefitType }, query: object) {
  const grant = await ctx.prisma.benefitGrant.findFirst({ where: { AND: [reach(ctx).benefitGrant, held, { id }] }, select: { benefit: { select: { type: true } } } });
  if (!grant) throw new ResourceNotFoundError('Benefit grant not found.');
  const issues = new ValidationIssues();
  if (input.benefitType !== grant.benefit.type) issues.add(['input', 'benefitType'], `This grant is of a ${grant.benefit.type} benefit.`);
  issues.throwIfAny();
  if (grant.benefit.type === 'discord' || grant.benefit.type === 'github_repository') {
    throw new NotPermittedError(`Kassa does not connect ${grant.benefit.type === 'discord' ? 'Discord' : 'GitHub'} accounts: this grant has nothing a customer can change.`);
  }
  return getCustomerBenefitGrant(ctx, id, query);
}
