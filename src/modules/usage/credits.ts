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

/**
 * The subscription a metered reading is for. A customer may hold several live subscriptions whose
 * prices bill one meter; each event is billed once, by the earliest created of them (by creation
 * time, then id) that was in service when the event happened: started (paid) at or before it, and
 * not ended by then. A reading for a subscription leaves out the events an earlier one bills.
 */
export interface UsageBiller {
  id: string;
  createdAt: Date;
}

const timestampSql = (time: Date) => Prisma.sql`${time.toISOString()}::timestamptz`;

/** Whether a subscription of the customer created before `biller`, with a price on the meter, was in service at `at`. */
function billedByEarlierSql(meterId: string, customerId: string, biller: UsageBiller, at: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`EXISTS (
    SELECT 1 FROM subscriptions o
      JOIN subscription_prices osp ON osp.subscription_id = o.id
      JOIN product_prices opp ON opp.id = osp.product_price_id
    WHERE o.customer_id = ${customerId}::uuid AND opp.meter_id = ${meterId}::uuid
      AND (o.created_at < ${timestampSql(biller.createdAt)} OR (o.created_at = ${timestampSql(biller.createdAt)} AND o.id < ${biller.id}::uuid))
      AND o.started_at IS NOT NULL AND o.started_at <= ${at} AND (o.ended_at IS NULL OR ${at} < o.ended_at))`;
}

type UsageMeter = Pick<Meter, 'id' | 'organizationId' | 'filter' | 'aggregation'>;
type UsageCustomer = { id: string; externalId: string | null };

/** Whose events, and from when to when: bound values for one customer, or the columns of a row. */
interface UsageScope {
  customerId: Prisma.Sql;
  /** The external id the customer holds; null matches no event by it. */
  externalId: Prisma.Sql | null;
  start: Prisma.Sql;
  end: Prisma.Sql | null;
}

/** The meter's aggregation over the scope's events in [start, end), as a scalar subquery, `and` added to its conditions. */
function scopedUsageSql(meter: UsageMeter, scope: UsageScope, and: Prisma.Sql = Prisma.empty): Prisma.Sql {
  const byCustomer = scope.externalId
    ? Prisma.sql`(e.customer_id = ${scope.customerId} OR e.external_customer_id = ${scope.externalId})`
    : Prisma.sql`e.customer_id = ${scope.customerId}`;
  return Prisma.sql`(SELECT ${aggregationSql(meter.aggregation as unknown as Aggregation)} FROM usage_events e
    WHERE e.organization_id = ${meter.organizationId}::uuid AND ${byCustomer}
      AND e.timestamp >= ${scope.start} AND e.timestamp < ${scope.end ?? Prisma.sql`'infinity'::timestamptz`}
      AND ${filterSql(meter.filter as unknown as Filter)} ${and})`;
}

/** The meter's aggregation over the customer's events in [start, end), as a scalar subquery; with a biller, only the events it bills. */
function usageSql(meter: UsageMeter, customer: UsageCustomer, start: Date, end: Date | null, biller: UsageBiller | null): Prisma.Sql {
  const scope = {
    customerId: Prisma.sql`${customer.id}::uuid`,
    externalId: customer.externalId ? Prisma.sql`${customer.externalId}` : null,
    start: timestampSql(start),
    end: end ? timestampSql(end) : null,
  };
  return scopedUsageSql(meter, scope, biller ? Prisma.sql`AND NOT ${billedByEarlierSql(meter.id, customer.id, biller, Prisma.sql`e.timestamp`)}` : Prisma.empty);
}

/**
 * What a customer meter row has consumed of `meter` (the row aliased `cm`, its customer `c`): the
 * customer's events since the row's window opened, as customerUsage reads them for one row.
 */
export function customerMeterUsageSql(meter: UsageMeter): Prisma.Sql {
  return scopedUsageSql(meter, { customerId: Prisma.sql`cm.customer_id`, externalId: Prisma.sql`c.external_id`, start: Prisma.sql`cm.window_start`, end: null });
}

/**
 * The meter's quantity over the customer's events in [start, end) (no end: up to any time): named
 * by id or by the external id the customer holds. With a biller: the share that subscription bills.
 */
export async function customerUsage(db: Db, meter: UsageMeter, customer: UsageCustomer, start: Date, end: Date | null, biller: UsageBiller | null = null): Promise<number> {
  const [{ total }] = await db.$queryRaw<{ total: number }[]>`SELECT ${usageSql(meter, customer, start, end, biller)} AS total`;
  return Number(total);
}

/**
 * What a renewal reads of one meter, in one statement: the biller's share of the period, of the
 * previous period again (for late events) when there is one, and whether it is the customer's
 * biller for the meter when the period ends (the customer meter's window follows that subscription).
 */
export async function periodReading(
  db: Db,
  meter: UsageMeter,
  customer: UsageCustomer,
  biller: UsageBiller,
  period: { start: Date; end: Date },
  previous: { start: Date; end: Date } | null,
): Promise<{ units: number; previousUnits: number | null; billsAtEnd: boolean }> {
  const [row] = await db.$queryRaw<{ units: number; previous: number | null; elsewhere: boolean }[]>`
    SELECT ${usageSql(meter, customer, period.start, period.end, biller)} AS units,
      ${previous ? usageSql(meter, customer, previous.start, previous.end, biller) : Prisma.sql`NULL::float8`} AS previous,
      ${billedByEarlierSql(meter.id, customer.id, biller, timestampSql(period.end))} AS elsewhere`;
  return { units: Number(row.units), previousUnits: row.previous === null ? null : Number(row.previous), billsAtEnd: !row.elsewhere };
}

/** units × unit amount in minor units, rounded half up once, then capped. Exact: decimal arithmetic, no float. */
export function meteredAmount(units: number, unitAmount: Prisma.Decimal, capAmount: number | null): number {
  const amount = new Prisma.Decimal(String(units)).mul(unitAmount).toDecimalPlaces(0, Prisma.Decimal.ROUND_HALF_UP).toNumber();
  return capAmount === null ? amount : Math.min(amount, capAmount);
}

/**
 * The customer's meter, created with its window starting at `windowStart` if it has none, and
 * locked for the caller's transaction: one statement, as an upsert whose no-op update takes the
 * row lock and returns the row.
 */
export async function lockCustomerMeter(db: Db, key: { organizationId: string; customerId: string; meterId: string }, windowStart: Date, now: Date): Promise<CustomerMeter> {
  const [row] = await db.$queryRaw<{ id: string; organization_id: string; customer_id: string; meter_id: string; credited_units: number; window_start: Date; created_at: Date; modified_at: Date | null }[]>`
    INSERT INTO customer_meters (id, organization_id, customer_id, meter_id, credited_units, window_start, created_at)
    VALUES (gen_random_uuid(), ${key.organizationId}::uuid, ${key.customerId}::uuid, ${key.meterId}::uuid, 0, ${windowStart}, ${now})
    ON CONFLICT (customer_id, meter_id) DO UPDATE SET customer_id = customer_meters.customer_id
    RETURNING id, organization_id, customer_id, meter_id, credited_units, window_start, created_at, modified_at`;
  return {
    id: row.id,
    organizationId: row.organization_id,
    customerId: row.customer_id,
    meterId: row.meter_id,
    creditedUnits: row.credited_units,
    windowStart: new Date(row.window_start),
    createdAt: new Date(row.created_at),
    modifiedAt: row.modified_at === null ? null : new Date(row.modified_at),
  };
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

/**
 * A renewal's change to the customer's meter, locked by the caller, in one update: the credits left
 * after the period's usage drew on them, then the benefit's credit for the new period (the credits
 * left reset first without rollover), with its meter.reset and meter.credited events. The window
 * moves to `windowStart` when given.
 */
export async function renewCustomerMeter(
  db: Db,
  customer: { organizationId: string; customerId: string; externalId: string | null },
  meter: CustomerMeter,
  left: number,
  credit: MeterCredit | null,
  options: { now: Date; windowStart: Date | null },
): Promise<void> {
  const kept = Math.max(0, Math.floor(left));
  const reset = credit !== null && !credit.rollover;
  await db.customerMeter.update({
    where: { id: meter.id },
    data: { creditedUnits: credit ? (reset ? 0 : kept) + credit.units : kept, modifiedAt: options.now, ...(options.windowStart ? { windowStart: options.windowStart } : {}) },
    select: { id: true },
  });
  if (!credit) return;
  const owner = { organizationId: customer.organizationId, customerId: customer.customerId };
  await recordSystemEvents(
    db,
    options.now,
    [
      ...(reset ? [{ ...owner, name: 'meter.reset', metadata: { meter_id: credit.meterId } }] : []),
      { ...owner, name: 'meter.credited', metadata: { meter_id: credit.meterId, units: credit.units, rollover: credit.rollover } },
    ],
    [{ id: customer.customerId, externalId: customer.externalId }],
  );
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
