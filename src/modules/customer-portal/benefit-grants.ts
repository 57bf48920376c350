// The signed-in customer's benefit grants: what they hold, through which purchase. The grants are
// found through `reach(ctx).benefitGrant` (benefits/service.ts), so a customer reads only their own,
// and a checkout's session only those of the purchase it made. A revoked grant leaves the portal.
// Connecting a Discord or GitHub account to a grant (PATCH) is refused: Kassa grants neither; the
// other types have nothing a customer changes, and PATCH answers their grant as it is.
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CustomerPortalMutation, CustomerPortalQuery } from '../../graphql/roots.ts';
import { NotPermittedError, raises } from '../../graphql/errors.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import {
  benefitFields,
  benefitGrantFields,
  LicenseKeyTimeframe,
  BenefitGrantFields,
  BenefitType,
  customPropertiesFields,
  implementBenefitObjects,
  BenefitMeterCreditProperties,
  licenseKeyActivationsFields,
  licenseKeysPropertiesFields,
  type BenefitObjects,
  type StoredProperties,
} from '../benefits/schema.ts';
import { customerBenefitGrantSortProperties, getCustomerBenefitGrant, listCustomerBenefitGrants, updateCustomerBenefitGrant } from '../benefits/service.ts';
import { Organization } from '../organizations/schema.ts';
import { CustomerPortalCustomer } from './customers.ts';

const CustomerBenefitGrantSortOrder = sortOrderEnum(
  'CustomerBenefitGrantSortOrder',
  "the customer's benefit grants",
  {
  granted_at: 'when the benefit was granted',
  type: "the benefit's type",
  organization: "the granting organization's slug",
  } satisfies Record<(typeof customerBenefitGrantSortProperties)[number], string>,
  'CustomerBenefitGrantSortProperty',
);

const BenefitCustomSubscriberProperties = builder.objectRef<StoredProperties>('BenefitCustomSubscriberProperties').implement({
  description: 'What a custom benefit gives its holder.',
  fields: customPropertiesFields,
});

const BenefitLicenseKeyExpirationProperties = builder.objectRef<StoredProperties>('BenefitLicenseKeyExpirationProperties').implement({
  description: 'How long a license key lasts from its grant: ttl timeframes.',
  fields: (t) => ({ ttl: t.int({ description: 'How many timeframes, 1 to 1000.', resolve: (p) => p.ttl }), timeframe: t.field({ type: LicenseKeyTimeframe, description: 'The unit of ttl.', resolve: (p) => p.timeframe }) }),
});
const BenefitLicenseKeyActivationProperties = builder.objectRef<StoredProperties>('BenefitLicenseKeyActivationProperties').implement({
  description: 'Whether and how often a license key may be activated.',
  fields: licenseKeyActivationsFields,
});
const BenefitLicenseKeysSubscriberProperties = builder.objectRef<StoredProperties>('BenefitLicenseKeysSubscriberProperties').implement({
  description: "A license_keys benefit's settings: what the holder's key is like.",
  fields: (t) => licenseKeysPropertiesFields(t, { expires: BenefitLicenseKeyExpirationProperties, activations: BenefitLicenseKeyActivationProperties }),
});

// Archived files stay with those who hold them already (their grant's `files`), so the benefit
// shows only the files it gives now.
const BenefitDownloadablesSubscriberProperties = builder.objectRef<StoredProperties>('BenefitDownloadablesSubscriberProperties').implement({
  description: 'What a downloadables benefit gives; the holder\'s own files are in their grant and in `downloadables`.',
  fields: (t) => ({
    activeFiles: t.field({
      type: ['UUID'],
      description: 'The files the benefit gives new holders.',
      resolve: (p) => ((p.files ?? []) as string[]).filter((file) => !p.archived?.[file]),
    }),
  }),
});

const subscriberObjects: BenefitObjects = {
  custom: { name: 'BenefitCustomSubscriber', description: 'A custom benefit the customer holds: a note.', properties: BenefitCustomSubscriberProperties },
  license_keys: { name: 'BenefitLicenseKeysSubscriber', description: 'A license_keys benefit the customer holds.', properties: BenefitLicenseKeysSubscriberProperties },
  downloadables: { name: 'BenefitDownloadablesSubscriber', description: 'A downloadables benefit the customer holds.', properties: BenefitDownloadablesSubscriberProperties },
  meter_credit: { name: 'BenefitMeterCreditSubscriber', description: 'A meter_credit benefit the customer holds.', properties: BenefitMeterCreditProperties },
};

/** A benefit as its holder sees it: what it is and gives, and the organization behind it. */
export const BenefitSubscriber = builder.prismaInterface('Benefit', {
  variant: 'BenefitSubscriber',
  description: 'A benefit the signed-in customer holds. `properties` depend on the type.',
  fields: (t) => ({
    ...benefitFields(t as unknown as PrismaFieldBuilder<'Benefit'>),
    metadata: t.field({ type: MetadataScalar, description: "The organization's metadata of the benefit, which its holders see too.", resolve: (benefit) => benefit.metadata as Metadata }),
    organization: t.relation('organization', { type: Organization, description: "The organization that grants it (its public profile)." }),
  }),
  resolveType: (benefit) => subscriberObjects[benefit.type]?.name,
});

implementBenefitObjects(BenefitSubscriber, subscriberObjects);

export const CustomerBenefitGrant = builder.prismaObject('BenefitGrant', {
  variant: 'CustomerBenefitGrant',
  interfaces: [Node, BenefitGrantFields],
  description: 'A benefit the signed-in customer holds through one purchase: an order or a subscription.',
  fields: (t) => ({
    ...benefitGrantFields(t as unknown as PrismaFieldBuilder<'BenefitGrant'>),
    customer: t.relation('customer', { type: CustomerPortalCustomer, description: 'The signed-in customer.' }),
    benefit: t.relation('benefit', { type: BenefitSubscriber, description: 'The benefit granted.' }),
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
      type: t.arg({ type: [BenefitType], description: 'Only grants of benefits of these types.' }),
      benefitId: t.arg({ type: ['UUID'], description: 'Only grants of these benefits.' }),
      organizationId: t.arg({ type: ['UUID'], description: "Only these organizations' grants." }),
      checkoutId: t.arg({ type: ['UUID'], description: 'Grants of the purchases this checkout made.' }),
      orderId: t.arg({ type: ['UUID'], description: 'Only grants through these orders.' }),
      subscriptionId: t.arg({ type: ['UUID'], description: 'Only grants through these subscriptions.' }),
      sorting: t.arg({ type: [CustomerBenefitGrantSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: granted_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listCustomerBenefitGrants(ctx, args, pageQuery(ctx, info)),
  }),
  benefitGrant: t.prismaField({
    type: CustomerBenefitGrant,
    description: "One of the customer's grants; RESOURCE_NOT_FOUND if it is not theirs or is revoked.",
    authScopes: { principal: 'customer' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The grant's id." }) },
    resolve: (query, _root, { id }, ctx) => getCustomerBenefitGrant(ctx, id, query),
  }),
}));

/** node(id:) answers a customer for their benefit grants as customerPortal.benefitGrant does. */
const CustomerBenefitGrantPropertiesUpdateInput = builder.inputType('CustomerBenefitGrantPropertiesUpdateInput', {
  description: 'The account to connect to a Discord or GitHub grant. Kassa connects none: it is refused.',
  fields: (t) => ({ accountId: t.string({ description: "The customer's Discord or GitHub account, as connected through OAuth." }) }),
});

const CustomerBenefitGrantUpdateInput = builder.inputType('CustomerBenefitGrantUpdateInput', {
  description: "A customer's change to their grant: the benefit's type, and for Discord and GitHub the account to connect.",
  fields: (t) => ({
    benefitType: t.field({ type: BenefitType, required: true, description: "The grant's benefit type, which must be the grant's own." }),
    properties: t.field({ type: CustomerBenefitGrantPropertiesUpdateInput, description: 'For discord and github_repository: the account to connect.' }),
  }),
});

builder.objectFields(CustomerPortalMutation, (t) => ({
  benefitGrantUpdate: t.prismaField({
    type: CustomerBenefitGrant,
    authScopes: { fullCustomerSession: true },
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The grant's id." }),
      input: t.arg({ type: CustomerBenefitGrantUpdateInput, required: true, description: 'The change.' }),
    },
    description:
      "Changes one of the customer's grants. Custom, downloadables, license keys and meter credit grants have nothing to change and are answered as they are; connecting a Discord or GitHub account is NOT_PERMITTED (Kassa grants neither). BAD_USER_INPUT when benefitType is not the grant's; RESOURCE_NOT_FOUND if it is not theirs or is revoked.",
    extensions: raises({ error: new NotPermittedError(), when: 'The grant is of a Discord or GitHub benefit: Kassa connects no accounts.' }),
    resolve: (query, _root, { id, input }, ctx) => updateCustomerBenefitGrant(ctx, id, input, query),
  }),
}));

export const customerBenefitGrantNodeLoader: NodeLoader = { surface: 'customerPortal', model: 'benefitGrant', typeName: 'CustomerBenefitGrant', load: getCustomerBenefitGrant };
