import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { printContract } from '../../src/graphql/schema.ts';
import { describeUndeclared, readDeclarations, undeclaredBreakingChanges } from '../../src/graphql/breaking-changes.ts';

const root = new URL('../../', import.meta.url);

describe('schema.graphql', () => {
  it('has no breaking change from the code that schema-changes.json does not declare', async () => {
    const committed = await readFile(new URL('schema.graphql', root), 'utf8');
    const undeclared = await undeclaredBreakingChanges(committed, printContract(), await readDeclarations(root));
    if (undeclared.length > 0) expect.fail(describeUndeclared(undeclared));
  });

  it('is exactly the schema the code builds (run `npm run schema:write` after a schema change)', async () => {
    const committed = await readFile(new URL('schema.graphql', root), 'utf8');
    expect(printContract()).toBe(committed);
  });
});

describe('the breaking-change check', () => {
  const before = /* GraphQL */ `
    type Query { order(id: ID!): Order }
    type Order { id: ID! netAmount: Int! currency: String! }
  `;
  const withoutCurrency = /* GraphQL */ `
    type Query { order(id: ID!): Order }
    type Order { id: ID! netAmount: Int! }
  `;

  it('refuses a removed field that is not declared, naming it and how to declare it', async () => {
    const undeclared = await undeclaredBreakingChanges(before, withoutCurrency, []);
    expect(undeclared.map((c) => [c.type, c.path])).toEqual([['FIELD_REMOVED', 'Order.currency']]);
    const message = describeUndeclared(undeclared);
    expect(message).toContain('FIELD_REMOVED at Order.currency');
    expect(message).toContain('schema-changes.json');
    expect(message).toContain('"path": "Order.currency"');
  });

  it('accepts a removed field declared with its path and type', async () => {
    const declared = [{ path: 'Order.currency', type: 'FIELD_REMOVED', reason: 'Every order is in USD.' }];
    expect(await undeclaredBreakingChanges(before, withoutCurrency, declared)).toEqual([]);
  });

  it('does not accept a declaration of another change type at the same path', async () => {
    const declared = [{ path: 'Order.currency', type: 'FIELD_TYPE_CHANGED', reason: 'Not this change.' }];
    expect(await undeclaredBreakingChanges(before, withoutCurrency, declared)).toHaveLength(1);
  });

  it('does not count an added optional field or argument as breaking', async () => {
    const extended = /* GraphQL */ `
      type Query { order(id: ID!, environment: String): Order }
      type Order { id: ID! netAmount: Int! currency: String! "When it was paid." paidAt: String }
    `;
    expect(await undeclaredBreakingChanges(before, extended, [])).toEqual([]);
  });

  it('counts an added required argument as breaking', async () => {
    const required = /* GraphQL */ `
      type Query { order(id: ID!, environment: String!): Order }
      type Order { id: ID! netAmount: Int! currency: String! }
    `;
    const undeclared = await undeclaredBreakingChanges(before, required, []);
    expect(undeclared.map((c) => [c.type, c.path])).toEqual([['FIELD_ARGUMENT_ADDED', 'Query.order.environment']]);
  });
});
