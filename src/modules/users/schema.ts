import { builder } from '../../graphql/builder.ts';
import { CoreQuery } from '../../graphql/roots.ts';
import { currentUser, signIn, signOut } from './service.ts';

export const User = builder.prismaObject('User', {
  description: 'A person who signs in and belongs to organizations.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    email: t.exposeString('email'),
    emailVerified: t.exposeBoolean('emailVerified', { description: 'Whether the user proved they receive mail at this address.' }),
    name: t.exposeString('name', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const UserSession = builder
  .objectRef<{ token: string; session: { expiresAt: Date; user: { id: string } } }>('UserSession')
  .implement({
    description: 'A sign-in session. The token is shown only here, once.',
    fields: (t) => ({
      token: t.exposeString('token', { description: 'Send as "Authorization: Bearer <token>". Shown once.' }),
      expiresAt: t.field({ type: 'DateTime', resolve: (s) => s.session.expiresAt }),
      user: t.prismaField({ type: 'User', resolve: (query, s, _args, ctx) => ctx.prisma.user.findUniqueOrThrow({ ...query, where: { id: s.session.user.id } }) }),
    }),
  });

builder.mutationField('signIn', (t) =>
  t.field({
    type: UserSession,
    description: 'Signs a user in with email and password and returns a session token.',
    args: { email: t.arg.string({ required: true }), password: t.arg.string({ required: true }) },
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
