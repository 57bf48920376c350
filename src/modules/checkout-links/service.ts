// Checkout links: a reusable public link to buy one or more products of an organization. The link
// holds what each checkout starts with (its products, the first selected; a discount; a success
// URL; whether the buyer may enter a code or must give a full address; metadata), and its URL,
// addressed by a client secret, needs no token: each visit creates a fresh checkout from the link
// through the checkout service and sends the visitor to it. Deleting is soft: the link leaves the
// lists and its URL stops working; the checkouts it created keep working.
import { randomBytes } from 'node:crypto';
import { systemContext, type Context, type Environment } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import { RequestValidationError, ResourceNotFoundError, ValidationIssues } from '../../graphql/errors.ts';
import type { Metadata } from '../../graphql/metadata.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { sortingOrderBy } from '../../graphql/sorting.ts';
import { isEmailAddress } from '../../email/address.ts';
import { organizationFilter } from '../organizations/access.ts';
import { checkSuccessUrl, createCheckout, updateClientCheckout } from '../checkouts/service.ts';

export const checkoutLinkSortProperties = ['created_at', 'label', 'success_url', 'allow_discount_codes'] as const;

interface CheckoutLinkFields {
  label?: string | null;
  successUrl?: string | null;
  allowDiscountCodes?: boolean | null;
  requireBillingAddress?: boolean | null;
  discountId?: string | null;
  metadata?: Metadata | null;
}

export interface CheckoutLinkCreateInput extends CheckoutLinkFields {
  products?: string[] | null;
  /** The client library's single-product form. */
  productId?: string | null;
  /** The client library's former single-price form: the price's product is offered. */
  productPriceId?: string | null;
  paymentProcessor?: string | null;
}

export interface CheckoutLinkUpdateInput extends CheckoutLinkFields {
  products?: string[] | null;
}

export interface CheckoutLinkListArgs extends PageArgs {
  organizationId?: string[] | null;
  productId?: string[] | null;
  sorting?: string[] | null;
}

const live = { deletedAt: null };

// ---------------------------------------------------------------------------------------------
// Reading

export async function listCheckoutLinks(ctx: Context, args: CheckoutLinkListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.CheckoutLinkWhereInput = {
    ...live,
    organizationId: organizationFilter(ctx, args.organizationId),
    ...(args.productId?.length ? { products: { some: { productId: { in: args.productId } } } } : {}),
  };
  const orderBy = sortingOrderBy<(typeof checkoutLinkSortProperties)[number]>(args.sorting?.length ? args.sorting : ['-created_at'], (property, sort) => {
    switch (property) {
      case 'created_at':
        return { createdAt: sort };
      case 'label':
        return { label: { sort, nulls: 'last' } };
      case 'success_url':
        return { successUrl: { sort, nulls: 'last' } };
      case 'allow_discount_codes':
        return { allowDiscountCodes: sort };
    }
  });
  const [items, total] = await Promise.all([
    ctx.prisma.checkoutLink.findMany({ ...query, where, orderBy: [...(orderBy as Prisma.CheckoutLinkOrderByWithRelationInput[]), { id: 'asc' }], ...window }),
    ctx.prisma.checkoutLink.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getCheckoutLink(ctx: Context, id: string, query: object) {
  const link = await ctx.prisma.checkoutLink.findFirst({ ...query, where: { id, ...live, organizationId: organizationFilter(ctx) } });
  if (!link) throw new ResourceNotFoundError('Checkout link not found.');
  return link;
}

// ---------------------------------------------------------------------------------------------
// Writing

/**
 * The products a link offers: at least one, each once, each a live product of one organization
 * the principal reaches (of `organizationId` when the link has one already). Returns that
 * organization, or null when the products named none.
 */
async function checkProducts(ctx: Context, db: Db, issues: ValidationIssues, products: string[], organizationId: string | null): Promise<string | null> {
  if (products.length === 0) {
    issues.add(['input', 'products'], 'List should have at least 1 item after validation, not 0', 'too_short');
    return null;
  }
  if (new Set(products).size !== products.length) issues.add(['input', 'products'], 'Each product may be offered once.');
  const found = await db.product.findMany({ where: { id: { in: products }, organizationId: organizationId ?? organizationFilter(ctx) }, select: { id: true, organizationId: true, isArchived: true } });
  products.forEach((id, i) => {
    const product = found.find((p) => p.id === id);
    if (!product) issues.add(['input', 'products', i], 'Product not found.');
    else if (product.isArchived) issues.add(['input', 'products', i], 'This product is archived and cannot be sold.');
  });
  const organizations = new Set(found.map((p) => p.organizationId));
  if (organizations.size > 1) issues.add(['input', 'products'], 'All products must belong to one organization.');
  return organizations.size === 1 ? [...organizations][0] : null;
}

/**
 * The link's discount: a live discount of its organization that applies to each of its products.
 * A discount the link keeps while its products change is checked too, and refused at `products`.
 */
async function checkDiscount(db: Db, issues: ValidationIssues, discountId: string, organizationId: string, products: string[], kept = false) {
  const discount = await db.discount.findFirst({ where: { id: discountId, ...live, organizationId }, include: { products: { select: { productId: true } } } });
  const restricted = discount?.products.map((p) => p.productId) ?? [];
  const covers = discount && !(restricted.length && products.some((id) => !restricted.includes(id)));
  if (covers) return;
  if (kept) {
    const why = discount ? 'does not apply to every product given' : 'was deleted';
    return issues.add(['input', 'products'], `The link's discount ${why}: remove it (discount_id null) or give another with the products.`);
  }
  issues.add(['input', 'discountId'], discount ? 'This discount does not apply to every product of the link.' : 'Discount not found.');
}

/** The products a create names: the list, or the client library's single product or price forms. */
async function productsToCreate(ctx: Context, input: CheckoutLinkCreateInput): Promise<string[]> {
  if (input.products) return input.products;
  if (input.productId) return [input.productId];
  if (input.productPriceId) {
    const price = await ctx.prisma.productPrice.findFirst({ where: { id: input.productPriceId, product: { organizationId: organizationFilter(ctx) } }, select: { productId: true } });
    if (!price) throw RequestValidationError.at(['input', 'productPriceId'], 'Product price not found.');
    return [price.productId];
  }
  return [];
}

export async function createCheckoutLink(ctx: Context, input: CheckoutLinkCreateInput, query: object) {
  const issues = new ValidationIssues();
  const products = await productsToCreate(ctx, input);
  const organizationId = await checkProducts(ctx, ctx.prisma, issues, products, null);
  if (input.discountId && organizationId) await checkDiscount(ctx.prisma, issues, input.discountId, organizationId, products);
  checkSuccessUrl(issues, input.successUrl);
  issues.throwIfAny();
  return ctx.prisma.checkoutLink.create({
    ...query,
    data: {
      organizationId: organizationId!,
      clientSecret: `${ctx.environment.config.tokenPrefix}_cl_${randomBytes(32).toString('base64url')}`,
      label: input.label ?? null,
      successUrl: input.successUrl ?? null,
      allowDiscountCodes: input.allowDiscountCodes ?? true,
      requireBillingAddress: input.requireBillingAddress ?? false,
      discountId: input.discountId ?? null,
      metadata: input.metadata ?? {},
      createdAt: ctx.now(),
      products: { create: products.map((productId, position) => ({ productId, position })) },
    },
  });
}

/** Locks a live link the principal reaches, for the rest of the transaction. */
async function lockCheckoutLink(ctx: Context, db: Db, id: string) {
  await db.$queryRaw`SELECT id FROM checkout_links WHERE id = ${id}::uuid FOR UPDATE`;
  const link = await db.checkoutLink.findFirst({ where: { id, ...live, organizationId: organizationFilter(ctx) }, include: { products: { orderBy: { position: 'asc' } } } });
  if (!link) throw new ResourceNotFoundError('Checkout link not found.');
  return link;
}

export async function updateCheckoutLink(ctx: Context, id: string, input: CheckoutLinkUpdateInput, query: object) {
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const link = await lockCheckoutLink(ctx, db, id);
    const issues = new ValidationIssues();
    if (input.products) await checkProducts(ctx, db, issues, input.products, link.organizationId);
    const products = input.products ?? link.products.map((p) => p.productId);
    if (input.discountId) await checkDiscount(db, issues, input.discountId, link.organizationId, products);
    else if (input.discountId === undefined && input.products && link.discountId) await checkDiscount(db, issues, link.discountId, link.organizationId, products, true);
    checkSuccessUrl(issues, input.successUrl);
    issues.throwIfAny();
    const data: Prisma.CheckoutLinkUncheckedUpdateInput = {};
    if (input.label !== undefined) data.label = input.label;
    if (input.successUrl !== undefined) data.successUrl = input.successUrl;
    if (input.allowDiscountCodes != null) data.allowDiscountCodes = input.allowDiscountCodes;
    if (input.requireBillingAddress != null) data.requireBillingAddress = input.requireBillingAddress;
    if (input.discountId !== undefined) data.discountId = input.discountId;
    if (input.metadata != null) data.metadata = input.metadata;
    if (input.products) {
      await db.checkoutLinkProduct.deleteMany({ where: { checkoutLinkId: id } });
      await db.checkoutLinkProduct.createMany({ data: input.products.map((productId, position) => ({ checkoutLinkId: id, productId, position })) });
    }
    return db.checkoutLink.update({ ...query, where: { id }, data });
  });
}

/** Soft-deletes: the link leaves the lists and its URL stops working; its checkouts keep working. */
export async function deleteCheckoutLink(ctx: Context, id: string) {
  await ctx.prisma.$transaction(async (tx) => {
    await lockCheckoutLink(ctx, tx as Db, id);
    await tx.checkoutLink.update({ where: { id }, data: { deletedAt: ctx.now() } });
  });
  return true;
}

// ---------------------------------------------------------------------------------------------
// A visit to the link's URL

/** What a visitor's link may fill in ahead, from its query string; anything invalid is left out. */
export interface CheckoutLinkVisit {
  customerEmail?: string | null;
  customerName?: string | null;
  discountCode?: string | null;
  /** Metadata the link's URL carries (`reference_id`, `utm_*`): added to the link's own. */
  metadata?: Record<string, string>;
  clientIp: string;
  requestId: string;
}

export type CheckoutLinkOpening =
  | { outcome: 'opened'; checkoutId: string; url: string }
  | { outcome: 'not-found' }
  | { outcome: 'unavailable'; detail: string };

/**
 * Opens a link for one visitor: a fresh checkout of its live products (the first selected), with
 * its discount while the discount still applies, its success URL, settings and metadata, recorded
 * as created from the link. The checkout is created by the checkout service, as the link's
 * organization, in its own transaction with its `checkout.created` event. An unknown or deleted
 * link is not found; a link with nothing left to sell is unavailable.
 */
export async function openCheckoutLink(environment: Environment, clientSecret: string, visit: CheckoutLinkVisit, now: Date): Promise<CheckoutLinkOpening> {
  const link = await environment.prisma.checkoutLink.findUnique({
    where: { clientSecret },
    include: { products: { orderBy: { position: 'asc' }, include: { product: { select: { isArchived: true } } } } },
  });
  if (!link || link.deletedAt) return { outcome: 'not-found' };
  const products = link.products.filter((offered) => !offered.product.isArchived).map((offered) => offered.productId);
  if (!products.length) return { outcome: 'unavailable', detail: 'The products of this link are no longer sold.' };
  const ctx = { ...systemContext(environment, environment.prisma, link.organizationId, () => now, visit.requestId), clientIp: visit.clientIp };
  const email = visit.customerEmail && isEmailAddress(visit.customerEmail) ? visit.customerEmail : null;
  let checkout: { id: string; clientSecret: string; discountId: string | null };
  try {
    checkout = await createCheckout(
      ctx,
      {
        products,
        discountId: link.discountId,
        dropUnusableDiscount: true,
        successUrl: link.successUrl,
        allowDiscountCodes: link.allowDiscountCodes,
        requireBillingAddress: link.requireBillingAddress,
        metadata: { ...(link.metadata as Metadata), ...visit.metadata },
        customerEmail: email,
        customerName: visit.customerName || null,
        customerIpAddress: visit.clientIp || null,
        checkoutLinkId: link.id,
      },
      {},
    );
  } catch (error) {
    // The link's products can no longer be bought as they are (no price left to sell at).
    if (error instanceof RequestValidationError) return { outcome: 'unavailable', detail: error.issues[0]?.msg ?? error.message };
    throw error;
  }
  if (visit.discountCode && link.allowDiscountCodes && !checkout.discountId) {
    // A code that does not exist or does not apply is left off: the buyer can still enter one.
    await updateClientCheckout(ctx, checkout.clientSecret, { discountCode: visit.discountCode }, {}).catch((error: unknown) => {
      if (!(error instanceof RequestValidationError)) throw error;
    });
  }
  return { outcome: 'opened', checkoutId: checkout.id, url: `${environment.publicUrl}/checkout/${checkout.clientSecret}` };
}
