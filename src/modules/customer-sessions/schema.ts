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
    id: t.expose('id', { type: 'UUID' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    customerId: t.expose('customerId', { type: 'UUID' }),
    customer: t.relation('customer', { type: Customer }),
  }),
});

/** The session as created: with its token, which exists nowhere else. */
type CreatedSession = { token: string };

export const CustomerSessionCreated = builder.prismaObject('CustomerSession', {
  variant: 'CustomerSessionCreated',
  description: 'A new customer session. The token is shown only here: hand it to the customer, do not store it.',
  select: { id: true, customerId: true },
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    modifiedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    token: t.string({ description: 'The customer access token: send it as "Authorization: Bearer <token>" to the Customer Portal API.', resolve: (session) => (session as unknown as CreatedSession).token }),
    customerPortalUrl: t.string({
      select: { customer: { select: { organization: { select: { slug: true } } } } },
      resolve: (session, _args, ctx) => customerPortalUrl(ctx.environment, session.customer.organization.slug, (session as unknown as CreatedSession).token),
    }),
    customerId: t.expose('customerId', { type: 'UUID' }),
    customerExternalId: t.string({
      nullable: true,
      deprecationReason: 'use customer.externalId',
      select: { customer: { select: { externalId: true } } },
      resolve: (session) => session.customer.externalId,
    }),
    customer: t.relation('customer', { type: Customer }),
  }),
});

const CustomerSessionCreateInput = builder.inputType('CustomerSessionCreateInput', {
  description: 'Names the customer by id or by external id.',
  fields: (t) => ({
    customerId: t.field({ type: 'UUID' }),
    externalCustomerId: t.string(),
    customerExternalId: t.string({ deprecationReason: 'use externalCustomerId' }),
  }),
});

builder.objectFields(CoreMutation, (t) => ({
  customerSessionCreate: t.prismaField({
    type: CustomerSessionCreated,
    description: 'Signs a customer in to the Customer Portal. Call it from your server and hand the token to the customer.',
    authScopes: { scope: 'customer_sessions:write' },
    args: { input: t.arg({ type: CustomerSessionCreateInput, required: true }) },
    resolve: (query, _root, { input }, ctx) => createCustomerSession(ctx, input, query),
  }),
  customerSessionRevoke: t.prismaField({
    type: CustomerSession,
    description: "Ends a customer session at once: the token's next request gets 401.",
    authScopes: { scope: 'customer_sessions:write' },
    args: { id: t.arg({ type: 'UUID', required: true }) },
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
