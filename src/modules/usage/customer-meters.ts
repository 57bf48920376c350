// Customer meters: per customer and meter, what the customer consumed in the window in progress
// (since the start of their billing period), the credits they hold for it, and the balance. Core
// tokens read their organizations' customers' meters; a customer reads their own (the portal).
// Consumption is computed from the events when read, like a meter's quantities; credits are kept.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { Prisma, type CustomerMeter, type Meter } from '../../generated/prisma/client.ts';
import { reach } from '../../auth/reach.ts';
import { RequestValidationError, ResourceNotFoundError } from '../../graphql/errors.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { escapeLike, sortingOrderBy } from '../../graphql/sorting.ts';
import { organizationFilter } from '../organizations/access.ts';
import { customerMeterUsageSql, customerUsage, meteredAmount } from './credits.ts';

export const customerMeterSortProperties = ['created_at', 'modified_at', 'customer_id', 'customer_name', 'meter_id', 'meter_name', 'consumed_units', 'credited_units', 'balance'] as const;
export const customerPortalMeterSortProperties = ['created_at', 'modified_at', 'meter_id', 'meter_name', 'consumed_units', 'credited_units', 'balance'] as const;

export interface CustomerMeterListArgs extends PageArgs {
  organizationId?: string[] | null;
  customerId?: string[] | null;
  externalCustomerId?: string[] | null;
  meterId?: string[] | null;
  query?: string | null;
  sorting?: string[] | null;
}

/**
 * The customer meters the principal reaches: Core its organizations' customers', a customer their
 * own. A checkout's session reaches only what that checkout bought, and a meter's balance is the
 * customer's across all their purchases, so it reaches none.
 */
function reachable(ctx: Context): Prisma.CustomerMeterWhereInput {
  const { principal } = ctx;
  if (principal.kind === 'customer' && principal.checkoutId !== null) return { id: { in: [] } };
  return principal.kind === 'customer' ? { customer: reach(ctx).customer } : { organizationId: organizationFilter(ctx), customer: reach(ctx).customer };
}

/** Consumption and balance are computed from the events when read: sorting by them takes the ordering to SQL (computedOrderPage). */
const computedSorts = new Set(['consumed_units', 'balance']);

export async function listCustomerMeters(ctx: Context, args: CustomerMeterListArgs, query: object) {
  const sorting = args.sorting?.length ? args.sorting : ['-modified_at'];
  const where: Prisma.CustomerMeterWhereInput = {
    AND: [
      reachable(ctx),
      args.organizationId?.length ? { organizationId: { in: args.organizationId } } : {},
      args.customerId?.length ? { customerId: { in: args.customerId } } : {},
      args.externalCustomerId?.length ? { customer: { externalId: { in: args.externalCustomerId } } } : {},
      args.meterId?.length ? { meterId: { in: args.meterId } } : {},
      args.query ? { meter: { name: { contains: escapeLike(args.query), mode: 'insensitive' } } } : {},
      { meter: { archivedAt: null } },
    ],
  };
  const window = pageWindow(args);
  if (sorting.some((s) => computedSorts.has(s.replace(/^-/, '')))) {
    const { ids, total } = await computedOrderPage(ctx.prisma, where, sorting, window);
    const rows = await ctx.prisma.customerMeter.findMany({ ...query, where: { id: { in: ids } } });
    const byId = new Map(rows.map((row) => [(row as { id: string }).id, row]));
    return toPage(ids.map((id) => byId.get(id)!).filter(Boolean), total, args);
  }
  const orderBy = sortingOrderBy<Exclude<(typeof customerMeterSortProperties)[number], 'consumed_units' | 'balance'>>(sorting, (property, sort) => {
    switch (property) {
      case 'created_at':
        return { createdAt: sort };
      case 'modified_at':
        return { modifiedAt: { sort, nulls: 'last' } };
      case 'customer_id':
        return { customerId: sort };
      case 'customer_name':
        return { customer: { name: { sort, nulls: 'last' } } };
      case 'meter_id':
        return { meterId: sort };
      case 'meter_name':
        return { meter: { name: sort } };
      case 'credited_units':
        return { creditedUnits: sort };
    }
  });
  const [items, total] = await Promise.all([
    ctx.prisma.customerMeter.findMany({ ...query, where, orderBy: orderBy as Prisma.CustomerMeterOrderByWithRelationInput[], ...window }),
    ctx.prisma.customerMeter.count({ where }),
  ]);
  return toPage(items, total, args);
}

/** Each sorting property as a SQL ordering over `cm` (the customer meter), `c` (its customer), `m` (its meter) and `consumed`. */
const sortSql: Record<(typeof customerMeterSortProperties)[number], Prisma.Sql> = {
  created_at: Prisma.sql`cm.created_at`,
  modified_at: Prisma.sql`cm.modified_at`,
  customer_id: Prisma.sql`cm.customer_id`,
  customer_name: Prisma.sql`c.name`,
  meter_id: Prisma.sql`cm.meter_id`,
  meter_name: Prisma.sql`m.name`,
  consumed_units: Prisma.sql`u.consumed`,
  credited_units: Prisma.sql`cm.credited_units`,
  balance: Prisma.sql`(cm.credited_units - u.consumed)`,
};

/**
 * One page of the customer meters `where` selects, ordered in SQL by a sorting that names consumed
 * units or the balance. Each row's consumption is the same aggregation consumedUnits computes (its
 * meter's filter and aggregation over the customer's events since the window opened), one
 * correlated subquery per meter of the rows, chosen by a CASE on the meter, so only the page's
 * order is decided in the database and only the page's rows are read back. Ties end on the id.
 */
async function computedOrderPage(db: Db, where: Prisma.CustomerMeterWhereInput, sorting: string[], window: { skip: number; take: number }) {
  const matching = await db.customerMeter.findMany({ where, select: { id: true, meterId: true } });
  if (!matching.length || window.take === 0) return { ids: [], total: matching.length };
  const meters = await db.meter.findMany({ where: { id: { in: [...new Set(matching.map((m) => m.meterId))] } } });
  const consumed = Prisma.join(
    meters.map(
      (meter) => Prisma.sql`WHEN ${meter.id}::uuid THEN ${customerMeterUsageSql(meter)}`,
    ),
    ' ',
  );
  const orderBy = sorting.map((entry) => {
    const descending = entry.startsWith('-');
    const property = (descending ? entry.slice(1) : entry) as (typeof customerMeterSortProperties)[number];
    // As the Prisma orderings of the other sorts: names and modification times missing last either way.
    const nullsLast = property === 'modified_at' || property === 'customer_name' ? Prisma.raw(' NULLS LAST') : Prisma.empty;
    return Prisma.sql`${sortSql[property]} ${Prisma.raw(descending ? 'DESC' : 'ASC')}${nullsLast}`;
  });
  const page = await db.$queryRaw<{ id: string }[]>`
    SELECT cm.id FROM customer_meters cm
      JOIN customers c ON c.id = cm.customer_id
      JOIN meters m ON m.id = cm.meter_id
      CROSS JOIN LATERAL (SELECT CASE cm.meter_id ${consumed} END AS consumed) u
    WHERE cm.id = ANY(${matching.map((m) => m.id)}::uuid[])
    ORDER BY ${Prisma.join([...orderBy, Prisma.sql`cm.id ASC`], ', ')}
    OFFSET ${window.skip} LIMIT ${window.take}`;
  return { ids: page.map((row) => row.id), total: matching.length };
}

export async function getCustomerMeter(ctx: Context, id: string, query: object) {
  const meter = await ctx.prisma.customerMeter.findFirst({ ...query, where: { AND: [reachable(ctx), { id }] } });
  if (!meter) throw new ResourceNotFoundError('Customer meter not found.');
  return meter;
}

const consumed = new WeakMap<object, Promise<number>>();

/** What the customer consumed of the meter since their window opened: the meter's aggregation over their events from then on. */
export function consumedUnits(db: Db, customerMeter: Pick<CustomerMeter, 'customerId' | 'meterId' | 'windowStart'>): Promise<number> {
  let units = consumed.get(customerMeter);
  if (!units) {
    units = (async () => {
      // The meter's filter and the customer's external id in one round trip, then the aggregation.
      const [row] = await db.$queryRaw<(Pick<Meter, 'organizationId' | 'filter' | 'aggregation'> & { externalId: string | null })[]>`
        SELECT m.organization_id AS "organizationId", m.filter, m.aggregation, c.external_id AS "externalId"
        FROM meters m, customers c WHERE m.id = ${customerMeter.meterId}::uuid AND c.id = ${customerMeter.customerId}::uuid`;
      if (!row) throw new ResourceNotFoundError('Customer meter not found.');
      return customerUsage(db, { id: customerMeter.meterId, ...row }, { id: customerMeter.customerId, externalId: row.externalId }, customerMeter.windowStart, null);
    })();
    consumed.set(customerMeter, units);
  }
  return units;
}

/** The customer's meters of live meters, for the customer state. */
export function activeCustomerMeters(db: Db, customerId: string) {
  return db.customerMeter.findMany({ where: { customerId, meter: { archivedAt: null } }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] });
}

/**
 * A subscription's metered prices in the period in progress: what the customer consumed of each
 * meter since the period started (the share this subscription bills), the credits they hold, and
 * what the usage past them comes to so far (rounded and capped as the renewal will bill it).
 * Identified by the metered price.
 */
export async function subscriptionMeters(db: Db, subscription: { id: string; customerId: string; createdAt: Date; currentPeriodStart: Date }) {
  // The metered prices with their meters, the customer's meters of them and the customer's external id, in one round trip.
  const prices = await db.$queryRaw<
    {
      id: string; created_at: Date; unit_amount: string; cap_amount: number | null; external_id: string | null; credited_units: number | null; held_modified_at: Date | null;
      meter_id: string; organization_id: string; name: string; filter: unknown; aggregation: unknown; metadata: unknown; meter_created_at: Date; meter_modified_at: Date | null; archived_at: Date | null;
    }[]
  >`
    SELECT pp.id, pp.created_at, pp.unit_amount::text AS unit_amount, pp.cap_amount, c.external_id, cm.credited_units, cm.modified_at AS held_modified_at,
      m.id AS meter_id, m.organization_id, m.name, m.filter, m.aggregation, m.metadata, m.created_at AS meter_created_at, m.modified_at AS meter_modified_at, m.archived_at
    FROM subscription_prices sp
      JOIN product_prices pp ON pp.id = sp.product_price_id AND pp.amount_type = 'metered_unit'
      JOIN meters m ON m.id = pp.meter_id
      JOIN customers c ON c.id = ${subscription.customerId}::uuid
      LEFT JOIN customer_meters cm ON cm.customer_id = c.id AND cm.meter_id = m.id
    WHERE sp.subscription_id = ${subscription.id}::uuid
    ORDER BY sp.position`;
  return Promise.all(
    prices.map(async (price) => {
      const meter: Meter = {
        id: price.meter_id, organizationId: price.organization_id, name: price.name, filter: price.filter as Prisma.JsonValue, aggregation: price.aggregation as Prisma.JsonValue,
        metadata: price.metadata as Prisma.JsonValue, createdAt: new Date(price.meter_created_at), modifiedAt: price.meter_modified_at && new Date(price.meter_modified_at), archivedAt: price.archived_at && new Date(price.archived_at),
      };
      // The share of the usage this subscription bills: another live subscription of the customer on the meter may bill some (credits.ts).
      const consumedUnits = await customerUsage(db, meter, { id: subscription.customerId, externalId: price.external_id }, subscription.currentPeriodStart, null, subscription);
      const creditedUnits = price.credited_units ?? 0;
      const amount = meteredAmount(Math.max(consumedUnits - creditedUnits, 0), new Prisma.Decimal(price.unit_amount), price.cap_amount);
      return { id: price.id, createdAt: new Date(price.created_at), modifiedAt: price.held_modified_at && new Date(price.held_modified_at), consumedUnits, creditedUnits, amount, meterId: meter.id, meter };
    }),
  );
}
