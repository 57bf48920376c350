// Where the REST surface spells or checks a GraphQL enum's values otherwise than GraphQL does.
// Declared on the schema so the REST adapter and the REST reference read it, and keep no list of
// their own: a sort order is `created_at_desc` in GraphQL and `-created_at` on REST; an event type
// is `checkout_created` in GraphQL and `checkout.created` on REST and in webhooks; an input field
// may take from REST wire values GraphQL no longer offers at all, which its service refuses.
//
// The wire spelling of an enum value is its internal value: what the services receive and store,
// what REST and webhook payloads carry (`wireValues`), and what REST input stands for.
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
  /** Whether a string REST sent is one of them. */
  includes: (value: string) => boolean;
  standIn: string;
}

export const wireExtension = (type: GraphQLLeafType) => ({ wire: { type } satisfies EnumWire });
/**
 * `values` are the wire-only values, or a test for them: `(value) => !known.includes(value)` lets
 * REST send any string, as it did when the field was a String, for the service to refuse.
 */
export const wireOnlyExtension = (values: readonly string[] | ((value: string) => boolean), standIn: string) => ({
  wireOnlyValues: { includes: typeof values === 'function' ? values : (value: string) => values.includes(value), standIn } satisfies WireOnlyValues,
});

/** A GraphQL name for a wire string that is none: `.` and `:` become `_` (`checkout_created`, `products_read`). */
export const enumValueName = (wire: string) => wire.replace(/[.:]/g, '_');

/**
 * Enum values for wire strings that are not GraphQL names (event types, scopes), each described:
 * named by enumValueName, with the wire string as the internal value, which the services receive.
 * `where` says where else the string is seen, closing each description: "on REST and in webhooks".
 */
export function wireNamedValues<W extends string>(descriptions: Record<W, string>, where: string): Record<string, { value: W; description: string }> {
  return Object.fromEntries(
    (Object.entries(descriptions) as [W, string][]).map(([wire, description]) => [enumValueName(wire), { value: wire, description: `${description} (\`${wire}\` ${where}).` }]),
  );
}

const wireValueMaps = new WeakMap<GraphQLEnumType, ReadonlyMap<string, unknown> | null>();

/**
 * The enum's values as REST and webhook payloads carry them, by the names GraphQL answers with;
 * null when every value is carried as its name. Built once per enum.
 */
export function wireValues(type: GraphQLEnumType): ReadonlyMap<string, unknown> | null {
  let values = wireValueMaps.get(type);
  if (values === undefined) {
    const renamed = type.getValues().filter((v) => v.value !== v.name);
    values = renamed.length ? new Map(renamed.map((v) => [v.name, v.value])) : null;
    wireValueMaps.set(type, values);
  }
  return values;
}

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
  const values = ctx.wireOnlyValues;
  if (!values) return undefined;
  // One value sent for a list stands for a list of it: its index 0 is the path of the list.
  return values.get(inputPathKey(path)) ?? (path.at(-1) === 0 ? values.get(inputPathKey(path.slice(0, -1))) : undefined);
}
