// Customer meters in GraphQL: core { customerMeters customerMeter } for organizations (scope
// customer_meters:read), customerPortal { meters meter } for the signed-in customer, the customer
// state's activeMeters, and the metered prices of a subscription (Core and portal).
import type { Context } from '../../context.ts';
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreQuery, CustomerPortalQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import type { Scope } from '../../auth/scopes.ts';
import { CustomerState } from '../customers/schema.ts';
import { Subscription } from '../subscriptions/schema.ts';
import { CustomerSubscription } from '../customer-portal/subscriptions.ts';
import { Meter } from './schema.ts';
import { activeCustomerMeters, subscriptionMeters, consumedUnits, customerMeterSortProperties, customerPortalMeterSortProperties, getCustomerMeter, listCustomerMeters } from './customer-meters.ts';

const customerMetersRead = { scope: ['customer_meters:read'] satisfies Scope[] as Scope[] };

type CustomerMeterFieldBuilder = PrismaFieldBuilder<'CustomerMeter'>;

/** What every view of a customer meter shows: its units and balance. */
const customerMeterFields = (t: CustomerMeterFieldBuilder) => ({
  id: t.exposeID('id', { description: "The customer meter's id." }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the customer first had credits or metered usage billed on the meter.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When its credits last changed; null if never.' }),
  meterId: t.expose('meterId', { type: 'UUID', description: 'The meter.' }),
  consumedUnits: t.float({
    description: "What the meter measured of the customer since the start of their billing period in progress (the meter's aggregation over their events).",
    resolve: (meter, _args, ctx) => consumedUnits(ctx.prisma, meter),
  }),
  creditedUnits: t.exposeInt('creditedUnits', { description: 'Credits held for this period: granted by meter_credit benefits, and rolled over.' }),
  balance: t.float({
    description: 'creditedUnits minus consumedUnits: negative once usage goes past the credits (the excess is billed at renewal).',
    resolve: async (meter, _args, ctx) => meter.creditedUnits - (await consumedUnits(ctx.prisma, meter)),
  }),
});

export const CustomerMeterRef = builder.prismaObject('CustomerMeter', {
  interfaces: [Node],
  description: "A customer's consumption and credits on a meter.",
  fields: (t) => ({
    ...customerMeterFields(t as unknown as CustomerMeterFieldBuilder),
    customerId: t.expose('customerId', { type: 'UUID', description: 'The customer.' }),
    customer: t.relation('customer', { description: 'The customer.' }),
    meter: t.relation('meter', { type: Meter, description: 'The meter.' }),
  }),
});

const CustomerCustomerMeterMeter = builder.prismaObject('Meter', {
  variant: 'CustomerCustomerMeterMeter',
  description: 'A meter as its customer sees it: its name.',
  fields: (t) => ({
    id: t.exposeID('id', { description: "The meter's id." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the meter was created.' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When it was last changed; null if never.' }),
    name: t.exposeString('name', { description: 'Its name.' }),
  }),
});

const CustomerCustomerMeter = builder.prismaObject('CustomerMeter', {
  variant: 'CustomerCustomerMeter',
  description: "The signed-in customer's consumption and credits on a meter.",
  fields: (t) => ({
    ...customerMeterFields(t as unknown as CustomerMeterFieldBuilder),
    customerId: t.expose('customerId', { type: 'UUID', description: 'The signed-in customer.' }),
    meter: t.relation('meter', { type: CustomerCustomerMeterMeter, description: 'The meter.' }),
  }),
});

const CustomerStateMeter = builder.prismaObject('CustomerMeter', {
  variant: 'CustomerStateMeter',
  description: "A customer's meter as the customer state lists it.",
  fields: (t) => customerMeterFields(t as unknown as CustomerMeterFieldBuilder),
});

builder.prismaObjectField(CustomerState, 'activeMeters', (t) =>
  t.field({
    type: [CustomerStateMeter],
    description: "The customer's meters of live meters: consumption and credits of the period in progress.",
    resolve: (customer, _args, ctx) => activeCustomerMeters(ctx.prisma, customer.id),
  }),
);

type SubscriptionMeterShape = Awaited<ReturnType<typeof subscriptionMeters>>[number];

/**
 * A subscription's metered price in the period in progress, the Core's and the portal's alike: the
 * same computation (subscriptionMeters), the meter shown as each surface shows meters.
 */
function subscriptionMeterType<MeterRef extends typeof Meter | typeof CustomerCustomerMeterMeter>(name: string, meterRef: MeterRef) {
  return builder.objectRef<SubscriptionMeterShape>(name).implement({
    description: "A subscription's metered price in the period in progress: the customer's consumption of its meter, their credits, and what it comes to so far.",
    fields: (t) => ({
      id: t.field({ type: 'UUID', description: 'The metered price.', resolve: (m) => m.id }),
      createdAt: t.field({ type: 'DateTime', description: 'When the metered price was created.', resolve: (m) => m.createdAt }),
      modifiedAt: t.field({ type: 'DateTime', nullable: true, description: "When the customer's credits on the meter last changed; null if never.", resolve: (m) => m.modifiedAt }),
      consumedUnits: t.float({ description: 'What the meter measured of the customer since the period started.', resolve: (m) => m.consumedUnits }),
      creditedUnits: t.int({ description: 'The credits the customer holds on the meter for the period.', resolve: (m) => m.creditedUnits }),
      amount: t.int({ description: 'The usage past the credits at the unit amount, rounded half up and capped, in minor units: what the renewal would bill now.', resolve: (m) => m.amount }),
      meterId: t.field({ type: 'UUID', description: 'The meter.', resolve: (m) => m.meterId }),
      meter: t.field({ type: meterRef as typeof Meter, description: 'The meter.', resolve: (m) => m.meter }),
    }),
  });
}

const SubscriptionMeter = subscriptionMeterType('SubscriptionMeter', Meter);
const CustomerSubscriptionMeter = subscriptionMeterType('CustomerSubscriptionMeter', CustomerCustomerMeterMeter);

/** The `meters` field of a subscription, Core or portal: the same computation, the meter shown as each surface shows it. */
const subscriptionMetersField = {
  description: 'Its metered prices in the period in progress: consumption, credits and the amount so far.',
  select: { id: true, customerId: true, createdAt: true, currentPeriodStart: true },
  resolve: (subscription: Parameters<typeof subscriptionMeters>[1], _args: object, ctx: Context) => subscriptionMeters(ctx.prisma, subscription),
} as const;

builder.prismaObjectField(Subscription, 'meters', (t) => t.field({ type: [SubscriptionMeter], ...subscriptionMetersField }));
builder.prismaObjectField(CustomerSubscription, 'meters', (t) => t.field({ type: [CustomerSubscriptionMeter], ...subscriptionMetersField }));

const CustomerMeterSortOrder = sortOrderEnum(
  'CustomerMeterSortOrder',
  'customer meters',
  {
    created_at: 'when it was created',
    modified_at: 'when its credits last changed',
    customer_id: 'customer id',
    customer_name: 'customer name',
    meter_id: 'meter id',
    meter_name: 'meter name',
    consumed_units: 'consumed units since the window opened',
    credited_units: 'credited units',
    balance: 'balance (credited minus consumed units)',
  } satisfies Record<(typeof customerMeterSortProperties)[number], string>,
  'CustomerMeterSortProperty',
);
const CustomerPortalMeterSortOrder = sortOrderEnum(
  'CustomerPortalMeterSortOrder',
  'customer meters',
  {
    created_at: 'when it was created',
    modified_at: 'when its credits last changed',
    meter_id: 'meter id',
    meter_name: 'meter name',
    consumed_units: 'consumed units since the window opened',
    credited_units: 'credited units',
    balance: 'balance (credited minus consumed units)',
  } satisfies Record<(typeof customerPortalMeterSortProperties)[number], string>,
  'CustomerCustomerMeterSortProperty',
);

const CustomerMeterList = listType('CustomerMeter', CustomerMeterRef);
const CustomerCustomerMeterList = listType('CustomerCustomerMeter', CustomerCustomerMeter);

builder.objectFields(CoreQuery, (t) => ({
  customerMeters: t.field({
    type: CustomerMeterList,
    description: "The customer meters of the organizations the token reaches, last changed first unless `sorting` says otherwise.",
    authScopes: customerMetersRead,
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations.' }),
      customerId: t.arg({ type: ['UUID'], description: 'Only these customers.' }),
      externalCustomerId: t.arg({ type: ['String'], description: 'Only the customers with these external ids.' }),
      meterId: t.arg({ type: ['UUID'], description: 'Only these meters.' }),
      sorting: t.arg({ type: [CustomerMeterSortOrder], description: 'The order of the list. Default: modified_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listCustomerMeters(ctx, args, pageQuery(ctx, info)),
  }),
  customerMeter: t.prismaField({
    type: CustomerMeterRef,
    description: 'One customer meter; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: customerMetersRead,
    args: { id: t.arg({ type: 'UUID', required: true, description: "The customer meter's id." }) },
    resolve: (query, _root, { id }, ctx) => getCustomerMeter(ctx, id, query),
  }),
}));

builder.objectFields(CustomerPortalQuery, (t) => ({
  meters: t.field({
    type: CustomerCustomerMeterList,
    description: "The signed-in customer's meters.",
    authScopes: { principal: 'customer' },
    args: {
      ...pageArgs(t.arg),
      meterId: t.arg({ type: ['UUID'], description: 'Only these meters.' }),
      query: t.arg.string({ description: 'Matches meter names, case-insensitively.' }),
      sorting: t.arg({ type: [CustomerPortalMeterSortOrder], description: 'The order of the list. Default: modified_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listCustomerMeters(ctx, args, pageQuery(ctx, info)),
  }),
  meter: t.prismaField({
    type: CustomerCustomerMeter,
    description: "One of the customer's meters; RESOURCE_NOT_FOUND if it is not theirs.",
    authScopes: { principal: 'customer' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The customer meter's id." }) },
    resolve: (query, _root, { id }, ctx) => getCustomerMeter(ctx, id, query),
  }),
}));

/** node(id:) answers for customer meters as core.customerMeter does. */
export const customerMeterNodeLoader: NodeLoader = { surface: 'core', model: 'customerMeter', typeName: 'CustomerMeter', scopes: customerMetersRead.scope, load: getCustomerMeter };
