// Discounts through Core GraphQL: the list, one discount, the discount as a Node, and the three
// mutations; bad input answered BAD_USER_INPUT at each field with nothing written, and another
// organization's discount answered as one that does not exist.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { expectGraphQLError, graphqlData } from '../helpers/responses.ts';
import { fixedProduct } from '../helpers/purchases.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { org: 'sandbox', other: 'sandbox' } });

const prisma = () => t.server.kassa.environments.sandbox.environment.prisma;

const fields = `__typename id name code type duration maxRedemptions redemptionsCount organizationId metadata startsAt endsAt products { id }
  ... on DiscountFixedOnceForeverDuration { amount currency }
  ... on DiscountFixedRepeatDuration { amount currency durationInMonths }
  ... on DiscountPercentageOnceForeverDuration { basisPoints }
  ... on DiscountPercentageRepeatDuration { basisPoints durationInMonths }`;

const createMutation = `mutation ($input: DiscountCreateInput!) { core { discountCreate(input: $input) { ${fields} } } }`;
const updateMutation = `mutation ($id: UUID!, $input: DiscountUpdateInput!) { core { discountUpdate(id: $id, input: $input) { ${fields} } } }`;
const deleteMutation = `mutation ($id: UUID!) { core { discountDelete(id: $id) } }`;
const oneQuery = `query ($id: UUID!) { core { discount(id: $id) { ${fields} } } }`;

describe('discounts through Core GraphQL', () => {
  it('creates, lists, reads (also as a node), updates and deletes a discount', async () => {
    const product = await fixedProduct(t.org, 'Graph book', 3000);
    const code = `GQL${randomUUID().slice(0, 8)}`;
    const created = (await graphqlData(
      t.org.gql(createMutation, { input: { name: 'Quarter', type: 'percentage', basisPoints: 2500, duration: 'repeating', durationInMonths: 3, code, maxRedemptions: 5, products: [product.id], metadata: { source: 'graphql' } } }),
    )).core.discountCreate;
    expect(created).toEqual({
      __typename: 'DiscountPercentageRepeatDuration',
      id: expect.any(String),
      name: 'Quarter',
      code,
      type: 'percentage',
      duration: 'repeating',
      durationInMonths: 3,
      basisPoints: 2500,
      maxRedemptions: 5,
      redemptionsCount: 0,
      organizationId: t.org.organizationId,
      metadata: { source: 'graphql' },
      startsAt: null,
      endsAt: null,
      products: [{ id: product.id }],
    });
    const fixed = (await graphqlData(t.org.gql(createMutation, { input: { name: 'Two off', type: 'fixed', amount: 200, duration: 'once' } }))).core.discountCreate;
    expect(fixed).toMatchObject({ __typename: 'DiscountFixedOnceForeverDuration', amount: 200, currency: 'usd', code: null, products: [] });

    const listed = await graphqlData(t.org.gql(`query { core { discounts(sorting: [name_asc]) { items { id name } pagination { totalCount maxPage } } } }`));
    expect(listed.core.discounts).toEqual({ items: [{ id: created.id, name: 'Quarter' }, { id: fixed.id, name: 'Two off' }], pagination: { totalCount: 2, maxPage: 1 } });
    const byCode = await graphqlData(t.org.gql(`query ($q: String) { core { discounts(query: $q) { items { id } } } }`, { q: code.toLowerCase() }));
    expect(byCode.core.discounts.items).toEqual([{ id: created.id }]);

    expect((await graphqlData(t.org.gql(oneQuery, { id: created.id }))).core.discount).toEqual(created);
    const node = await graphqlData(t.org.gql(`query ($id: ID!) { node(id: $id) { __typename id ... on Discount { name } } }`, { id: created.id }));
    expect(node).toEqual({ node: { __typename: 'DiscountPercentageRepeatDuration', id: created.id, name: 'Quarter' } });

    const updated = (await graphqlData(t.org.gql(updateMutation, { id: created.id, input: { name: 'Quarter off', maxRedemptions: 7, products: [] } }))).core.discountUpdate;
    expect(updated).toEqual({ ...created, name: 'Quarter off', maxRedemptions: 7, products: [] });
    expect((await graphqlData(t.org.gql(oneQuery, { id: created.id }))).core.discount).toEqual(updated);

    expect(await graphqlData(t.org.gql(deleteMutation, { id: created.id }))).toEqual({ core: { discountDelete: true } });
    expectGraphQLError(await t.org.gql(oneQuery, { id: created.id }), 'RESOURCE_NOT_FOUND');
    expectGraphQLError(await t.org.gql(deleteMutation, { id: created.id }), 'RESOURCE_NOT_FOUND');
    expectGraphQLError(await t.org.gql(updateMutation, { id: created.id, input: { name: 'Back' } }), 'RESOURCE_NOT_FOUND');
    const after = await graphqlData(t.org.gql(`query { core { discounts { items { id } } } }`));
    expect(after.core.discounts.items).toEqual([{ id: fixed.id }]);
  });

  it('refuses bad input with BAD_USER_INPUT naming the field, writing nothing', async () => {
    const theirs = await fixedProduct(t.other, 'Their book', 1000);
    const taken = `TAKEN${randomUUID().slice(0, 8)}`;
    const existing = (await graphqlData(t.org.gql(createMutation, { input: { name: 'Holder', type: 'percentage', basisPoints: 1000, duration: 'once', code: taken } }))).core.discountCreate;
    const before = await prisma().discount.count();
    const refusals: [string, object, (string | number)[]][] = [
      ['basis points over 100%', { name: 'Too much', type: 'percentage', basisPoints: 10_001, duration: 'once' }, ['input', 'basisPoints']],
      ['a zero amount', { name: 'Nothing', type: 'fixed', amount: 0, duration: 'once' }, ['input', 'amount']],
      ['a code taken, in another case', { name: 'Again', type: 'percentage', basisPoints: 1000, duration: 'once', code: taken.toLowerCase() }, ['input', 'code']],
      ["another organization's product", { name: 'Theirs', type: 'percentage', basisPoints: 1000, duration: 'once', products: [theirs.id] }, ['input', 'products', 0]],
    ];
    for (const [why, input, loc] of refusals) {
      const response = await t.org.gql(createMutation, { input });
      const error = expectGraphQLError(response, 'BAD_USER_INPUT');
      expect(error.extensions.issues.map((issue: { loc: unknown }) => issue.loc), why).toEqual([loc]);
      expect(response.body.data?.core?.discountCreate ?? null, why).toBeNull();
    }
    expect(await prisma().discount.count()).toBe(before);

    const error = expectGraphQLError(await t.org.gql(updateMutation, { id: existing.id, input: { basisPoints: 0 } }), 'BAD_USER_INPUT');
    expect(error.extensions.issues.map((issue: { loc: unknown }) => issue.loc)).toEqual([['input', 'basisPoints']]);
    expect((await graphqlData(t.org.gql(oneQuery, { id: existing.id }))).core.discount).toEqual(existing);
  });

  it("answers another organization's discount as not found, to read, node, update and delete, and changes nothing", async () => {
    const mine = (await graphqlData(t.org.gql(createMutation, { input: { name: 'Mine', type: 'percentage', basisPoints: 1500, duration: 'forever' } }))).core.discountCreate;
    expectGraphQLError(await t.other.gql(oneQuery, { id: mine.id }), 'RESOURCE_NOT_FOUND');
    expectGraphQLError(await t.other.gql(updateMutation, { id: mine.id, input: { name: 'Theirs now' } }), 'RESOURCE_NOT_FOUND');
    expectGraphQLError(await t.other.gql(deleteMutation, { id: mine.id }), 'RESOURCE_NOT_FOUND');
    const node = await t.other.gql(`query ($id: ID!) { node(id: $id) { id } }`, { id: mine.id });
    expect(node.body.data?.node ?? null).toBeNull();
    const theirList = await graphqlData(t.other.gql(`query { core { discounts(limit: 100) { items { id } } } }`));
    expect(theirList.core.discounts.items.map((d: { id: string }) => d.id)).not.toContain(mine.id);
    expectGraphQLError(await t.org.gql(oneQuery, { id: randomUUID() }), 'RESOURCE_NOT_FOUND');
    expect((await graphqlData(t.org.gql(oneQuery, { id: mine.id }))).core.discount).toEqual(mine);
  });
});
