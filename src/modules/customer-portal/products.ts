// A product as the portal shows it wherever it shows one (an organization's catalogue, an order, a
// subscription): its own fields, live prices and benefits, never its metadata or how its benefits
// are configured. The types keep the names clients already select them by; their fields are one.
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { benefitFields, productBenefitsField } from '../benefits/schema.ts';
import { Organization, organizationFields } from '../organizations/schema.ts';
import { productFields } from '../products/schema.ts';

type BenefitFieldBuilder = PrismaFieldBuilder<'Benefit'>;
type ProductFieldBuilder = PrismaFieldBuilder<'Product'>;

/** A benefit as a product's buyers see it before buying: what it is, not how it is configured. */
export const BenefitPublic = builder.prismaObject('Benefit', {
  variant: 'BenefitPublic',
  description: 'A benefit of a product, as its buyers see it before buying: what it is, not how it is configured.',
  fields: (t) => benefitFields(t as unknown as BenefitFieldBuilder),
});

const CustomerSubscriptionBenefit = builder.prismaObject('Benefit', {
  variant: 'CustomerSubscriptionBenefit',
  description: 'A benefit of the product, as a customer may see it: without its properties and metadata.',
  fields: (t) => benefitFields(t as unknown as BenefitFieldBuilder),
});

const CustomerSubscriptionOrganization = builder.prismaObject('Organization', {
  variant: 'CustomerSubscriptionOrganization',
  description: 'The public profile of the organization selling the product.',
  fields: (t) => organizationFields(t as unknown as PrismaFieldBuilder<'Organization'>),
});

export const CustomerProduct = builder.prismaObject('Product', {
  variant: 'CustomerProduct',
  description: 'A product as customers see it: its live prices and the benefits it grants.',
  fields: (t) => ({
    ...productFields(t as unknown as ProductFieldBuilder),
    benefits: productBenefitsField(t as unknown as ProductFieldBuilder, BenefitPublic),
  }),
});

export const CustomerOrderProduct = builder.prismaObject('Product', {
  variant: 'CustomerOrderProduct',
  description: 'The product of an order, as its buyer sees it.',
  fields: (t) => ({
    ...productFields(t as unknown as ProductFieldBuilder),
    benefits: productBenefitsField(t as unknown as ProductFieldBuilder, BenefitPublic),
    organization: t.relation('organization', { type: Organization, description: "The organization's public profile." }),
  }),
});

export const CustomerSubscriptionProduct = builder.prismaObject('Product', {
  variant: 'CustomerSubscriptionProduct',
  description: 'The subscribed product, as its subscriber sees it.',
  fields: (t) => ({
    ...productFields(t as unknown as ProductFieldBuilder),
    benefits: productBenefitsField(t as unknown as ProductFieldBuilder, CustomerSubscriptionBenefit),
    organization: t.relation('organization', { type: CustomerSubscriptionOrganization, description: "The organization's public profile." }),
  }),
});
