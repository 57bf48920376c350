// The signed-in customer's license keys. The keys are found through `reach(ctx).licenseKey` in the
// Core service, so a customer lists and reads only their own, and a checkout's session only the keys
// that checkout's purchase granted. Validating, activating and deactivating need no token: those
// routes (src/rest/routes/license-keys.ts) take the key itself as the capability.
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CustomerPortalQuery } from '../../graphql/roots.ts';
import { customerFields, CustomerFields } from '../customers/schema.ts';
import { licenseKeyActivationFields, licenseKeyFields, LicenseKeyFields } from '../license-keys/schema.ts';
import { getLicenseKey, listLicenseKeys, type LicenseKeyBenefitProperties } from '../license-keys/service.ts';

/**
 * The key's holder as the client library's LicenseKeyCustomer has it: the customer's own record,
 * nothing it links to. That model requires `metadata` and `external_id`, so the holder sees them, as on Polar.
 */
export const LicenseKeyCustomer = builder.prismaObject('Customer', {
  variant: 'LicenseKeyCustomer',
  interfaces: [CustomerFields],
  description: 'The customer a license key belongs to.',
  fields: (t) => customerFields(t as unknown as PrismaFieldBuilder<'Customer'>),
});

export const CustomerLicenseKeyActivation = builder.prismaObject('LicenseKeyActivation', {
  variant: 'CustomerLicenseKeyActivation',
  description: 'A device or installation the key is activated on.',
  fields: (t) => licenseKeyActivationFields(t as unknown as PrismaFieldBuilder<'LicenseKeyActivation'>),
});

export const CustomerLicenseKey = builder.prismaObject('LicenseKey', {
  variant: 'CustomerLicenseKey',
  interfaces: [Node, LicenseKeyFields],
  description: 'A license key the signed-in customer holds.',
  fields: (t) => ({
    ...licenseKeyFields(t as unknown as PrismaFieldBuilder<'LicenseKey'>),
    customer: t.relation('customer', { type: LicenseKeyCustomer, description: 'The customer who holds it.' }),
    activations: t.field({
      type: [CustomerLicenseKeyActivation],
      description: "The key's activations, shown only where the benefit lets customers manage them (enable_customer_admin); otherwise empty.",
      select: (_args, _ctx, nested) => ({
        benefit: { select: { properties: true } },
        activations: nested({ orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
      }),
      resolve: (k) => ((k.benefit.properties as LicenseKeyBenefitProperties).activations?.enable_customer_admin ? k.activations : []),
    }),
  }),
});

const CustomerLicenseKeyList = listType('CustomerLicenseKey', CustomerLicenseKey);

builder.objectFields(CustomerPortalQuery, (t) => ({
  licenseKeys: t.field({
    type: CustomerLicenseKeyList,
    description: "The customer's license keys, oldest first, whatever their status.",
    authScopes: { principal: 'customer' },
    args: {
      ...pageArgs(t.arg),
      benefitId: t.arg({ type: ['UUID'], description: 'Only keys granted by these benefits.' }),
      organizationId: t.arg({ type: ['UUID'], description: "Only these organizations' keys." }),
    },
    resolve: (_root, args, ctx, info) => listLicenseKeys(ctx, args, pageQuery(ctx, info)),
  }),
  licenseKey: t.prismaField({
    type: CustomerLicenseKey,
    description: "One of the customer's license keys; RESOURCE_NOT_FOUND if it is not theirs.",
    authScopes: { principal: 'customer' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The key's id." }) },
    resolve: (query, _root, { id }, ctx) => getLicenseKey(ctx, id, query),
  }),
}));

/** node(id:) answers a customer for their license keys as customerPortal.licenseKey does. */
export const customerLicenseKeyNodeLoader: NodeLoader = { surface: 'customerPortal', model: 'licenseKey', typeName: 'CustomerLicenseKey', load: getLicenseKey };
