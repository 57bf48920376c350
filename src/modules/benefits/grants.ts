// Benefit grants: a customer holds the benefits of a product through one purchase, a paid one-time
// order or a live subscription. A sync brings the grants of one purchase in line with what it
// entitles to now: missing grants are made, grants no longer due are revoked. It is idempotent —
// run twice, it finds nothing to do — so every change that may affect entitlements just schedules it.
import { systemContext, type Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { Benefit } from '../../generated/prisma/client.ts';
import { recordEvents } from '../../events/outbox.ts';
import { enqueueJob, job, type JobContext } from '../../jobs/runner.ts';
import { issueLicenseKey, revokeLicenseKey } from '../license-keys/service.ts';
import { recordSystemEvents } from '../usage/events.ts';
import { creditCustomerMeter, meterCreditOf, resetCustomerMeter } from '../usage/credits.ts';

export type Purchase = { subscriptionId: string } | { orderId: string };

/** Subscription statuses that keep the benefits: past-due subscriptions keep them while payment is retried. */
const entitledSubscriptionStatuses = ['active', 'trialing', 'past_due'];

export async function scheduleGrantSync(ctx: Context, db: Db, purchase: Purchase): Promise<void> {
  await enqueueJob(db, 'benefits.sync', purchase, ctx.now());
}

interface Holding {
  organizationId: string;
  customerId: string;
  productId: string;
  entitled: boolean;
  subscriptionId: string | null;
  orderId: string | null;
}

/** Locks the purchase and says what it entitles its customer to right now. */
async function holdingOf(db: Db, purchase: Purchase): Promise<Holding | null> {
  if ('subscriptionId' in purchase) {
    await db.$executeRaw`SELECT id FROM subscriptions WHERE id = ${purchase.subscriptionId}::uuid FOR UPDATE`;
    const subscription = await db.subscription.findUnique({ where: { id: purchase.subscriptionId } });
    if (!subscription) return null;
    const { organizationId, customerId, productId } = subscription;
    return { organizationId, customerId, productId, entitled: entitledSubscriptionStatuses.includes(subscription.status), subscriptionId: subscription.id, orderId: null };
  }
  await db.$executeRaw`SELECT id FROM orders WHERE id = ${purchase.orderId}::uuid FOR UPDATE`;
  const order = await db.order.findUnique({ where: { id: purchase.orderId }, include: { refunds: { where: { revokeBenefits: true, status: { in: ['pending', 'succeeded'] } }, select: { id: true } } } });
  if (!order) return null;
  // Only one-time purchases grant through their order; subscription orders grant through the
  // subscription. A refund that asks for it revokes the benefits, whatever its amount.
  const revokedByRefund = order.refunds.length > 0;
  const customer = await db.customer.findUniqueOrThrow({ where: { id: order.customerId }, select: { deletedAt: true } });
  const entitled = order.billingReason === 'purchase' && order.paid && !revokedByRefund && customer.deletedAt === null;
  return { organizationId: order.organizationId, customerId: order.customerId, productId: order.productId, entitled, subscriptionId: null, orderId: order.id };
}

/** Brings the grants of one purchase in line with its entitlements, with their events, in `db`'s transaction. */
export async function syncGrants(ctx: Context, db: Db, purchase: Purchase): Promise<void> {
  const holding = await holdingOf(db, purchase);
  if (!holding) return;
  const scopeId = holding.subscriptionId ?? holding.orderId!;
  const due = holding.entitled
    ? await db.productBenefit.findMany({ where: { productId: holding.productId, benefit: { deletedAt: null } }, include: { benefit: true }, orderBy: { position: 'asc' } })
    : [];
  const held = await db.benefitGrant.findMany({ where: { scopeId, customerId: holding.customerId } });
  const changed: string[] = [];
  const usage: { name: 'benefit.granted' | 'benefit.revoked'; grantId: string; benefitId: string }[] = [];
  for (const { benefit } of due) {
    const existing = held.find((g) => g.benefitId === benefit.id);
    if (existing && existing.grantedAt && !existing.revokedAt) {
      // Held already: only what the benefit gives may have changed (files added to a downloadable).
      const properties = grantProperties(benefit, existing.properties as GrantProperties, null);
      if (JSON.stringify(properties) === JSON.stringify(existing.properties)) continue;
      await db.benefitGrant.update({ where: { id: existing.id }, data: { properties } });
      changed.push(existing.id);
      await recordGrantEvent(ctx, db, 'benefit_grant.updated', existing);
      continue;
    }
    const grant = existing
      ? await db.benefitGrant.update({ where: { id: existing.id }, data: { grantedAt: ctx.now(), revokedAt: null } })
      : await db.benefitGrant.create({
          data: {
            organizationId: holding.organizationId,
            benefitId: benefit.id,
            customerId: holding.customerId,
            subscriptionId: holding.subscriptionId,
            orderId: holding.orderId,
            scopeId,
            grantedAt: ctx.now(),
            createdAt: ctx.now(),
          },
        });
    const key = benefit.type === 'license_keys' ? await issueLicenseKey(ctx, db, grant, benefit.properties as never) : null;
    if (benefit.type === 'meter_credit') await creditGrant(ctx, db, holding, benefit);
    await db.benefitGrant.update({ where: { id: grant.id }, data: { properties: grantProperties(benefit, {}, key) } });
    changed.push(grant.id);
    usage.push({ name: 'benefit.granted', grantId: grant.id, benefitId: benefit.id });
    await recordGrantEvent(ctx, db, 'benefit_grant.created', grant);
  }
  for (const grant of held) {
    if (!grant.grantedAt || grant.revokedAt || due.some((d) => d.benefitId === grant.benefitId)) continue;
    await db.benefitGrant.update({ where: { id: grant.id }, data: { revokedAt: ctx.now() } });
    await revokeLicenseKey(db, grant.id);
    const benefit = await db.benefit.findUniqueOrThrow({ where: { id: grant.benefitId }, select: { type: true, properties: true } });
    if (benefit.type === 'meter_credit') await resetCustomerMeter(db, holding, meterCreditOf(benefit.properties).meterId, ctx.now());
    changed.push(grant.id);
    usage.push({ name: 'benefit.revoked', grantId: grant.id, benefitId: grant.benefitId });
    await recordGrantEvent(ctx, db, 'benefit_grant.revoked', grant);
  }
  await recordGrantUsageEvents(ctx, db, holding, usage);
  if (changed.length) await recordCustomerStateChanged(ctx, db, holding);
}

/**
 * A meter_credit grant credits its units to the customer's meter. The meter's window opens at the
 * start of the subscription's period in progress (or now, for a one-time purchase).
 */
async function creditGrant(ctx: Context, db: Db, holding: Holding, benefit: Benefit) {
  const subscription = holding.subscriptionId ? await db.subscription.findUniqueOrThrow({ where: { id: holding.subscriptionId }, select: { currentPeriodStart: true } }) : null;
  await creditCustomerMeter(db, holding, meterCreditOf(benefit.properties), { now: ctx.now(), windowStart: subscription?.currentPeriodStart ?? ctx.now(), reset: false });
}

/** benefit.granted and benefit.revoked as system usage events of the customer, with the grant's ids and the benefit's type. */
async function recordGrantUsageEvents(ctx: Context, db: Db, holding: Holding, usage: { name: string; grantId: string; benefitId: string }[]) {
  if (!usage.length) return;
  const benefits = await db.benefit.findMany({ where: { id: { in: usage.map((u) => u.benefitId) } }, select: { id: true, type: true } });
  await recordSystemEvents(
    db,
    ctx.now(),
    usage.map((u) => ({
      organizationId: holding.organizationId,
      customerId: holding.customerId,
      name: u.name,
      metadata: { benefit_id: u.benefitId, benefit_grant_id: u.grantId, benefit_type: benefits.find((b) => b.id === u.benefitId)!.type },
    })),
  );
}

type GrantProperties = { license_key_id?: string; display_key?: string; files?: string[] };

/**
 * What a grant gives: its license key, or the benefit's files. Archived files are not given to new
 * holders, but those who hold them keep them.
 */
function grantProperties(benefit: Benefit, held: GrantProperties, key: { id: string; displayKey: string } | null): GrantProperties {
  if (benefit.type === 'license_keys') return key ? { license_key_id: key.id, display_key: key.displayKey } : held;
  if (benefit.type === 'downloadables') {
    const { files, archived = {} } = benefit.properties as { files: string[]; archived?: Record<string, boolean> };
    return { files: files.filter((file) => !archived[file] || held.files?.includes(file)) };
  }
  return {};
}

async function recordGrantEvent(ctx: Context, db: Db, type: 'benefit_grant.created' | 'benefit_grant.updated' | 'benefit_grant.revoked', grant: { id: string; organizationId: string }) {
  await recordEvents(ctx, db, [type], { organizationId: grant.organizationId, resourceId: grant.id, resource: 'benefit_grant' });
}

/** Records the customer's new state; a deleted customer has none (its customer.deleted event said so). */
export async function recordCustomerStateChanged(ctx: Context, db: Db, customer: { organizationId: string; customerId: string }, read?: { deletedAt: Date | null }) {
  // A caller that read the customer in its transaction passes it: one round trip less.
  const { deletedAt } = read ?? (await db.customer.findUniqueOrThrow({ where: { id: customer.customerId }, select: { deletedAt: true } }));
  if (deletedAt) return;
  await recordEvents(ctx, db, ['customer.state_changed'], { organizationId: customer.organizationId, resourceId: customer.customerId, resource: 'customer_state' });
}

export const grantSyncJob = job<Purchase>('benefits.sync', async (purchase, job: JobContext) => {
  await job.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const owner = 'subscriptionId' in purchase
      ? await db.subscription.findUnique({ where: { id: purchase.subscriptionId }, select: { organizationId: true } })
      : await db.order.findUnique({ where: { id: purchase.orderId }, select: { organizationId: true } });
    if (!owner) return;
    await syncGrants(systemContext(job.environment, db, owner.organizationId, job.now, 'benefits-sync'), db, purchase);
  });
});

/** After a product's benefits change: a sync for every purchase of it. */
export const productGrantSyncJob = job<{ productId: string }>('benefits.sync-product', async ({ productId }, job: JobContext) => {
  await job.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const subscriptions = await db.subscription.findMany({ where: { productId }, select: { id: true } });
    const orders = await db.order.findMany({ where: { productId, billingReason: 'purchase', paid: true }, select: { id: true } });
    for (const { id } of subscriptions) await enqueueJob(db, 'benefits.sync', { subscriptionId: id }, job.now());
    for (const { id } of orders) await enqueueJob(db, 'benefits.sync', { orderId: id }, job.now());
  });
});
