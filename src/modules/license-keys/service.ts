// License keys: one per license_keys benefit grant, checked by the organization's software from the
// field. Validating, activating and deactivating lock the key's row, so concurrent activations
// never exceed the activation limit and concurrent usage increments never exceed the usage limit.
// A key that does not work (unknown, of another organization, revoked or disabled) is answered
// with one and the same not-found error, so a caller learns nothing about keys it cannot use.
import { randomBytes } from 'node:crypto';
import { addInterval } from '../../calendar.ts';
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { LicenseKeyStatus, Prisma } from '../../generated/prisma/client.ts';
import { KassaError, NotPermittedError, RequestValidationError, ResourceNotFoundError, ValidationIssues } from '../../graphql/errors.ts';
import type { Metadata } from '../../graphql/metadata.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { reach } from '../../auth/reach.ts';
import { organizationFilter, reachableOrganizationIds } from '../organizations/access.ts';

/** A license_keys benefit's properties, in the wire form `Benefit.properties` stores. */
export interface LicenseKeyBenefitProperties {
  prefix?: string | null;
  expires?: { ttl: number; timeframe: 'year' | 'month' | 'day' } | null;
  activations?: { limit: number; enable_customer_admin: boolean } | null;
  limit_usage?: number | null;
}

export interface LicenseKeyGrant {
  id: string;
  organizationId: string;
  customerId: string;
  benefitId: string;
}

export interface LicenseKeyListArgs extends PageArgs {
  organizationId?: string[] | null;
  benefitId?: string[] | null;
}

export interface LicenseKeyUpdateInput {
  status?: LicenseKeyStatus | null;
  usage?: number | null;
  limitActivations?: number | null;
  limitUsage?: number | null;
  expiresAt?: Date | null;
}

interface KeyInOrganization {
  key: string;
  organizationId: string;
}

export interface LicenseKeyValidateInput extends KeyInOrganization {
  activationId?: string | null;
  benefitId?: string | null;
  customerId?: string | null;
  incrementUsage?: number | null;
  conditions?: Metadata | null;
}

export interface LicenseKeyActivateInput extends KeyInOrganization {
  label: string;
  conditions?: Metadata | null;
  meta?: Metadata | null;
}

export interface LicenseKeyDeactivateInput extends KeyInOrganization {
  activationId: string;
}

/**
 * Who checks a key: `public` is anyone holding it (the customer portal endpoints, no token);
 * `core` is an organization's own token, which reaches only keys of its organizations.
 */
export type KeyChecker = 'public' | 'core';

export const maxActivationLimit = 50;
/** The largest usage count a key can hold (a 32-bit integer). */
const maxUsage = 2_147_483_647;
const maxLabelLength = 255;

const licenseKeyNotFound = () => new ResourceNotFoundError('License key not found.');
const activationNotFound = () => new ResourceNotFoundError('License key activation not found.');
export const usageLimitReached = (remaining: number) =>
  new KassaError(`License key only has ${remaining} more usages.`, 'BAD_REQUEST', 400, 'BadRequest');

/** The key as shown where it must not be readable: only its last group. */
export function displayKey(key: string): string {
  return `****-${key.slice(key.lastIndexOf('-') + 1)}`;
}

/** 160 random bits as 40 uppercase hex digits in five groups, after the benefit's prefix if any. */
function generateKey(prefix: string | null | undefined): string {
  const hex = randomBytes(20).toString('hex').toUpperCase();
  const random = hex.match(/.{8}/g)!.join('-');
  const normalized = prefix?.trim().toUpperCase();
  return normalized ? `${normalized}-${random}` : random;
}

function expiryOf(expires: LicenseKeyBenefitProperties['expires'], now: Date): Date | null {
  if (!expires) return null;
  return addInterval(now, expires.timeframe, expires.ttl);
}

/**
 * The license key of a grant, in the caller's transaction. Idempotent per grant: a key already
 * issued is returned; one that was revoked is granted again, with its expiry and limits renewed
 * from the benefit as a fresh grant would have them.
 */
export async function issueLicenseKey(
  ctx: Context,
  db: Db,
  grant: LicenseKeyGrant,
  properties: LicenseKeyBenefitProperties,
): Promise<{ id: string; key: string; displayKey: string }> {
  const now = ctx.now();
  const terms = {
    expiresAt: expiryOf(properties.expires, now),
    limitActivations: properties.activations?.limit ?? null,
    limitUsage: properties.limit_usage ?? null,
  };
  const existing = await db.licenseKey.findUnique({ where: { grantId: grant.id } });
  if (existing) {
    if (existing.status === 'revoked') {
      await db.licenseKey.update({ where: { id: existing.id }, data: { status: 'granted', ...terms, modifiedAt: now } });
    }
    return { id: existing.id, key: existing.key, displayKey: displayKey(existing.key) };
  }
  const created = await db.licenseKey.create({
    data: {
      organizationId: grant.organizationId,
      customerId: grant.customerId,
      benefitId: grant.benefitId,
      grantId: grant.id,
      key: generateKey(properties.prefix),
      status: 'granted',
      ...terms,
      createdAt: now,
    },
  });
  return { id: created.id, key: created.key, displayKey: displayKey(created.key) };
}

/** The key of a revoked grant stops working; issuing for the grant again restores it. */
export async function revokeLicenseKey(db: Db, grantId: string): Promise<void> {
  await db.licenseKey.updateMany({ where: { grantId }, data: { status: 'revoked' } });
}

/** The keys the principal reaches: an organization's, or a signed-in customer's own. */
export async function listLicenseKeys(ctx: Context, args: LicenseKeyListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.LicenseKeyWhereInput = {
    AND: [
      reach(ctx).licenseKey,
      args.organizationId?.length ? { organizationId: { in: args.organizationId } } : {},
      args.benefitId?.length ? { benefitId: { in: args.benefitId } } : {},
    ],
  };
  const [items, total] = await Promise.all([
    ctx.prisma.licenseKey.findMany({ ...query, where, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], ...window }),
    ctx.prisma.licenseKey.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getLicenseKey(ctx: Context, id: string, query: object) {
  const licenseKey = await ctx.prisma.licenseKey.findFirst({ ...query, where: { AND: [reach(ctx).licenseKey, { id }] } });
  if (!licenseKey) throw licenseKeyNotFound();
  return licenseKey;
}

export async function getLicenseKeyActivation(ctx: Context, id: string, activationId: string, query: object) {
  const activation = await ctx.prisma.licenseKeyActivation.findFirst({
    ...query,
    where: { id: activationId, licenseKeyId: id, licenseKey: { organizationId: organizationFilter(ctx) } },
  });
  if (!activation) {
    const keyExists = await ctx.prisma.licenseKey.count({ where: { id, organizationId: organizationFilter(ctx) } });
    throw keyExists ? activationNotFound() : licenseKeyNotFound();
  }
  return activation;
}

export async function updateLicenseKey(ctx: Context, id: string, input: LicenseKeyUpdateInput, query: object) {
  const issues = new ValidationIssues();
  if (input.usage != null && (!Number.isInteger(input.usage) || input.usage < 0)) {
    issues.add(['input', 'usage'], 'Input should be greater than or equal to 0', 'greater_than_equal');
  }
  if (input.limitActivations != null && (input.limitActivations < 1 || input.limitActivations > maxActivationLimit)) {
    issues.add(['input', 'limitActivations'], `Input should be from 1 to ${maxActivationLimit}`, input.limitActivations < 1 ? 'greater_than' : 'less_than_equal');
  }
  if (input.limitUsage != null && input.limitUsage < 1) issues.add(['input', 'limitUsage'], 'Input should be greater than 0', 'greater_than');
  issues.throwIfAny();
  // Fields sent as null clear their limit or expiry; fields not sent stay as they are.
  const data: Prisma.LicenseKeyUpdateManyMutationInput = { modifiedAt: ctx.now() };
  if (input.status != null) data.status = input.status;
  if (input.usage != null) data.usage = input.usage;
  if (input.limitActivations !== undefined) data.limitActivations = input.limitActivations;
  if (input.limitUsage !== undefined) data.limitUsage = input.limitUsage;
  if (input.expiresAt !== undefined) data.expiresAt = input.expiresAt;
  const { count } = await ctx.prisma.licenseKey.updateMany({ where: { id, organizationId: organizationFilter(ctx) }, data });
  if (count === 0) throw licenseKeyNotFound();
  return ctx.prisma.licenseKey.findUniqueOrThrow({ ...query, where: { id } });
}

/** The organization whose key is checked: a Core token must reach it; otherwise it is as if the key did not exist. */
function checkedOrganization(ctx: Context, checker: KeyChecker, organizationId: string): string {
  if (checker === 'core' && !reachableOrganizationIds(ctx).includes(organizationId)) throw licenseKeyNotFound();
  return organizationId;
}

/** Locks the key's row for the rest of the transaction; only a granted key is found. */
async function lockUsableKey(db: Db, { organizationId, key }: KeyInOrganization) {
  const [locked] = await db.$queryRaw<{ id: string }[]>`
    SELECT id FROM license_keys WHERE organization_id = ${organizationId}::uuid AND key = ${key} FOR UPDATE`;
  const licenseKey = locked ? await db.licenseKey.findUnique({ where: { id: locked.id } }) : null;
  if (!licenseKey || licenseKey.status !== 'granted') throw licenseKeyNotFound();
  return licenseKey;
}

const isExpired = (licenseKey: { expiresAt: Date | null }, now: Date) => licenseKey.expiresAt !== null && licenseKey.expiresAt <= now;

type UsableKey = Awaited<ReturnType<typeof lockUsableKey>>;

/**
 * Runs `work` in one transaction on the key, locked and known to be granted. `expired`, when given,
 * is the error for a key past its expiry; without it, an expired key is worked on (deactivation).
 */
async function withUsableKey<T>(
  ctx: Context,
  checker: KeyChecker,
  input: KeyInOrganization,
  expired: (() => Error) | null,
  work: (db: Db, licenseKey: UsableKey, now: Date) => Promise<T>,
): Promise<T> {
  const organizationId = checkedOrganization(ctx, checker, input.organizationId);
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const now = ctx.now();
    const licenseKey = await lockUsableKey(db, { organizationId, key: input.key });
    if (expired && isExpired(licenseKey, now)) throw expired();
    return work(db, licenseKey, now);
  });
}

export async function validateLicenseKey(ctx: Context, checker: KeyChecker, input: LicenseKeyValidateInput, query: object) {
  const issues = new ValidationIssues();
  if (input.incrementUsage != null && input.incrementUsage < 0) {
    issues.add(['input', 'incrementUsage'], 'Input should be greater than or equal to 0', 'greater_than_equal');
  }
  issues.throwIfAny();
  return withUsableKey(ctx, checker, input, () => new ResourceNotFoundError('License key has expired.'), async (db, licenseKey, now) => {
    const activation = input.activationId
      ? await db.licenseKeyActivation.findFirst({ where: { id: input.activationId, licenseKeyId: licenseKey.id } })
      : null;
    if (input.activationId && !activation) throw activationNotFound();
    if (input.benefitId && input.benefitId !== licenseKey.benefitId) throw new ResourceNotFoundError('License key does not match given benefit.');
    if (input.customerId && input.customerId !== licenseKey.customerId) throw new ResourceNotFoundError('License key does not match given customer.');
    const increment = input.incrementUsage ?? 0;
    if (licenseKey.usage + increment > maxUsage) {
      throw RequestValidationError.at(['input', 'incrementUsage'], `A license key's usage cannot exceed ${maxUsage}.`, 'less_than_equal');
    }
    if (increment > 0 && licenseKey.limitUsage !== null) {
      const remaining = licenseKey.limitUsage - licenseKey.usage;
      if (increment > remaining) throw usageLimitReached(Math.max(remaining, 0));
    }
    const validated = await db.licenseKey.update({
      ...query,
      where: { id: licenseKey.id },
      data: { validations: { increment: 1 }, usage: { increment }, lastValidatedAt: now, modifiedAt: now },
    });
    return Object.assign(validated, { activation });
  });
}

export async function activateLicenseKey(ctx: Context, checker: KeyChecker, input: LicenseKeyActivateInput, query: object) {
  const issues = new ValidationIssues();
  if (input.label.length > maxLabelLength) issues.add(['input', 'label'], `String should have at most ${maxLabelLength} characters`, 'string_too_long');
  if (input.conditions && Object.keys(input.conditions).length > 0) {
    issues.add(['input', 'conditions'], 'Activation conditions are not supported: identify the device in meta instead.');
  }
  issues.throwIfAny();
  return withUsableKey(ctx, checker, input, () => new NotPermittedError('License key has expired.'), async (db, licenseKey, now) => {
    const limit = licenseKey.limitActivations;
    if (!limit) {
      throw new NotPermittedError('This license key does not support activations. Use the /validate endpoint instead to check license validity.');
    }
    const activations = await db.licenseKeyActivation.count({ where: { licenseKeyId: licenseKey.id } });
    if (activations >= limit) throw new NotPermittedError(`License key only supports ${limit} activations.`);
    const activation = await db.licenseKeyActivation.create({
      data: { licenseKeyId: licenseKey.id, label: input.label, meta: input.meta ?? {}, createdAt: now },
    });
    return db.licenseKeyActivation.findUniqueOrThrow({ ...query, where: { id: activation.id } });
  });
}

export async function deactivateLicenseKey(ctx: Context, checker: KeyChecker, input: LicenseKeyDeactivateInput): Promise<void> {
  await withUsableKey(ctx, checker, input, null, async (db, licenseKey) => {
    const { count } = await db.licenseKeyActivation.deleteMany({ where: { id: input.activationId, licenseKeyId: licenseKey.id } });
    if (count === 0) throw activationNotFound();
  });
}
