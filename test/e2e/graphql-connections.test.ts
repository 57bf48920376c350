// Relay connections on every list, next to page and limit: forward and backward paging by cursor,
// pageInfo and totalCount that tell the truth at both ends, and a clear 422 for arguments that
// cannot page (both first and last, a cursor Kassa did not give, page with a cursor).
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { expectStatus } from '../helpers/responses.ts';

const t = useTestServer({ organizations: { org: 'production' } });
const names = Array.from({ length: 25 }, (_, i) => `P${String(i).padStart(2, '0')}`);
beforeAll(async () => {
  for (const name of names) expectStatus(await t.org.api('POST', '/products/', { name, prices: [{ amount_type: 'free' }] }), 201);
});

const CONNECTION = `query ($first: Int, $after: String, $last: Int, $before: String, $page: Int) {
  core { products(first: $first, after: $after, last: $last, before: $before, page: $page, sorting: [name_asc]) {
    edges { cursor node { name prices { amountType } } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    totalCount
  } }
}`;

async function connection(variables: Record<string, unknown>) {
  const response = await t.org.gql(CONNECTION, variables);
  expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
  return response.body.data.core.products as {
    edges: { cursor: string; node: { name: string; prices: { amountType: string }[] } }[];
    pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
    totalCount: number;
  };
}

const named = (page: Awaited<ReturnType<typeof connection>>) => page.edges.map((edge) => edge.node.name);

describe('paging forward', () => {
  it('walks the whole list by endCursor, ten at a time, and says where each page sits', async () => {
    const first = await connection({ first: 10 });
    expect(named(first)).toEqual(names.slice(0, 10));
    expect(first.totalCount).toBe(25);
    expect(first.pageInfo).toEqual({ hasNextPage: true, hasPreviousPage: false, startCursor: first.edges[0].cursor, endCursor: first.edges[9].cursor });
    expect(first.edges[0].node.prices).toEqual([{ amountType: 'free' }]);
    const second = await connection({ first: 10, after: first.pageInfo.endCursor });
    expect(named(second)).toEqual(names.slice(10, 20));
    expect(second.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: true });
    const third = await connection({ first: 10, after: second.pageInfo.endCursor });
    expect(named(third)).toEqual(names.slice(20));
    expect(third.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const past = await connection({ first: 10, after: third.pageInfo.endCursor });
    expect(past.edges).toEqual([]);
    expect(past.pageInfo).toEqual({ hasNextPage: false, hasPreviousPage: true, startCursor: null, endCursor: null });
  });

  it('takes limit as the size of a page given only after, and first: 0 gives no edges', async () => {
    const start = await connection({ first: 1 });
    expect(named(await connection({ after: start.pageInfo.endCursor }))).toEqual(names.slice(1, 11));
    const none = await connection({ first: 0 });
    expect(none.edges).toEqual([]);
    expect(none.totalCount).toBe(25);
  });
});

describe('paging backward', () => {
  it('gives the last items without a cursor, and the items before one', async () => {
    const last = await connection({ last: 5 });
    expect(named(last)).toEqual(names.slice(20));
    expect(last.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const before = await connection({ last: 3, before: last.pageInfo.startCursor });
    expect(named(before)).toEqual(names.slice(17, 20));
    const start = await connection({ last: 10, before: (await connection({ first: 3 })).edges[2].cursor });
    expect(named(start)).toEqual(names.slice(0, 2));
    expect(start.pageInfo).toMatchObject({ hasPreviousPage: false, hasNextPage: true });
  });

  it('gives what lies between after and before', async () => {
    const all = await connection({ first: 25 });
    const between = await connection({ after: all.edges[3].cursor, before: all.edges[7].cursor });
    expect(named(between)).toEqual(names.slice(4, 7));
  });
});

describe('both ways of paging on one field', () => {
  it('answers items and edges together, with the page and the connection agreeing', async () => {
    const response = await t.org.gql(`{ core { products(limit: 3, sorting: [name_asc]) { items { name } pagination { totalCount maxPage } edges { node { name } } pageInfo { hasNextPage } totalCount } } }`);
    expect(response.body.data.core.products).toEqual({
      items: [{ name: 'P00' }, { name: 'P01' }, { name: 'P02' }],
      pagination: { totalCount: 25, maxPage: 9 },
      edges: [{ node: { name: 'P00' } }, { node: { name: 'P01' } }, { node: { name: 'P02' } }],
      pageInfo: { hasNextPage: true },
      totalCount: 25,
    });
  });
});

describe('arguments that cannot page', () => {
  const refused = async (variables: Record<string, unknown>, loc: string[]) => {
    const response = await t.org.gql(CONNECTION, variables);
    expect(response.status).toBe(422);
    expect(response.body.data).toEqual({ core: { products: null } });
    expect(response.body.errors).toHaveLength(1);
    expect(response.body.errors![0].extensions.code).toBe('BAD_USER_INPUT');
    expect(response.body.errors![0].extensions.issues).toEqual(expect.arrayContaining([expect.objectContaining({ loc })]));
    return response.body.errors![0].extensions.issues;
  };

  it('refuses first with last, and sizes out of 0 to 100, naming each', async () => {
    await refused({ first: 2, last: 2 }, ['last']);
    await refused({ first: 101 }, ['first']);
    await refused({ last: -1 }, ['last']);
  });

  it('refuses a cursor Kassa did not give: garbage, a negative or huge offset, another encoding of a real one', async () => {
    const real = (await connection({ first: 1 })).edges[0].cursor;
    for (const cursor of ['abc', Buffer.from('offset:-1').toString('base64url'), Buffer.from('offset:99999999999').toString('base64url'), `${Buffer.from('offset:0').toString('base64')}`, `${real}=`, 'x'.repeat(10_000)]) {
      await refused({ first: 1, after: cursor }, ['after']);
    }
    await refused({ last: 1, before: 'not-a-cursor' }, ['before']);
  });

  it('refuses page with a cursor argument', async () => {
    await refused({ first: 5, page: 2 }, ['page']);
  });
});
