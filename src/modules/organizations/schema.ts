import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { scopeEnum } from '../../graphql/scope-enums.ts';
import { resourceScopes, type ResourceScope } from '../../auth/scopes.ts';
import { createAccessToken, getOrganization, listAccessTokens, listOrganizations, revokeAccessToken } from './service.ts';

type OrganizationFieldBuilder = PrismaFieldBuilder<'Organization'>;

/** An organization's public profile: all a customer may see of the organization they buy from. */
export const organizationFields = (t: OrganizationFieldBuilder) => ({
  id: t.exposeID('id', { description: "The organization's id. Its global id (see Node)." }),
  name: t.exposeString('name', { description: 'The name shown to customers.' }),
  slug: t.exposeString('slug', { description: 'The unique, URL-safe short name (lowercase letters, digits and `-`), as in the customer portal address.' }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the organization was created.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the organization was last changed; null if never.' }),
});

export const Organization = builder.prismaObject('Organization', {
  interfaces: [Node],
  description: 'A merchant: it owns products, customers and everything sold.',
  fields: (t) => organizationFields(t as unknown as OrganizationFieldBuilder),
});

const OrganizationAccessTokenScope = scopeEnum('OrganizationAccessTokenScope', 'A scope an organization access token may hold: a resource scope of the Core API.', resourceScopes);

export const OrganizationAccessToken = builder.prismaObject('OrganizationAccessToken', {
  description: "A token for an organization's backend. Only its hash is stored.",
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: "The token's id (not the token itself)." }),
    organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization the token acts for.' }),
    comment: t.exposeString('comment', { description: 'What the token is for, as given when it was created.' }),
    scopes: t.field({
      type: [OrganizationAccessTokenScope],
      description: 'The scopes granted, such as products_read; each appears once.',
      resolve: (token) => token.scopes as ResourceScope[],
    }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true, description: 'When the token stops working; null if it never expires.' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true, description: 'When a request last authenticated with the token; null if never.' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true, description: 'When the token was revoked; null while it is live.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the token was created.' }),
  }),
});

const OrganizationList = listType('Organization', Organization);
const OrganizationAccessTokenList = listType('OrganizationAccessToken', OrganizationAccessToken);

const OrganizationAccessTokenCreated = builder
  .objectRef<Awaited<ReturnType<typeof createAccessToken>>>('OrganizationAccessTokenCreated')
  .implement({
    description: 'A new organization access token, with its secret.',
    fields: (t) => ({
      token: t.exposeString('token', { description: 'The token itself. Shown only in this response.' }),
      organizationAccessToken: t.field({ type: OrganizationAccessToken, description: 'The stored token, as later lists show it.', resolve: (created) => created.record }),
    }),
  });

const OrganizationAccessTokenCreateInput = builder.inputType('OrganizationAccessTokenCreateInput', {
  description: 'A new organization access token.',
  fields: (t) => ({
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
    comment: t.string({ required: true, description: 'What the token is for, up to 200 characters.' }),
    scopes: t.field({ type: [OrganizationAccessTokenScope], required: true, description: 'At least one scope, such as products_read or orders_write.' }),
    expiresAt: t.field({ type: 'DateTime', description: 'When the token stops working, in the future; never when omitted.' }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  organizations: t.field({
    type: OrganizationList,
    description: 'The organizations the token reaches (an organization token: its own; a user: those they belong to), oldest first.',
    authScopes: { scope: ['organizations:read', 'organizations:write'] },
    args: pageArgs(t.arg),
    resolve: (_root, args, ctx, info) => listOrganizations(ctx, args, pageQuery(ctx, info)),
  }),
  organization: t.prismaField({
    type: 'Organization',
    description: 'One organization the token reaches; RESOURCE_NOT_FOUND for any other.',
    authScopes: { scope: ['organizations:read', 'organizations:write'] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The organization's id." }) },
    resolve: (query, _root, { id }, ctx) => getOrganization(ctx, id, query),
  }),
  organizationAccessTokens: t.field({
    type: OrganizationAccessTokenList,
    description: 'The live (not revoked) access tokens of the organizations the token reaches, newest first.',
    authScopes: { scope: ['organization_access_tokens:read', 'organization_access_tokens:write'] },
    args: { ...pageArgs(t.arg), organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }) },
    resolve: (_root, args, ctx, info) => listAccessTokens(ctx, args, pageQuery(ctx, info)),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  organizationAccessTokenCreate: t.field({
    type: OrganizationAccessTokenCreated,
    description: 'Creates an organization access token. Only a member of the organization signed in with a password may: a token (personal or OAuth) would otherwise mint a wider, longer-lived one.',
    authScopes: { $all: { signedInUser: true, scope: 'organization_access_tokens:write' } },
    args: { input: t.arg({ type: OrganizationAccessTokenCreateInput, required: true, description: 'The token to create.' }) },
    resolve: (_root, { input }, ctx) => createAccessToken(ctx, input),
  }),
  organizationAccessTokenRevoke: t.prismaField({
    type: 'OrganizationAccessToken',
    description: 'Revokes a token at once: its next request gets 401. RESOURCE_NOT_FOUND if it is unknown or already revoked.',
    authScopes: { scope: 'organization_access_tokens:write' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The token's id." }) },
    resolve: (query, _root, { id }, ctx) => revokeAccessToken(ctx, id, query),
  }),
}));

/** node(id:) answers for organizations as core.organization does. */
export const organizationNodeLoader: NodeLoader = { surface: 'core', model: 'organization', typeName: 'Organization', scopes: ['organizations:read', 'organizations:write'], load: getOrganization };
