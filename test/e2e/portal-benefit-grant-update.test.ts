// PATCH /v1/customer-portal/benefit-grants/{id} through the official client. Kassa's grants have
// nothing a customer changes (it connects no Discord or GitHub accounts): the grant is answered as
// it is when the type is the grant's own, a type that is not is a 422, another customer's grant is
// a 404, and nothing is written.
import type { CustomerBenefitGrantUpdate } from '@polar-sh/sdk/models/components/customerbenefitgrantupdate.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { buy, confirmForCustomer, fixedProduct } from '../helpers/purchases.ts';
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
  let carol: Awaited<ReturnType<typeof customerWithGrant>>;
  let guideId: string;
  let appId: string;

  beforeAll(async () => {
    const product = await fixedProduct(t.org, 'Guide', 900);
    const benefit = await t.org.polar.benefits.create({ type: 'custom', description: 'Welcome note', properties: { note: 'Thanks!' } });
    await t.org.polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [benefit.id] } });
    const app = await fixedProduct(t.org, 'App', 1900);
    const keys = await t.org.polar.benefits.create({ type: 'license_keys', description: 'App license', properties: {} });
    await t.org.polar.products.updateBenefits({ id: app.id, productBenefitsUpdate: { benefits: [keys.id] } });
    [guideId, appId] = [product.id, app.id];
    alice = await customerWithGrant(product.id, 'alice@example.com');
    bob = await customerWithGrant(product.id, 'bob@example.com');
    carol = await customerWithGrant(app.id, 'carol@example.com');
  });

  it('answers the grant as it is for its own type: a custom grant has nothing to change', async () => {
    const updated = await t.org.buyer.customerPortal.benefitGrants.update({ customerSession: alice.token }, { id: alice.grant.id, customerBenefitGrantUpdate: { benefitType: 'custom' } });
    expect(updated).toEqual(alice.grant);
    // Each grant is judged by its own type: a license key grant is answered for its type.
    const key = await t.org.buyer.customerPortal.benefitGrants.update({ customerSession: carol.token }, { id: carol.grant.id, customerBenefitGrantUpdate: { benefitType: 'license_keys' } });
    expect(key).toEqual(carol.grant);
  });

  it('judges each of one customer’s grants by its own type', async () => {
    const order = await buy(t.org, guideId, 'dave@example.com');
    await confirmForCustomer(t.org, appId, order.customerId, 'dave@example.com');
    const token = (await t.org.polar.customerSessions.create({ customerId: order.customerId })).token;
    const grants = await eventually(
      async () => (await t.org.buyer.customerPortal.benefitGrants.list({ customerSession: token }, {})).result.items,
      (items) => items.length === 2,
      'both grants',
    );
    for (const grant of grants) {
      const answered = await t.org.buyer.customerPortal.benefitGrants.update({ customerSession: token }, { id: grant.id, customerBenefitGrantUpdate: { benefitType: grant.benefit.type } as CustomerBenefitGrantUpdate });
      expect(answered).toEqual(grant);
    }
  });

  it('refuses a type that is not the grant’s, and a Discord account to connect, with a 422', async () => {
    const error = await rejectionOf(
      t.org.buyer.customerPortal.benefitGrants.update({ customerSession: alice.token }, { id: alice.grant.id, customerBenefitGrantUpdate: { benefitType: 'license_keys' } }),
    );
    expect(error).toBeInstanceOf(HTTPValidationError);
    const customer = restClient(t.server.base('sandbox'), alice.token);
    const wrongType = await customer('PATCH', `/customer-portal/benefit-grants/${alice.grant.id}`, { benefit_type: 'license_keys' });
    expect([wrongType.status, wrongType.body]).toEqual([422, { detail: [{ loc: ['body', 'benefit_type'], msg: 'This grant is of a custom benefit.', type: 'value_error' }] }]);
    const keyAsCustom = await restClient(t.server.base('sandbox'), carol.token)('PATCH', `/customer-portal/benefit-grants/${carol.grant.id}`, { benefit_type: 'custom' });
    expect([keyAsCustom.status, keyAsCustom.body.detail[0].msg]).toEqual([422, 'This grant is of a license_keys benefit.']);
    expectValidationError(await customer('PATCH', `/customer-portal/benefit-grants/${alice.grant.id}`, { benefit_type: 'discord', properties: { account_id: '42' } }), ['body', 'benefit_type']);
    expectValidationError(await customer('PATCH', `/customer-portal/benefit-grants/${alice.grant.id}`, { benefit_type: 'ads' }), ['body', 'benefit_type']);
    expectValidationError(await customer('PATCH', `/customer-portal/benefit-grants/${alice.grant.id}`, {}), ['body', 'benefit_type'], 'missing');
    expectValidationError(await customer('PATCH', '/customer-portal/benefit-grants/not-a-uuid', { benefit_type: 'custom' }), ['path', 'id']);
  });

  it("answers another customer's grant as one that does not exist; no token is 401, an organization token 403", async () => {
    const error = await rejectionOf(t.org.buyer.customerPortal.benefitGrants.update({ customerSession: alice.token }, { id: bob.grant.id, customerBenefitGrantUpdate: { benefitType: 'custom' } }));
    expect(error).toBeInstanceOf(ResourceNotFound);
    const foreign = await restClient(t.server.base('sandbox'), alice.token)('PATCH', `/customer-portal/benefit-grants/${bob.grant.id}`, { benefit_type: 'custom' });
    expect([foreign.status, foreign.body]).toEqual([404, { error: 'ResourceNotFound', detail: 'Benefit grant not found.' }]);
    expectErrorBody(await restClient(t.server.base('sandbox'))('PATCH', `/customer-portal/benefit-grants/${bob.grant.id}`, { benefit_type: 'custom' }), 401, 'Unauthorized');
    expectErrorBody(await t.org.api('PATCH', `/customer-portal/benefit-grants/${bob.grant.id}`, { benefit_type: 'custom' }), 403, 'NotPermitted');
    expect(await t.org.buyer.customerPortal.benefitGrants.get({ customerSession: bob.token }, { id: bob.grant.id })).toEqual(bob.grant);
  });
});
