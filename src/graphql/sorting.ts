// Sorting: GraphQL takes a list of enum values, `<property>_asc` or `<property>_desc`, earlier
// entries first. Each value stands for the REST spelling of the same order (the value the
// services receive): the property name, `-` before it for descending.
import { GraphQLError, GraphQLScalarType } from 'graphql';
import { builder } from './builder.ts';
import { wireExtension } from './wire-values.ts';

export type Direction = 'asc' | 'desc';

/**
 * The sort enum `name` over `properties`, each described by what it orders by ("when the product
 * was created"). The REST surface keeps its spelling (`-created_at`) and its error for a value
 * it does not know, declared here beside the enum as the scalar REST checks values against.
 */
export function sortOrderEnum<P extends string>(name: string, subject: string, properties: Record<P, string>, restName: string) {
  const entries = Object.entries(properties) as [P, string][];
  const values = Object.fromEntries(
    entries.flatMap(([property, what]) => [
      [`${property}_asc`, { value: property as string, description: `By ${what}, ascending (REST: \`${property}\`).` }],
      [`${property}_desc`, { value: `-${property}`, description: `By ${what}, descending (REST: \`-${property}\`).` }],
    ]),
  );
  const allowed = entries.flatMap(([property]) => [property, `-${property}`]);
  return builder.enumType(name, {
    description: `An order of ${subject}: a property and a direction. A list of them sorts by the first, then the next for ties.`,
    values,
    extensions: wireExtension(restSortingScalar(restName, allowed)),
  });
}

/** Sorting as the REST API spells and checks it: a property name, `-` before it for descending. */
function restSortingScalar(name: string, allowed: string[]): GraphQLScalarType {
  const parse = (value: unknown) => {
    if (typeof value === 'string' && allowed.includes(value)) return value;
    throw new GraphQLError(`Input should be one of ${allowed.map((a) => `'${a}'`).join(', ')}`);
  };
  return new GraphQLScalarType({
    name,
    description: `A property to sort by, prefixed with "-" for descending: ${allowed.join(', ')}.`,
    // The accepted values, for documents that describe the API (the REST reference lists them).
    extensions: { values: allowed },
    serialize: (value: unknown) => value as string,
    parseValue: parse,
  });
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
