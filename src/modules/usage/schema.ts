import { GraphQLError } from 'graphql';
import type { Scope } from '../../auth/scopes.ts';
import { builder } from '../../graphql/builder.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import { TimeInterval } from '../../graphql/time-interval.ts';
import type { UsageEventSource } from '../../generated/prisma/client.ts';
import { Customer } from '../customers/schema.ts';
import { eventLimits, eventNameSortProperties, eventSortProperties, getEvent, ingestEvents, listEventNames, listEvents, maxClockSkewMs, type EventName as EventNameRow } from './events.ts';
import { filterLimits, filterOperators, type AggregationFunction } from './filter.ts';
import { createMeter, getMeter, listMeters, maxBuckets, meterQuantities, meterSortProperties, updateMeter, type MeterQuantities as MeterQuantitiesShape } from './meters.ts';

const eventsRead = { scope: ['events:read', 'events:write'] satisfies Scope[] as Scope[] };
const eventsWrite = { scope: 'events:write' satisfies Scope as Scope };
const metersRead = { scope: ['meters:read', 'meters:write'] satisfies Scope[] as Scope[] };
const metersWrite = { scope: 'meters:write' satisfies Scope as Scope };

// ---------------------------------------------------------------------------------------------
// Events

export const EventSource = builder.enumType('EventSource', {
  description: 'Who recorded an event.',
  values: {
    system: { description: 'Kassa itself, for a change it made (benefit.granted, benefit.revoked).' },
    user: { description: 'The organization, through eventsIngest (POST /v1/events/ingest).' },
  } satisfies Record<UsageEventSource, object>,
});

export const Event = builder.prismaObject('UsageEvent', {
  name: 'Event',
  interfaces: [Node],
  description: 'Something a customer did, recorded for usage-based billing: named, timestamped, with metadata. Never changed once recorded.',
  fields: (t) => ({
    id: t.exposeID('id', { description: "The event's id. Its global id (see Node)." }),
    timestamp: t.expose('timestamp', { type: 'DateTime', description: 'When it happened.' }),
    organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization it was recorded for.' }),
    customerId: t.expose('customerId', { type: 'UUID', nullable: true, description: 'The customer, when known at ingestion; null for an external id no customer held then.' }),
    customer: t.relation('customer', { type: Customer, nullable: true, description: 'The customer; null when customerId is.' }),
    externalCustomerId: t.exposeString('externalCustomerId', { nullable: true, description: "The organization's own id of the customer, as sent or as the customer held it." }),
    externalId: t.exposeString('externalId', { nullable: true, description: "The client's own id of the event, unique in the organization; null if none was given." }),
    name: t.exposeString('name', { description: 'What happened, in the organization\'s words (user events) or Kassa\'s (system events: benefit.granted, benefit.revoked).' }),
    source: t.expose('source', { type: EventSource, description: 'user or system.' }),
    metadata: t.field({ type: MetadataScalar, description: 'What the event carries; meters filter and aggregate on it.', resolve: (e) => e.metadata as Metadata }),
  }),
});

const EventList = listType('Event', Event);

const EventName = builder.objectRef<EventNameRow>('EventName').implement({
  description: 'A name events were recorded under, with how many there are and when the first and the last happened.',
  fields: (t) => ({
    name: t.exposeString('name', { description: 'The name.' }),
    source: t.field({ type: EventSource, description: 'user or system.', resolve: (n) => n.source }),
    occurrences: t.exposeInt('occurrences', { description: 'How many events have it.' }),
    firstSeen: t.field({ type: 'DateTime', description: 'The timestamp of the first.', resolve: (n) => n.firstSeen }),
    lastSeen: t.field({ type: 'DateTime', description: 'The timestamp of the last.', resolve: (n) => n.lastSeen }),
  }),
});

const EventNameList = listType('EventName', EventName);

const EventSortOrder = sortOrderEnum('EventSortOrder', 'events', { timestamp: 'when it happened' } satisfies Record<(typeof eventSortProperties)[number], string>, 'EventSortProperty');
const EventNameSortOrder = sortOrderEnum(
  'EventNameSortOrder',
  'event names',
  { name: 'name', occurrences: 'the number of events', first_seen: 'the first event', last_seen: 'the last event' } satisfies Record<(typeof eventNameSortProperties)[number], string>,
  'EventNamesSortProperty',
);

const EventCreateInput = builder.inputType('EventCreateInput', {
  description: 'One event to ingest: a name, its customer (by id or by external id), and optionally a timestamp, metadata and an external id.',
  fields: (t) => ({
    name: t.string({ required: true, description: `What happened, 1 to ${eventLimits.maxNameLength} characters.` }),
    customerId: t.field({ type: 'UUID', description: 'The customer, who must exist in the organization. Give this or externalCustomerId.' }),
    externalCustomerId: t.string({ description: "The organization's own id of the customer; a customer need not hold it yet. Give this or customerId." }),
    externalId: t.string({
      description: `Your own id of the event, 1 to ${eventLimits.maxExternalIdLength} characters: an event whose external id the organization already has is not recorded again (retries are safe).`,
    }),
    timestamp: t.field({ type: 'DateTime', description: `When it happened; now when omitted. At most ${maxClockSkewMs / 60_000} minutes ahead of the server's clock.` }),
    metadata: t.field({ type: MetadataScalar, description: 'What the event carries (flat: string, number or boolean values); meters filter and aggregate on it.' }),
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
  }),
});

const EventsIngestInput = builder.inputType('EventsIngestInput', {
  description: 'A batch of events, at most 1000: recorded all together, or none when any is invalid.',
  fields: (t) => ({
    events: t.field({ type: [EventCreateInput], required: true, description: 'The events, in any order.' }),
  }),
});

const EventsIngestResult = builder.objectRef<{ inserted: number; duplicates: number }>('EventsIngestResult').implement({
  description: 'What a batch recorded.',
  fields: (t) => ({
    inserted: t.exposeInt('inserted', { description: 'How many events were recorded.' }),
    duplicates: t.exposeInt('duplicates', { description: 'How many were skipped: their external id was recorded already, or repeated in the batch.' }),
  }),
});

const eventFilterArgs = (t: Parameters<Parameters<typeof builder.objectFields>[1]>[0]) => ({
  organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
  customerId: t.arg({ type: ['UUID'], description: 'Only events of these customers (recorded by id or by their external id).' }),
  externalCustomerId: t.arg({ type: ['String'], description: 'Only events of the customers with these external ids.' }),
  source: t.arg({ type: [EventSource], description: 'Only events of these sources.' }),
});

builder.objectFields(CoreQuery, (t) => ({
  events: t.field({
    type: EventList,
    description: 'The events of the organizations the token reaches, newest first unless `sorting` says otherwise.',
    authScopes: eventsRead,
    args: {
      ...pageArgs(t.arg),
      ...eventFilterArgs(t),
      name: t.arg({ type: ['String'], description: 'Only events with these names.' }),
      startTimestamp: t.arg({ type: 'DateTime', description: 'Only events at or after this time.' }),
      endTimestamp: t.arg({ type: 'DateTime', description: 'Only events at or before this time.' }),
      meterId: t.arg({ type: 'UUID', description: "Only the events this meter's filter matches; RESOURCE_NOT_FOUND if the token does not reach the meter." }),
      filter: t.arg.string({ description: 'Only the events this filter matches: a meter filter as a JSON string, {"conjunction": "and", "clauses": [...]}.' }),
      metadata: t.arg({ type: 'JSONObject', description: 'Filter by metadata: {key: value or [values]}.' }),
      sorting: t.arg({ type: [EventSortOrder], description: 'The order of the list. Default: timestamp_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listEvents(ctx, args, pageQuery(ctx, info)),
  }),
  event: t.prismaField({
    type: Event,
    description: 'One event; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: eventsRead,
    args: { id: t.arg({ type: 'UUID', required: true, description: "The event's id." }) },
    resolve: (query, _root, { id }, ctx) => getEvent(ctx, id, query),
  }),
  eventNames: t.field({
    type: EventNameList,
    description: 'The names events were recorded under, by source, most recently seen first unless `sorting` says otherwise.',
    authScopes: eventsRead,
    args: {
      ...pageArgs(t.arg),
      ...eventFilterArgs(t),
      query: t.arg.string({ description: 'Matches names, case-insensitively.' }),
      sorting: t.arg({ type: [EventNameSortOrder], description: 'The order of the list. Default: last_seen_desc.' }),
    },
    resolve: (_root, args, ctx) => listEventNames(ctx, args),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  eventsIngest: t.field({
    type: EventsIngestResult,
    description:
      'Records a batch of up to 1000 events in one statement, all or none. BAD_USER_INPUT names each invalid event by its index: a customer not found, a timestamp in the future, both or neither customer ids.',
    authScopes: eventsWrite,
    args: { input: t.arg({ type: EventsIngestInput, required: true, description: 'The batch.' }) },
    resolve: (_root, { input }, ctx) => ingestEvents(ctx, input),
  }),
}));

/** node(id:) answers for events as core.event does. */
export const eventNodeLoader: NodeLoader = { surface: 'core', model: 'usageEvent', typeName: 'Event', scopes: eventsRead.scope, load: getEvent };

// ---------------------------------------------------------------------------------------------
// Meters

const MeterFilterScalar = builder.scalarType('MeterFilter', {
  description: `Which events a meter counts: {"conjunction": "and" | "or", "clauses": [clause or filter, ...]}, a clause being {"property", "operator", "value"}. property is "name" (the event's name) or a metadata key (bare or as "metadata.key"); operator is one of ${filterOperators.join(', ')}; value is a string, number or boolean. Filters nest ${filterLimits.maxDepth} levels deep, ${filterLimits.maxClauses} clauses each. See docs/usage.md.`,
  serialize: (value) => value,
  parseValue: (value) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new GraphQLError('A meter filter is an object: {"conjunction", "clauses"}.');
    return value as Record<string, unknown>;
  },
});

export const MeterAggregationFunction = builder.enumType('MeterAggregationFunction', {
  description: 'How a meter turns the events it matches into a quantity.',
  values: {
    count: { description: 'The number of events.' },
    sum: { description: 'The sum of a numeric metadata property.' },
    max: { description: 'The largest value of a numeric metadata property.' },
    min: { description: 'The smallest value of a numeric metadata property.' },
    avg: { description: 'The mean of a numeric metadata property.' },
    unique: { description: 'The number of distinct values of a metadata property.' },
  } satisfies Record<AggregationFunction, object>,
});

const MeterAggregation = builder.objectRef<{ func: AggregationFunction; property: string | null }>('MeterAggregation').implement({
  description: 'How a meter aggregates: a function, over a metadata property except for count.',
  fields: (t) => ({
    func: t.field({ type: MeterAggregationFunction, description: 'The function.', resolve: (a) => a.func }),
    property: t.exposeString('property', { nullable: true, description: 'The metadata property it reads; null for count.' }),
  }),
});

export const Meter = builder.prismaObject('Meter', {
  interfaces: [Node],
  description: "A meter: a filter over the organization's events and an aggregation of those it matches, read as quantities over time.",
  fields: (t) => ({
    id: t.exposeID('id', { description: "The meter's id. Its global id (see Node)." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the meter was created.' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When it was last changed; null if never.' }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data.", resolve: (m) => m.metadata as Metadata }),
    name: t.exposeString('name', { description: 'Its name, shown to customers on what they are billed.' }),
    filter: t.field({ type: MeterFilterScalar, description: 'Which events it counts.', resolve: (m) => m.filter as Record<string, unknown> }),
    aggregation: t.field({ type: MeterAggregation, description: 'How it aggregates them.', resolve: (m) => m.aggregation as never }),
    organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization it belongs to.' }),
    archivedAt: t.expose('archivedAt', { type: 'DateTime', nullable: true, description: 'When it was archived; null while it is not.' }),
  }),
});

const MeterList = listType('Meter', Meter);

const MeterSortOrder = sortOrderEnum(
  'MeterSortOrder',
  'meters',
  { created_at: 'when the meter was created', name: 'name' } satisfies Record<(typeof meterSortProperties)[number], string>,
  'MeterSortProperty',
);


const MeterQuantity = builder.objectRef<{ timestamp: Date; quantity: number }>('MeterQuantity').implement({
  description: "A meter's quantity over one bucket.",
  fields: (t) => ({
    timestamp: t.field({ type: 'DateTime', description: 'When the bucket starts.', resolve: (q) => q.timestamp }),
    quantity: t.exposeFloat('quantity', { description: 'The aggregation over the events of the bucket; 0 when none.' }),
  }),
});

const MeterQuantities = builder.objectRef<MeterQuantitiesShape>('MeterQuantities').implement({
  description: "A meter's quantities over a range: every bucket, and the total.",
  fields: (t) => ({
    quantities: t.field({ type: [MeterQuantity], description: 'Every bucket of the range, in order, those without events at 0.', resolve: (q) => q.quantities }),
    total: t.exposeFloat('total', { description: "The aggregation over all the range's events (for max, avg and unique, not the sum of the buckets)." }),
  }),
});

const MeterAggregationInput = builder.inputType('MeterAggregationInput', {
  description: 'How a meter aggregates: count, or a function over a metadata property.',
  fields: (t) => ({
    func: t.field({ type: MeterAggregationFunction, required: true, description: 'The function.' }),
    property: t.string({ description: 'The metadata property: required for every function but count, which takes none.' }),
  }),
});

const MeterCreateInput = builder.inputType('MeterCreateInput', {
  description: 'A new meter: a name, a filter and an aggregation.',
  fields: (t) => ({
    name: t.string({ required: true, description: 'Its name, 3 to 256 characters.' }),
    filter: t.field({ type: MeterFilterScalar, required: true, description: 'Which events it counts.' }),
    aggregation: t.field({ type: MeterAggregationInput, required: true, description: 'How it aggregates them.' }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data." }),
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
  }),
});

const MeterUpdateInput = builder.inputType('MeterUpdateInput', {
  description: 'Only the fields given change.',
  fields: (t) => ({
    name: t.string({ description: 'A new name, 3 to 256 characters.' }),
    filter: t.field({ type: MeterFilterScalar, description: 'A new filter.' }),
    aggregation: t.field({ type: MeterAggregationInput, description: 'A new aggregation.' }),
    metadata: t.field({ type: MetadataScalar, description: 'Replaces the whole metadata object.' }),
    isArchived: t.boolean({ description: 'true archives the meter, false unarchives it.' }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  meters: t.field({
    type: MeterList,
    description: 'The meters of the organizations the token reaches, by name unless `sorting` says otherwise.',
    authScopes: metersRead,
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      query: t.arg.string({ description: 'Matches names, case-insensitively.' }),
      isArchived: t.arg.boolean({ description: 'true: only archived meters; false: only meters not archived; both when omitted.' }),
      metadata: t.arg({ type: 'JSONObject', description: 'Filter by metadata: {key: value or [values]}.' }),
      sorting: t.arg({ type: [MeterSortOrder], description: 'The order of the list. Default: name_asc.' }),
    },
    resolve: (_root, args, ctx, info) => listMeters(ctx, args, pageQuery(ctx, info)),
  }),
  meter: t.prismaField({
    type: Meter,
    description: 'One meter; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: metersRead,
    args: { id: t.arg({ type: 'UUID', required: true, description: "The meter's id." }) },
    resolve: (query, _root, { id }, ctx) => getMeter(ctx, id, query),
  }),
  meterQuantities: t.field({
    type: MeterQuantities,
    description: `A meter's quantities from startTimestamp to endTimestamp (both included), by interval, in a time zone. RESOURCE_NOT_FOUND if the token does not reach the meter; BAD_USER_INPUT for an unknown time zone, an end before the start or more than ${maxBuckets} buckets.`,
    authScopes: metersRead,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The meter's id." }),
      startTimestamp: t.arg({ type: 'DateTime', required: true, description: 'The start of the range.' }),
      endTimestamp: t.arg({ type: 'DateTime', required: true, description: 'The end of the range, included.' }),
      interval: t.arg({ type: TimeInterval, required: true, description: 'The length of a bucket.' }),
      timezone: t.arg.string({ description: 'The IANA time zone buckets start in (Europe/Paris); UTC when omitted.' }),
      customerId: t.arg({ type: ['UUID'], description: 'Only the events of these customers.' }),
      externalCustomerId: t.arg({ type: ['String'], description: 'Only the events of the customers with these external ids.' }),
      metadata: t.arg({ type: 'JSONObject', description: "Only events whose metadata matches: {key: value or [values]}." }),
    },
    resolve: (_root, { id, ...args }, ctx) => meterQuantities(ctx, id, args),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  meterCreate: t.prismaField({
    type: Meter,
    description: 'Creates a meter. BAD_USER_INPUT names each invalid field: a filter clause with an unknown operator, an aggregation without its property.',
    authScopes: metersWrite,
    args: { input: t.arg({ type: MeterCreateInput, required: true, description: 'The meter to create.' }) },
    resolve: (query, _root, { input }, ctx) => createMeter(ctx, input, query),
  }),
  meterUpdate: t.prismaField({
    type: Meter,
    description: 'Changes a meter, or archives or unarchives it. RESOURCE_NOT_FOUND if the token does not reach it; BAD_USER_INPUT as for meterCreate.',
    authScopes: metersWrite,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The meter's id." }),
      input: t.arg({ type: MeterUpdateInput, required: true, description: 'The fields to change.' }),
    },
    resolve: (query, _root, { id, input }, ctx) => updateMeter(ctx, id, input, query),
  }),
}));

/** node(id:) answers for meters as core.meter does. */
export const meterNodeLoader: NodeLoader = { surface: 'core', model: 'meter', typeName: 'Meter', scopes: metersRead.scope, load: getMeter };
