// The signed-in customer's own profile: read it, and change the billing details and email. Both
// need a session the organization issued; a checkout's session reads only what it bought.
import type { Context } from '../../context.ts';
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { NotPermittedError } from '../../graphql/errors.ts';
import { CustomerPortalMutation, CustomerPortalQuery } from '../../graphql/roots.ts';
import type { RestRoute } from '../../rest/routes.ts';
import { defineWireConstants } from '../../rest/wire.ts';
import { addressWire } from '../customers/rest.ts';
import { AddressInput, customerProfileFields } from '../customers/schema.ts';
import { getCustomer, updateCustomerBillingDetails, type CustomerKey } from '../customers/service.ts';

export const CustomerPortalCustomer = builder.prismaObject('Customer', {
  variant: 'CustomerPortalCustomer',
  description: 'The signed-in customer as they see themselves: no metadata, no external id.',
  fields: (t) => ({
    ...customerProfileFields(t as unknown as PrismaFieldBuilder<'Customer'>),
    billingName: t.exposeString('billingName', { nullable: true, description: 'The name invoices carry.' }),
  }),
});

// Kassa has no sign-in through third-party accounts: a customer has no connected OAuth accounts.
defineWireConstants('CustomerPortalCustomer', { oauth_accounts: {} });

const CustomerPortalCustomerUpdateInput = builder.inputType('CustomerPortalCustomerUpdateInput', {
  description: 'Only the fields given change; null clears a billing detail.',
  fields: (t) => ({
    email: t.string({ description: "Unique among the organization's customers." }),
    billingName: t.string(),
    billingAddress: t.field({ type: AddressInput }),
    taxId: t.string({ description: "The tax id number; its format follows from the billing address's country, which it requires." }),
  }),
});

/** The signed-in customer, as the key the customer services take. */
function signedIn(ctx: Context): CustomerKey {
  if (ctx.principal.kind !== 'customer') throw new NotPermittedError();
  return { id: ctx.principal.customerId };
}

builder.objectField(CustomerPortalQuery, 'customer', (t) =>
  t.prismaField({
    type: CustomerPortalCustomer,
    description: 'The signed-in customer.',
    authScopes: { fullCustomerSession: true },
    resolve: (query, _root, _args, ctx) => getCustomer(ctx, signedIn(ctx), query),
  }),
);

builder.objectField(CustomerPortalMutation, 'customerUpdate', (t) =>
  t.prismaField({
    type: CustomerPortalCustomer,
    description: "Changes the signed-in customer's billing details or email.",
    authScopes: { fullCustomerSession: true },
    args: { input: t.arg({ type: CustomerPortalCustomerUpdateInput, required: true }) },
    resolve: (query, _root, { input }, ctx) => updateCustomerBillingDetails(ctx, signedIn(ctx), input, query),
  }),
);

/** The REST shape of the signed-in customer, wherever the portal shows them. */
export const customerPortalCustomerWire = `id createdAt modifiedAt email emailVerified name billingName billingAddress { ${addressWire} } taxId`;

const CustomerPortalCustomerWire = /* GraphQL */ `fragment CustomerPortalCustomerWire on CustomerPortalCustomer { ${customerPortalCustomerWire} }`;

export const portalCustomersRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/customer-portal/customers/me',
    operation: `query { customerPortal { customer { ...CustomerPortalCustomerWire } } } ${CustomerPortalCustomerWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/customer-portal/customers/me',
    body: 'input',
    operation: `mutation ($input: CustomerPortalCustomerUpdateInput!) {
      customerPortal { customerUpdate(input: $input) { ...CustomerPortalCustomerWire } } } ${CustomerPortalCustomerWire}`,
  },
];
