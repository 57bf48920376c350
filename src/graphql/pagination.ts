// Every list, GraphQL and REST alike: `page` from 1, `limit` from 1 to 100, and an envelope of
// `items` with `pagination { totalCount, maxPage }`.
import type { InterfaceRef, ObjectRef } from '@pothos/core';
import { builder } from './builder.ts';
import { ValidationIssues } from './errors.ts';

export const maxLimit = 100;

export interface PageArgs {
  page: number;
  limit: number;
}

export interface Page<T> {
  items: T[];
  pagination: { totalCount: number; maxPage: number };
}

export const Pagination = builder.objectRef<Page<unknown>['pagination']>('Pagination').implement({
  description: 'Where a page sits in the whole list.',
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount', { description: 'How many items match the filters, over all pages.' }),
    maxPage: t.exposeInt('maxPage', { description: 'The last page that has items; 0 when there are none.' }),
  }),
});

type ArgBuilder = Parameters<Parameters<typeof builder.queryField>[1]>[0]['arg'];

export const pageArgs = (arg: ArgBuilder) => ({
  page: arg.int({ required: true, defaultValue: 1, description: 'Page number, from 1.' }),
  limit: arg.int({ required: true, defaultValue: 10, description: `Items per page, from 1 to ${maxLimit}.` }),
});

/** Throws a 422 naming the parameter when a page or limit is out of range; returns Prisma's skip/take. */
export function pageWindow({ page, limit }: PageArgs): { skip: number; take: number } {
  const issues = new ValidationIssues();
  if (page < 1) issues.add(['page'], 'Input should be greater than or equal to 1', 'greater_than_equal');
  if (limit < 1) issues.add(['limit'], 'Input should be greater than 0', 'greater_than');
  if (limit > maxLimit) issues.add(['limit'], `Input should be less than or equal to ${maxLimit}`, 'less_than_equal');
  issues.throwIfAny();
  return { skip: (page - 1) * limit, take: limit };
}

export function toPage<T>(items: T[], totalCount: number, { limit }: PageArgs): Page<T> {
  return { items, pagination: { totalCount, maxPage: Math.ceil(totalCount / limit) } };
}

export function listType<T>(name: string, item: ObjectRef<any, T> | InterfaceRef<any, T>) {
  return builder.objectRef<Page<T>>(`${name}List`).implement({
    description: `A page of ${name} items.`,
    fields: (t) => ({
      items: t.field({ type: [item], description: 'The items of this page, in the requested order; empty past the last page.', resolve: (page) => page.items }),
      pagination: t.field({ type: Pagination, description: 'The total count and the last page.', resolve: (page) => page.pagination }),
    }),
  });
}
