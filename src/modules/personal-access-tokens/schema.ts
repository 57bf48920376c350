import { queryFromInfo } from '@pothos/plugin-prisma';
import { builder } from '../../graphql/builder.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { createPersonalAccessToken, listPersonalAccessTokens, maxCommentLength, revokePersonalAccessToken } from './service.ts';

// Personal tokens are managed only by their user signed in with a password: a token, personal or
// OAuth, never mints or lists them. A session holds every scope; `user:read` names the account.
const signedInUserOnly = { $all: { signedInUser: true, scope: 'user:read' } } as const;

export const PersonalAccessToken = builder.prismaObject('PersonalAccessToken', {
  description: "A user's own token for scripts and tools: it acts as the user, limited to its scopes. Only its hash is stored.",
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    comment: t.exposeString('comment'),
    scopes: t.exposeStringList('scopes'),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true, description: 'When the token stops working; null: it works until revoked.' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const PersonalAccessTokenList = listType('PersonalAccessToken', PersonalAccessToken);

const PersonalAccessTokenCreated = builder
  .objectRef<Awaited<ReturnType<typeof createPersonalAccessToken>>>('PersonalAccessTokenCreated')
  .implement({
    fields: (t) => ({
      token: t.exposeString('token', { description: 'The token itself. Shown only in this response.' }),
      personalAccessToken: t.field({ type: PersonalAccessToken, resolve: (created) => created.record }),
    }),
  });

const PersonalAccessTokenCreateInput = builder.inputType('PersonalAccessTokenCreateInput', {
  fields: (t) => ({
    comment: t.string({ required: true, description: `What the token is for, at most ${maxCommentLength} characters.` }),
    scopes: t.stringList({ required: true, description: 'Core API scopes, and `user:read` for `core.me`. Sign-in scopes (openid, profile, email) are refused.' }),
    expiresAt: t.field({
      type: 'DateTime',
      description: 'When the token stops working; must be in the future. Null or omitted: it works until revoked, so prefer an expiry.',
    }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  personalAccessTokens: t.field({
    type: PersonalAccessTokenList,
    description: "The signed-in user's own personal access tokens, newest first.",
    authScopes: signedInUserOnly,
    args: { ...pageArgs(t.arg), includeRevoked: t.arg.boolean({ required: true, defaultValue: false }) },
    resolve: (_root, args, ctx, info) => listPersonalAccessTokens(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  personalAccessTokenCreate: t.field({
    type: PersonalAccessTokenCreated,
    description: 'Creates a personal access token for the signed-in user.',
    authScopes: signedInUserOnly,
    args: { input: t.arg({ type: PersonalAccessTokenCreateInput, required: true }) },
    resolve: (_root, { input }, ctx) => createPersonalAccessToken(ctx, input),
  }),
  personalAccessTokenRevoke: t.prismaField({
    type: 'PersonalAccessToken',
    description: "Revokes one of the signed-in user's tokens at once: its next request gets 401.",
    authScopes: signedInUserOnly,
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, { id }, ctx) => revokePersonalAccessToken(ctx, id, query),
  }),
}));
