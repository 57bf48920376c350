import type { ObjectRef } from '@pothos/core';
import { type PrismaInterfaceRef, type PrismaObjectRef } from '@pothos/plugin-prisma';
import type PrismaTypes from '../../generated/prisma/pothos-types.ts';
import { GraphQLEnumType } from 'graphql';
import { builder, type BuilderTypes, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import type { Context } from '../../context.ts';
import { withoutId } from '../../graphql/shared-fields.ts';
import { wireOnlyExtension, wireExtension } from '../../graphql/wire-values.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs, pageQuery, connectionType, relationArgs, relationPage, relationQuery, relationWindow } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import type { BenefitType as BenefitTypes } from '../../generated/prisma/enums.ts';
import { Product } from '../products/schema.ts';
import { Customer } from '../customers/schema.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import { benefitSortProperties, createBenefit, deleteBenefit, getBenefit, listBenefitGrants, listBenefits, setProductBenefits, updateBenefit } from './service.ts';
import { ResourceNotFoundError } from '../../graphql/errors.ts';
import { organizationFilter } from '../organizations/access.ts';

const needsIntegration = 'Needs an integration Kassa does not have: benefitCreate does not offer it (GrantableBenefitType), so no benefit has this type.';
const benefitTypeDescription = 'What a benefit gives. Kassa grants custom, license_keys, downloadables and meter_credit benefits.';
export const BenefitType = builder.enumType('BenefitType', {
  description: benefitTypeDescription,
  values: {
    custom: { description: 'A note shown to the customer, for anything granted by hand.' },
    discord: { description: `Access to a Discord server. ${needsIntegration}` },
    github_repository: { description: `Access to a GitHub repository. ${needsIntegration}` },
    downloadables: { description: 'Files the customer may download.' },
    license_keys: { description: 'A license key per grant, which the organization’s software validates.' },
    meter_credit: { description: "Units credited to the customer's meter with the grant and each renewal, drawn down before usage is billed." },
  } satisfies Record<BenefitTypes, object>,
});
const grantable = {
  custom: { description: 'A note shown to the customer, for anything granted by hand.' },
  downloadables: { description: 'Files the customer may download.' },
  license_keys: { description: 'A license key per grant, which the organization’s software validates.' },
  meter_credit: { description: "Units credited to the customer's meter with the grant and each renewal, drawn down before usage is billed." },
} satisfies Partial<Record<BenefitTypes, object>>;
// REST still checks a new benefit's type against every type the wire format names, so an unknown
// one gets the same error as before; the types Kassa cannot grant get the message they always had.
const restBenefitType = new GraphQLEnumType({
  name: 'BenefitType',
  description: benefitTypeDescription,
  values: { custom: {}, discord: {}, github_repository: {}, downloadables: {}, license_keys: {}, meter_credit: {} } satisfies Record<BenefitTypes, object>,
});
// REST still takes the types Kassa cannot grant, for the service to refuse them.
const ungrantable = wireOnlyExtension(['discord', 'github_repository'], 'custom');
export const GrantableBenefitType = builder.enumType('GrantableBenefitType', {
  description: 'The types of benefit Kassa can grant, so the types a new benefit may have.',
  values: grantable,
  extensions: wireExtension(restBenefitType),
});
const BenefitSortOrder = sortOrderEnum(
  'BenefitSortOrder',
  'benefits',
  {
  created_at: 'when the benefit was created',
  description: 'description',
  type: 'type',
  } satisfies Record<(typeof benefitSortProperties)[number], string>,
  'BenefitSortProperty',
);
export const LicenseKeyTimeframe = builder.enumType('LicenseKeyTimeframe', {
  description: 'The unit of a license key lifetime.',
  values: {
    year: { description: 'Calendar years.' },
    month: { description: 'Calendar months.' },
    day: { description: 'Days.' },
  },
});

type BenefitFieldBuilder = PrismaFieldBuilder<'Benefit'>;

/** What a benefit is, not how it is configured: what anyone who sees the benefit may see. */
export const benefitFields = (t: BenefitFieldBuilder) => ({
  id: t.exposeID('id', { description: "The benefit's id. Its global id (see Node)." }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the benefit was created.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the benefit was last changed; null if never.' }),
  type: t.expose('type', { type: BenefitType, description: 'What the benefit gives; fixed at creation.' }),
  description: t.exposeString('description', { description: 'What the benefit is, shown to customers: 3 to 42 characters.' }),
  selectable: t.exposeBoolean('selectable', { description: 'Whether the benefit may be attached to products.' }),
  deletable: t.exposeBoolean('deletable', { description: 'Whether benefitDelete may delete it.' }),
  organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization that grants it.' }),
});

/** A benefit's or a grant's `properties` as stored: snake_case keys, by the benefit's type. */
export type StoredProperties = Record<string, any>;
type PropertiesFieldBuilder = PothosSchemaTypes.ObjectFieldBuilder<BuilderTypes, StoredProperties>;
type PropertiesRef = ObjectRef<BuilderTypes, StoredProperties>;

export const customPropertiesFields = (t: PropertiesFieldBuilder) => ({
  note: t.string({ nullable: true, description: 'Shown to the customer once granted.', resolve: (p) => p.note ?? null }),
});

export const licenseKeyActivationsFields = (t: PropertiesFieldBuilder) => ({
  limit: t.int({ description: 'How many activations (devices, installs) one key allows, 1 to 50.', resolve: (p) => p.limit }),
  enableCustomerAdmin: t.boolean({ description: 'Whether the customer may deactivate their own activations in the portal.', resolve: (p) => p.enable_customer_admin }),
});

/** A license_keys benefit's properties, with `expires` and `activations` as the given types show them. */
export const licenseKeysPropertiesFields = (t: PropertiesFieldBuilder, shown: { expires: PropertiesRef; activations: PropertiesRef }) => ({
  prefix: t.string({ nullable: true, description: 'Put before each key, uppercased, with a dash; null: no prefix.', resolve: (p) => p.prefix ?? null }),
  expires: t.field({ type: shown.expires, nullable: true, description: 'How long a key lasts from its grant; null: forever.', resolve: (p) => p.expires ?? null }),
  activations: t.field({ type: shown.activations, nullable: true, description: 'null: keys cannot be activated.', resolve: (p) => p.activations ?? null }),
  limitUsage: t.int({ nullable: true, description: 'How many uses a key allows (counted by validations that increment usage); null: no limit.', resolve: (p) => p.limit_usage ?? null }),
});

/** The object types implementing a benefit interface, one per benefit type: its name, and the type of its `properties`. */
export type BenefitObjects = Partial<Record<BenefitTypes, { name: string; description?: string; properties: PropertiesRef }>>;

export function implementBenefitObjects(benefit: typeof Benefit, objects: BenefitObjects, also: (typeof Node)[] = []): void {
  for (const { name, description, properties } of Object.values(objects)) {
    builder.prismaObject('Benefit', {
      variant: name,
      description,
      // The one cast: Pothos types an interface list by its exact refs, and these are chosen per call.
      interfaces: [...also, benefit] as [typeof Benefit],
      fields: (t) => ({ properties: t.field({ type: properties, description: "The benefit's settings for its type.", resolve: (b) => b.properties as StoredProperties }) }),
    });
  }
}

const BenefitCustomProperties = builder.objectRef<StoredProperties>('BenefitCustomProperties').implement({
  description: "A custom benefit's settings.",
  fields: customPropertiesFields,
});

const LicenseKeyExpiration = builder.objectRef<StoredProperties>('BenefitLicenseKeyExpiration').implement({
  description: 'How long a license key lasts from its grant: ttl timeframes.',
  fields: (t) => ({
    ttl: t.int({ description: 'How many timeframes, 1 to 1000.', resolve: (p) => p.ttl }),
    timeframe: t.field({ type: LicenseKeyTimeframe, description: 'The unit of ttl.', resolve: (p) => p.timeframe }),
  }),
});
const LicenseKeyActivations = builder.objectRef<StoredProperties>('BenefitLicenseKeyActivations').implement({
  description: 'Whether and how often a license key may be activated.',
  fields: licenseKeyActivationsFields,
});
const BenefitLicenseKeysProperties = builder.objectRef<StoredProperties>('BenefitLicenseKeysProperties').implement({
  description: "A license_keys benefit's settings: what each granted key is like.",
  fields: (t) => licenseKeysPropertiesFields(t, { expires: LicenseKeyExpiration, activations: LicenseKeyActivations }),
});
const BenefitDownloadablesProperties = builder.objectRef<StoredProperties>('BenefitDownloadablesProperties').implement({
  description: "A downloadables benefit's settings: its files.",
  fields: (t) => ({
    files: t.field({ type: ['UUID'], description: 'The files granted, in order: ids of downloadable files.', resolve: (p) => p.files ?? [] }),
    archived: t.field({ type: 'JSONObject', description: 'Files kept for past grants but no longer granted: {fileId: true}.', resolve: (p) => p.archived ?? {} }),
  }),
});

/** A meter_credit benefit's settings, on every view of it. */
export const BenefitMeterCreditProperties = builder.objectRef<StoredProperties>('BenefitMeterCreditProperties').implement({
  description: "A meter_credit benefit's settings: how many units it credits to which meter, each period.",
  fields: (t) => ({
    units: t.int({ description: 'Units credited with the grant and at each renewal.', resolve: (p) => p.units }),
    rollover: t.boolean({ description: "Whether unused units are kept into the next period; otherwise the customer meter's credits reset at each renewal.", resolve: (p) => p.rollover }),
    meterId: t.field({ type: 'UUID', description: 'The meter credited.', resolve: (p) => p.meter_id }),
  }),
});

const benefitObjects: BenefitObjects = {
  meter_credit: { name: 'BenefitMeterCredit', description: "Units credited to the customer's meter.", properties: BenefitMeterCreditProperties },
  custom: { name: 'BenefitCustom', description: 'A note to the customer.', properties: BenefitCustomProperties },
  license_keys: { name: 'BenefitLicenseKeys', description: 'A license key per grant, checked by the organization’s software.', properties: BenefitLicenseKeysProperties },
  downloadables: { name: 'BenefitDownloadables', description: 'Files the customer may download.', properties: BenefitDownloadablesProperties },
};

export const Benefit = builder.prismaInterface('Benefit', {
  interfaces: [Node],
  description: 'An entitlement a product grants its buyers. `properties` depend on the type.',
  fields: (t) => ({
    ...benefitFields(t as unknown as BenefitFieldBuilder),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data; the benefit's holders see it too.", resolve: (benefit) => benefit.metadata as Metadata }),
  }),
  resolveType: (benefit) => benefitObjects[benefit.type]?.name,
});

implementBenefitObjects(Benefit, benefitObjects, [Node]);

type BenefitGrantFieldBuilder = PrismaFieldBuilder<'BenefitGrant'>;

/** A grant's own fields, without the customer and the benefit it links. */
export const benefitGrantFields = (t: BenefitGrantFieldBuilder) => ({
  id: t.exposeID('id', { description: "The grant's id. Its global id (see Node)." }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the grant was created.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the grant was last changed; null if never.' }),
  grantedAt: t.expose('grantedAt', { type: 'DateTime', nullable: true, description: 'When the benefit was (last) granted; null while pending.' }),
  isGranted: t.boolean({ description: 'Whether the customer holds the benefit now: granted and not revoked.', resolve: (grant) => grant.grantedAt !== null && grant.revokedAt === null }),
  revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true, description: 'When the benefit was revoked; null while held or pending.' }),
  isRevoked: t.boolean({ description: 'Whether the benefit was revoked.', resolve: (grant) => grant.revokedAt !== null }),
  subscriptionId: t.expose('subscriptionId', { type: 'UUID', nullable: true, description: 'The subscription that grants it; null when an order does.' }),
  orderId: t.expose('orderId', { type: 'UUID', nullable: true, description: 'The one-time order that grants it; null when a subscription does.' }),
  customerId: t.expose('customerId', { type: 'UUID', description: 'The customer who holds it.' }),
  benefitId: t.expose('benefitId', { type: 'UUID', description: 'The benefit granted.' }),
  properties: t.field({
    type: 'JSONObject',
    description: 'What the grant gave: `{license_key_id, display_key}` for license keys, `{files}` for downloadables, `{}` for custom.',
    resolve: (grant) => grant.properties as StoredProperties,
  }),
});

/** What a benefit grant is to anyone who may see it: BenefitGrant and CustomerBenefitGrant implement it. */
export const BenefitGrantFields = builder.prismaInterface('BenefitGrant', {
  variant: 'BenefitGrantFields',
  description: "The fields every view of a benefit grant shares: whether and when it was granted or revoked, and what it gave. BenefitGrant is the organization's view, CustomerBenefitGrant its customer's.",
  fields: (t) => withoutId(benefitGrantFields(t as unknown as BenefitGrantFieldBuilder)),
});

export const BenefitGrant = builder.prismaObject('BenefitGrant', {
  interfaces: [Node, BenefitGrantFields],
  description: 'A benefit held by a customer through one purchase: an order or a subscription.',
  fields: (t) => ({
    ...benefitGrantFields(t as unknown as BenefitGrantFieldBuilder),
    customer: t.relation('customer', { description: 'The customer who holds it.' }),
    benefit: t.relation('benefit', { type: Benefit, description: 'The benefit granted.' }),
  }),
});

type ProductFieldBuilder = PrismaFieldBuilder<'Product'>;
type BenefitModel = PrismaTypes['Benefit'];
type BenefitRef = PrismaInterfaceRef<BuilderTypes, BenefitModel, BenefitModel['Shape']> | PrismaObjectRef<BuilderTypes, BenefitModel, BenefitModel['Shape']>;

/** A product's benefits, in order, as the given benefit type shows them. */
export const productBenefitsField = (t: ProductFieldBuilder, benefit: BenefitRef) =>
  t.field({
    type: [benefit],
    description: 'The benefits the product grants, in order.',
    select: (_args, _ctx, nested) => ({ benefits: { select: { benefit: nested() }, orderBy: { position: 'asc' } } }),
    resolve: (product) => product.benefits.map((link) => link.benefit),
  });

builder.prismaObjectField(Product, 'benefits', (t) => productBenefitsField(t as unknown as ProductFieldBuilder, Benefit));

const BenefitList = listType('Benefit', Benefit);
const BenefitGrantList = listType('BenefitGrant', BenefitGrant);

const LicenseKeyExpirationInput = builder.inputType('BenefitLicenseKeyExpirationInput', {
  description: 'How long a license key lasts from its grant: ttl timeframes.',
  fields: (t) => ({
    ttl: t.int({ required: true, description: 'How many timeframes, 1 to 1000.' }),
    timeframe: t.field({ type: LicenseKeyTimeframe, required: true, description: 'The unit of ttl.' }),
  }),
});
const LicenseKeyActivationsInput = builder.inputType('BenefitLicenseKeyActivationsInput', {
  description: 'Whether and how often a license key may be activated.',
  fields: (t) => ({
    limit: t.int({ required: true, description: 'How many activations one key allows, 1 to 50.' }),
    enableCustomerAdmin: t.boolean({ required: true, description: 'Whether the customer may deactivate their own activations in the portal.' }),
  }),
});
const BenefitPropertiesInput = builder.inputType('BenefitPropertiesInput', {
  description: 'The properties of the benefit’s type: custom {note}; license_keys {prefix, expires, activations, limitUsage}; downloadables {files, archived}; meter_credit {meterId, units, rollover}.',
  fields: (t) => ({
    note: t.string({ description: 'custom: a note shown to the customer once granted.' }),
    prefix: t.string({ description: 'license_keys: put before each key; 1 to 24 letters, digits, "_" or "-".' }),
    expires: t.field({ type: LicenseKeyExpirationInput, description: 'license_keys: how long a key lasts; forever when omitted.' }),
    activations: t.field({ type: LicenseKeyActivationsInput, description: 'license_keys: activation limits; keys cannot be activated when omitted.' }),
    limitUsage: t.int({ description: 'license_keys: how many uses a key allows, at least 1; no limit when omitted.' }),
    files: t.field({ type: ['UUID'], description: 'downloadables: at least one downloadable file of the organization, each once.' }),
    archived: t.field({ type: 'JSONObject', description: 'downloadables: {fileId: true} for listed files kept for past grants but no longer granted.' }),
    meterId: t.field({ type: 'UUID', description: 'meter_credit: the meter credited, a live meter of the organization.' }),
    units: t.int({ description: 'meter_credit: units credited with the grant and each renewal, 1 to 2147483647.' }),
    rollover: t.boolean({ description: 'meter_credit: whether unused units carry into the next period.' }),
  }),
});

const BenefitCreateInput = builder.inputType('BenefitCreateInput', {
  description: 'A new benefit.',
  fields: (t) => ({
    type: t.field({
      type: GrantableBenefitType,
      required: true,
      description: 'What the benefit gives; fixed once created.',
      extensions: ungrantable,
    }),
    description: t.string({ required: true, description: '3 to 42 characters, shown to customers.' }),
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data; empty when omitted." }),
    properties: t.field({ type: BenefitPropertiesInput, required: true, description: 'The settings of its type.' }),
  }),
});

const BenefitUpdateInput = builder.inputType('BenefitUpdateInput', {
  description: 'Only the fields given change. `type`, when given, must be the benefit’s own.',
  fields: (t) => ({
    type: t.field({ type: BenefitType, description: "The benefit's own type, if given; it cannot change." }),
    description: t.string({ description: 'A new description, 3 to 42 characters.' }),
    metadata: t.field({ type: MetadataScalar, description: 'Replaces the whole metadata object.' }),
    properties: t.field({ type: BenefitPropertiesInput, description: 'Replaces the settings; existing grants follow.' }),
  }),
});

const ProductBenefitsInput = builder.inputType('ProductBenefitsInput', {
  description: 'The complete list of benefits a product grants.',
  fields: (t) => ({ benefits: t.field({ type: ['UUID'], required: true, description: 'All the benefits the product grants, in order.' }) }),
});

const read = { scope: ['benefits:read', 'benefits:write'] } as const;
const write = { scope: 'benefits:write' } as const;

builder.objectFields(CoreQuery, (t) => ({
  benefits: t.field({
    type: BenefitList,
    description: 'The benefits (not deleted) of the organizations the token reaches, newest first unless `sorting` says otherwise.',
    authScopes: { scope: [...read.scope] },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      type: t.arg({ type: [BenefitType], description: 'Only benefits of these types.' }),
      id: t.arg({ type: ['UUID'], description: 'Only these benefits.' }),
      query: t.arg.string({ description: 'Matches descriptions, case-insensitively.' }),
      metadata: t.arg({ type: 'JSONObject', description: 'Filter by metadata: {key: value or [values]}.' }),
      sorting: t.arg({ type: [BenefitSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: created_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listBenefits(ctx, args, pageQuery(ctx, info)),
  }),
  benefit: t.prismaField({
    type: Benefit,
    description: 'One benefit; RESOURCE_NOT_FOUND if the token does not reach it or it was deleted.',
    authScopes: { scope: [...read.scope] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The benefit's id." }) },
    resolve: (query, _root, { id }, ctx) => getBenefit(ctx, id, query),
  }),
  benefitGrants: t.field({
    type: BenefitGrantList,
    description: 'The grants of one benefit, newest first. RESOURCE_NOT_FOUND if the token does not reach the benefit.',
    authScopes: { scope: [...read.scope] },
    args: {
      ...pageArgs(t.arg),
      benefitId: t.arg({ type: 'UUID', required: true, description: 'The benefit whose grants to list.' }),
      isGranted: t.arg.boolean({ description: 'true: only grants held now; false: only pending or revoked ones; omitted: all.' }),
      customerId: t.arg({ type: ['UUID'], description: 'Only grants of these customers.' }),
    },
    resolve: (_root, { benefitId, ...args }, ctx, info) => listBenefitGrants(ctx, benefitId, args, pageQuery(ctx, info)),
  }),
  benefitGrant: t.prismaField({
    type: 'BenefitGrant',
    description: 'One grant; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: [...read.scope] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The grant's id." }) },
    resolve: (query, _root, { id }, ctx) => getBenefitGrant(ctx, id, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  benefitCreate: t.prismaField({
    type: Benefit,
    description:
      'Creates a benefit; attach it to products with productBenefitsUpdate. BAD_USER_INPUT names each invalid field: the description length, a type Kassa cannot grant, properties out of range, files not found or not downloadable.',
    authScopes: write,
    args: { input: t.arg({ type: BenefitCreateInput, required: true, description: 'The benefit to create.' }) },
    resolve: (query, _root, { input }, ctx) => createBenefit(ctx, input, query),
  }),
  benefitUpdate: t.prismaField({
    type: Benefit,
    description: 'Changes a benefit; current grants follow the new settings. RESOURCE_NOT_FOUND if the token does not reach it; BAD_USER_INPUT as for benefitCreate, or for another type.',
    authScopes: write,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The benefit's id." }),
      input: t.arg({ type: BenefitUpdateInput, required: true, description: 'The fields to change.' }),
    },
    resolve: (query, _root, { id, input }, ctx) => updateBenefit(ctx, id, input, query),
  }),
  benefitDelete: t.boolean({
    authScopes: write,
    description:
      'Deletes the benefit and returns true: it leaves every product and all its grants are revoked. NOT_PERMITTED for a benefit that is not deletable; RESOURCE_NOT_FOUND if the token does not reach it.',
    args: { id: t.arg({ type: 'UUID', required: true, description: "The benefit's id." }) },
    resolve: (_root, { id }, ctx) => deleteBenefit(ctx, id),
  }),
  productBenefitsUpdate: t.prismaField({
    type: 'Product',
    authScopes: { scope: 'products:write' },
    description:
      'Sets the benefits a product grants. Existing buyers are granted new benefits, and lose removed ones. RESOURCE_NOT_FOUND for a product the token does not reach; BAD_USER_INPUT for a benefit listed twice or not found.',
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The product's id." }),
      input: t.arg({ type: ProductBenefitsInput, required: true, description: 'The benefits, in order.' }),
    },
    resolve: (query, _root, { id, input }, ctx) => setProductBenefits(ctx, id, input.benefits, query),
  }),
}));

/** One grant of the organizations the token reaches. */
async function getBenefitGrant(ctx: Context, id: string, query: object) {
  const grant = await ctx.prisma.benefitGrant.findFirst({ ...query, where: { id, organizationId: organizationFilter(ctx) } });
  if (!grant) throw new ResourceNotFoundError('Benefit grant not found.');
  return grant;
}

/** node(id:) answers for benefits and their grants as core.benefit and core.benefitGrant do. */
export const benefitNodeLoader: NodeLoader = { surface: 'core', model: 'benefit', typeName: 'Benefit', scopes: read.scope, load: getBenefit, objectType: (row) => benefitObjects[(row as { type: BenefitTypes }).type]?.name };
export const benefitGrantNodeLoader: NodeLoader = { surface: 'core', model: 'benefitGrant', typeName: 'BenefitGrant', scopes: read.scope, load: getBenefitGrant };

// A customer's benefit grants, read with the customer: one statement per page of customers.
builder.prismaObjectField(Customer, 'benefitGrants', (t) =>
  t.field({
    type: connectionType('BenefitGrant', BenefitGrant),
    nullable: true,
    description: "The benefits the customer holds or held, one grant per purchase, newest first. Null, with NOT_PERMITTED, for a token without benefits:read.",
    authScopes: { scope: [...read.scope] },
    args: relationArgs(t.arg),
    select: (args, _ctx, nested) => ({
      benefitGrants: relationQuery(nested({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], ...relationWindow(args) }, ['edges', 'node'])),
      _count: { select: { benefitGrants: true } },
    }),
    resolve: (parent, args) => relationPage(parent.benefitGrants, parent._count.benefitGrants, args),
  }),
);
