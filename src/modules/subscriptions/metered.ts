// Metered billing at renewal. A subscription's base price is billed up front, its metered prices in
// arrears: the order that opens a period also bills the usage of the period that just ended. For
// each meter the subscription bills or credits, in the renewal's claim (the subscription row is
// locked and the period's order is unique), this:
//   1. reads the meter's usage of the customer over [period start, period end): an event exactly at
//      the end belongs to the next period;
//   2. reads the previous period again: events recorded since it was billed, with a timestamp in it,
//      grew its usage; the growth is billed now (late usage is billed once, in the next order);
//   3. draws the customer meter's credits down first, and bills the rest at the price's unit amount,
//      rounded half up to a whole minor unit once per line, then capped;
//   4. records what it read (subscription_meter_usages, unique per subscription, meter and period),
//      and cycles the credits: a meter_credit benefit credits its units again, keeping what is left
//      when it rolls over, resetting it otherwise; the customer meter's window moves to the new period.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { ProductPrice, Subscription } from '../../generated/prisma/client.ts';
import { recordCustomerStateChanged } from '../benefits/grants.ts';
import { creditCustomerMeter, customerUsage, lockCustomerMeter, meterCreditOf, meteredAmount, type MeterCredit } from '../usage/credits.ts';

export interface MeteredItem {
  label: string;
  amount: number;
  productPriceId: string;
  proration: boolean;
}

/** Units as an item label shows them: whole, or with up to 6 decimals. */
const unitsText = (units: number) => (Number.isInteger(units) ? String(units) : String(Number(units.toFixed(6))));

/**
 * Bills the usage of [start, end) for each metered price of the subscription and cycles its meter
 * credits; returns the order items. `final`: the period that closes a subscription canceled at its
 * end, whose credits are not renewed.
 */
export async function billPeriodUsage(ctx: Context, db: Db, subscription: Subscription, period: { start: Date; end: Date }, final: boolean): Promise<MeteredItem[]> {
  const prices = await db.subscriptionPrice.findMany({
    where: { subscriptionId: subscription.id, productPrice: { amountType: 'metered_unit' } },
    include: { productPrice: true },
    orderBy: { position: 'asc' },
  });
  const grants = await db.benefitGrant.findMany({
    where: { subscriptionId: subscription.id, grantedAt: { not: null }, revokedAt: null, benefit: { type: 'meter_credit' } },
    include: { benefit: { select: { properties: true } } },
  });
  const credits = new Map<string, MeterCredit>();
  for (const grant of grants) {
    const credit = meterCreditOf(grant.benefit.properties);
    const held = credits.get(credit.meterId);
    credits.set(credit.meterId, held ? { ...credit, units: held.units + credit.units, rollover: held.rollover && credit.rollover } : credit);
  }
  const meterIds = [...new Set([...prices.map((p) => p.productPrice.meterId!), ...credits.keys()])].sort();
  if (!meterIds.length) return [];
  const customer = await db.customer.findUniqueOrThrow({ where: { id: subscription.customerId }, select: { id: true, externalId: true } });
  const meters = await db.meter.findMany({ where: { id: { in: meterIds } } });
  const items: MeteredItem[] = [];
  const owner = { organizationId: subscription.organizationId, customerId: subscription.customerId };
  // Customer meters are locked in meter id order, so two renewals of one customer cannot deadlock.
  for (const meterId of meterIds) {
    const meter = meters.find((m) => m.id === meterId)!;
    const price = prices.find((p) => p.productPrice.meterId === meterId)?.productPrice ?? null;
    const customerMeter = await lockCustomerMeter(db, { ...owner, meterId }, period.start, ctx.now());
    const units = await customerUsage(db, meter, customer, period.start, period.end);
    const late = await lateUsage(db, subscription.id, meter, customer, period.start);
    const consumed = units + late;
    const drawn = Math.min(Math.max(consumed, 0), customerMeter.creditedUnits);
    const billable = Math.max(consumed - drawn, 0);
    const amount = price ? meteredAmount(billable, price.unitAmount!, price.capAmount) : 0;
    await db.subscriptionMeterUsage.create({
      data: {
        subscriptionId: subscription.id,
        meterId,
        productPriceId: price?.id ?? null,
        periodStart: period.start,
        periodEnd: period.end,
        units,
        creditedUnits: drawn,
        billedUnits: billable,
        amount,
        final,
        createdAt: ctx.now(),
      },
    });
    if (price) items.push({ label: itemLabel(meter.name, billable, price), amount, productPriceId: price.id, proration: false });
    const left = customerMeter.creditedUnits - drawn;
    await db.customerMeter.update({ where: { id: customerMeter.id }, data: { creditedUnits: Math.max(0, Math.floor(left)), windowStart: period.end, modifiedAt: ctx.now() } });
    const credit = credits.get(meterId);
    if (credit && !final) await creditCustomerMeter(db, owner, credit, { now: ctx.now(), windowStart: period.end, reset: true });
  }
  // The customer's meters moved to the new period: their state (active_meters) changed.
  await recordCustomerStateChanged(ctx, db, owner);
  return items;
}

const itemLabel = (meterName: string, units: number, price: ProductPrice) => `${meterName}: ${unitsText(units)} × ${price.unitAmount!.toFixed()}`;

/**
 * The growth of the previous period's usage since it was billed: events recorded late, with a
 * timestamp in that period. Its reading is brought up to date, so the growth is billed once.
 */
async function lateUsage(db: Db, subscriptionId: string, meter: Parameters<typeof customerUsage>[1] & { id: string }, customer: { id: string; externalId: string | null }, periodStart: Date): Promise<number> {
  const previous = await db.subscriptionMeterUsage.findFirst({ where: { subscriptionId, meterId: meter.id, periodEnd: periodStart } });
  if (!previous) return 0;
  const now = await customerUsage(db, meter, customer, previous.periodStart, previous.periodEnd);
  if (now <= previous.units) return 0;
  await db.subscriptionMeterUsage.update({ where: { id: previous.id }, data: { units: now } });
  return now - previous.units;
}

/** Whether the order bills the final usage of a subscription canceled at period end: it is charged though the subscription ended. */
export async function billsFinalUsage(db: Db, orderId: string): Promise<boolean> {
  return (await db.subscriptionMeterUsage.count({ where: { orderId, final: true } })) > 0;
}

/** Links the period's readings to the order that bills them. */
export async function attachUsageToOrder(db: Db, subscriptionId: string, periodStart: Date, orderId: string): Promise<void> {
  await db.subscriptionMeterUsage.updateMany({ where: { subscriptionId, periodStart, orderId: null }, data: { orderId } });
}
