// The organization a customer buys from: its public profile and what it sells. By slug it is
// public (a storefront asks before anyone signs in); a signed-in customer also reads their own.
// Only public data: no metadata, and no relation that leads to another row than these.
import { builder } from '../../graphql/builder.ts';
import { ResourceNotFoundError } from '../../graphql/errors.ts';
import { CustomerPortalQuery } from '../../graphql/roots.ts';
import type { RestRoute } from '../../rest/routes.ts';
import { defineWireConstants } from '../../rest/wire.ts';
import { BenefitType } from '../benefits/schema.ts';
import { ProductPrice, RecurringInterval } from '../products/schema.ts';
import { priceWire } from '../products/rest.ts';

/** A benefit as a product's buyers see it before buying: what it is, not how it is configured. */
export const BenefitPublic = builder.prismaObject('Benefit', {
  variant: 'BenefitPublic',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
    type: t.expose('type', { type: BenefitType }),
    description: t.exposeString('description'),
    selectable: t.exposeBoolean('selectable'),
    deletable: t.exposeBoolean('deletable'),
    organizationId: t.expose('organizationId', { type: 'UUID' }),
  }),
});

export const CustomerProduct = builder.prismaObject('Product', {
  variant: 'CustomerProduct',
  description: 'A product as customers see it: its live prices and the benefits it grants.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
    name: t.exposeString('name'),
    description: t.exposeString('description', { nullable: true }),
    recurringInterval: t.expose('recurringInterval', { type: RecurringInterval, nullable: true }),
    isRecurring: t.exposeBoolean('isRecurring'),
    isArchived: t.exposeBoolean('isArchived'),
    organizationId: t.expose('organizationId', { type: 'UUID' }),
    prices: t.relation('prices', {
      type: ProductPrice,
      description: 'The live (not archived) prices.',
      query: { where: { isArchived: false }, orderBy: [{ position: 'asc' }, { createdAt: 'asc' }] },
    }),
    benefits: t.field({
      type: [BenefitPublic],
      description: 'The benefits the product grants, in order.',
      select: (_args, _ctx, nested) => ({ benefits: { select: { benefit: nested() }, orderBy: { position: 'asc' } } }),
      resolve: (product) => product.benefits.map((link) => link.benefit),
    }),
  }),
});

// Product media are not modelled; the wire format still carries them.
defineWireConstants('CustomerProduct', { medias: [] });

export const CustomerOrganization = builder.prismaObject('Organization', {
  variant: 'CustomerOrganization',
  description: 'An organization as its customers see it: its public profile and the products it sells.',
  fields: (t) => ({
    organization: t.variant('Organization'),
    products: t.relation('products', {
      type: CustomerProduct,
      description: 'The products on sale: every product not archived.',
      query: { where: { isArchived: false }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
    }),
  }),
});

builder.queryField('customerPortalOrganization', (t) =>
  t.prismaField({
    type: CustomerOrganization,
    description: 'An organization and its products, by slug. Public: no token needed.',
    args: { slug: t.arg.string({ required: true }) },
    resolve: async (query, _root, { slug }, ctx) => {
      const organization = await ctx.prisma.organization.findUnique({ ...query, where: { slug } });
      if (!organization) throw new ResourceNotFoundError('Organization not found.');
      return organization;
    },
  }),
);

builder.objectField(CustomerPortalQuery, 'organization', (t) =>
  t.prismaField({
    type: 'Organization',
    description: 'The organization the signed-in customer buys from (its public information).',
    authScopes: { principal: 'customer' },
    resolve: (query, _root, _args, ctx) =>
      ctx.prisma.organization.findUniqueOrThrow({ ...query, where: { id: ctx.principal.kind === 'customer' ? ctx.principal.organizationId : '' } }),
  }),
);

const organizationWire = 'id createdAt modifiedAt name slug';
const CustomerOrganizationWire = /* GraphQL */ `
  fragment CustomerOrganizationWire on CustomerOrganization {
    organization { ${organizationWire} }
    products {
      id createdAt modifiedAt name description recurringInterval isRecurring isArchived organizationId
      prices { ${priceWire} }
      benefits { id createdAt modifiedAt type description selectable deletable organizationId }
    }
  }`;

export const portalOrganizationsRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/customer-portal/organizations/{slug}',
    operation: `query ($slug: String!) { customerPortalOrganization(slug: $slug) { ...CustomerOrganizationWire } } ${CustomerOrganizationWire}`,
  },
];
