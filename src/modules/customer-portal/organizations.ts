// The organization a customer buys from: its public profile and what it sells. By slug it is
// public (a storefront asks before anyone signs in); a signed-in customer also reads their own.
// Only public data: no metadata, and no relation that leads to another row than these.
import { builder } from '../../graphql/builder.ts';
import { ResourceNotFoundError } from '../../graphql/errors.ts';
import { CustomerPortalQuery } from '../../graphql/roots.ts';
import { CustomerProduct } from './products.ts';

export const CustomerOrganization = builder.prismaObject('Organization', {
  variant: 'CustomerOrganization',
  description: 'An organization as its customers see it: its public profile and the products it sells.',
  fields: (t) => ({
    organization: t.variant('Organization', { description: "The organization's public profile." }),
    products: t.relation('products', {
      type: CustomerProduct,
      description: 'The products on sale: the first 100 not archived, oldest first. A public field, so its size is bounded.',
      query: { where: { isArchived: false }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], take: 100 },
    }),
  }),
});

builder.queryField('customerPortalOrganization', (t) =>
  t.prismaField({
    type: CustomerOrganization,
    description: 'An organization and its products, by slug. Public: no token needed. RESOURCE_NOT_FOUND for an unknown slug.',
    args: { slug: t.arg.string({ required: true, description: "The organization's slug." }) },
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
