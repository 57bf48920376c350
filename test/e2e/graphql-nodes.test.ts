// Global object identification: node(id:) and nodes(ids:) at the query root fetch any resource by
// its id, and reach exactly what the resource's own lookup reaches. Attacked from every side:
// another organization's token, the other environment, a token lacking the scope, a customer
// asking for another customer's order or for organization resources, no token at all. The shop
// sells in sandbox, where the test cards pay; the other environment is production.
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { tokenWithScopes } from '../helpers/organizations.ts';
import { buy, fixedProduct } from '../helpers/purchases.ts';
import { expectStatus } from '../helpers/responses.ts';

const t = useTestServer({
  env: { TEST_CARD_DELAY_MS: '0' },
  organizations: { shop: 'sandbox', rival: 'sandbox', productionShop: 'production' },
});
const ids = {} as Record<'product' | 'customer' | 'benefit' | 'endpoint' | 'order' | 'otherOrder' | 'rivalProduct' | 'productionProduct' | 'organization', string>;
let customerToken: string;

beforeAll(async () => {
  const product = await fixedProduct(t.shop, 'Node guide', 900);
  ids.product = product.id;
  ids.organization = t.shop.organizationId;
  ids.benefit = expectStatus(await t.shop.api('POST', '/benefits/', { type: 'custom', description: 'Node perk', properties: { note: 'hi' } }), 201).id;
  ids.endpoint = expectStatus(await t.shop.api('POST', '/webhooks/endpoints', { url: 'https://example.com/hook', format: 'raw', events: ['order.created'] }), 201).id;
  const order = await buy(t.shop, product.id, 'buyer@example.com');
  ids.order = order.id;
  ids.customer = order.customerId;
  ids.otherOrder = (await buy(t.shop, product.id, 'someone-else@example.com')).id;
  ids.rivalProduct = (await fixedProduct(t.rival, 'Rival guide', 900)).id;
  ids.productionProduct = (await fixedProduct(t.productionShop, 'Production guide', 900)).id;
  customerToken = expectStatus(await t.shop.api('POST', '/customer-sessions/', { customer_id: ids.customer }), 201).token;
});

const NODE = `query ($id: ID!) { node(id: $id) { __typename id
  ... on Product { name prices { __typename } }
  ... on Customer { email }
  ... on Benefit { description }
  ... on WebhookEndpoint { url }
  ... on Order { totalAmount customer { email } }
  ... on Organization { slug }
  ... on CustomerOrder { totalAmount }
} }`;

describe("an organization's token", () => {
  it('fetches each kind of resource by id, with what it selects on the type', async () => {
    const asked = async (id: string) => {
      const response = await t.shop.gql(NODE, { id });
      expect(response.body.errors, JSON.stringify(response.body.errors)).toBeUndefined();
      return response.body.data.node;
    };
    expect(await asked(ids.product)).toEqual({ __typename: 'Product', id: ids.product, name: 'Node guide', prices: [{ __typename: 'ProductPriceFixed' }] });
    expect(await asked(ids.customer)).toEqual({ __typename: 'Customer', id: ids.customer, email: 'buyer@example.com' });
    expect(await asked(ids.benefit)).toEqual({ __typename: 'BenefitCustom', id: ids.benefit, description: 'Node perk' });
    expect(await asked(ids.endpoint)).toEqual({ __typename: 'WebhookEndpoint', id: ids.endpoint, url: 'https://example.com/hook' });
    expect(await asked(ids.order)).toEqual({ __typename: 'Order', id: ids.order, totalAmount: 900, customer: { email: 'buyer@example.com' } });
    expect(await asked(ids.organization)).toMatchObject({ __typename: 'Organization', id: ids.organization });
    // An id in capitals is the same id, as the UUID arguments of the lookups take it.
    expect(await asked(ids.product.toUpperCase())).toMatchObject({ __typename: 'Product', id: ids.product });
  });

  it('answers nodes(ids:) in the order asked, each id it does not reach null with RESOURCE_NOT_FOUND at its index', async () => {
    const response = await t.shop.gql(`query ($ids: [ID!]!) { nodes(ids: $ids) { __typename id } }`, {
      ids: [ids.customer, ids.rivalProduct, ids.product, '3d9a7e51-0c2b-4f6a-8e1d-5b4c3a2f1e0d', 'not-an-id', ids.productionProduct],
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.data.nodes, JSON.stringify(response.body)).toEqual([{ __typename: 'Customer', id: ids.customer }, null, { __typename: 'Product', id: ids.product }, null, null, null]);
    const errors = response.body.errors!;
    expect(errors.map((e) => e.path)).toEqual([['nodes', 1], ['nodes', 3], ['nodes', 4], ['nodes', 5]]);
    expect(errors.every((e) => e.extensions.code === 'RESOURCE_NOT_FOUND')).toBe(true);
  });

  it('refuses more than 100 ids with BAD_USER_INPUT naming ids', async () => {
    const response = await t.shop.gql(`query ($ids: [ID!]!) { nodes(ids: $ids) { id } }`, { ids: Array.from({ length: 101 }, () => ids.product) });
    expect(response.body.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [expect.objectContaining({ loc: ['ids'], type: 'too_long' })] });
  });
});

describe('what node(id:) never reaches', () => {
  const notFound = async (response: Promise<{ status: number; body: any }>) => {
    const answered = await response;
    expect(answered.body.data).toEqual({ node: null });
    expect(answered.body.errors).toHaveLength(1);
    expect(answered.body.errors[0].extensions.code).toBe('RESOURCE_NOT_FOUND');
    return answered.body.errors[0].message as string;
  };

  it("another organization's resources, in the same words as an id nobody holds", async () => {
    const foreign = await notFound(t.rival.gql(NODE, { id: ids.product }));
    const nobody = await notFound(t.rival.gql(NODE, { id: '3d9a7e51-0c2b-4f6a-8e1d-5b4c3a2f1e0d' }));
    expect(foreign.replace(ids.product, 'X')).toBe(nobody.replace('3d9a7e51-0c2b-4f6a-8e1d-5b4c3a2f1e0d', 'X'));
    await notFound(t.rival.gql(NODE, { id: ids.order }));
    await notFound(t.rival.gql(NODE, { id: ids.customer }));
  });

  it('the other environment: a production token never sees sandbox, nor the reverse', async () => {
    await notFound(t.productionShop.gql(NODE, { id: ids.product }));
    await notFound(t.shop.gql(NODE, { id: ids.productionProduct }));
  });

  it('a resource whose scope the token lacks: NOT_PERMITTED for its own, and RESOURCE_NOT_FOUND for another organization’s', async () => {
    const productsOnly = graphqlClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.shop, ['products:read']));
    const own = await productsOnly(NODE, { id: ids.customer });
    expect(own.body.data).toEqual({ node: null });
    expect(own.body.errors![0].extensions.code).toBe('NOT_PERMITTED');
    expect(own.body.errors![0].message).toContain('customers:read');
    const rivalsCustomer = expectStatus(await t.rival.api('POST', '/customers/', { email: 'rival-buyer@example.com' }), 201).id;
    await notFound(productsOnly(NODE, { id: rivalsCustomer }));
    expect((await productsOnly(NODE, { id: ids.product })).body.data.node).toMatchObject({ __typename: 'Product' });
  });

  it('for a customer: their own orders as CustomerOrder; not another customer’s, nor organization resources', async () => {
    const portal = graphqlClient(t.server.base('sandbox'), customerToken);
    const own = await portal(NODE, { id: ids.order });
    expect(own.body.errors).toBeUndefined();
    expect(own.body.data.node).toEqual({ __typename: 'CustomerOrder', id: ids.order, totalAmount: 900 });
    await notFound(portal(NODE, { id: ids.otherOrder }));
    await notFound(portal(NODE, { id: ids.product }));
    await notFound(portal(NODE, { id: ids.customer }));
    await notFound(portal(NODE, { id: ids.endpoint }));
  });

  it('anything without a token: UNAUTHENTICATED', async () => {
    const response = await graphqlClient(t.server.base('sandbox'))(NODE, { id: ids.product });
    expect(response.status).toBe(401);
    expect(response.body.data).toEqual({ node: null });
    expect(response.body.errors![0].extensions.code).toBe('UNAUTHENTICATED');
  });
});
