// Metered billing at renewal. A subscription's base price is billed up front, its metered prices in
// arrears: the order that opens a period also bills the usage of the period that just ended. For
// each meter the subscription bills or credits, in the renewal's claim (the subscription row is
// locked and the period's order is unique), this:
//   1. reads the meter's usage of the customer over [period start, period end) that this
//      subscription bills (with another live subscription on the meter, each event is billed by the
//      earliest created): an event exactly at the end belongs to the next period;
//   2. reads the previous period again: events recorded since it was billed, with a timestamp in it,
//      grew its usage; the growth is billed now (late usage is billed once, in the next order);
//   3. draws the customer meter's credits down first, and bills the rest at the price's unit amount,
//      rounded half up to a whole minor unit once per line, then capped;
//   4. records what it read (subscription_meter_usages, unique per subscription, meter and period,
//      written with the order that bills it), and cycles the credits: a meter_credit benefit
//      credits its units again, keeping what is left when it rolls over, resetting it otherwise;
//      the customer meter's window moves to the new period.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { ProductPrice, Subscription } from '../../generated/prisma/client.ts';
import { recordCustomerStateChanged } from '../benefits/grants.ts';
import { lockCustomerMeter, meterCreditOf, meteredAmount, periodReading, renewCustomerMeter, type MeterCredit } from '../usage/credits.ts';

export interface MeteredItem {
  label: string;
  amount: number;
  productPriceId: string;
  proration: boolean;
}

/** The period's metered items, and the step that records the readings once the order that bills them exists (or with no order: nothing to bill). */
export interface PeriodUsage {
  items: MeteredItem[];
  record: (orderId: string | null) => Promise<void>;
}

/** Units as an item label shows them: whole, or with up to 6 decimals. */
const unitsText = (units: number) => (Number.isInteger(units) ? String(units) : String(Number(units.toFixed(6))));

/** What the caller read already: the customer, and the subscription's prices (with theirs, the metered ones are picked here). */
export interface KnownForUsage {
  customer: { id: string; externalId: string | null; deletedAt: Date | null };
  prices: { position: number; productPrice: ProductPrice }[];
}

/**
 * Bills the usage of [start, end) for each metered price of the subscription and cycles its meter
 * credits; returns the order items. `final`: the period that closes a subscription canceled at its
 * end, whose credits are not renewed. When two live subscriptions of the customer bill one meter,
 * each event is billed by the earliest created (credits.ts, UsageBiller); the customer meter's
 * window follows the subscription that bills the meter when the period ends.
 */
export async function billPeriodUsage(ctx: Context, db: Db, subscription: Subscription, period: { start: Date; end: Date }, final: boolean, known?: KnownForUsage): Promise<PeriodUsage> {
  const prices = (
    known?.prices ??
    (await db.subscriptionPrice.findMany({ where: { subscriptionId: subscription.id, productPrice: { amountType: 'metered_unit' } }, include: { productPrice: true }, orderBy: { position: 'asc' } }))
  )
    .filter((p) => p.productPrice.amountType === 'metered_unit')
    .sort((a, b) => a.position - b.position);
  // The subscription's live meter_credit grants, in one statement.
  const grants = await db.$queryRaw<{ properties: unknown }[]>`
    SELECT b.properties FROM benefit_grants g JOIN benefits b ON b.id = g.benefit_id
    WHERE g.subscription_id = ${subscription.id}::uuid AND g.granted_at IS NOT NULL AND g.revoked_at IS NULL AND b.type = 'meter_credit'`;
  const credits = new Map<string, MeterCredit>();
  for (const grant of grants) {
    const credit = meterCreditOf(grant.properties);
    const held = credits.get(credit.meterId);
    credits.set(credit.meterId, held ? { ...credit, units: held.units + credit.units, rollover: held.rollover && credit.rollover } : credit);
  }
  const meterIds = [...new Set([...prices.map((p) => p.productPrice.meterId!), ...credits.keys()])].sort();
  if (!meterIds.length) return { items: [], record: async () => {} };
  const customer = known?.customer ?? (await db.customer.findUniqueOrThrow({ where: { id: subscription.customerId }, select: { id: true, externalId: true, deletedAt: true } }));
  const meters = await db.meter.findMany({ where: { id: { in: meterIds } } });
  const previousReadings = await db.subscriptionMeterUsage.findMany({ where: { subscriptionId: subscription.id, periodEnd: period.start, meterId: { in: meterIds } } });
  const items: MeteredItem[] = [];
  const readings: { meterId: string; productPriceId: string | null; units: number; creditedUnits: number; billedUnits: number; amount: number }[] = [];
  const owner = { organizationId: subscription.organizationId, customerId: subscription.customerId };
  // Customer meters are locked in meter id order, so two renewals of one customer cannot deadlock.
  for (const meterId of meterIds) {
    const meter = meters.find((m) => m.id === meterId)!;
    const price = prices.find((p) => p.productPrice.meterId === meterId)?.productPrice ?? null;
    const customerMeter = await lockCustomerMeter(db, { ...owner, meterId }, period.start, ctx.now());
    const previous = previousReadings.find((r) => r.meterId === meterId) ?? null;
    const reading = await periodReading(db, meter, customer, subscription, period, previous && { start: previous.periodStart, end: previous.periodEnd });
    // Late usage: the previous period's growth since it was billed, billed now; its reading is brought up to date, so it is billed once.
    const late = previous && reading.previousUnits !== null && reading.previousUnits > previous.units ? reading.previousUnits - previous.units : 0;
    if (late > 0) await db.subscriptionMeterUsage.update({ where: { id: previous!.id }, data: { units: reading.previousUnits! }, select: { id: true } });
    const consumed = reading.units + late;
    const drawn = Math.min(Math.max(consumed, 0), customerMeter.creditedUnits);
    const billable = Math.max(consumed - drawn, 0);
    const amount = price ? meteredAmount(billable, price.unitAmount!, price.capAmount) : 0;
    readings.push({ meterId, productPriceId: price?.id ?? null, units: reading.units, creditedUnits: drawn, billedUnits: billable, amount });
    if (price) items.push({ label: itemLabel(meter.name, billable, price), amount, productPriceId: price.id, proration: false });
    const credit = final ? null : (credits.get(meterId) ?? null);
    await renewCustomerMeter(db, { ...owner, externalId: customer.externalId }, customerMeter, customerMeter.creditedUnits - drawn, credit, {
      now: ctx.now(),
      windowStart: reading.billsAtEnd ? period.end : null,
    });
  }
  // The customer's meters moved to the new period: their state (active_meters) changed.
  await recordCustomerStateChanged(ctx, db, owner, customer);
  return {
    items,
    record: async (orderId) => {
      await db.subscriptionMeterUsage.createMany({
        data: readings.map((r) => ({ ...r, subscriptionId: subscription.id, orderId, periodStart: period.start, periodEnd: period.end, final, createdAt: ctx.now() })),
      });
    },
  };
}

const itemLabel = (meterName: string, units: number, price: ProductPrice) => `${meterName}: ${unitsText(units)} × ${price.unitAmount!.toFixed()}`;

/** Whether the order bills the final usage of a subscription canceled at period end: it is charged though the subscription ended. */
export async function billsFinalUsage(db: Db, orderId: string): Promise<boolean> {
  return (await db.subscriptionMeterUsage.count({ where: { orderId, final: true } })) > 0;
}
