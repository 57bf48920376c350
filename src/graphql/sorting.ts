// Sorting as the REST API spells it: a list of property names, `-` before one for descending.
import { GraphQLError, Kind, type ValueNode } from 'graphql';

export type Direction = 'asc' | 'desc';

export function sortingScalarConfig(properties: readonly string[]) {
  const allowed = properties.flatMap((p) => [p, `-${p}`]);
  const parse = (value: unknown) => {
    if (typeof value === 'string' && allowed.includes(value)) return value;
    throw new GraphQLError(`Input should be one of ${allowed.map((a) => `'${a}'`).join(', ')}`);
  };
  return {
    description: `A property to sort by, prefixed with "-" for descending: ${allowed.join(', ')}.`,
    // The accepted values, for documents that describe the API (the REST reference lists them).
    extensions: { values: allowed },
    serialize: (value: unknown) => value as string,
    parseValue: parse,
    parseLiteral: (node: ValueNode) => parse(node.kind === Kind.STRING || node.kind === Kind.ENUM ? node.value : undefined),
  };
}

/** Prisma `orderBy` for a sorting list, with `id` last so pages never overlap. */
export function sortingOrderBy<P extends string>(sorting: string[], toOrder: (property: P, direction: Direction) => object): object[] {
  const orders = sorting.map((s) => (s.startsWith('-') ? toOrder(s.slice(1) as P, 'desc') : toOrder(s as P, 'asc')));
  return [...orders, { id: 'asc' }];
}

/** The text as a literal inside a LIKE pattern (Prisma's contains): `%` and `_` match only themselves. */
export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, '\\$&');
}
