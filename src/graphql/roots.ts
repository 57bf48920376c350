// The two API surfaces. `core` is the organization API (organization, user and OAuth tokens);
// `customerPortal` is the signed-in customer's API. Each root declares which principals reach it,
// so a token of the wrong kind is refused before any field below runs.
import { builder, type PrincipalKind } from './builder.ts';

export const CoreQuery = builder.objectRef<object>('CoreQuery').implement({
  description: 'The organization-level Core API: full access to the organizations the token reaches.',
});
export const CoreMutation = builder.objectRef<object>('CoreMutation').implement({
  description: 'Privileged mutations of the Core API.',
});
export const CustomerPortalQuery = builder.objectRef<object>('CustomerPortalQuery').implement({
  description: "The Customer Portal API: only the signed-in customer's own data.",
});

export const CustomerPortalMutation = builder.objectRef<object>('CustomerPortalMutation').implement({
  description: "Changes a signed-in customer may make to their own data.",
});

const core = { authScopes: { principal: ['organization', 'user', 'system'] as PrincipalKind[] }, resolve: () => ({}) };
const portal = { authScopes: { principal: 'customer' as PrincipalKind }, resolve: () => ({}) };

const coreDescription = 'The Core API. Needs an organization access token, a personal access token, an OAuth access token or a user session; a customer session gets NOT_PERMITTED, no token UNAUTHENTICATED.';
const portalDescription = 'The Customer Portal API. Needs a customer session token (from `customerSessionCreate` or a checkout); any other token gets NOT_PERMITTED, no token UNAUTHENTICATED.';

builder.queryField('core', (t) => t.field({ type: CoreQuery, description: coreDescription, ...core }));
builder.mutationField('core', (t) => t.field({ type: CoreMutation, description: coreDescription, ...core }));
builder.queryField('customerPortal', (t) => t.field({ type: CustomerPortalQuery, description: portalDescription, ...portal }));
builder.mutationField('customerPortal', (t) => t.field({ type: CustomerPortalMutation, description: portalDescription, ...portal }));
