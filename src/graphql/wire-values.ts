// Where the REST surface spells or checks a GraphQL enum's values otherwise than GraphQL does.
// Declared on the schema so the REST adapter and the REST reference read it, and keep no list of
// their own: a sort order is `created_at_desc` in GraphQL and `-created_at` on REST; an input
// field may refuse, with its own REST message, wire values GraphQL no longer offers at all.
import { GraphQLError, type GraphQLEnumType, type GraphQLLeafType } from 'graphql';

export interface EnumWire {
  /**
   * The type REST values are checked against, with the errors REST answered before the enum was
   * narrowed or renamed. A value it accepts stands for the enum value whose internal value it is.
   */
  type: GraphQLLeafType;
}

/** Messages, by wire value, for values an input field refuses before GraphQL sees them. */
export type RefusedWireValues = Record<string, string>;

export const wireExtension = (type: GraphQLLeafType) => ({ wire: { type } satisfies EnumWire });
export const refusedExtension = (refused: RefusedWireValues) => ({ refusedWireValues: refused });

export function enumWire(type: GraphQLEnumType): EnumWire | undefined {
  return type.extensions?.wire as EnumWire | undefined;
}

export function refusedWireValues(extensions: Record<string, unknown> | null | undefined): RefusedWireValues | undefined {
  return extensions?.refusedWireValues as RefusedWireValues | undefined;
}

/**
 * A wire value refused by the field's declared message. The refusal stood in for a rule checked
 * after every other check of the request, so REST reports it only when nothing else is wrong.
 */
export class RefusedWireValueError extends GraphQLError {}
