// Relay connections over the lists' offset paging. Cursors are opaque to clients; inside, each
// names an item's offset in the list as it was ordered, so a cursor stays meaningful while the
// list does not change before it. A list field whose arguments include the connection ones
// (`first`, `after`, `last`, `before`) has its resolver wrapped by ConnectionsPlugin: it works out
// the rows to read (for `last` without `before` it first reads the list's count) and hands them
// to the list's service as `args.window`, which `pageWindow` returns.
import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import type { GraphQLFieldResolver } from 'graphql';
import { ValidationIssues } from './errors.ts';

export const maxLimit = 100;

export interface PageArgs {
  page: number;
  limit: number;
  first?: number | null;
  after?: string | null;
  last?: number | null;
  before?: string | null;
  /** The rows to read, worked out from the cursors before the list is read (ConnectionsPlugin). */
  window?: Window;
}

export interface Window {
  skip: number;
  take: number;
}

export interface Page<T> {
  items: T[];
  pagination: { totalCount: number; maxPage: number };
  /** Where `items` start in the whole list: the offset of the first one. */
  offset: number;
}

const cursorPattern = /^offset:(0|[1-9][0-9]{0,8})$/;

export function encodeCursor(offset: number): string {
  return Buffer.from(`offset:${offset}`).toString('base64url');
}

/** The offset a cursor names, or null (with an issue at `name`) when it is not one Kassa gave. */
function decodeCursor(issues: ValidationIssues, name: string, cursor: string | null | undefined): number | null {
  if (cursor == null) return null;
  const match = cursor.length <= 32 ? cursorPattern.exec(Buffer.from(cursor, 'base64url').toString('utf8')) : null;
  if (!match || Buffer.from(match[0]).toString('base64url') !== cursor) {
    issues.add([name], 'Not a cursor of this list: pass a cursor from edges[].cursor or pageInfo.', 'value_error');
    return null;
  }
  return Number(match[1]);
}

/** Whether the arguments page as a connection rather than by number. */
export function pagesByCursor(args: PageArgs): boolean {
  return args.first != null || args.after != null || args.last != null || args.before != null;
}

/**
 * The rows a connection's arguments ask for, when the list holds `total` items (needed only for
 * `last` without `before`: otherwise pass null). Throws a 422 naming each bad argument.
 */
export function cursorWindow(args: PageArgs, total: number | null): Window {
  const issues = new ValidationIssues();
  for (const name of ['first', 'last'] as const) {
    const value = args[name];
    if (value == null) continue;
    if (value < 0) issues.add([name], 'Input should be greater than or equal to 0', 'greater_than_equal');
    if (value > maxLimit) issues.add([name], `Input should be less than or equal to ${maxLimit}`, 'less_than_equal');
  }
  if (args.first != null && args.last != null) issues.add(['last'], 'Use first or last, not both.', 'value_error');
  if (args.page !== 1) issues.add(['page'], 'Page by number or by cursor, not both: leave page out with first, after, last or before.', 'value_error');
  const after = decodeCursor(issues, 'after', args.after);
  const before = decodeCursor(issues, 'before', args.before);
  issues.throwIfAny();
  const start = after === null ? 0 : after + 1;
  const end = before ?? total ?? Number.POSITIVE_INFINITY;
  if (end <= start) return { skip: start, take: 0 };
  if (args.last != null) {
    const skip = Math.max(start, end - args.last);
    return { skip, take: Math.max(0, end - skip) };
  }
  const size = args.first ?? args.limit;
  return { skip: start, take: Math.max(0, Math.min(size, end - start)) };
}

/** Throws a 422 naming the parameter when a page or limit is out of range; returns Prisma's skip/take. */
export function pageWindow(args: PageArgs): Window {
  const { page, limit } = args;
  const issues = new ValidationIssues();
  if (limit < 1) issues.add(['limit'], 'Input should be greater than 0', 'greater_than');
  if (limit > maxLimit) issues.add(['limit'], `Input should be less than or equal to ${maxLimit}`, 'less_than_equal');
  if (pagesByCursor(args)) {
    issues.throwIfAny();
    return args.window ?? cursorWindow(args, null);
  }
  if (page < 1) issues.add(['page'], 'Input should be greater than or equal to 1', 'greater_than_equal');
  issues.throwIfAny();
  return { skip: (page - 1) * limit, take: limit };
}

export function toPage<T>(items: T[], totalCount: number, args: PageArgs): Page<T> {
  const offset = pagesByCursor(args) ? pageWindow(args).skip : (args.page - 1) * args.limit;
  return { items, pagination: { totalCount, maxPage: Math.ceil(totalCount / args.limit) }, offset };
}

const connectionArgs = ['first', 'after', 'last', 'before'];

export class ConnectionsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(resolver: GraphQLFieldResolver<unknown, Types['Context'], object>, fieldConfig: PothosOutputFieldConfig<Types>) {
    if (!connectionArgs.every((name) => name in fieldConfig.args)) return resolver;
    return async (parent: unknown, args: object, context: Types['Context'], info: Parameters<GraphQLFieldResolver<unknown, unknown>>[3]) => {
      const paging = args as PageArgs;
      if (!pagesByCursor(paging)) return resolver(parent, args, context, info);
      // Refuses bad arguments before anything is read.
      cursorWindow(paging, 0);
      let total: number | null = null;
      if (paging.last != null && paging.before == null) {
        const counted = (await resolver(parent, { ...args, window: { skip: 0, take: 0 } }, context, info)) as Page<unknown>;
        total = counted.pagination.totalCount;
      }
      return resolver(parent, { ...args, window: cursorWindow(paging, total) }, context, info);
    };
  }
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      connections: ConnectionsPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin('connections', ConnectionsPlugin);
export default 'connections' as const;
