// PATCH /v1/customer-portal/benefit-grants/{id} through the official client. Kassa's grants have
// nothing a customer changes (it connects no Discord or GitHub accounts): the grant is answered as
// it is when the type is the grant's own, a type that is not is a 422, another customer's grant is
// a 404, and nothing is written.
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { buy, fixedProduct } from '../helpers/purchases.ts';
import { expectErrorBody, expectValidationError } from '../helpers/responses.ts';
import { restClient } from '../helpers/server.ts';
import { eventually, rejectionOf } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { org: 'sandbox' } });

async function customerWithGrant(productId: string, email: string) {
  const order = await buy(t.org, productId, email);
  const token = (await t.org.polar.customerSessions.create({ customerId: order.customerId })).token;
  const grants = await eventually(
    async () => (await t.org.buyer.customerPortal.benefitGrants.list({ customerSession: token }, {})).result.items,
    (items) => items.length === 1,
    'the grant',
  );
  return { token, grant: grants[0] };
}

describe('a customer updating their benefit grant', () => {
  let alice: Awaited<ReturnType<typeof customerWithGrant>>;
  let bob: Awaited<ReturnType<typeof customerWithGrant>>;

  beforeAll(async () => {
    const product = await fixedProduct(t.org, 'Guide', 900);
    const benefit = await t.org.polar.benefits.create({ type: 'custom', description: 'Welcome note', properties: { note: 'Thanks!' } });
    await t.org.polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [benefit.id] } });
    alice = await customerWithGrant(product.id, 'alice@example.com');
    bob = await customerWithGrant(product.id, 'bob@example.com');
  });

  it('answers the grant as it is for its own type: a custom grant has nothing to change', async () => {
    const updated = await t.org.buyer.customerPortal.benefitGrants.update({ customerSession: alice.token }, { id: alice.grant.id, customerBenefitGrantUpdate: { benefitType: 'custom' } });
    expect(updated).toEqual(alice.grant);
  });

  it('refuses a type that is not the grant’s, and a Discord account to connect, with a 422', async () => {
    const error = await rejectionOf(
      t.org.buyer.customerPortal.benefitGrants.update({ customerSession: alice.token }, { id: alice.grant.id, customerBenefitGrantUpdate: { benefitType: 'license_keys' } }),
    );
    expect(error).toBeInstanceOf(HTTPValidationError);
    const customer = restClient(t.server.base('sandbox'), alice.token);
    expectValidationError(await customer('PATCH', `/customer-portal/benefit-grants/${alice.grant.id}`, { benefit_type: 'discord', properties: { account_id: '42' } }), ['body', 'benefit_type']);
    expectValidationError(await customer('PATCH', `/customer-portal/benefit-grants/${alice.grant.id}`, { benefit_type: 'ads' }), ['body', 'benefit_type']);
    expectValidationError(await customer('PATCH', `/customer-portal/benefit-grants/${alice.grant.id}`, {}), ['body', 'benefit_type'], 'missing');
    expectValidationError(await customer('PATCH', '/customer-portal/benefit-grants/not-a-uuid', { benefit_type: 'custom' }), ['path', 'id']);
  });

  it("answers another customer's grant as one that does not exist; no token is 401, an organization token 403", async () => {
    const error = await rejectionOf(t.org.buyer.customerPortal.benefitGrants.update({ customerSession: alice.token }, { id: bob.grant.id, customerBenefitGrantUpdate: { benefitType: 'custom' } }));
    expect(error).toBeInstanceOf(ResourceNotFound);
    expectErrorBody(await restClient(t.server.base('sandbox'))('PATCH', `/customer-portal/benefit-grants/${bob.grant.id}`, { benefit_type: 'custom' }), 401, 'Unauthorized');
    expectErrorBody(await t.org.api('PATCH', `/customer-portal/benefit-grants/${bob.grant.id}`, { benefit_type: 'custom' }), 403, 'NotPermitted');
    expect(await t.org.buyer.customerPortal.benefitGrants.get({ customerSession: bob.token }, { id: bob.grant.id })).toEqual(bob.grant);
  });
});
