// How REST carries enums it spells otherwise than GraphQL: an enum value's wire string is its
// internal value, written by toWire wherever a field of the enum is selected (alone, in lists, in
// nested objects and fragments), and wire-only values are read back by input path.
import { GraphQLEnumType, GraphQLList, GraphQLNonNull, GraphQLObjectType, GraphQLSchema, GraphQLString, parse, type OperationDefinitionNode } from 'graphql';
import { describe, expect, it } from 'vitest';
import type { Context } from '../../src/context.ts';
import { enumValueName, wireNamedValues, wireOnlyExtension, wireOnlyValue, wireValues } from '../../src/graphql/wire-values.ts';
import { toWire, wireShape } from '../../src/wire/shape.ts';

const Kind = new GraphQLEnumType({ name: 'Kind', values: wireNamedValues({ 'order.paid': 'Paid', 'products:read': 'Read' }, 'on the wire') });
const Plain = new GraphQLEnumType({ name: 'Plain', values: { month: {}, year: {} } });
const Inner = new GraphQLObjectType({ name: 'Inner', fields: { kind: { type: Kind } } });
const Query = new GraphQLObjectType({
  name: 'Query',
  fields: {
    kind: { type: Kind },
    kinds: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Kind))) },
    grid: { type: new GraphQLList(new GraphQLList(Kind)) },
    plain: { type: Plain },
    text: { type: GraphQLString },
    inner: { type: new GraphQLList(Inner) },
  },
});
const schema = new GraphQLSchema({ query: Query });

function shapeOf(document: string) {
  const parsed = parse(document);
  const operation = parsed.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition')!;
  const fragments = Object.fromEntries(parsed.definitions.flatMap((d) => (d.kind === 'FragmentDefinition' ? [[d.name.value, d]] : [])));
  return wireShape(schema, Query, operation.selectionSet, fragments);
}

describe('enum values on the wire', () => {
  it('names a wire string for GraphQL and keeps the string as the internal value, described', () => {
    expect(enumValueName('customer.state_changed')).toBe('customer_state_changed');
    expect(Kind.getValues().map((v) => [v.name, v.value, v.description])).toEqual([
      ['order_paid', 'order.paid', 'Paid (`order.paid` on the wire).'],
      ['products_read', 'products:read', 'Read (`products:read` on the wire).'],
    ]);
  });

  it('maps only enums whose values are renamed', () => {
    expect(wireValues(Kind)).toEqual(new Map([['order_paid', 'order.paid'], ['products_read', 'products:read']]));
    expect(wireValues(Plain)).toBeNull();
  });

  it('writes each value as its wire string, in lists, nested lists, objects and fragments, leaving the rest alone', () => {
    const shape = shapeOf('{ kind kinds grid plain text ...F inner { kind } } fragment F on Query { other: kind }');
    const result = {
      kind: 'order_paid',
      kinds: ['products_read', 'order_paid'],
      grid: [['order_paid', null], null],
      plain: 'month',
      text: 'order_paid',
      other: null,
      inner: [{ kind: 'products_read' }, { kind: null }],
    };
    expect(toWire(result, shape)).toEqual({
      kind: 'order.paid',
      kinds: ['products:read', 'order.paid'],
      grid: [['order.paid', null], null],
      plain: 'month',
      text: 'order_paid',
      other: null,
      inner: [{ kind: 'products:read' }, { kind: null }],
    });
  });
});

describe('wire-only values', () => {
  it('takes a list of values or a test for them', () => {
    expect(wireOnlyExtension(['day'], 'month').wireOnlyValues.includes('day')).toBe(true);
    expect(wireOnlyExtension(['day'], 'month').wireOnlyValues.includes('week')).toBe(false);
    const unknown = wireOnlyExtension((value) => !['order.paid'].includes(value), 'order.paid').wireOnlyValues;
    expect([unknown.includes('order.shipped'), unknown.includes('order.paid')]).toEqual([true, false]);
  });

  it('reads the value sent by input path, one value sent for a list standing at index 0', () => {
    const ctx = { wireOnlyValues: new Map([['input.events.2', 'nope'], ['input.types', 'x']]) } as unknown as Context;
    expect(wireOnlyValue(ctx, ['input', 'events', 2])).toBe('nope');
    expect(wireOnlyValue(ctx, ['input', 'events', 0])).toBeUndefined();
    expect(wireOnlyValue(ctx, ['input', 'types', 0])).toBe('x');
    expect(wireOnlyValue(ctx, ['input', 'types', 1])).toBeUndefined();
    expect(wireOnlyValue({} as Context, ['input', 'types', 0])).toBeUndefined();
  });
});
