import type { ObjectRef } from '@pothos/core';
import { queryFromInfo, type PrismaInterfaceRef, type PrismaObjectRef } from '@pothos/plugin-prisma';
import type PrismaTypes from '../../generated/prisma/pothos-types.ts';
import { builder, type BuilderTypes, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { BenefitType as BenefitTypes } from '../../generated/prisma/enums.ts';
import { Product } from '../products/schema.ts';
import { sortingScalarConfig } from '../../graphql/sorting.ts';
import { benefitSortProperties, createBenefit, deleteBenefit, getBenefit, listBenefitGrants, listBenefits, setProductBenefits, updateBenefit } from './service.ts';
import { ResourceNotFoundError } from '../../graphql/errors.ts';
import { organizationFilter } from '../organizations/access.ts';

export const BenefitType = builder.enumType(BenefitTypes, { name: 'BenefitType' });
const BenefitSortProperty = builder.scalarType('BenefitSortProperty', sortingScalarConfig(benefitSortProperties));
const Timeframe = builder.enumType('LicenseKeyTimeframe', { values: ['year', 'month', 'day'] as const });

type BenefitFieldBuilder = PrismaFieldBuilder<'Benefit'>;

/** What a benefit is, not how it is configured: what anyone who sees the benefit may see. */
export const benefitFields = (t: BenefitFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID' }),
  createdAt: t.expose('createdAt', { type: 'DateTime' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
  type: t.expose('type', { type: BenefitType }),
  description: t.exposeString('description'),
  selectable: t.exposeBoolean('selectable'),
  deletable: t.exposeBoolean('deletable'),
  organizationId: t.expose('organizationId', { type: 'UUID' }),
});

/** A benefit's or a grant's `properties` as stored: snake_case keys, by the benefit's type. */
export type StoredProperties = Record<string, any>;
type PropertiesFieldBuilder = PothosSchemaTypes.ObjectFieldBuilder<BuilderTypes, StoredProperties>;
type PropertiesRef = ObjectRef<BuilderTypes, StoredProperties>;

export const customPropertiesFields = (t: PropertiesFieldBuilder) => ({
  note: t.string({ nullable: true, description: 'Shown to the customer once granted.', resolve: (p) => p.note ?? null }),
});

export const licenseKeyActivationsFields = (t: PropertiesFieldBuilder) => ({
  limit: t.int({ resolve: (p) => p.limit }),
  enableCustomerAdmin: t.boolean({ resolve: (p) => p.enable_customer_admin }),
});

/** A license_keys benefit's properties, with `expires` and `activations` as the given types show them. */
export const licenseKeysPropertiesFields = (t: PropertiesFieldBuilder, shown: { expires: PropertiesRef; activations: PropertiesRef }) => ({
  prefix: t.string({ nullable: true, resolve: (p) => p.prefix ?? null }),
  expires: t.field({ type: shown.expires, nullable: true, description: 'How long a key lasts from its grant; null: forever.', resolve: (p) => p.expires ?? null }),
  activations: t.field({ type: shown.activations, nullable: true, description: 'null: keys cannot be activated.', resolve: (p) => p.activations ?? null }),
  limitUsage: t.int({ nullable: true, resolve: (p) => p.limit_usage ?? null }),
});

/** The object types implementing a benefit interface, one per benefit type: its name, and the type of its `properties`. */
export type BenefitObjects = Partial<Record<BenefitTypes, { name: string; description?: string; properties: PropertiesRef }>>;

export function implementBenefitObjects(benefit: typeof Benefit, objects: BenefitObjects): void {
  for (const { name, description, properties } of Object.values(objects)) {
    builder.prismaObject('Benefit', {
      variant: name,
      description,
      interfaces: [benefit],
      fields: (t) => ({ properties: t.field({ type: properties, resolve: (b) => b.properties as StoredProperties }) }),
    });
  }
}

const BenefitCustomProperties = builder.objectRef<StoredProperties>('BenefitCustomProperties').implement({ fields: customPropertiesFields });

const LicenseKeyExpiration = builder.objectRef<StoredProperties>('BenefitLicenseKeyExpiration').implement({
  fields: (t) => ({ ttl: t.int({ resolve: (p) => p.ttl }), timeframe: t.field({ type: Timeframe, resolve: (p) => p.timeframe }) }),
});
const LicenseKeyActivations = builder.objectRef<StoredProperties>('BenefitLicenseKeyActivations').implement({ fields: licenseKeyActivationsFields });
const BenefitLicenseKeysProperties = builder.objectRef<StoredProperties>('BenefitLicenseKeysProperties').implement({
  fields: (t) => licenseKeysPropertiesFields(t, { expires: LicenseKeyExpiration, activations: LicenseKeyActivations }),
});
const BenefitDownloadablesProperties = builder.objectRef<StoredProperties>('BenefitDownloadablesProperties').implement({
  fields: (t) => ({
    files: t.field({ type: ['UUID'], resolve: (p) => p.files ?? [] }),
    archived: t.field({ type: 'JSONObject', description: 'Files kept for past grants but no longer granted: {fileId: true}.', resolve: (p) => p.archived ?? {} }),
  }),
});

const benefitObjects: BenefitObjects = {
  custom: { name: 'BenefitCustom', description: 'A note to the customer.', properties: BenefitCustomProperties },
  license_keys: { name: 'BenefitLicenseKeys', description: 'A license key per grant, checked by the organization’s software.', properties: BenefitLicenseKeysProperties },
  downloadables: { name: 'BenefitDownloadables', description: 'Files the customer may download.', properties: BenefitDownloadablesProperties },
};

export const Benefit = builder.prismaInterface('Benefit', {
  description: 'An entitlement a product grants its buyers. `properties` depend on the type.',
  fields: (t) => ({
    ...benefitFields(t as unknown as BenefitFieldBuilder),
    metadata: t.field({ type: MetadataScalar, resolve: (benefit) => benefit.metadata as Metadata }),
  }),
  resolveType: (benefit) => benefitObjects[benefit.type]?.name,
});

implementBenefitObjects(Benefit, benefitObjects);

type BenefitGrantFieldBuilder = PrismaFieldBuilder<'BenefitGrant'>;

/** A grant's own fields, without the customer and the benefit it links. */
export const benefitGrantFields = (t: BenefitGrantFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID' }),
  createdAt: t.expose('createdAt', { type: 'DateTime' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
  grantedAt: t.expose('grantedAt', { type: 'DateTime', nullable: true }),
  isGranted: t.boolean({ resolve: (grant) => grant.grantedAt !== null && grant.revokedAt === null }),
  revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
  isRevoked: t.boolean({ resolve: (grant) => grant.revokedAt !== null }),
  subscriptionId: t.expose('subscriptionId', { type: 'UUID', nullable: true }),
  orderId: t.expose('orderId', { type: 'UUID', nullable: true }),
  customerId: t.expose('customerId', { type: 'UUID' }),
  benefitId: t.expose('benefitId', { type: 'UUID' }),
  properties: t.field({
    type: 'JSONObject',
    description: 'What the grant gave: `{license_key_id, display_key}` for license keys, `{files}` for downloadables, `{}` for custom.',
    resolve: (grant) => grant.properties as StoredProperties,
  }),
});

export const BenefitGrant = builder.prismaObject('BenefitGrant', {
  description: 'A benefit held by a customer through one purchase: an order or a subscription.',
  fields: (t) => ({
    ...benefitGrantFields(t as unknown as BenefitGrantFieldBuilder),
    customer: t.relation('customer'),
    benefit: t.relation('benefit', { type: Benefit }),
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
  fields: (t) => ({ ttl: t.int({ required: true }), timeframe: t.field({ type: Timeframe, required: true }) }),
});
const LicenseKeyActivationsInput = builder.inputType('BenefitLicenseKeyActivationsInput', {
  fields: (t) => ({ limit: t.int({ required: true }), enableCustomerAdmin: t.boolean({ required: true }) }),
});
const BenefitPropertiesInput = builder.inputType('BenefitPropertiesInput', {
  description: 'The properties of the benefit’s type: custom {note}; license_keys {prefix, expires, activations, limitUsage}; downloadables {files, archived}.',
  fields: (t) => ({
    note: t.string(),
    prefix: t.string(),
    expires: t.field({ type: LicenseKeyExpirationInput }),
    activations: t.field({ type: LicenseKeyActivationsInput }),
    limitUsage: t.int(),
    files: t.field({ type: ['UUID'] }),
    archived: t.field({ type: 'JSONObject' }),
  }),
});

const BenefitCreateInput = builder.inputType('BenefitCreateInput', {
  fields: (t) => ({
    type: t.field({ type: BenefitType, required: true }),
    description: t.string({ required: true, description: '3 to 42 characters, shown to customers.' }),
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
    metadata: t.field({ type: MetadataScalar }),
    properties: t.field({ type: BenefitPropertiesInput, required: true }),
  }),
});

const BenefitUpdateInput = builder.inputType('BenefitUpdateInput', {
  description: 'Only the fields given change. `type`, when given, must be the benefit’s own.',
  fields: (t) => ({
    type: t.field({ type: BenefitType }),
    description: t.string(),
    metadata: t.field({ type: MetadataScalar }),
    properties: t.field({ type: BenefitPropertiesInput }),
  }),
});

const ProductBenefitsInput = builder.inputType('ProductBenefitsInput', {
  fields: (t) => ({ benefits: t.field({ type: ['UUID'], required: true, description: 'All the benefits the product grants, in order.' }) }),
});

const read = { scope: ['benefits:read', 'benefits:write'] } as const;
const write = { scope: 'benefits:write' } as const;

builder.objectFields(CoreQuery, (t) => ({
  benefits: t.field({
    type: BenefitList,
    authScopes: { scope: [...read.scope] },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'] }),
      type: t.arg({ type: [BenefitType] }),
      id: t.arg({ type: ['UUID'] }),
      query: t.arg.string({ description: 'Matches descriptions, case-insensitively.' }),
      metadata: t.arg({ type: 'JSONObject', description: 'Filter by metadata: {key: value or [values]}.' }),
      sorting: t.arg({ type: [BenefitSortProperty], description: 'Default: -created_at.' }),
    },
    resolve: (_root, args, ctx, info) => listBenefits(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
  benefit: t.prismaField({
    type: Benefit,
    authScopes: { scope: [...read.scope] },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => getBenefit(ctx, id, query),
  }),
  benefitGrants: t.field({
    type: BenefitGrantList,
    authScopes: { scope: [...read.scope] },
    args: { ...pageArgs(t.arg), benefitId: t.arg({ type: 'UUID', required: true }), isGranted: t.arg.boolean(), customerId: t.arg({ type: ['UUID'] }) },
    resolve: (_root, { benefitId, ...args }, ctx, info) => listBenefitGrants(ctx, benefitId, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
  benefitGrant: t.prismaField({
    type: 'BenefitGrant',
    authScopes: { scope: [...read.scope] },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: async (query, _root, { id }, ctx) => {
      const grant = await ctx.prisma.benefitGrant.findFirst({ ...query, where: { id, organizationId: organizationFilter(ctx) } });
      if (!grant) throw new ResourceNotFoundError('Benefit grant not found.');
      return grant;
    },
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  benefitCreate: t.prismaField({
    type: Benefit,
    authScopes: write,
    args: { input: t.arg({ type: BenefitCreateInput, required: true }) },
    resolve: (query, _root, { input }, ctx) => createBenefit(ctx, input, query),
  }),
  benefitUpdate: t.prismaField({
    type: Benefit,
    authScopes: write,
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: BenefitUpdateInput, required: true }) },
    resolve: (query, _root, { id, input }, ctx) => updateBenefit(ctx, id, input, query),
  }),
  benefitDelete: t.boolean({
    authScopes: write,
    description: 'Deletes the benefit: it leaves every product and all its grants are revoked.',
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (_root, { id }, ctx) => deleteBenefit(ctx, id),
  }),
  productBenefitsUpdate: t.prismaField({
    type: 'Product',
    authScopes: { scope: 'products:write' },
    description: 'Sets the benefits a product grants. Existing buyers are granted new benefits, and lose removed ones.',
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: ProductBenefitsInput, required: true }) },
    resolve: (query, _root, { id, input }, ctx) => setProductBenefits(ctx, id, input.benefits, query),
  }),
}));
