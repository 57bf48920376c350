import type { OAuthClient } from '../../generated/prisma/client.ts';
import { builder } from '../../graphql/builder.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { scopeEnum } from '../../graphql/scope-enums.ts';
import { allScopes, type Scope as Scopes } from '../../auth/scopes.ts';
import { maxClientNameLength, maxRedirectUris, supportedGrantTypes, supportedResponseTypes, type TokenEndpointAuthMethod } from '../../oauth/clients.ts';
import { createOAuth2Client, deleteOAuth2Client, listOAuth2Clients, rotateOAuth2ClientSecret, updateOAuth2Client } from './service.ts';

// OAuth clients are managed only by their user signed in with a password, as personal tokens are:
// a token never registers or changes clients. A session holds every scope; `user:read` names the account.
const signedInUserOnly = { $all: { signedInUser: true, scope: 'user:read' } } as const;

const OAuth2TokenEndpointAuthMethod = builder.enumType('OAuth2TokenEndpointAuthMethod', {
  description: 'How a client authenticates at the token endpoint (RFC 7591 token_endpoint_auth_method).',
  values: {
    client_secret_basic: { description: 'Its client_id and secret in an HTTP Basic Authorization header.' },
    client_secret_post: { description: 'Its client_id and secret as form parameters of the token request.' },
    none: { description: 'No secret: a public client (a browser or native application), which must use PKCE.' },
  } satisfies Record<TokenEndpointAuthMethod, object>,
});
const OAuth2GrantType = builder.enumType('OAuth2GrantType', {
  description: 'A grant a client may use at the token endpoint (RFC 7591 grant_types).',
  values: {
    authorization_code: { description: 'Exchanges the code the user consented with for tokens.' },
    refresh_token: { description: 'Exchanges a refresh token for new tokens; a client without it gets no refresh tokens.' },
  } satisfies Record<(typeof supportedGrantTypes)[number], object>,
});
const OAuth2ResponseType = builder.enumType('OAuth2ResponseType', {
  description: 'What a client may ask the authorization endpoint for (RFC 7591 response_types).',
  values: {
    code: { description: 'An authorization code, to exchange at the token endpoint.' },
  } satisfies Record<(typeof supportedResponseTypes)[number], object>,
});

const Scope = scopeEnum('Scope', 'A scope of the catalogue: what a token may do, or learn about its user (openid, profile, email, user_read).', allScopes);

export const OAuth2Client = builder.prismaObject('OAuthClient', {
  name: 'OAuth2Client',
  description: 'An application registered to ask users for access through OAuth 2.0 / OpenID Connect. Its secret is stored hashed and never shown again.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: "The registration's id in Kassa (not the OAuth client_id)." }),
    clientId: t.exposeString('clientId', { description: 'The public identifier the application sends as client_id.' }),
    clientName: t.exposeString('clientName', { description: 'The name users see on the consent page.' }),
    redirectUris: t.exposeStringList('redirectUris', { description: 'The URLs users may be sent back to, matched exactly.' }),
    scopes: t.field({ type: [Scope], description: 'The scopes the application may ask for.', resolve: (client) => client.scopes as Scopes[] }),
    tokenEndpointAuthMethod: t.field({
      type: OAuth2TokenEndpointAuthMethod,
      description: 'How it authenticates at the token endpoint.',
      resolve: (client) => client.tokenEndpointAuthMethod as TokenEndpointAuthMethod,
    }),
    grantTypes: t.field({
      type: [OAuth2GrantType],
      description: 'The grants it may use: authorization_code, and refresh_token when it gets refresh tokens.',
      resolve: (client) => client.grantTypes as (typeof supportedGrantTypes)[number][],
    }),
    responseTypes: t.field({
      type: [OAuth2ResponseType],
      description: 'The response types it may ask for.',
      resolve: (client) => client.responseTypes as (typeof supportedResponseTypes)[number][],
    }),
    clientUri: t.exposeString('clientUri', { nullable: true, description: 'The application home page; null if not given.' }),
    logoUri: t.exposeString('logoUri', { nullable: true, description: 'The application logo shown on the consent page; null if not given.' }),
    tosUri: t.exposeString('tosUri', { nullable: true, description: 'The terms of service; null if not given.' }),
    policyUri: t.exposeString('policyUri', { nullable: true, description: 'The privacy policy; null if not given.' }),
    isPublic: t.boolean({ description: 'A public client has no secret (token_endpoint_auth_method none) and must use PKCE.', resolve: (client) => client.tokenEndpointAuthMethod === 'none' }),
    clientSecretExpiresAt: t.expose('clientSecretExpiresAt', { type: 'DateTime', nullable: true, description: 'When the secret stops working; null: it works until rotated.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the client was registered.' }),
    modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the registration was last changed; null if never.' }),
  }),
});

const OAuth2ClientList = listType('OAuth2Client', OAuth2Client);

interface ClientWithSecrets {
  client: OAuthClient;
  clientSecret: string | null;
}

const OAuth2ClientCreated = builder.objectRef<ClientWithSecrets & { registrationAccessToken: string }>('OAuth2ClientCreated').implement({
  description: 'A new OAuth client, with the secrets shown only once.',
  fields: (t) => ({
    client: t.field({ type: OAuth2Client, description: 'The registered client.', resolve: (created) => created.client }),
    clientSecret: t.exposeString('clientSecret', { nullable: true, description: 'The client secret; null for a public client. Shown only in this response.' }),
    registrationAccessToken: t.exposeString('registrationAccessToken', {
      description: 'Manages this registration through RFC 7592 (`/v1/oauth2/register/{client_id}`). Shown only in this response.',
    }),
  }),
});

const OAuth2ClientUpdated = builder.objectRef<ClientWithSecrets>('OAuth2ClientUpdated').implement({
  description: 'A changed OAuth client, with a new secret when the change needs one.',
  fields: (t) => ({
    client: t.field({ type: OAuth2Client, description: 'The client as it is now.', resolve: (updated) => updated.client }),
    clientSecret: t.exposeString('clientSecret', { nullable: true, description: 'A new secret, when the change made a public client confidential; otherwise null. Shown only in this response.' }),
  }),
});

const OAuth2ClientSecretRotated = builder.objectRef<{ client: OAuthClient; clientSecret: string }>('OAuth2ClientSecretRotated').implement({
  description: 'An OAuth client with its new secret.',
  fields: (t) => ({
    client: t.field({ type: OAuth2Client, description: 'The client whose secret was replaced.', resolve: (rotated) => rotated.client }),
    clientSecret: t.exposeString('clientSecret', { description: 'The new secret; the old one no longer works. Shown only in this response.' }),
  }),
});

const inputFields = (required: boolean) => (t: Parameters<Parameters<typeof builder.inputType>[1]['fields']>[0]) => ({
  clientName: t.string({ required, description: `The name users see on the consent page, at most ${maxClientNameLength} characters.` }),
  redirectUris: t.stringList({
    required,
    description: `Where users are sent back, matched exactly: https URLs (http only on 127.0.0.1, [::1] or localhost), no fragment; 1 to ${maxRedirectUris}.`,
  }),
  scopes: t.field({ type: [Scope], description: 'The scopes the client may ask for; omitted on creation: every scope.' }),
  tokenEndpointAuthMethod: t.field({ type: OAuth2TokenEndpointAuthMethod, description: 'Omitted on creation: client_secret_basic. none makes a public client, without a secret.' }),
  grantTypes: t.field({ type: [OAuth2GrantType], description: 'authorization_code, and refresh_token for refresh tokens; omitted on creation: both.' }),
  responseTypes: t.field({ type: [OAuth2ResponseType], description: 'Omitted on creation: code.' }),
  clientUri: t.string({ description: 'The application home page: an https URL, or null.' }),
  logoUri: t.string({ description: 'The application logo: an https URL, or null.' }),
  tosUri: t.string({ description: 'The terms of service: an https URL, or null.' }),
  policyUri: t.string({ description: 'The privacy policy: an https URL, or null.' }),
});

const OAuth2ClientCreateInput = builder.inputType('OAuth2ClientCreateInput', {
  description: 'A new OAuth client registration.',
  fields: inputFields(true),
});
const OAuth2ClientUpdateInput = builder.inputType('OAuth2ClientUpdateInput', {
  description: 'The fields to change; fields left out keep their value, and null clears an optional URL.',
  fields: inputFields(false),
});

builder.objectFields(CoreQuery, (t) => ({
  oauth2Clients: t.field({
    type: OAuth2ClientList,
    description: "The signed-in user's own OAuth clients, newest first.",
    authScopes: signedInUserOnly,
    args: pageArgs(t.arg),
    resolve: (_root, args, ctx, info) => listOAuth2Clients(ctx, args, pageQuery(ctx, info)),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  oauth2ClientCreate: t.field({
    type: OAuth2ClientCreated,
    description:
      'Registers an OAuth client for the signed-in user. Its secret and registration access token are shown only in the answer. BAD_USER_INPUT names the field of an invalid redirect URI, scope, grant type or URL.',
    authScopes: signedInUserOnly,
    args: { input: t.arg({ type: OAuth2ClientCreateInput, required: true, description: 'The client to register.' }) },
    resolve: (_root, { input }, ctx) => createOAuth2Client(ctx, input),
  }),
  oauth2ClientUpdate: t.field({
    type: OAuth2ClientUpdated,
    description: "Changes one of the signed-in user's OAuth clients. RESOURCE_NOT_FOUND if it is not theirs; BAD_USER_INPUT as for oauth2ClientCreate.",
    authScopes: signedInUserOnly,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The registration's id (OAuth2Client.id)." }),
      input: t.arg({ type: OAuth2ClientUpdateInput, required: true, description: 'The fields to change.' }),
    },
    resolve: (_root, { id, input }, ctx) => updateOAuth2Client(ctx, id, input),
  }),
  oauth2ClientRotateSecret: t.field({
    type: OAuth2ClientSecretRotated,
    description:
      "Issues a new secret to one of the signed-in user's confidential clients; the old secret stops working at once. BAD_USER_INPUT for a public client, which has no secret.",
    authScopes: signedInUserOnly,
    args: { id: t.arg({ type: 'UUID', required: true, description: "The registration's id (OAuth2Client.id)." }) },
    resolve: (_root, { id }, ctx) => rotateOAuth2ClientSecret(ctx, id),
  }),
  oauth2ClientDelete: t.field({
    type: OAuth2Client,
    description: "Deletes one of the signed-in user's OAuth clients: it can no longer sign users in, and every token issued to it is revoked. RESOURCE_NOT_FOUND if it is not theirs.",
    authScopes: signedInUserOnly,
    args: { id: t.arg({ type: 'UUID', required: true, description: "The registration's id (OAuth2Client.id)." }) },
    resolve: (_root, { id }, ctx) => deleteOAuth2Client(ctx, id),
  }),
}));
