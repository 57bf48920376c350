import { builder } from '../../graphql/builder.ts';
import { CoreQuery } from '../../graphql/roots.ts';
import { raises } from '../../graphql/errors.ts';
import { TooManyEmailRequestsError } from '../../auth/email-tokens.ts';
import { currentUser, signIn, signOut } from './service.ts';
import { minPasswordLength, signUp, verifyEmail } from './sign-up.ts';

export const User = builder.prismaObject('User', {
  description: 'A person who signs in and belongs to organizations.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'The user\'s id.' }),
    email: t.exposeString('email', { description: 'The address the user signs in with, lowercased.' }),
    emailVerified: t.exposeBoolean('emailVerified', { description: 'Whether the user proved they receive mail at this address.' }),
    name: t.exposeString('name', { nullable: true, description: 'The name the user gave; null when they gave none.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the user signed up.' }),
  }),
});

const UserSession = builder
  .objectRef<{ token: string; session: { expiresAt: Date; user: { id: string } } }>('UserSession')
  .implement({
    description: 'A sign-in session. The token is shown only here, once.',
    fields: (t) => ({
      token: t.exposeString('token', { description: 'Send as "Authorization: Bearer <token>". Shown once.' }),
      expiresAt: t.field({ type: 'DateTime', description: 'When the token stops working, unless `signOut` revokes it first.', resolve: (s) => s.session.expiresAt }),
      user: t.prismaField({ type: 'User', description: 'The user who signed in.', resolve: (query, s, _args, ctx) => ctx.prisma.user.findUniqueOrThrow({ ...query, where: { id: s.session.user.id } }) }),
    }),
  });

builder.mutationField('signIn', (t) =>
  t.field({
    type: UserSession,
    description:
      'Signs a user in with email and password and returns a session token. Wrong credentials give UNAUTHENTICATED; repeated failures for one address or IP give TOO_MANY_ATTEMPTS, with `extensions.retryAfter` in seconds.',
    args: {
      email: t.arg.string({ required: true, description: 'The email address the user signed up with.' }),
      password: t.arg.string({ required: true, description: 'The user\'s password.' }),
    },
    resolve: (_root, { email, password }, ctx) => signIn(ctx, email, password),
  }),
);

builder.mutationField('signOut', (t) =>
  t.boolean({
    description: 'Revokes the session token this request was made with.',
    authScopes: { principal: 'user' },
    resolve: (_root, _args, ctx) => signOut(ctx),
  }),
);

builder.objectField(CoreQuery, 'me', (t) =>
  t.prismaField({
    type: 'User',
    description: 'The user the token acts for. Organization tokens act for no user and get 403.',
    authScopes: { $all: { principal: 'user', scope: 'user:read' } },
    resolve: (query, _root, _args, ctx) => currentUser(ctx, query),
  }),
);

const SignUpRequested = builder.objectRef<{ email: string }>('SignUpRequested').implement({
  description: 'A sign-up was received. The answer is the same whether or not the address already had an account: the email sent there says which.',
  fields: (t) => ({
    email: t.exposeString('email', { description: 'The address the email went to, lowercased.' }),
  }),
});

builder.mutationField('signUp', (t) =>
  t.field({
    type: SignUpRequested,
    description: `Creates a user with an email address and a password (at least ${minPasswordLength} characters) and mails a link that verifies the address; an address that already has an account gets an email saying so instead, and the answer does not tell the two apart. Needs no token. BAD_USER_INPUT names a malformed address or a weak password; TOO_MANY_REQUESTS when the address or the network asked too often.`,
    extensions: raises({ error: new TooManyEmailRequestsError(3600), when: 'The address or the client address asked too often within an hour.' }),
    args: {
      email: t.arg.string({ required: true, description: 'The address to sign up with; a link to verify it is sent there.' }),
      password: t.arg.string({ required: true, description: `The password, at least ${minPasswordLength} characters.` }),
    },
    resolve: (_root, { email, password }, ctx) => signUp(ctx, { email, password }),
  }),
);

builder.mutationField('userEmailVerify', (t) =>
  t.prismaField({
    type: 'User',
    description:
      'Verifies a user\'s email address with the token of the link mailed at sign-up. Needs no token of its own: the link is the proof. BAD_USER_INPUT with type token_invalid, token_used or token_expired when the link cannot be used.',
    args: { token: t.arg.string({ required: true, description: 'The `token` parameter of the link.' }) },
    resolve: (query, _root, { token }, ctx) => verifyEmail(ctx, token, query),
  }),
);
