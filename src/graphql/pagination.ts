// Every list, GraphQL and REST alike, pages two ways on the same field:
// - by number: `page` from 1 and `limit` from 1 to 100, answered in `items` with
//   `pagination { totalCount, maxPage }` (the REST envelope);
// - as a Relay connection: `first`/`after` or `last`/`before`, answered in
//   `edges { cursor node }`, `pageInfo` and `totalCount` (./connections.ts turns cursors into rows).
import type { InterfaceRef, ObjectRef } from '@pothos/core';
import { queryFromInfo } from '@pothos/plugin-prisma';
import type { GraphQLResolveInfo } from 'graphql';
import { builder } from './builder.ts';
import { cursorWindow, encodeCursor, maxLimit, type Page } from './connections.ts';

export { maxLimit, pageWindow, toPage, type Page, type PageArgs } from './connections.ts';

export const Pagination = builder.objectRef<Page<unknown>['pagination']>('Pagination').implement({
  description: 'Where a page sits in the whole list.',
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount', { description: 'How many items match the filters, over all pages.' }),
    maxPage: t.exposeInt('maxPage', { description: 'The last page that has items; 0 when there are none.' }),
  }),
});

interface PageInfoShape {
  hasNextPage: boolean;
  hasPreviousPage: boolean;
  startCursor: string | null;
  endCursor: string | null;
}

export const PageInfo = builder.objectRef<PageInfoShape>('PageInfo').implement({
  description: "Where a connection's edges sit in the whole list (Relay's PageInfo).",
  fields: (t) => ({
    hasNextPage: t.exposeBoolean('hasNextPage', { description: 'Whether items follow the last edge.' }),
    hasPreviousPage: t.exposeBoolean('hasPreviousPage', { description: 'Whether items precede the first edge.' }),
    startCursor: t.exposeString('startCursor', { nullable: true, description: "The first edge's cursor; null when there are no edges." }),
    endCursor: t.exposeString('endCursor', { nullable: true, description: "The last edge's cursor; null when there are no edges." }),
  }),
});

type ArgBuilder = Parameters<Parameters<typeof builder.queryField>[1]>[0]['arg'];

export const pageArgs = (arg: ArgBuilder) => ({
  page: arg.int({ required: true, defaultValue: 1, description: 'Page number, from 1. Not with `after` or `before`.' }),
  limit: arg.int({ required: true, defaultValue: 10, description: `Items per page, from 1 to ${maxLimit}; also the size of a connection page when neither \`first\` nor \`last\` is given.` }),
  first: arg.int({ description: `Connection paging: the first items after \`after\` (or from the start), from 0 to ${maxLimit}. Not with \`last\`.` }),
  after: arg.string({ description: 'Connection paging: a cursor; only items after it.' }),
  last: arg.int({ description: `Connection paging: the last items before \`before\` (or at the end), from 0 to ${maxLimit}. Not with \`first\`.` }),
  before: arg.string({ description: 'Connection paging: a cursor; only items before it.' }),
});

/**
 * The Prisma selection for a list's rows, from whichever way the request reads them: `items`,
 * `edges { node }` or both.
 */
export function pageQuery(context: object, info: GraphQLResolveInfo) {
  return queryFromInfo({ context, info, paths: [['items'], ['edges', 'node']] });
}

interface Edge<T> {
  cursor: string;
  node: T;
}

type Item<T> = ObjectRef<any, T> | InterfaceRef<any, T> | string;

/** One `<Name>Edge` type per item type, shared by its list and its connections. */
const edgeTypes = new Map<string, ObjectRef<any, Edge<unknown>>>();

function edgeType<T>(name: string, item: Item<T>) {
  let ref = edgeTypes.get(name);
  if (!ref) {
    ref = builder.objectRef<Edge<unknown>>(`${name}Edge`).implement({
      description: `One ${name} of a connection, with its cursor.`,
      fields: (t) => ({
        cursor: t.exposeString('cursor', { description: 'Where this item sits: pass it as `after` or `before` to page from here.' }),
        // Pothos cannot relate the generic item shape to its resolver result: the edge holds exactly an item.
        node: t.field({ type: item as never, description: `The ${name}.`, resolve: (edge) => edge.node as never }),
      }),
    });
    edgeTypes.set(name, ref);
  }
  return ref;
}

const edgesOf = (page: Page<unknown>) => page.items.map((node, i) => ({ cursor: encodeCursor(page.offset + i), node }));

const pageInfoOf = (page: Page<unknown>) => ({
  hasPreviousPage: page.offset > 0,
  hasNextPage: page.offset + page.items.length < page.pagination.totalCount,
  startCursor: page.items.length ? encodeCursor(page.offset) : null,
  endCursor: page.items.length ? encodeCursor(page.offset + page.items.length - 1) : null,
});

export function listType<T>(name: string, item: ObjectRef<any, T> | InterfaceRef<any, T>) {
  const EdgeType = edgeType(name, item);
  return builder.objectRef<Page<T>>(`${name}List`).implement({
    description: `A page of ${name} items: by number (items, pagination) or as a Relay connection (edges, pageInfo, totalCount).`,
    fields: (t) => ({
      items: t.field({ type: [item], description: 'The items of this page, in the requested order; empty past the last page.', resolve: (page) => page.items }),
      pagination: t.field({ type: Pagination, description: 'The total count and the last page.', resolve: (page) => page.pagination }),
      edges: t.field({
        type: [EdgeType],
        description: 'The items of this page with their cursors, in the requested order.',
        resolve: (page) => edgesOf(page as Page<unknown>),
      }),
      pageInfo: t.field({
        type: PageInfo,
        description: 'Whether items precede or follow this page, and its first and last cursors.',
        resolve: (page) => pageInfoOf(page as Page<unknown>),
      }),
      totalCount: t.int({ description: 'How many items match the filters, over all pages.', resolve: (page) => page.pagination.totalCount }),
    }),
  });
}

/** One `<Name>Connection` type per item type: a related list, paged forward by cursor. */
const connectionTypes = new Map<string, ObjectRef<any, Page<unknown>>>();

export function connectionType<T>(name: string, item: Item<T>) {
  let ref = connectionTypes.get(name);
  if (!ref) {
    const EdgeType = edgeType(name, item);
    ref = builder.objectRef<Page<unknown>>(`${name}Connection`).implement({
      description: `${name} items related to a resource, as a Relay connection paged forward with first and after.`,
      fields: (t) => ({
        edges: t.field({ type: [EdgeType], description: 'The items of this page with their cursors, in order.', resolve: edgesOf }),
        pageInfo: t.field({ type: PageInfo, description: 'Whether items precede or follow this page, and its first and last cursors.', resolve: pageInfoOf }),
        totalCount: t.int({ description: 'How many related items there are, over all pages.', resolve: (page) => page.pagination.totalCount }),
      }),
    });
    connectionTypes.set(name, ref);
  }
  return ref;
}

export const relationArgs = (arg: ArgBuilder) => ({
  first: arg.int({ required: true, defaultValue: 10, description: `How many items, from 0 to ${maxLimit}.` }),
  after: arg.string({ description: 'A cursor from this connection; only items after it.' }),
});

interface RelationArgs {
  first: number;
  after?: string | null;
}

/** A related connection's arguments as a list's: forward only, `first` being the page size. */
const asPageArgs = (args: RelationArgs) => ({ page: 1, limit: args.first, first: args.first, after: args.after });

/**
 * The rows of a related page, for the parent's query: read with the parent, in the same
 * statement, for every parent of a page at once. Arguments out of range read nothing here and
 * are refused by `relationPage`, at the field.
 */
export function relationWindow(args: RelationArgs): { skip: number; take: number } {
  try {
    return cursorWindow(asPageArgs(args), null);
  } catch {
    return { skip: 0, take: 0 };
  }
}

/** The page of related rows the parent's query read; throws a 422 for arguments out of range. */
export function relationPage<T>(items: T[], total: number, args: RelationArgs): Page<T> {
  const { skip } = cursorWindow(asPageArgs(args), null);
  return { items, pagination: { totalCount: total, maxPage: args.first > 0 ? Math.ceil(total / args.first) : 0 }, offset: skip };
}

/**
 * A related page's Prisma query as `nestedSelection` planned it, made valid when nothing beneath
 * the connection reads a column (only `totalCount` asked): Prisma refuses an empty `select`.
 */
export function relationQuery<Q extends object>(query: Q): Q {
  const { select } = query as { select?: object };
  return select && Object.keys(select).length === 0 ? { ...query, select: { id: true } } : query;
}
