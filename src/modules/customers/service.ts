// Customers of an organization. An email held by a customer and an external id are unique among an
// organization's customers that exist; a deleted customer keeps its row (orders refer to it) but
// frees both. A customer holds its email when the organization set it through the Core API, or
// when the customer verified it (email-changes.ts); an email a buyer typed at checkout is held by
// no one, and several customers may carry it. Every change records its event in the same transaction.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { recordEvents, renderSubject, type EventType } from '../../events/outbox.ts';
import { RequestValidationError, ResourceNotFoundError, ValidationIssues, type Loc } from '../../graphql/errors.ts';
import { metadataWhere, type Metadata } from '../../graphql/metadata.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { escapeLike, sortingOrderBy } from '../../graphql/sorting.ts';
import { organizationFilter, owningOrganization } from '../organizations/access.ts';
import { endCustomerEntitlements } from '../subscriptions/service.ts';
import { announcePrincipalChange } from '../../auth/principal-cache.ts';
import { reach } from '../../auth/reach.ts';
import { countryName, isCountry } from '../../countries.ts';
import { isEmailAddress } from '../../email/address.ts';

export const customerSortProperties = ['created_at', 'email', 'name'] as const;

export interface AddressInput {
  line1?: string | null;
  line2?: string | null;
  postalCode?: string | null;
  city?: string | null;
  state?: string | null;
  country: string;
}

interface CustomerFields {
  email?: string | null;
  name?: string | null;
  externalId?: string | null;
  billingAddress?: AddressInput | null;
  taxId?: (string | null)[] | null;
  metadata?: Metadata | null;
}

/** What a customer may change of themselves in the Customer Portal (a new email goes through email-changes.ts). */
export interface CustomerBillingDetailsInput {
  billingName?: string | null;
  billingAddress?: AddressInput | null;
  /** The number alone: its format follows from the billing address's country. */
  taxId?: string | null;
}

export interface CustomerCreateInput extends CustomerFields {
  email: string;
  organizationId?: string | null;
}

export interface CustomerListArgs extends PageArgs {
  organizationId?: string[] | null;
  email?: string | null;
  query?: string | null;
  metadata?: Record<string, unknown> | null;
  sorting?: string[] | null;
}

/** Identifies one customer of the caller's organizations: by id or by external id. */
export type CustomerKey = { id: string } | { externalId: string };

/** Refuses an address whose country is not an ISO 3166-1 alpha-2 country code. */
export function checkAddress(issues: ValidationIssues, loc: Loc, address: AddressInput | null | undefined): void {
  if (address && !isCountry(address.country)) {
    issues.add([...loc, 'country'], 'Input should be an ISO 3166-1 alpha-2 country code, such as US or FR', 'value_error');
  }
}

/** The address as stored and sent (customers, checkouts, orders): the wire's own keys. */
export function storedAddress(address: AddressInput) {
  return {
    line1: address.line1 ?? null,
    line2: address.line2 ?? null,
    postal_code: address.postalCode ?? null,
    city: address.city ?? null,
    state: address.state ?? null,
    country: address.country,
  };
}

// The tax id format recorded for a billing address's country. Kassa does not verify check digits,
// so where a country has several formats (Canada, Brazil, Japan...) its primary one is recorded.
const eu = ['AT', 'BE', 'BG', 'CY', 'CZ', 'DE', 'DK', 'EE', 'ES', 'FI', 'FR', 'GR', 'HR', 'HU', 'IE', 'IT', 'LT', 'LU', 'LV', 'MT', 'NL', 'PL', 'PT', 'RO', 'SE', 'SI', 'SK'];
const taxIdFormats: Record<string, string> = {
  ...Object.fromEntries(eu.map((country) => [country, 'eu_vat'])),
  ...Object.fromEntries(
    'ad_nrt ae_trn ar_cuit au_abn bh_vat bo_tin br_cnpj ca_gst_hst ch_uid cl_tin cn_tin co_nit cr_tin do_rcn ec_ruc eg_tin gb_vat ge_vat hk_br id_npwp il_vat in_gst is_vat jp_cn ke_pin kr_brn kz_bin li_uid mx_rfc my_frp ng_tin no_vat nz_gst om_vat pe_ruc ph_tin rs_pib ru_inn sa_vat sg_gst sv_nit th_vat tr_tin tw_vat ua_vat us_ein uy_ruc ve_rif vn_tin za_vat'
      .split(' ')
      .map((format) => [format.slice(0, 2).toUpperCase(), format]),
  ),
};

/**
 * A customer's tax id as stored, `[value, format]`: the value without separators, the format the
 * one of the billing address's country. No country, or one without tax ids, is refused.
 */
function taxIdOf(number: string, country: string | null): [string, string] {
  if (country === null) throw RequestValidationError.at(['input', 'billingAddress'], 'Country is required to validate tax ID.', 'missing');
  const value = number.replace(/[\s.\-]/g, '').toUpperCase();
  if (!/^[A-Z0-9]{1,64}$/.test(value)) throw RequestValidationError.at(['input', 'taxId'], 'Invalid tax ID.', 'value_error');
  const format = taxIdFormats[country];
  if (!format) throw RequestValidationError.at(['input', 'taxId'], `Tax IDs are not supported for ${countryName(country)}.`, 'value_error');
  return [value, format];
}

/** An email address as Kassa takes one (spaces around it are trimmed where it is stored); an issue at `loc` otherwise. */
export function checkEmail(issues: ValidationIssues, email: string | null | undefined, loc: (string | number)[] = ['input', 'email']): void {
  if (email != null && !isEmailAddress(email.trim())) {
    issues.add(loc, 'value is not a valid email address', 'value_error');
  }
}

/**
 * The organization sets an email: the customer holds it from now on. A new address (not merely
 * its case) is not one the customer has proved they receive mail at.
 */
function emailSetByOrganization(existing: { email: string }, email: string | null | undefined): Prisma.CustomerUpdateInput {
  if (email == null) return {};
  const trimmed = email.trim();
  return { email: trimmed, activeEmail: trimmed.toLowerCase(), ...(trimmed.toLowerCase() !== existing.email.toLowerCase() ? { emailVerified: false } : {}) };
}

function checkFields(issues: ValidationIssues, input: CustomerFields): void {
  checkEmail(issues, input.email);
  if (input.name != null && input.name.length > 256) issues.add(['input', 'name'], 'String should have at most 256 characters', 'string_too_long');
  if (input.externalId != null && (input.externalId.length < 1 || input.externalId.length > 256)) {
    issues.add(['input', 'externalId'], 'String should have 1 to 256 characters', 'string_too_long');
  }
  checkAddress(issues, ['input', 'billingAddress'], input.billingAddress);
  if (input.taxId && (input.taxId.length !== 2 || !input.taxId[0] || !input.taxId[1])) {
    issues.add(['input', 'taxId'], 'A tax id is a pair: [value, format], for example ["FR61954506077", "eu_vat"]', 'value_error');
  }
}

/** Refuses an email or external id another existing customer of the organization holds (call under lockCustomerIdentity). Core API only: the organization sees all its customers anyway. */
async function assertIdentityFree(db: Db, organizationId: string, identity: { email?: string | null; externalId?: string | null }, self?: string) {
  const issues = new ValidationIssues();
  const others = self ? { id: { not: self } } : {};
  if (identity.email && (await db.customer.count({ where: { organizationId, activeEmail: identity.email.trim().toLowerCase(), ...others } }))) {
    issues.add(['input', 'email'], 'A customer with this email address already exists.');
  }
  if (identity.externalId && (await db.customer.count({ where: { organizationId, activeExternalId: identity.externalId, ...others } }))) {
    issues.add(['input', 'externalId'], 'A customer with this external ID already exists.');
  }
  issues.throwIfAny();
}

/** A write that hit the unique email or external id, as the 422 the client can act on. */
function uniquenessError(error: unknown): never {
  const target = String((error as { meta?: { target?: unknown } }).meta?.target ?? (error as Error).message);
  if ((error as { code?: string }).code === 'P2002') {
    if (target.includes('external')) throw RequestValidationError.at(['input', 'externalId'], 'A customer with this external ID already exists.');
    throw RequestValidationError.at(['input', 'email'], 'A customer with this email address already exists.');
  }
  throw error;
}

// Core reaches the customers of its organizations; a signed-in customer reaches only itself.
function keyWhere(ctx: Context, key: CustomerKey): Prisma.CustomerWhereInput {
  return { AND: [reach(ctx).customer, 'id' in key ? { id: key.id } : { externalId: key.externalId }] };
}

/**
 * The customer, locked for the rest of the transaction: concurrent changes to one customer apply
 * one after the other, each seeing the one before (a second delete finds nothing to delete).
 */
export async function lockCustomer(ctx: Context, tx: Db, key: CustomerKey) {
  const found = await tx.customer.findFirst({ where: keyWhere(ctx, key), select: { id: true } });
  if (found) await tx.$queryRaw`SELECT id FROM customers WHERE id = ${found.id}::uuid FOR UPDATE`;
  const customer = found ? await tx.customer.findFirst({ where: { id: found.id, deletedAt: null } }) : null;
  if (!customer) throw new ResourceNotFoundError('Customer not found.');
  return customer;
}

async function record(ctx: Context, tx: Db, types: EventType[], customer: { id: string; organizationId: string }, data?: unknown) {
  await recordEvents(ctx, tx, types, { organizationId: customer.organizationId, resourceId: customer.id, resource: 'customer' }, data);
}

export async function listCustomers(ctx: Context, args: CustomerListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.CustomerWhereInput = {
    organizationId: organizationFilter(ctx, args.organizationId),
    deletedAt: null,
    // Every customer with the address, whether they hold it or a buyer typed it at checkout.
    ...(args.email ? { email: { equals: args.email.trim(), mode: 'insensitive' as const } } : {}),
    ...(args.query
      ? {
          OR: ['email', 'name', 'externalId'].map((field) => ({ [field]: { contains: escapeLike(args.query!), mode: 'insensitive' } })),
        }
      : {}),
    AND: metadataWhere(args.metadata),
  };
  const orderBy = sortingOrderBy<(typeof customerSortProperties)[number]>(args.sorting?.length ? args.sorting : ['-created_at'], (property, sort) =>
    property === 'created_at' ? { createdAt: sort } : property === 'email' ? { email: sort } : { name: { sort, nulls: 'last' } },
  );
  const [items, total] = await Promise.all([
    ctx.prisma.customer.findMany({ ...query, where, orderBy: orderBy as Prisma.CustomerOrderByWithRelationInput[], ...window }),
    ctx.prisma.customer.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getCustomer(ctx: Context, key: CustomerKey, query: object = {}) {
  const customer = await ctx.prisma.customer.findFirst({ ...query, where: keyWhere(ctx, key) });
  if (!customer) throw new ResourceNotFoundError('Customer not found.');
  return customer;
}

export async function createCustomer(ctx: Context, input: CustomerCreateInput, query: object) {
  const issues = new ValidationIssues();
  checkFields(issues, input);
  let organizationId = '';
  try {
    organizationId = owningOrganization(ctx, input.organizationId, ['input', 'organizationId']);
  } catch (error) {
    issues.list.push(...(error as RequestValidationError).issues);
  }
  issues.throwIfAny();
  const email = input.email.trim();
  return ctx.prisma
    .$transaction(async (tx) => {
      await lockCustomerIdentity(tx as Db, organizationId, { email, externalId: input.externalId });
      await assertIdentityFree(tx as Db, organizationId, { email, externalId: input.externalId });
      const customer = await tx.customer.create({
        data: {
          organizationId,
          email,
          activeEmail: email.toLowerCase(),
          name: input.name ?? null,
          externalId: input.externalId ?? null,
          activeExternalId: input.externalId ?? null,
          billingAddress: input.billingAddress ? storedAddress(input.billingAddress) : undefined,
          taxId: input.taxId ?? undefined,
          metadata: input.metadata ?? {},
          createdAt: ctx.now(),
        },
      });
      await record(ctx, tx as Db, ['customer.created'], customer);
      return tx.customer.findUniqueOrThrow({ ...query, where: { id: customer.id } });
    })
    .catch(uniquenessError);
}

export async function updateCustomer(ctx: Context, key: CustomerKey, input: CustomerFields, query: object) {
  const issues = new ValidationIssues();
  checkFields(issues, input);
  if (input.email === null) issues.add(['input', 'email'], 'A customer always has an email address.');
  issues.throwIfAny();
  return changeCustomer(ctx, key, { email: input.email, externalId: input.externalId }, query, (existing) => {
    if (input.externalId !== undefined && existing.externalId !== null && input.externalId !== existing.externalId) {
      throw RequestValidationError.at(['input', 'externalId'], "A customer's external ID cannot be changed once set.");
    }
    const data: Prisma.CustomerUpdateInput = emailSetByOrganization(existing, input.email);
    if (input.name !== undefined) data.name = input.name;
    if (input.externalId != null) Object.assign(data, { externalId: input.externalId, activeExternalId: input.externalId });
    if (input.billingAddress !== undefined) data.billingAddress = input.billingAddress ? storedAddress(input.billingAddress) : (null as never);
    if (input.taxId !== undefined) data.taxId = input.taxId ?? (null as never);
    if (input.metadata != null) data.metadata = input.metadata;
    return data;
  });
}

/** Refuses billing details that are malformed, before anything changes. */
export function checkBillingDetails(issues: ValidationIssues, input: CustomerBillingDetailsInput): void {
  if (input.billingName != null && input.billingName.length > 256) issues.add(['input', 'billingName'], 'String should have at most 256 characters', 'string_too_long');
  checkAddress(issues, ['input', 'billingAddress'], input.billingAddress);
}

/**
 * The billing details a customer changes of themselves. A tax id takes its format from the billing
 * address's country, so a new country re-reads the kept number.
 */
export async function updateCustomerBillingDetails(ctx: Context, key: CustomerKey, input: CustomerBillingDetailsInput, query: object) {
  const issues = new ValidationIssues();
  checkBillingDetails(issues, input);
  issues.throwIfAny();
  return changeCustomer(ctx, key, {}, query, (existing) => {
    const data: Prisma.CustomerUpdateInput = {};
    if (input.billingName !== undefined) data.billingName = input.billingName;
    const storedCountry = (existing.billingAddress as { country: string } | null)?.country ?? null;
    const country = input.billingAddress !== undefined ? (input.billingAddress?.country ?? null) : storedCountry;
    if (input.billingAddress !== undefined) data.billingAddress = input.billingAddress ? storedAddress(input.billingAddress) : (null as never);
    const keptNumber = (existing.taxId as [string, string] | null)?.[0] ?? null;
    if (input.taxId != null) data.taxId = taxIdOf(input.taxId, country);
    else if (input.taxId === null) data.taxId = null as never;
    else if (keptNumber !== null && country !== storedCountry) data.taxId = taxIdOf(keptNumber, country);
    return data;
  });
}

type LockedCustomer = Awaited<ReturnType<typeof lockCustomer>>;

/**
 * One change to a customer, under its lock and the lock of the email or external id it takes:
 * `changes` reads the customer as it is and may refuse; the change records customer.updated.
 */
async function changeCustomer(
  ctx: Context,
  key: CustomerKey,
  identity: { email?: string | null; externalId?: string | null },
  query: object,
  changes: (existing: LockedCustomer) => Prisma.CustomerUpdateInput,
) {
  return ctx.prisma
    .$transaction(async (tx) => {
      const existing = await lockCustomer(ctx, tx as Db, key);
      await lockCustomerIdentity(tx as Db, existing.organizationId, identity);
      const data = changes(existing);
      await assertIdentityFree(tx as Db, existing.organizationId, identity, existing.id);
      const customer = await tx.customer.update({ where: { id: existing.id }, data });
      await record(ctx, tx as Db, ['customer.updated'], customer);
      return tx.customer.findUniqueOrThrow({ ...query, where: { id: customer.id } });
    })
    .catch(uniquenessError);
}

export async function deleteCustomer(ctx: Context, key: CustomerKey) {
  const ended: string[] = [];
  await ctx.prisma.$transaction(async (tx) => {
    const existing = await lockCustomer(ctx, tx as Db, key);
    // The event carries the customer as it was, marked deleted: a GET can no longer render it.
    const before = (await renderSubject(ctx, tx as Db, { organizationId: existing.organizationId, resource: 'customer', resourceId: existing.id })) as object;
    const deletedAt = ctx.now();
    // A deleted customer keeps nothing: live subscriptions end now and every benefit is revoked.
    await endCustomerEntitlements(ctx, tx as Db, existing.id);
    await tx.customer.update({ where: { id: existing.id }, data: { deletedAt, activeEmail: null, activeExternalId: null } });
    await record(ctx, tx as Db, ['customer.deleted'], existing, { ...before, deleted_at: deletedAt.toISOString() });
    // The customer's sessions end with it.
    const sessions = await tx.customerSession.findMany({ where: { customerId: existing.id, revokedAt: null }, select: { tokenHash: true } });
    ended.push(...sessions.map((s) => s.tokenHash));
    await announcePrincipalChange(tx as Db, ended);
  });
  ctx.environment.principals.forget(ended);
  return true;
}

/**
 * Serializes, until the transaction ends, everything that may give an organization a customer
 * with this email or external id: of two such transactions the second waits and then sees the
 * first one's customer. Locks are taken in one order (email, then external id) so two
 * transactions cannot wait on each other.
 */
export async function lockCustomerIdentity(db: Db, organizationId: string, identity: { email?: string | null; externalId?: string | null }) {
  const keys = [
    identity.email ? `customer-email:${organizationId}:${identity.email.trim().toLowerCase()}` : null,
    identity.externalId ? `customer-external-id:${organizationId}:${identity.externalId}` : null,
  ];
  for (const key of keys) if (key) await db.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`;
}

export { record as recordCustomerEvents };
