// Usage events: what a customer did that an organization bills or watches, ingested in batches
// and never changed after. Invariants:
// - a batch is all or nothing: it is checked whole (every problem reported at its index) before
//   one multi-row INSERT writes it, so a rejected batch writes no event;
// - ingestion reads the batch's customers in two queries and writes in one statement, whatever
//   the batch's size; it never aggregates (meters read events when asked);
// - an event's external_id is unique in its organization (a unique index): a repeat, in the same
//   batch or a later one, concurrent or not, is skipped and counted as a duplicate.
// System events (source `system`) are Kassa's own, written in the transaction of their change.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { Prisma, type UsageEventSource } from '../../generated/prisma/client.ts';
import { RequestValidationError, ResourceNotFoundError, ValidationIssues, type Loc } from '../../graphql/errors.ts';
import type { Metadata } from '../../graphql/metadata.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { organizationFilter, owningOrganization } from '../organizations/access.ts';
import { checkFilter, filterSql, type Filter } from './filter.ts';
import { getMeter } from './meters.ts';
import { customerSql, inList, metadataSql } from './conditions.ts';

/** How far ahead of the server's clock an event's timestamp may be: clocks drift, the future is not usage. */
export const maxClockSkewMs = 5 * 60 * 1000;
export const eventLimits = { maxNameLength: 128, maxExternalIdLength: 256 };

export interface EventCreateInput {
  name: string;
  customerId?: string | null;
  externalCustomerId?: string | null;
  externalId?: string | null;
  timestamp?: Date | null;
  metadata?: Metadata | null;
  organizationId?: string | null;
}

export interface EventsIngestInput {
  events: EventCreateInput[];
}

// ---------------------------------------------------------------------------------------------
// Ingesting

interface Row {
  organizationId: string;
  name: string;
  source: UsageEventSource;
  customerId: string | null;
  externalCustomerId: string | null;
  externalId: string | null;
  timestamp: Date;
  metadata: Metadata;
}

function checkText(issues: ValidationIssues, value: string | null | undefined, loc: Loc, max: number) {
  if (value == null) return;
  if (value.length < 1) issues.add(loc, 'String should have at least 1 character', 'string_too_short');
  if (value.length > max) issues.add(loc, `String should have at most ${max} characters`, 'string_too_long');
}

export async function ingestEvents(ctx: Context, input: EventsIngestInput): Promise<{ inserted: number; duplicates: number }> {
  const issues = new ValidationIssues();
  const now = ctx.now();
  const at = (i: number, field: string): Loc => ['input', 'events', i, field];
  const organizations = input.events.map((event, i) => {
    try {
      return owningOrganization(ctx, event.organizationId, at(i, 'organizationId'));
    } catch (error) {
      issues.list.push(...(error as RequestValidationError).issues);
      return null;
    }
  });
  input.events.forEach((event, i) => {
    checkText(issues, event.name, at(i, 'name'), eventLimits.maxNameLength);
    checkText(issues, event.externalId, at(i, 'externalId'), eventLimits.maxExternalIdLength);
    checkText(issues, event.externalCustomerId, at(i, 'externalCustomerId'), eventLimits.maxExternalIdLength);
    if (event.customerId == null && event.externalCustomerId == null) issues.add(at(i, 'customerId'), 'Field required: customer_id or external_customer_id.', 'missing');
    if (event.customerId != null && event.externalCustomerId != null) issues.add(at(i, 'externalCustomerId'), 'Give customer_id or external_customer_id, not both.', 'value_error');
    if (event.timestamp && event.timestamp.getTime() > now.getTime() + maxClockSkewMs) {
      issues.add(at(i, 'timestamp'), `The timestamp is in the future: at most ${maxClockSkewMs / 60_000} minutes ahead of the server's clock is accepted.`, 'value_error');
    }
  });

  const reachable = organizationFilter(ctx);
  const ids = [...new Set(input.events.flatMap((e) => (e.customerId ? [e.customerId] : [])))];
  const externalIds = [...new Set(input.events.flatMap((e) => (e.externalCustomerId ? [e.externalCustomerId] : [])))];
  const [byId, byExternalId] = await Promise.all([
    ids.length ? ctx.prisma.customer.findMany({ where: { id: { in: ids }, organizationId: reachable, deletedAt: null }, select: { id: true, organizationId: true, externalId: true } }) : [],
    externalIds.length
      ? ctx.prisma.customer.findMany({ where: { activeExternalId: { in: externalIds }, organizationId: reachable }, select: { id: true, organizationId: true, externalId: true } })
      : [],
  ]);

  const rows: Row[] = [];
  const seen = new Set<string>();
  let repeatedInBatch = 0;
  input.events.forEach((event, i) => {
    const organizationId = organizations[i];
    if (!organizationId) return;
    let customerId: string | null = null;
    let externalCustomerId = event.externalCustomerId ?? null;
    if (event.customerId != null) {
      const customer = byId.find((c) => c.id === event.customerId && c.organizationId === organizationId);
      if (!customer) return issues.add(at(i, 'customerId'), 'Customer not found.', 'value_error');
      customerId = customer.id;
      externalCustomerId = customer.externalId;
    } else if (externalCustomerId != null) {
      // An external id no customer holds yet is kept as sent: the customer may be created later.
      customerId = byExternalId.find((c) => c.externalId === externalCustomerId && c.organizationId === organizationId)?.id ?? null;
    }
    if (event.externalId != null) {
      const key = `${organizationId}:${event.externalId}`;
      if (seen.has(key)) return void repeatedInBatch++;
      seen.add(key);
    }
    rows.push({
      organizationId,
      name: event.name,
      source: 'user',
      customerId,
      externalCustomerId,
      externalId: event.externalId ?? null,
      timestamp: event.timestamp ?? now,
      metadata: event.metadata ?? {},
    });
  });
  issues.throwIfAny();
  if (!rows.length) return { inserted: 0, duplicates: repeatedInBatch };
  const inserted = await insertEvents(ctx.prisma, rows, now);
  return { inserted, duplicates: input.events.length - inserted };
}

/**
 * One multi-row INSERT for the whole batch, its rows sent as one JSON parameter and unpacked by
 * the database (jsonb_to_recordset): a statement of fixed size, whatever the batch's. A row whose
 * external_id the organization has already is skipped (ON CONFLICT on the unique index); the
 * answer is the number of rows inserted.
 */
async function insertEvents(db: Db, rows: Row[], now: Date): Promise<number> {
  const records = JSON.stringify(
    rows.map((row) => ({
      organization_id: row.organizationId,
      name: row.name,
      source: row.source,
      customer_id: row.customerId,
      external_customer_id: row.externalCustomerId,
      external_id: row.externalId,
      timestamp: row.timestamp.toISOString(),
      metadata: row.metadata,
    })),
  );
  return db.$executeRaw`
    INSERT INTO usage_events (id, organization_id, name, source, customer_id, external_customer_id, external_id, timestamp, metadata, created_at)
    SELECT gen_random_uuid(), r.organization_id, r.name, r.source::usage_event_source, r.customer_id, r.external_customer_id, r.external_id, r.timestamp, r.metadata, ${now.toISOString()}::timestamptz
    FROM jsonb_to_recordset(${records}::jsonb) AS r(organization_id uuid, name text, source text, customer_id uuid, external_customer_id text, external_id text, timestamp timestamptz, metadata jsonb)
    ON CONFLICT (organization_id, external_id) DO NOTHING`;
}

/** Kassa's own events (benefit.granted, benefit.revoked), written in `db`'s transaction with the change they record. */
export async function recordSystemEvents(
  db: Db,
  now: Date,
  events: { organizationId: string; customerId: string; name: string; metadata: Metadata }[],
  known?: { id: string; externalId: string | null }[],
): Promise<void> {
  if (!events.length) return;
  // The caller may know the customers' external ids already: one round trip less.
  const customers = known ?? (await db.customer.findMany({ where: { id: { in: [...new Set(events.map((e) => e.customerId))] } }, select: { id: true, externalId: true } }));
  await insertEvents(
    db,
    events.map((event) => ({
      ...event,
      source: 'system',
      externalCustomerId: customers.find((c) => c.id === event.customerId)?.externalId ?? null,
      externalId: null,
      timestamp: now,
    })),
    now,
  );
}

// ---------------------------------------------------------------------------------------------
// Reading

export const eventSortProperties = ['timestamp'] as const;
export const eventNameSortProperties = ['name', 'occurrences', 'first_seen', 'last_seen'] as const;

export interface EventListArgs extends PageArgs {
  organizationId?: string[] | null;
  customerId?: string[] | null;
  externalCustomerId?: string[] | null;
  name?: string[] | null;
  source?: UsageEventSource[] | null;
  startTimestamp?: Date | null;
  endTimestamp?: Date | null;
  meterId?: string | null;
  filter?: string | null;
  metadata?: Record<string, unknown> | null;
  sorting?: string[] | null;
}

/** The filter of the events list, sent as a JSON string in the query: checked as a meter's filter is. */
function parseFilterArgument(text: string): Filter {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw RequestValidationError.at(['filter'], `JSON decode error: ${(error as Error).message}`, 'json_invalid');
  }
  const issues = new ValidationIssues();
  const filter = checkFilter(issues, parsed, ['filter']);
  issues.throwIfAny();
  return filter;
}

async function eventConditions(ctx: Context, args: EventListArgs): Promise<Prisma.Sql[]> {
  let organizations = organizationFilter(ctx, args.organizationId).in;
  const conditions: Prisma.Sql[] = [];
  if (args.meterId) {
    const meter = await getMeter(ctx, args.meterId, {});
    organizations = organizations.filter((id) => id === meter.organizationId);
    conditions.push(filterSql(meter.filter as unknown as Filter));
  }
  conditions.unshift(inList(Prisma.sql`e.organization_id`, organizations, 'uuid'));
  const customers = await customerSql(ctx, organizations, args.customerId, args.externalCustomerId);
  if (customers) conditions.push(customers);
  if (args.name?.length) conditions.push(inList(Prisma.sql`e.name`, args.name, 'text'));
  if (args.source?.length) conditions.push(inList(Prisma.sql`e.source::text`, args.source, 'text'));
  if (args.startTimestamp) conditions.push(Prisma.sql`e.timestamp >= ${args.startTimestamp.toISOString()}::timestamptz`);
  if (args.endTimestamp) conditions.push(Prisma.sql`e.timestamp <= ${args.endTimestamp.toISOString()}::timestamptz`);
  if (args.filter) conditions.push(filterSql(parseFilterArgument(args.filter)));
  conditions.push(...metadataSql(args.metadata));
  return conditions;
}

export async function listEvents(ctx: Context, args: EventListArgs, query: object) {
  const window = pageWindow(args);
  const where = Prisma.join(await eventConditions(ctx, args), ' AND ');
  const descending = (args.sorting?.length ? args.sorting[0] : '-timestamp').startsWith('-');
  const order = descending ? Prisma.sql`e.timestamp DESC, e.id DESC` : Prisma.sql`e.timestamp ASC, e.id ASC`;
  const [ids, [{ total }]] = await Promise.all([
    ctx.prisma.$queryRaw<{ id: string }[]>`SELECT e.id FROM usage_events e WHERE ${where} ORDER BY ${order} LIMIT ${window.take} OFFSET ${window.skip}`,
    ctx.prisma.$queryRaw<{ total: number }[]>`SELECT count(*)::int AS total FROM usage_events e WHERE ${where}`,
  ]);
  const rows = ids.length ? await ctx.prisma.usageEvent.findMany({ ...query, where: { id: { in: ids.map((r) => r.id) } } }) : [];
  const byId = new Map(rows.map((row) => [(row as { id: string }).id, row]));
  return toPage(
    ids.map((r) => byId.get(r.id)!),
    total,
    args,
  );
}

export async function getEvent(ctx: Context, id: string, query: object) {
  const event = await ctx.prisma.usageEvent.findFirst({ ...query, where: { id, organizationId: organizationFilter(ctx) } });
  if (!event) throw new ResourceNotFoundError('Event not found.');
  return event;
}

export interface EventNameListArgs extends PageArgs {
  organizationId?: string[] | null;
  customerId?: string[] | null;
  externalCustomerId?: string[] | null;
  source?: UsageEventSource[] | null;
  query?: string | null;
  sorting?: string[] | null;
}

export interface EventName {
  name: string;
  source: UsageEventSource;
  occurrences: number;
  firstSeen: Date;
  lastSeen: Date;
}

const nameOrder: Record<(typeof eventNameSortProperties)[number], Prisma.Sql> = {
  name: Prisma.raw('name'),
  occurrences: Prisma.raw('occurrences'),
  first_seen: Prisma.raw('"firstSeen"'),
  last_seen: Prisma.raw('"lastSeen"'),
};

/** The names events were recorded under, with how often and when first and last, most recently seen first unless sorted otherwise. */
export async function listEventNames(ctx: Context, args: EventNameListArgs) {
  const window = pageWindow(args);
  const organizations = organizationFilter(ctx, args.organizationId).in;
  const conditions = [inList(Prisma.sql`e.organization_id`, organizations, 'uuid')];
  const customers = await customerSql(ctx, organizations, args.customerId, args.externalCustomerId);
  if (customers) conditions.push(customers);
  if (args.source?.length) conditions.push(inList(Prisma.sql`e.source::text`, args.source, 'text'));
  if (args.query) conditions.push(Prisma.sql`e.name ILIKE ${`%${args.query.replace(/[\\%_]/g, '\\$&')}%`}`);
  const where = Prisma.join(conditions, ' AND ');
  const sorting = args.sorting?.length ? args.sorting : ['-last_seen'];
  const order = Prisma.join(
    [
      ...sorting.map((s) => {
        const property = s.replace(/^-/, '') as (typeof eventNameSortProperties)[number];
        return Prisma.sql`${nameOrder[property]} ${Prisma.raw(s.startsWith('-') ? 'DESC' : 'ASC')}`;
      }),
      Prisma.sql`name ASC, source ASC`,
    ],
    ', ',
  );
  const [items, [{ total }]] = await Promise.all([
    ctx.prisma.$queryRaw<EventName[]>`
      SELECT e.name, e.source::text AS source, count(*)::int AS occurrences, min(e.timestamp) AS "firstSeen", max(e.timestamp) AS "lastSeen"
      FROM usage_events e WHERE ${where} GROUP BY e.name, e.source
      ORDER BY ${order} LIMIT ${window.take} OFFSET ${window.skip}`,
    ctx.prisma.$queryRaw<{ total: number }[]>`SELECT count(*)::int AS total FROM (SELECT 1 FROM usage_events e WHERE ${where} GROUP BY e.name, e.source) names`,
  ]);
  return toPage(items, total, args);
}
