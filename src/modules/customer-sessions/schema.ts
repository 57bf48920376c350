import { builder } from '../../graphql/builder.ts';
import { CoreMutation, CustomerPortalMutation } from '../../graphql/roots.ts';
import type { Environment } from '../../context.ts';
import { Customer } from '../customers/schema.ts';
import { createCustomerSession, revokeCustomerSession } from './service.ts';

/** Where the customer manages their purchases, signed in by the token. */
export function customerPortalUrl(environment: Environment, organizationSlug: string, token: string): string {
  return `${environment.publicUrl}/portal/${encodeURIComponent(organizationSlug)}?customer_session_token=${encodeURIComponent(token)}`;
}

export const CustomerSession = builder.prismaObject('CustomerSession', {
  description: 'A customer signed in to the Customer Portal until expiresAt, unless revoked before.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: "The session's id (not its token)." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the session was created.' }),
    modifiedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true, description: 'When the session was last changed (revoked); null if never.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'When the token stops working: an hour after creation.' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true, description: 'When the session was ended; null while it is live.' }),
    customerId: t.expose('customerId', { type: 'UUID', description: 'The customer signed in.' }),
    customer: t.relation('customer', { type: Customer, description: 'The customer signed in.' }),
  }),
});

/** The session as created: with its token, which exists nowhere else. */
type CreatedSession = { token: string };

export const CustomerSessionCreated = builder.prismaObject('CustomerSession', {
  variant: 'CustomerSessionCreated',
  description: 'A new customer session. The token is shown only here: hand it to the customer, do not store it.',
  select: { id: true, customerId: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: "The session's id (not its token)." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the session was created.' }),
    modifiedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true, description: 'When the session was last changed (revoked); null if never.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'When the token stops working: an hour after creation.' }),
    token: t.string({ description: 'The customer access token: send it as "Authorization: Bearer <token>" to the Customer Portal API.', resolve: (session) => (session as unknown as CreatedSession).token }),
    customerPortalUrl: t.string({
      description: "The customer portal's address, signed in with the token: a link to hand to the customer.",
      select: { customer: { select: { organization: { select: { slug: true } } } } },
      resolve: (session, _args, ctx) => customerPortalUrl(ctx.environment, session.customer.organization.slug, (session as unknown as CreatedSession).token),
    }),
    customerId: t.expose('customerId', { type: 'UUID', description: 'The customer signed in.' }),
    customerExternalId: t.string({
      nullable: true,
      description: "The customer's external id; null if they have none.",
      deprecationReason: 'use customer.externalId',
      select: { customer: { select: { externalId: true } } },
      resolve: (session) => session.customer.externalId,
    }),
    customer: t.relation('customer', { type: Customer, description: 'The customer signed in.' }),
  }),
});

const CustomerSessionCreateInput = builder.inputType('CustomerSessionCreateInput', {
  description: 'Names the customer by id or by external id.',
  fields: (t) => ({
    customerId: t.field({ type: 'UUID', description: "The customer's id; give it or externalCustomerId, not both." }),
    externalCustomerId: t.string({ description: "The customer's external id; give it or customerId, not both." }),
    customerExternalId: t.string({ deprecationReason: 'use externalCustomerId', description: 'The former name of externalCustomerId; if both are given they must agree.' }),
  }),
});

builder.objectFields(CoreMutation, (t) => ({
  customerSessionCreate: t.prismaField({
    type: CustomerSessionCreated,
    description:
      'Signs a customer in to the Customer Portal for an hour. Call it from your server and hand the token to the customer. BAD_USER_INPUT when no customer, both ids or an unknown customer is given.',
    authScopes: { scope: 'customer_sessions:write' },
    args: { input: t.arg({ type: CustomerSessionCreateInput, required: true, description: 'The customer to sign in.' }) },
    resolve: (query, _root, { input }, ctx) => createCustomerSession(ctx, input, query),
  }),
  customerSessionRevoke: t.prismaField({
    type: CustomerSession,
    description: "Ends a customer session at once: the token's next request gets 401. RESOURCE_NOT_FOUND if the token does not reach it.",
    authScopes: { scope: 'customer_sessions:write' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The session's id (CustomerSession.id)." }) },
    resolve: (query, _root, { id }, ctx) => revokeCustomerSession(ctx, id, query),
  }),
}));

builder.objectFields(CustomerPortalMutation, (t) => ({
  signOut: t.boolean({
    description: 'Ends the session the customer is signed in with: its token stops working at once.',
    authScopes: { principal: 'customer' },
    resolve: async (_root, _args, ctx) => {
      if (ctx.principal.kind !== 'customer') return false;
      await revokeCustomerSession(ctx, ctx.principal.sessionId, { select: { id: true } });
      return true;
    },
  }),
}));
