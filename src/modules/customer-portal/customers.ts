// The signed-in customer's own profile: read it, change the billing details, and change the email
// through a code sent to the new address (modules/customers/email-changes.ts). Both need a session
// the organization issued; a checkout's session reads only what it bought.
import type { Context } from '../../context.ts';
import { EmailDeliveryError } from '../../email/transport.ts';
import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { NotPermittedError, raises, ValidationIssues } from '../../graphql/errors.ts';
import { CustomerPortalMutation, CustomerPortalQuery } from '../../graphql/roots.ts';
import { AddressInput, CustomerFields, customerProfileFields } from '../customers/schema.ts';
import { checkBillingDetails, getCustomer, updateCustomerBillingDetails, type CustomerKey } from '../customers/service.ts';
import { checkRequestedEmail, confirmEmailChange, pendingEmailChange, requestEmailChange, TooManyEmailChangesError } from '../customers/email-changes.ts';

export const CustomerPortalCustomer = builder.prismaObject('Customer', {
  variant: 'CustomerPortalCustomer',
  interfaces: [CustomerFields],
  description: 'The signed-in customer as they see themselves: no metadata, no external id.',
  fields: (t) => ({
    ...customerProfileFields(t as unknown as PrismaFieldBuilder<'Customer'>),
    billingName: t.exposeString('billingName', { nullable: true, description: 'The name invoices carry.' }),
    pendingEmail: t.string({
      nullable: true,
      description: 'The address a code was sent to, until it is confirmed with customerEmailVerify or expires; `email` stays until then.',
      resolve: async (customer, _args, ctx) => {
        const change = await pendingEmailChange(ctx.prisma, customer.id);
        return change && change.expiresAt > ctx.now() ? change.email : null;
      },
    }),
  }),
});


const CustomerPortalCustomerUpdateInput = builder.inputType('CustomerPortalCustomerUpdateInput', {
  description: 'Only the fields given change; null clears a billing detail.',
  fields: (t) => ({
    email: t.string({
      description:
        'A new address: a code is sent to it, and it replaces `email` once confirmed with customerEmailVerify. The answer is the same whether or not the address is taken.',
    }),
    billingName: t.string({ description: 'The name invoices carry, at most 256 characters.' }),
    billingAddress: t.field({ type: AddressInput, description: 'The address invoices carry; a new country re-reads the kept tax id.' }),
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
    description:
      "Changes the signed-in customer's billing details at once; a new email is mailed a code and changes once it is confirmed (customerEmailVerify). BAD_USER_INPUT for an invalid email, address or tax id; TOO_MANY_REQUESTS past the hourly limit of email changes. Needs a session the organization issued, not a checkout's.",
    authScopes: { fullCustomerSession: true },
    args: { input: t.arg({ type: CustomerPortalCustomerUpdateInput, required: true, description: 'The fields to change.' }) },
    extensions: raises(
      { error: new TooManyEmailChangesError(), when: 'More email changes were asked for within the hour than are allowed.' },
      { error: new EmailDeliveryError(), when: 'The code could not be mailed, or this server sends no email; nothing changed.' },
    ),
    resolve: async (query, _root, { input }, ctx) => {
      const key = signedIn(ctx);
      const issues = new ValidationIssues();
      checkRequestedEmail(issues, input.email);
      checkBillingDetails(issues, input);
      issues.throwIfAny();
      const { email, ...billing } = input;
      if (Object.values(billing).some((value) => value !== undefined)) await updateCustomerBillingDetails(ctx, key, billing, {});
      if (email != null) await requestEmailChange(ctx, key, email);
      return getCustomer(ctx, key, query);
    },
  }),
);

const CustomerPortalEmailVerifyInput = builder.inputType('CustomerPortalEmailVerifyInput', {
  description: 'The code that confirms a pending email change.',
  fields: (t) => ({ code: t.string({ required: true, description: 'The code sent to the new address.' }) }),
});

builder.objectField(CustomerPortalMutation, 'customerEmailVerify', (t) =>
  t.prismaField({
    type: CustomerPortalCustomer,
    description:
      'Confirms the pending email change with the code sent to the new address: the address becomes the customer’s, verified. BAD_USER_INPUT when no change is pending, the code is wrong or expired (codes last 15 minutes), or the address was taken meanwhile.',
    authScopes: { fullCustomerSession: true },
    args: { input: t.arg({ type: CustomerPortalEmailVerifyInput, required: true, description: 'The code received.' }) },
    resolve: (query, _root, { input }, ctx) => confirmEmailChange(ctx, signedIn(ctx), input.code, query),
  }),
);
