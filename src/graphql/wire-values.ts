// Where the REST surface spells or checks a GraphQL enum's values otherwise than GraphQL does.
// Declared on the schema so the REST adapter and the REST reference read it, and keep no list of
// their own: a sort order is `created_at_desc` in GraphQL and `-created_at` on REST; an input
// field may take from REST wire values GraphQL no longer offers at all, which its service refuses.
import { GraphQLError, type GraphQLEnumType, type GraphQLLeafType } from 'graphql';
import type { Context } from '../context.ts';

export interface EnumWire {
  /**
   * The type REST values are checked against, with the errors REST answered before the enum was
   * narrowed or renamed. A value it accepts stands for the enum value whose internal value it is.
   */
  type: GraphQLLeafType;
}

/**
 * Wire values an input field takes from REST though GraphQL does not offer them, because its
 * service always refuses them. The operation runs with `standIn` in their place, and the service
 * asks `wireOnlyValue` for the value sent, so it refuses it among the request's other faults, in
 * the order it always has (after a 404 or 403, with every other issue of the body).
 */
export interface WireOnlyValues {
  values: readonly string[];
  standIn: string;
}

export const wireExtension = (type: GraphQLLeafType) => ({ wire: { type } satisfies EnumWire });
export const wireOnlyExtension = (values: readonly string[], standIn: string) => ({ wireOnlyValues: { values, standIn } satisfies WireOnlyValues });

export function enumWire(type: GraphQLEnumType): EnumWire | undefined {
  return type.extensions?.wire as EnumWire | undefined;
}

export function wireOnlyValues(extensions: Record<string, unknown> | null | undefined): WireOnlyValues | undefined {
  return extensions?.wireOnlyValues as WireOnlyValues | undefined;
}

/** Met while reading a REST value: `value` is wire-only, and `standIn` goes to GraphQL instead. */
export class WireOnlyValueError extends GraphQLError {
  constructor(
    readonly value: string,
    readonly standIn: string,
  ) {
    super(`${value} is a wire-only value`);
  }
}

/** The key of an input path, as the operation's argument and its fields name it: `input.type`. */
export const inputPathKey = (path: readonly (string | number)[]) => path.join('.');

/**
 * The wire-only value sent at `path` (e.g. `['input', 'type']`), which the operation received as
 * its stand-in; undefined when the value there is the one sent. Only REST requests carry any.
 */
export function wireOnlyValue(ctx: Context, path: readonly (string | number)[]): string | undefined {
  return ctx.wireOnlyValues?.get(inputPathKey(path));
}
