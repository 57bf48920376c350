// The signed-in customer's benefit grants: what they hold, through which purchase. The grants are
// found through `reach(ctx).benefitGrant` (benefits/service.ts), so a customer reads only their own,
// and a checkout's session only those of the purchase it made. A revoked grant leaves the portal.
// Connecting a Discord or GitHub account to a grant (PATCH) is not offered: Kassa grants neither.
import { queryFromInfo } from '@pothos/plugin-prisma';
import { builder } from '../../graphql/builder.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CustomerPortalQuery } from '../../graphql/roots.ts';
import { sortingScalarConfig } from '../../graphql/sorting.ts';
import type { RestRoute } from '../../rest/routes.ts';
import { BenefitType } from '../benefits/schema.ts';
import { customerBenefitGrantSortProperties, getCustomerBenefitGrant, listCustomerBenefitGrants } from '../benefits/service.ts';
import { addressWire } from '../customers/rest.ts';
import { Organization } from '../organizations/schema.ts';
import { CustomerPortalCustomer } from './customers.ts';

const CustomerBenefitGrantSortProperty = builder.scalarType('CustomerBenefitGrantSortProperty', sortingScalarConfig(customerBenefitGrantSortProperties));

type Stored = Record<string, any>;

/** A benefit as its holder sees it: what it is and gives, and the organization behind it. */
export const BenefitSubscriber = builder.prismaInterface('Benefit', {
  variant: 'BenefitSubscriber',
  description: 'A benefit the signed-in customer holds. `properties` depend on the type.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
    type: t.expose('type', { type: BenefitType }),
    description: t.exposeString('description'),
    selectable: t.exposeBoolean('selectable'),
    deletable: t.exposeBoolean('deletable'),
    organizationId: t.expose('organizationId', { type: 'UUID' }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's metadata of the benefit, which its holders see too.", resolve: (benefit) => benefit.metadata as Metadata }),
    organization: t.relation('organization', { type: Organization }),
  }),
  resolveType: (benefit) =>
    ({ custom: 'BenefitCustomSubscriber', license_keys: 'BenefitLicenseKeysSubscriber', downloadables: 'BenefitDownloadablesSubscriber' })[benefit.type as string],
});

const BenefitCustomSubscriberProperties = builder.objectRef<Stored>('BenefitCustomSubscriberProperties').implement({
  fields: (t) => ({ note: t.string({ nullable: true, resolve: (p) => p.note ?? null }) }),
});

const BenefitLicenseKeyExpirationProperties = builder.objectRef<Stored>('BenefitLicenseKeyExpirationProperties').implement({
  fields: (t) => ({ ttl: t.int({ resolve: (p) => p.ttl }), timeframe: t.string({ description: 'year, month or day.', resolve: (p) => p.timeframe }) }),
});
const BenefitLicenseKeyActivationProperties = builder.objectRef<Stored>('BenefitLicenseKeyActivationProperties').implement({
  fields: (t) => ({
    limit: t.int({ resolve: (p) => p.limit }),
    enableCustomerAdmin: t.boolean({ resolve: (p) => p.enable_customer_admin }),
  }),
});
const BenefitLicenseKeysSubscriberProperties = builder.objectRef<Stored>('BenefitLicenseKeysSubscriberProperties').implement({
  fields: (t) => ({
    prefix: t.string({ nullable: true, resolve: (p) => p.prefix ?? null }),
    expires: t.field({ type: BenefitLicenseKeyExpirationProperties, nullable: true, resolve: (p) => p.expires ?? null }),
    activations: t.field({ type: BenefitLicenseKeyActivationProperties, nullable: true, resolve: (p) => p.activations ?? null }),
    limitUsage: t.int({ nullable: true, resolve: (p) => p.limit_usage ?? null }),
  }),
});

// Archived files stay with those who hold them already (their grant's `files`), so the benefit
// shows only the files it gives now.
const BenefitDownloadablesSubscriberProperties = builder.objectRef<Stored>('BenefitDownloadablesSubscriberProperties').implement({
  fields: (t) => ({
    activeFiles: t.field({
      type: ['UUID'],
      description: 'The files the benefit gives new holders.',
      resolve: (p) => ((p.files ?? []) as string[]).filter((file) => !p.archived?.[file]),
    }),
  }),
});

for (const [variant, properties] of [
  ['BenefitCustomSubscriber', BenefitCustomSubscriberProperties],
  ['BenefitLicenseKeysSubscriber', BenefitLicenseKeysSubscriberProperties],
  ['BenefitDownloadablesSubscriber', BenefitDownloadablesSubscriberProperties],
] as const) {
  builder.prismaObject('Benefit', {
    variant,
    interfaces: [BenefitSubscriber],
    fields: (t) => ({ properties: t.field({ type: properties as typeof BenefitCustomSubscriberProperties, resolve: (benefit) => benefit.properties as Stored }) }),
  });
}

export const CustomerBenefitGrant = builder.prismaObject('BenefitGrant', {
  variant: 'CustomerBenefitGrant',
  description: 'A benefit the signed-in customer holds through one purchase: an order or a subscription.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
    grantedAt: t.expose('grantedAt', { type: 'DateTime', nullable: true }),
    isGranted: t.boolean({ resolve: (grant) => grant.grantedAt !== null && grant.revokedAt === null }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    isRevoked: t.boolean({ resolve: (grant) => grant.revokedAt !== null }),
    customerId: t.expose('customerId', { type: 'UUID' }),
    benefitId: t.expose('benefitId', { type: 'UUID' }),
    subscriptionId: t.expose('subscriptionId', { type: 'UUID', nullable: true }),
    orderId: t.expose('orderId', { type: 'UUID', nullable: true }),
    customer: t.relation('customer', { type: CustomerPortalCustomer }),
    benefit: t.relation('benefit', { type: BenefitSubscriber }),
    properties: t.field({
      type: 'JSONObject',
      description: 'What the grant gave: `{license_key_id, display_key}` for license keys, `{files}` for downloadables, `{}` for custom.',
      resolve: (grant) => grant.properties as Stored,
    }),
  }),
});

const CustomerBenefitGrantList = listType('CustomerBenefitGrant', CustomerBenefitGrant);

builder.objectFields(CustomerPortalQuery, (t) => ({
  benefitGrants: t.field({
    type: CustomerBenefitGrantList,
    description: "The customer's benefit grants that are not revoked.",
    authScopes: { principal: 'customer' },
    args: {
      ...pageArgs(t.arg),
      type: t.arg({ type: [BenefitType] }),
      benefitId: t.arg({ type: ['UUID'] }),
      organizationId: t.arg({ type: ['UUID'] }),
      checkoutId: t.arg({ type: ['UUID'], description: 'Grants of the purchases this checkout made.' }),
      orderId: t.arg({ type: ['UUID'] }),
      subscriptionId: t.arg({ type: ['UUID'] }),
      sorting: t.arg({ type: [CustomerBenefitGrantSortProperty], description: 'Default: -granted_at.' }),
    },
    resolve: (_root, args, ctx, info) => listCustomerBenefitGrants(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
  benefitGrant: t.prismaField({
    type: CustomerBenefitGrant,
    authScopes: { principal: 'customer' },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => getCustomerBenefitGrant(ctx, id, query),
  }),
}));

const CustomerBenefitGrantWire = /* GraphQL */ `
  fragment CustomerBenefitGrantWire on CustomerBenefitGrant {
    id createdAt modifiedAt grantedAt revokedAt customerId benefitId subscriptionId orderId isGranted isRevoked properties
    customer { id createdAt modifiedAt email emailVerified name billingName billingAddress { ${addressWire} } taxId }
    benefit {
      id createdAt modifiedAt type description selectable deletable organizationId metadata
      organization { id createdAt modifiedAt name slug }
      ... on BenefitCustomSubscriber { properties { note } }
      ... on BenefitLicenseKeysSubscriber { properties { prefix expires { ttl timeframe } activations { limit enableCustomerAdmin } limitUsage } }
      ... on BenefitDownloadablesSubscriber { properties { activeFiles } }
    }
  }`;

export const portalBenefitGrantsRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/customer-portal/benefit-grants/',
    operation: `query ($page: Int, $limit: Int, $type: [BenefitType!], $benefitId: [UUID!], $organizationId: [UUID!], $checkoutId: [UUID!],
        $orderId: [UUID!], $subscriptionId: [UUID!], $sorting: [CustomerBenefitGrantSortProperty!]) {
      customerPortal { benefitGrants(page: $page, limit: $limit, type: $type, benefitId: $benefitId, organizationId: $organizationId,
          checkoutId: $checkoutId, orderId: $orderId, subscriptionId: $subscriptionId, sorting: $sorting) {
        items { ...CustomerBenefitGrantWire } pagination { totalCount maxPage } } }
    } ${CustomerBenefitGrantWire}`,
  },
  {
    method: 'GET',
    path: '/v1/customer-portal/benefit-grants/{id}',
    operation: `query ($id: UUID!) { customerPortal { benefitGrant(id: $id) { ...CustomerBenefitGrantWire } } } ${CustomerBenefitGrantWire}`,
  },
];
