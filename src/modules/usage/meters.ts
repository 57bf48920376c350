// Meters: a filter over an organization's usage events and an aggregation of what it matches.
// A meter holds no running total: its quantities are computed from the events when asked, in
// the database, bucket by bucket in the caller's time zone. Archiving hides a meter from the
// default list without losing it; it can be unarchived.
import type { TimeInterval } from '../../calendar.ts';
import type { Context } from '../../context.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import { RequestValidationError, ResourceNotFoundError, ValidationIssues } from '../../graphql/errors.ts';
import { metadataWhere, type Metadata } from '../../graphql/metadata.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { escapeLike, sortingOrderBy } from '../../graphql/sorting.ts';
import { organizationFilter, owningOrganization } from '../organizations/access.ts';
import { customerSql, metadataSql } from './conditions.ts';
import { aggregationSql, checkAggregation, checkFilter, filterSql, type Aggregation, type AggregationFunction, type Filter } from './filter.ts';

export const meterSortProperties = ['created_at', 'name'] as const;

/** The most buckets one quantities answer holds: a year of hours, with room to spare. */
export const maxBuckets = 10_000;

interface AggregationInput {
  func: AggregationFunction;
  property?: string | null;
}

export interface MeterCreateInput {
  name: string;
  filter: unknown;
  aggregation: AggregationInput;
  metadata?: Metadata | null;
  organizationId?: string | null;
}

export interface MeterUpdateInput {
  name?: string | null;
  filter?: unknown;
  aggregation?: AggregationInput | null;
  metadata?: Metadata | null;
  isArchived?: boolean | null;
}

export interface MeterListArgs extends PageArgs {
  organizationId?: string[] | null;
  query?: string | null;
  isArchived?: boolean | null;
  metadata?: Record<string, unknown> | null;
  sorting?: string[] | null;
}

function checkName(issues: ValidationIssues, name: string | null | undefined) {
  if (name == null) return;
  const trimmed = name.trim();
  if (trimmed.length < 3) issues.add(['input', 'name'], 'String should have at least 3 characters', 'string_too_short');
  if (trimmed.length > 256) issues.add(['input', 'name'], 'String should have at most 256 characters', 'string_too_long');
}

// ---------------------------------------------------------------------------------------------
// Reading

export async function listMeters(ctx: Context, args: MeterListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.MeterWhereInput = {
    organizationId: organizationFilter(ctx, args.organizationId),
    ...(args.query ? { name: { contains: escapeLike(args.query), mode: 'insensitive' } } : {}),
    ...(args.isArchived == null ? {} : { archivedAt: args.isArchived ? { not: null } : null }),
    AND: metadataWhere(args.metadata),
  };
  const orderBy = sortingOrderBy<(typeof meterSortProperties)[number]>(args.sorting?.length ? args.sorting : ['name'], (property, sort) =>
    property === 'name' ? { name: sort } : { createdAt: sort },
  );
  const [items, total] = await Promise.all([
    ctx.prisma.meter.findMany({ ...query, where, orderBy: orderBy as Prisma.MeterOrderByWithRelationInput[], ...window }),
    ctx.prisma.meter.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getMeter(ctx: Context, id: string, query: object) {
  const meter = await ctx.prisma.meter.findFirst({ ...query, where: { id, organizationId: organizationFilter(ctx) } });
  if (!meter) throw new ResourceNotFoundError('Meter not found.');
  return meter;
}

// ---------------------------------------------------------------------------------------------
// Writing

export async function createMeter(ctx: Context, input: MeterCreateInput, query: object) {
  const issues = new ValidationIssues();
  checkName(issues, input.name);
  const filter = checkFilter(issues, input.filter, ['input', 'filter']);
  const aggregation = checkAggregation(issues, input.aggregation, ['input', 'aggregation']);
  let organizationId = '';
  try {
    organizationId = owningOrganization(ctx, input.organizationId, ['input', 'organizationId']);
  } catch (error) {
    issues.list.push(...(error as RequestValidationError).issues);
  }
  issues.throwIfAny();
  return ctx.prisma.meter.create({
    ...query,
    data: {
      organizationId,
      name: input.name.trim(),
      filter: filter as unknown as Prisma.InputJsonObject,
      aggregation: aggregation as unknown as Prisma.InputJsonObject,
      metadata: input.metadata ?? {},
      createdAt: ctx.now(),
    },
  });
}

export async function updateMeter(ctx: Context, id: string, input: MeterUpdateInput, query: object) {
  const meter = await getMeter(ctx, id, {});
  const issues = new ValidationIssues();
  checkName(issues, input.name);
  const data: Prisma.MeterUncheckedUpdateInput = { modifiedAt: ctx.now() };
  if (input.filter != null) data.filter = checkFilter(issues, input.filter, ['input', 'filter']) as unknown as Prisma.InputJsonObject;
  if (input.aggregation != null) data.aggregation = checkAggregation(issues, input.aggregation, ['input', 'aggregation']) as unknown as Prisma.InputJsonObject;
  issues.throwIfAny();
  if (input.name != null) data.name = input.name.trim();
  if (input.metadata != null) data.metadata = input.metadata;
  if (input.isArchived != null) data.archivedAt = input.isArchived ? (meter.archivedAt ?? ctx.now()) : null;
  return ctx.prisma.meter.update({ ...query, where: { id: meter.id }, data });
}

// ---------------------------------------------------------------------------------------------
// Quantities

export interface QuantitiesArgs {
  startTimestamp: Date;
  endTimestamp: Date;
  interval: TimeInterval;
  /** An IANA time zone: buckets start at its midnights (and its hours). UTC when omitted. */
  timezone?: string | null;
  customerId?: string[] | null;
  externalCustomerId?: string[] | null;
  metadata?: Record<string, unknown> | null;
}

export interface MeterQuantities {
  quantities: { timestamp: Date; quantity: number }[];
  total: number;
}

/** The shortest length of each interval, to bound the number of buckets before asking the database. */
const shortestMs: Record<TimeInterval, number> = { hour: 3_600_000, day: 82_800_000, week: 601_200_000, month: 2_415_600_000, year: 31_532_400_000 };

/** An IANA name (Europe/Paris, UTC, Etc/GMT+5), never an offset like +01:00, which PostgreSQL would read with POSIX's inverted sign. */
const zoneName = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/** Whether both Node and the database know the time zone, so buckets are never laid out in a zone the database guessed. */
async function knownTimezone(ctx: Context, timezone: string): Promise<boolean> {
  if (timezone.length > 64 || !zoneName.test(timezone)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    await ctx.prisma.$queryRaw`SELECT now() AT TIME ZONE ${timezone}::text`;
    return true;
  } catch {
    return false;
  }
}

/**
 * The meter's quantity in each bucket of the range, every bucket present (0 where nothing
 * matched), and its total over the whole range: the same aggregation over all the range's events
 * (so for max, avg and unique, not the sum of the buckets). Both ends are inclusive. Buckets are
 * `date_trunc(interval)` of the event's time in `timezone`, so a day bucket starts at that zone's
 * midnight and lasts 23 or 25 hours across a daylight-saving change; an hour bucket is an hour of
 * the zone's clock, so the hour clocks repeat when daylight saving ends is one bucket of two hours,
 * and the hour they skip when it starts is none.
 */
export async function meterQuantities(ctx: Context, id: string, args: QuantitiesArgs): Promise<MeterQuantities> {
  const issues = new ValidationIssues();
  const timezone = args.timezone ?? 'UTC';
  if (timezone !== 'UTC' && !(await knownTimezone(ctx, timezone))) issues.add(['timezone'], `"${timezone.slice(0, 64)}" is not an IANA time zone.`, 'value_error');
  const span = args.endTimestamp.getTime() - args.startTimestamp.getTime();
  if (span < 0) issues.add(['endTimestamp'], 'end_timestamp must not be before start_timestamp.', 'value_error');
  else if (span / shortestMs[args.interval] + 1 > maxBuckets) {
    issues.add(['interval'], `The range holds more than ${maxBuckets} ${args.interval} buckets: choose a longer interval or a shorter range.`, 'value_error');
  }
  issues.throwIfAny();
  const meter = await getMeter(ctx, id, {});
  const filter = meter.filter as unknown as Filter;
  const aggregation = meter.aggregation as unknown as Aggregation;
  const start = args.startTimestamp.toISOString();
  const end = args.endTimestamp.toISOString();
  const customers = await customerSql(ctx, [meter.organizationId], args.customerId, args.externalCustomerId);
  const where = Prisma.join(
    [
      Prisma.sql`e.organization_id = ${meter.organizationId}::uuid`,
      Prisma.sql`e.timestamp >= ${start}::timestamptz`,
      Prisma.sql`e.timestamp <= ${end}::timestamptz`,
      ...(customers ? [customers] : []),
      filterSql(filter),
      ...metadataSql(args.metadata),
    ],
    ' AND ',
  );
  const unit = Prisma.sql`${args.interval}::text`;
  const step = Prisma.sql`${`1 ${args.interval}`}::interval`;
  const zone = Prisma.sql`${timezone}::text`;
  // One statement, so the buckets and the total read one snapshot without a transaction's round trips.
  const buckets = await ctx.prisma.$queryRaw<{ timestamp: Date; quantity: number; total: number }[]>`
    WITH matched AS (
      SELECT date_trunc(${unit}, e.timestamp AT TIME ZONE ${zone}) AS bucket, ${aggregationSql(aggregation)} AS quantity
      FROM usage_events e WHERE ${where} GROUP BY 1
    ), total AS (
      SELECT ${aggregationSql(aggregation)} AS total FROM usage_events e WHERE ${where}
    )
    SELECT (s.bucket AT TIME ZONE ${zone}) AS timestamp, coalesce(m.quantity, 0)::float8 AS quantity, (SELECT total FROM total) AS total
    FROM generate_series(
      date_trunc(${unit}, ${start}::timestamptz AT TIME ZONE ${zone}),
      date_trunc(${unit}, ${end}::timestamptz AT TIME ZONE ${zone}),
      ${step}
    ) AS s(bucket)
    LEFT JOIN matched m ON m.bucket = s.bucket
    -- An hour the clocks skip (02:00 when daylight saving starts) is no bucket; no event falls in it.
    WHERE ${unit} <> 'hour' OR ((s.bucket AT TIME ZONE ${zone}) AT TIME ZONE ${zone}) = s.bucket
    ORDER BY s.bucket`;
  const total = buckets.length ? buckets[0].total : (await ctx.prisma.$queryRaw<{ total: number }[]>`SELECT ${aggregationSql(aggregation)} AS total FROM usage_events e WHERE ${where}`)[0].total;
  return { quantities: buckets.map((b) => ({ timestamp: b.timestamp, quantity: Number(b.quantity) })), total: Number(total) };
}
