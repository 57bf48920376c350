// The two API surfaces, checked on the schema itself: which principal reaches which root, and that
// every Core field declares the scope it needs.
import { type GraphQLObjectType, graphql } from 'graphql';
import { describe, expect, it } from 'vitest';
import type { Context, Principal } from '../../src/context.ts';
import { allScopes } from '../../src/auth/scopes.ts';
import { schema } from '../../src/graphql/schema.ts';

const principals: Record<string, Principal> = {
  anonymous: { kind: 'anonymous' },
  organization: { kind: 'organization', organizationId: crypto.randomUUID(), credential: 'oat', tokenId: crypto.randomUUID(), clientId: null, userId: null, scopes: new Set(allScopes) },
  customer: { kind: 'customer', customerId: crypto.randomUUID(), organizationId: crypto.randomUUID(), sessionId: crypto.randomUUID(), checkoutId: null, scopes: new Set() },
};

function run(source: string, principal: Principal) {
  // No database: a refused root never reaches a resolver that would need one.
  const contextValue = { principal, requestId: 'test', now: () => new Date() } as unknown as Context;
  return graphql({ schema, source, contextValue });
}

const rootFields = (typeName: string) => Object.values((schema.getType(typeName) as GraphQLObjectType).getFields());

describe('the Core root', () => {
  for (const operation of ['query', 'mutation'] as const) {
    it(`refuses a customer token on ${operation} core before any field runs`, async () => {
      const result = await run(`${operation} { core { __typename } }`, principals.customer);
      expect(result.data?.core ?? null).toBeNull();
      expect(result.errors?.[0].extensions?.code).toBe('NOT_PERMITTED');
    });

    it(`asks an anonymous caller to authenticate on ${operation} core`, async () => {
      const result = await run(`${operation} { core { __typename } }`, principals.anonymous);
      expect(result.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
    });
  }

  it('declares a scope rule on every field', () => {
    const fields = [...rootFields('CoreQuery'), ...rootFields('CoreMutation'), ...rootFields('SubscriptionRoot')];
    expect(fields.length).toBeGreaterThan(0);
    const unguarded = fields.filter((field) => {
      const authScopes = (field.extensions?.pothosOptions as { authScopes?: unknown } | undefined)?.authScopes;
      return !authScopes || !JSON.stringify(authScopes).includes('"scope"');
    });
    expect(unguarded.map((f) => f.name)).toEqual([]);
  });
});

describe('the CustomerPortal root', () => {
  it('refuses an organization token', async () => {
    const result = await run('{ customerPortal { __typename } }', principals.organization);
    expect(result.data?.customerPortal ?? null).toBeNull();
    expect(result.errors?.[0].extensions?.code).toBe('NOT_PERMITTED');
  });

  it('asks an anonymous caller to authenticate', async () => {
    const result = await run('{ customerPortal { __typename } }', principals.anonymous);
    expect(result.errors?.[0].extensions?.code).toBe('UNAUTHENTICATED');
  });

  it('lets a customer principal in', async () => {
    const result = await run('{ customerPortal { __typename } }', principals.customer);
    expect(result.errors).toBeUndefined();
    expect(result.data?.customerPortal).toEqual({ __typename: 'CustomerPortalQuery' });
  });

  it('declares which principal reaches every field', () => {
    const unguarded = rootFields('CustomerPortalQuery').filter((field) => !(field.extensions?.pothosOptions as { authScopes?: unknown })?.authScopes);
    expect(unguarded.map((f) => f.name)).toEqual([]);
  });
});
