// What a checkout's customer session reaches on the Customer Portal API: the subscription that
// checkout started, its order, the benefits and license keys granted through the subscription (a
// subscription's grants name no order), and nothing the same customer bought through another
// checkout. And the Core API's license keys, listed by two organizations that both sold some. The
// background job runner is stopped; the test runs the due work itself.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Org } from '../helpers/organizations.ts';
import { userSessionToken } from '../helpers/oauth.ts';
import { confirmForCustomer } from '../helpers/purchases.ts';
import { restClient, settleJobs } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const start = new Date('2027-03-10T09:00:00.000Z');
const t = useTestServer({ stopSandboxJobs: true, clock: start, organizations: { shop: 'sandbox', other: 'sandbox' } });

/** Runs the scheduler and every job it causes until nothing is left to do at the current time. */
async function settle() {
  await settleJobs(t.server.kassa.environments.sandbox.jobs);
}

const base = () => t.server.base('sandbox');
const ids = (items: { id: string }[]) => items.map((item) => item.id).sort();

/** A product of `org` granting a license key with `prefix`; monthly when `recurring`. */
async function keyedProduct(org: Org, prefix: string, recurring: boolean) {
  const benefit = await org.polar.benefits.create({ type: 'license_keys', description: `${prefix} key`, properties: { prefix } });
  const product = await org.polar.products.create({
    name: `${prefix} product`,
    recurringInterval: recurring ? ('month' as const) : null,
    prices: [{ amountType: 'fixed', priceAmount: 700, priceCurrency: 'usd' }],
  });
  await org.polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [benefit.id] } });
  return { productId: product.id, benefitId: benefit.id };
}

interface Sold {
  plan: { checkoutId: string; session: string; benefitId: string };
  single: { checkoutId: string; session: string; benefitId: string };
  customerId: string;
}
const sold = {} as Record<'shop' | 'other', Sold>;

beforeAll(async () => {
  t.server.clock.now = start;
  for (const name of ['shop', 'other'] as const) {
    const org = t[name];
    const monthly = await keyedProduct(org, `${name.toUpperCase()}-PLAN`, true);
    const once = await keyedProduct(org, `${name.toUpperCase()}-ONCE`, false);
    const email = `buyer-${name}@example.com`;
    const customer = await org.api('POST', '/customers/', { email, name: 'Buyer' });
    expect(customer.status).toBe(201);
    const plan = await confirmForCustomer(org, monthly.productId, customer.body.id, email);
    const single = await confirmForCustomer(org, once.productId, customer.body.id, email);
    await settle();
    sold[name] = { plan: { ...plan, benefitId: monthly.benefitId }, single: { ...single, benefitId: once.benefitId }, customerId: customer.body.id };
  }
});

describe("a checkout's session", () => {
  it("reaches the subscription it started and its order, and nothing of the other checkout's", async () => {
    const portal = restClient(base(), sold.shop.plan.session);
    const subscriptions = await portal('GET', '/customer-portal/subscriptions/');
    expect(subscriptions.status).toBe(200);
    expect(subscriptions.body.items).toHaveLength(1);
    const subscriptionId = subscriptions.body.items[0].id;
    const all = await t.shop.api('GET', `/orders/?customer_id=${sold.shop.customerId}&limit=100`);
    const ofPlan = all.body.items.filter((o: { subscription_id: string | null }) => o.subscription_id === subscriptionId);
    expect(ofPlan.map((o: { billing_reason: string }) => o.billing_reason)).toEqual(['subscription_create']);
    expect(all.body.items).toHaveLength(2);

    const orders = await portal('GET', '/customer-portal/orders/');
    expect(orders.status).toBe(200);
    expect(ids(orders.body.items)).toEqual(ids(ofPlan));
    // By id too; the other checkout's order is not found, nor its subscription.
    expect((await portal('GET', `/customer-portal/orders/${ofPlan[0].id}`)).status).toBe(200);
    const single = all.body.items.find((o: { subscription_id: string | null }) => o.subscription_id === null);
    expect((await portal('GET', `/customer-portal/orders/${single.id}`)).status).toBe(404);
    const singlePortal = restClient(base(), sold.shop.single.session);
    expect((await singlePortal('GET', '/customer-portal/subscriptions/')).body.items).toEqual([]);
    expect((await singlePortal('GET', `/customer-portal/subscriptions/${subscriptionId}`)).status).toBe(404);
  });

  it("reaches the grants and license keys made through its subscription, not the other checkout's", async () => {
    for (const [mine, theirs] of [
      [sold.shop.plan, sold.shop.single],
      [sold.shop.single, sold.shop.plan],
    ]) {
      const portal = restClient(base(), mine.session);
      const grants = await portal('GET', '/customer-portal/benefit-grants/');
      expect(grants.status).toBe(200);
      expect(grants.body.items.map((g: { benefit_id: string }) => g.benefit_id)).toEqual([mine.benefitId]);
      const keys = await portal('GET', '/customer-portal/license-keys/');
      expect(keys.status).toBe(200);
      expect(keys.body.items.map((k: { benefit_id: string }) => k.benefit_id)).toEqual([mine.benefitId]);
      const theirGrant = await t.shop.api('GET', `/benefits/${theirs.benefitId}/grants`);
      expect(theirGrant.body.items).toHaveLength(1);
      expect((await portal('GET', `/customer-portal/benefit-grants/${theirGrant.body.items[0].id}`)).status).toBe(404);
    }
    // The customer's own portal session reaches both.
    const full = await t.shop.api('POST', '/customer-sessions/', { customer_id: sold.shop.customerId });
    const keys = await restClient(base(), full.body.token)('GET', '/customer-portal/license-keys/');
    expect(keys.body.items.map((k: { benefit_id: string }) => k.benefit_id).sort()).toEqual([sold.shop.plan.benefitId, sold.shop.single.benefitId].sort());
  });
});

describe("the Core API's license keys", () => {
  it("lists an organization's own keys, under its token and its owner's session alike, and finds none of another's", async () => {
    const session = await userSessionToken(t.server, 'sandbox', t.shop.userEmail, t.shop.userPassword);
    const theirs = await t.other.api('GET', '/license-keys/?limit=100');
    expect(theirs.body.items).toHaveLength(2);
    for (const token of [t.shop.token, session]) {
      const api = restClient(base(), token);
      const listed = await api('GET', '/license-keys/?limit=100');
      expect(listed.status).toBe(200);
      expect(listed.body.items.map((k: { benefit_id: string }) => k.benefit_id).sort()).toEqual([sold.shop.plan.benefitId, sold.shop.single.benefitId].sort());
      expect(listed.body.pagination.total_count).toBe(2);
      expect((await api('GET', `/license-keys/${theirs.body.items[0].id}`)).status).toBe(404);
    }
  });
});
