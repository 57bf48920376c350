import type { Scope } from '../../auth/scopes.ts';
import { builder } from '../../graphql/builder.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { scopeEnum } from '../../graphql/scope-enums.ts';
import { createPersonalAccessToken, listPersonalAccessTokens, maxCommentLength, personalAccessTokenScopes, revokePersonalAccessToken } from './service.ts';

// Personal tokens are managed only by their user signed in with a password: a token, personal or
// OAuth, never mints or lists them. A session holds every scope; `user:read` names the account.
const signedInUserOnly = { $all: { signedInUser: true, scope: 'user:read' } } as const;

const PersonalAccessTokenScope = scopeEnum(
  'PersonalAccessTokenScope',
  "A scope a personal access token may hold: the Core API's resource scopes, and user_read for `core.me`. Sign-in scopes (openid, profile, email) are for OAuth clients only.",
  personalAccessTokenScopes,
);

export const PersonalAccessToken = builder.prismaObject('PersonalAccessToken', {
  description: "A user's own token for scripts and tools: it acts as the user, limited to its scopes. Only its hash is stored.",
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: "The token's id (not the token itself)." }),
    comment: t.exposeString('comment', { description: 'What the token is for, as given when it was created.' }),
    scopes: t.field({
      type: [PersonalAccessTokenScope],
      description: 'The scopes granted, such as orders_read; the token never reaches beyond its user.',
      resolve: (token) => token.scopes as Scope[],
    }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', nullable: true, description: 'When the token stops working; null: it works until revoked.' }),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true, description: 'When a request last authenticated with the token; null if never.' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true, description: 'When the token was revoked; null while it is live.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the token was created.' }),
  }),
});

const PersonalAccessTokenList = listType('PersonalAccessToken', PersonalAccessToken);

const PersonalAccessTokenCreated = builder
  .objectRef<Awaited<ReturnType<typeof createPersonalAccessToken>>>('PersonalAccessTokenCreated')
  .implement({
    description: 'A new personal access token, with its secret.',
    fields: (t) => ({
      token: t.exposeString('token', { description: 'The token itself. Shown only in this response.' }),
      personalAccessToken: t.field({ type: PersonalAccessToken, description: 'The stored token, as later lists show it.', resolve: (created) => created.record }),
    }),
  });

const PersonalAccessTokenCreateInput = builder.inputType('PersonalAccessTokenCreateInput', {
  description: 'A new personal access token for the signed-in user.',
  fields: (t) => ({
    comment: t.string({ required: true, description: `What the token is for, at most ${maxCommentLength} characters.` }),
    scopes: t.field({ type: [PersonalAccessTokenScope], required: true, description: 'At least one scope, such as orders_read; user_read for `core.me`.' }),
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
    args: { ...pageArgs(t.arg), includeRevoked: t.arg.boolean({ required: true, defaultValue: false, description: 'Whether revoked tokens are listed too.' }) },
    resolve: (_root, args, ctx, info) => listPersonalAccessTokens(ctx, args, pageQuery(ctx, info)),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  personalAccessTokenCreate: t.field({
    type: PersonalAccessTokenCreated,
    description: 'Creates a personal access token for the signed-in user. BAD_USER_INPUT for an unknown or sign-in scope, no scope, a long comment or a past expiry.',
    authScopes: signedInUserOnly,
    args: { input: t.arg({ type: PersonalAccessTokenCreateInput, required: true, description: 'The token to create.' }) },
    resolve: (_root, { input }, ctx) => createPersonalAccessToken(ctx, input),
  }),
  personalAccessTokenRevoke: t.prismaField({
    type: 'PersonalAccessToken',
    description: "Revokes one of the signed-in user's tokens at once: its next request gets 401. RESOURCE_NOT_FOUND if it is not theirs or already revoked.",
    authScopes: signedInUserOnly,
    args: { id: t.arg({ type: 'UUID', required: true, description: "The token's id." }) },
    resolve: (query, _root, { id }, ctx) => revokePersonalAccessToken(ctx, id, query),
  }),
}));
