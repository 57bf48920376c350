import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { queryFromInfo } from '@pothos/plugin-prisma';
import { createAccessToken, getOrganization, listAccessTokens, listOrganizations, revokeAccessToken } from './service.ts';

type OrganizationFieldBuilder = PrismaFieldBuilder<'Organization'>;

/** An organization's public profile: all a customer may see of the organization they buy from. */
export const organizationFields = (t: OrganizationFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID' }),
  name: t.exposeString('name'),
  slug: t.exposeString('slug'),
  createdAt: t.expose('createdAt', { type: 'DateTime' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
});

export const Organization = builder.prismaObject('Organization', {
  description: 'A merchant: it owns products, customers and everything sold.',
  fields: (t) => organizationFields(t as unknown as OrganizationFieldBuilder),
});

export const OrganizationAccessToken = builder.prismaObject('OrganizationAccessToken', {
  description: "A token for an organization's backend. Only its hash is stored.",
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    organizationId: t.expose('organizationId', { type: 'UUID' }),
    comment: t.exposeString('comment'),
    scopes: t.exposeStringList('scopes'),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const OrganizationList = listType('Organization', Organization);
const OrganizationAccessTokenList = listType('OrganizationAccessToken', OrganizationAccessToken);

const OrganizationAccessTokenCreated = builder
  .objectRef<Awaited<ReturnType<typeof createAccessToken>>>('OrganizationAccessTokenCreated')
  .implement({
    fields: (t) => ({
      token: t.exposeString('token', { description: 'The token itself. Shown only in this response.' }),
      organizationAccessToken: t.field({ type: OrganizationAccessToken, resolve: (created) => created.record }),
    }),
  });

const OrganizationAccessTokenCreateInput = builder.inputType('OrganizationAccessTokenCreateInput', {
  fields: (t) => ({
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
    comment: t.string({ required: true, description: 'What the token is for.' }),
    scopes: t.stringList({ required: true }),
    expiresAt: t.field({ type: 'DateTime', description: 'When the token stops working; never when omitted.' }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  organizations: t.field({
    type: OrganizationList,
    authScopes: { scope: ['organizations:read', 'organizations:write'] },
    args: pageArgs(t.arg),
    resolve: (_root, args, ctx, info) => listOrganizations(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
  organization: t.prismaField({
    type: 'Organization',
    authScopes: { scope: ['organizations:read', 'organizations:write'] },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => getOrganization(ctx, id, query),
  }),
  organizationAccessTokens: t.field({
    type: OrganizationAccessTokenList,
    authScopes: { scope: ['organization_access_tokens:read', 'organization_access_tokens:write'] },
    args: { ...pageArgs(t.arg), organizationId: t.arg({ type: ['UUID'] }) },
    resolve: (_root, args, ctx, info) => listAccessTokens(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  organizationAccessTokenCreate: t.field({
    type: OrganizationAccessTokenCreated,
    description: 'Creates an organization access token. Only a member of the organization signed in with a password may: a token (personal or OAuth) would otherwise mint a wider, longer-lived one.',
    authScopes: { $all: { signedInUser: true, scope: 'organization_access_tokens:write' } },
    args: { input: t.arg({ type: OrganizationAccessTokenCreateInput, required: true }) },
    resolve: (_root, { input }, ctx) => createAccessToken(ctx, input),
  }),
  organizationAccessTokenRevoke: t.prismaField({
    type: 'OrganizationAccessToken',
    description: 'Revokes a token at once: its next request gets 401.',
    authScopes: { scope: 'organization_access_tokens:write' },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => revokeAccessToken(ctx, id, query),
  }),
}));
