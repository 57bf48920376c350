// Meter credits and a customer's consumption of a meter. A customer meter (one per customer and
// meter) holds the credits of the window in progress, which runs from the start of the customer's
// billing period to now; what the meter measures of the customer in the window is consumed, and
// draws the credits down first. Credits come from meter_credit benefits: granted with the
// subscription, and again at each renewal (the original's benefit.cycled), where a rollover
// benefit keeps the unused credits and any other resets them. Every credit and reset is recorded
// as a system usage event (meter.credited, meter.reset) in the transaction of the change.
import type { Db } from '../../db/client.ts';
import { Prisma, type CustomerMeter, type Meter } from '../../generated/prisma/client.ts';
import { aggregationSql, filterSql, type Aggregation, type Filter } from './filter.ts';
import { recordSystemEvents } from './events.ts';

/** The meter's quantity over the customer's events in [start, end) (no end: up to any time): named by id or by the external id the customer holds. */
export async function customerUsage(db: Db, meter: Pick<Meter, 'organizationId' | 'filter' | 'aggregation'>, customer: { id: string; externalId: string | null }, start: Date, end: Date | null): Promise<number> {
  const byCustomer = customer.externalId
    ? Prisma.sql`(e.customer_id = ${customer.id}::uuid OR e.external_customer_id = ${customer.externalId})`
    : Prisma.sql`e.customer_id = ${customer.id}::uuid`;
  const [{ total }] = await db.$queryRaw<{ total: number }[]>`
    SELECT ${aggregationSql(meter.aggregation as unknown as Aggregation)} AS total FROM usage_events e
    WHERE e.organization_id = ${meter.organizationId}::uuid AND ${byCustomer}
      AND e.timestamp >= ${start.toISOString()}::timestamptz AND e.timestamp < ${end ? end.toISOString() : 'infinity'}::timestamptz
      AND ${filterSql(meter.filter as unknown as Filter)}`;
  return Number(total);
}

/** units × unit amount in minor units, rounded half up once, then capped. Exact: decimal arithmetic, no float. */
export function meteredAmount(units: number, unitAmount: Prisma.Decimal, capAmount: number | null): number {
  const amount = new Prisma.Decimal(String(units)).mul(unitAmount).toDecimalPlaces(0, Prisma.Decimal.ROUND_HALF_UP).toNumber();
  return capAmount === null ? amount : Math.min(amount, capAmount);
}

/** The customer's meter, created with its window starting at `windowStart` if it has none, and locked for the caller's transaction. */
export async function lockCustomerMeter(db: Db, key: { organizationId: string; customerId: string; meterId: string }, windowStart: Date, now: Date): Promise<CustomerMeter> {
  await db.$executeRaw`
    INSERT INTO customer_meters (id, organization_id, customer_id, meter_id, credited_units, window_start, created_at)
    VALUES (gen_random_uuid(), ${key.organizationId}::uuid, ${key.customerId}::uuid, ${key.meterId}::uuid, 0, ${windowStart}, ${now})
    ON CONFLICT (customer_id, meter_id) DO NOTHING`;
  await db.$executeRaw`SELECT id FROM customer_meters WHERE customer_id = ${key.customerId}::uuid AND meter_id = ${key.meterId}::uuid FOR UPDATE`;
  return db.customerMeter.findUniqueOrThrow({ where: { customerId_meterId: { customerId: key.customerId, meterId: key.meterId } } });
}

export interface MeterCredit {
  meterId: string;
  units: number;
  rollover: boolean;
}

/**
 * Credits a benefit's units to the customer's meter, with its meter.credited event; without
 * rollover, the credits left are reset first (meter.reset). `windowStart` opens the window when the
 * customer meter is new.
 */
export async function creditCustomerMeter(
  db: Db,
  customer: { organizationId: string; customerId: string },
  credit: MeterCredit,
  options: { now: Date; windowStart: Date; reset: boolean },
): Promise<void> {
  const meter = await lockCustomerMeter(db, { ...customer, meterId: credit.meterId }, options.windowStart, options.now);
  const reset = options.reset && !credit.rollover;
  await db.customerMeter.update({
    where: { id: meter.id },
    data: { creditedUnits: (reset ? 0 : meter.creditedUnits) + credit.units, modifiedAt: options.now },
  });
  await recordSystemEvents(db, options.now, [
    ...(reset ? [{ ...customer, name: 'meter.reset', metadata: { meter_id: credit.meterId } }] : []),
    { ...customer, name: 'meter.credited', metadata: { meter_id: credit.meterId, units: credit.units, rollover: credit.rollover } },
  ]);
}

/** A meter_credit benefit's stored properties, as the credit it gives. */
export function meterCreditOf(properties: unknown): MeterCredit {
  const { meter_id, units, rollover } = properties as { meter_id: string; units: number; rollover: boolean };
  return { meterId: meter_id, units, rollover };
}

/** A revoked meter_credit grant takes its credits away: the customer meter's credits are reset (meter.reset). */
export async function resetCustomerMeter(db: Db, customer: { organizationId: string; customerId: string }, meterId: string, now: Date): Promise<void> {
  const meter = await db.customerMeter.findUnique({ where: { customerId_meterId: { customerId: customer.customerId, meterId } } });
  if (!meter) return;
  await lockCustomerMeter(db, { ...customer, meterId }, now, now);
  await db.customerMeter.update({ where: { id: meter.id }, data: { creditedUnits: 0, modifiedAt: now } });
  await recordSystemEvents(db, now, [{ ...customer, name: 'meter.reset', metadata: { meter_id: meterId } }]);
}
