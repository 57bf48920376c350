// The one Pothos builder. Plugins: scope-auth (who may resolve each field, declared on the field),
// stable paths (./stable-paths.ts), prisma (GraphQL selections become Prisma selections, so
// nested queries need no batching code) and partial data (./partial-data.ts: the fields of the
// roots are nullable, so one failure does not erase its siblings).
import SchemaBuilder from '@pothos/core';
import PrismaPlugin, { type prismaModelName } from '@pothos/plugin-prisma';
import ScopeAuthPlugin, { AuthScopeFailureType, type AuthFailure } from '@pothos/plugin-scope-auth';
import { GraphQLError, Kind } from 'graphql';
import { DateTimeResolver, JSONObjectResolver, UUIDResolver } from 'graphql-scalars';
import type { Context, Principal } from '../context.ts';
import type { Scope } from '../auth/scopes.ts';
import { getDatamodel } from '../generated/prisma/pothos-types.ts';
import type PrismaTypes from '../generated/prisma/pothos-types.ts';
import { NotPermittedError, UnauthenticatedError } from './errors.ts';
import StablePathsPlugin from './stable-paths.ts';
import PartialDataPlugin from './partial-data.ts';
import ConnectionsPlugin from './connections.ts';
import SerialMutationsPlugin from './serial-mutations.ts';

export type PrincipalKind = Exclude<Principal['kind'], 'anonymous'>;

export const builder = new SchemaBuilder<{
  Context: Context;
  PrismaTypes: PrismaTypes;
  AuthScopes: {
    /** The principal is one of these kinds. */
    principal: PrincipalKind | PrincipalKind[];
    /** The principal holds this scope, or any of these scopes. */
    scope: Scope | Scope[];
    /** A customer signed in by a session its organization issued, not one handed to a checkout's buyer. */
    fullCustomerSession: boolean;
    /** A user signed in with email and password (a session), not through a token made for a tool or a client. */
    signedInUser: boolean;
  };
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    UUID: { Input: string; Output: string };
    JSONObject: { Input: Record<string, unknown>; Output: Record<string, unknown> };
    Metadata: { Input: Record<string, string | number | boolean>; Output: Record<string, string | number | boolean> };
    /** A meter's filter: checked by the usage module, clause by clause. */
    MeterFilter: { Input: Record<string, unknown>; Output: Record<string, unknown> };
    Date: { Input: string; Output: string };
    /** A decimal amount of minor units, such as a metered price's unit amount: checked by its service. */
    UnitAmount: { Input: string; Output: string };
  };
  DefaultFieldNullability: false;
  DefaultInputFieldRequiredness: false;
}>({
  defaultFieldNullability: false,
  plugins: [ScopeAuthPlugin, StablePathsPlugin, PrismaPlugin, PartialDataPlugin, ConnectionsPlugin, SerialMutationsPlugin],
  prisma: {
    client: (ctx) => ctx.prisma,
    dmmf: getDatamodel(),
    exposeDescriptions: false,
    filterConnectionTotalCount: true,
    onUnusedQuery: null,
  },
  scopeAuth: {
    // A subscription is authorized once, when it starts, not per event.
    authorizeOnSubscribe: true,
    authScopes: ({ principal }) => ({
      principal: (kinds) => (Array.isArray(kinds) ? kinds : [kinds]).includes(principal.kind as PrincipalKind),
      scope: (scopes) => holdsAnyScope(principal, Array.isArray(scopes) ? scopes : [scopes]),
      fullCustomerSession: (required) => !required || (principal.kind === 'customer' && principal.checkoutId === null),
      signedInUser: (required) => !required || (principal.kind === 'user' && principal.credential === 'session'),
    }),
    unauthorizedError: (_parent, ctx, _info, result) => {
      if (ctx.principal.kind === 'anonymous') return new UnauthenticatedError();
      return new NotPermittedError(describeFailure(result.failure));
    },
  },
});

/** Whether the principal holds any of the scopes: the `scope` rule of every field that declares one. */
export function holdsAnyScope(principal: Principal, scopes: readonly Scope[]): boolean {
  return principal.kind !== 'anonymous' && scopes.some((scope) => principal.scopes.has(scope));
}

/** The sentence a token lacking every one of the scopes is refused with. */
export function missingScope(scopes: readonly Scope[]): string {
  return `The access token lacks the required scope: ${scopes.join(' or ')}.`;
}

/** A canonical UUID (8-4-4-4-12 hex digits, either case), lowercased; null for anything else. */
export function canonicalUuidOrNull(value: string): string | null {
  return canonicalUuid.test(value) ? value.toLowerCase() : null;
}

function describeFailure(failure: AuthFailure): string {
  switch (failure.kind) {
    case AuthScopeFailureType.AuthScope:
      if (failure.scope === 'scope') {
        return missingScope(([] as Scope[]).concat(failure.parameter as Scope | Scope[]));
      }
      if (failure.scope === 'signedInUser') {
        return 'Only a signed-in user may do this (a user session), not a personal access token or an OAuth client.';
      }
      if (failure.scope === 'fullCustomerSession') {
        return "A checkout's customer session only reads what the checkout bought; this needs a customer session the organization issued.";
      }
      return `This field is not available to this kind of token (requires: ${([] as string[]).concat(failure.parameter as string).join(' or ')}).`;
    case AuthScopeFailureType.AnyAuthScopes:
    case AuthScopeFailureType.AllAuthScopes:
      return failure.failures.map(describeFailure).join(' ');
    default:
      return 'You are not permitted to perform this action.';
  }
}

builder.addScalarType('DateTime', DateTimeResolver);
/** The builder's type parameters, for helpers that build fields outside a type's own definition. */
export type BuilderTypes = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
/**
 * The field builder of a Prisma object type, for fields shared by several variants of one model.
 * The shape names its model, as Pothos' own builders do, so shared fields can `select` relations.
 */
export type PrismaFieldBuilder<Model extends keyof PrismaTypes> = PothosSchemaTypes.PrismaObjectFieldBuilder<
  BuilderTypes,
  PrismaTypes[Model],
  PrismaTypes[Model]['Shape'] & { [prismaModelName]?: Model }
>;

// graphql-scalars' UUID lets through forms such as a trailing "}" that the database then refuses;
// only the canonical 8-4-4-4-12 form is accepted, lowercased.
const canonicalUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const strictUuid = (value: unknown) => {
  if (typeof value !== 'string' || !canonicalUuid.test(value)) throw new GraphQLError(`Value is not a valid UUID: ${String(value).slice(0, 64)}`);
  return value.toLowerCase();
};
// What the database gives back is already canonical: checked, but not copied.
const databaseUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
builder.scalarType('UUID', {
  description: UUIDResolver.description ?? undefined,
  serialize: (value) => (typeof value === 'string' && databaseUuid.test(value) ? value : strictUuid(value)),
  parseValue: strictUuid,
  parseLiteral: (node) => strictUuid(node.kind === Kind.STRING ? node.value : undefined),
});
builder.addScalarType('JSONObject', JSONObjectResolver);

// A decimal given as a string ("0.5") or a number (0.5), kept as its text so no float rounds it;
// whether it is a valid amount is the service's to say, at the field.
const unitAmountText = (value: unknown) => {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw new GraphQLError('A unit amount is a decimal number or its text, such as "0.5".');
};
builder.scalarType('UnitAmount', {
  description: 'A decimal number of minor units, fractions allowed (up to 12 decimal places), as text such as "0.5"; a number is accepted on input.',
  serialize: (value) => String(value),
  parseValue: unitAmountText,
  parseLiteral: (node) => unitAmountText(node.kind === Kind.STRING ? node.value : node.kind === Kind.FLOAT || node.kind === Kind.INT ? Number(node.value) : undefined),
});

builder.queryType({ description: 'Kassa. `core` is the organization API; `customerPortal` the signed-in customer API.' });
builder.mutationType({
  description:
    "Kassa. `core` changes an organization's data and `customerPortal` the signed-in customer's own; signIn and signOut open and end a user session. The checkout and license key fields need no token: the client secret or the key itself is the capability.",
});
// `Subscription` is the name of the billing resource; the root is named for what it is.
builder.subscriptionType({ name: 'SubscriptionRoot', description: 'Live streams, served over SSE (`Accept: text/event-stream`).' });
