// Who a purchase goes to. A checkout reaches an existing customer through its email only when that
// customer holds the address: the organization set it through the Core API, or the customer
// verified it. An address typed at checkout, or asked for in the portal, proves nothing, so no one
// is handed another person's orders, license keys or downloads by claiming their address.
//
// In sandbox (the test processor pays), with mail kept in memory.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { paidOrderOf } from '../helpers/purchases.ts';
import { eventually } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0', EMAIL_TRANSPORT: 'memory' }, organizations: { shop: 'sandbox' } });
let productId: string;
beforeAll(async () => {
  const licenses = await t.shop.polar.benefits.create({ type: 'license_keys', description: 'Studio license', properties: { prefix: 'STUDIO' } });
  const product = await t.shop.polar.products.create({ name: 'Studio', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 4900, priceCurrency: 'usd' }] });
  await t.shop.polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [licenses.id] } });
  productId = product.id;
});

const email = (name = 'buyer') => `${name}-${randomUUID()}@example.com`;

/** A paid purchase of the product by a buyer typing `customerEmail`; the checkout made by the organization, with an external id when given. */
async function purchase(customerEmail: string, externalCustomerId?: string) {
  const checkout = await t.shop.polar.checkouts.create({ products: [productId], ...(externalCustomerId ? { externalCustomerId } : {}) });
  const confirmed = await t.shop.buyer.checkouts.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: { customerEmail, customerName: 'A Buyer', confirmationTokenId: 'tok_visa' },
  });
  const order = await paidOrderOf(t.shop, checkout.id);
  return { checkoutId: checkout.id, customerId: confirmed.customerId!, order };
}

/** The portal as the customer sees it, through a session the organization issued (by id or external id). */
async function portalOf(who: { customerId: string } | { externalCustomerId: string }) {
  const session = await t.shop.polar.customerSessions.create(who as never);
  const base = t.server.base('sandbox');
  return { api: restClient(base, session.token), gql: graphqlClient(base, session.token) };
}

/** The orders and license keys a customer reaches in their portal, once every grant has run. */
async function holdings(portal: Awaited<ReturnType<typeof portalOf>>) {
  const orders = (await portal.api('GET', '/customer-portal/orders/')).body.items.map((o: { id: string }) => o.id);
  const keys = (await portal.api('GET', '/customer-portal/license-keys/')).body.items.map((k: { id: string }) => k.id);
  return { orders, keys };
}

/** Waits until the customer holds their license keys: one per paid order. */
async function grantsSettled(customerId: string, count: number) {
  await eventually(() => t.server.kassa.environments.sandbox.environment.prisma.licenseKey.count({ where: { customerId } }), (n) => n === count, 'the license keys to be granted');
}

describe('an address typed at checkout holds nothing', () => {
  it("a buyer who typed someone else's email is not handed that person's later purchase", async () => {
    const victim = email('victim');
    // The attacker, signed in to the shop as its user, checks out typing the victim's address.
    const planted = await purchase(victim, `attacker-${randomUUID()}`);
    const attackerExternalId = (await t.shop.api('GET', `/customers/${planted.customerId}`)).body.external_id;

    const bought = await purchase(victim.toUpperCase());
    expect(bought.customerId).not.toBe(planted.customerId);
    expect(bought.order.customerId).toBe(bought.customerId);
    await grantsSettled(bought.customerId, 1);
    await grantsSettled(planted.customerId, 1);

    const attacker = await holdings(await portalOf({ externalCustomerId: attackerExternalId }));
    expect(attacker.orders).toEqual([planted.order.id]);
    const owner = await holdings(await portalOf({ customerId: bought.customerId }));
    expect(owner.orders).toEqual([bought.order.id]);
    expect(attacker.keys).not.toContain(owner.keys[0]);
  });

  it('gives a guest buying again a new customer: several customers may carry an address none of them holds', async () => {
    const guest = email('guest');
    const first = await purchase(guest);
    const second = await purchase(guest);
    expect(second.customerId).not.toBe(first.customerId);
    const listed = await t.shop.api('GET', `/customers/?email=${encodeURIComponent(guest.toUpperCase())}`);
    expect(listed.body.items.map((c: { id: string }) => c.id).sort()).toEqual([first.customerId, second.customerId].sort());
  });

  it('never links a checkout’s external id to the customer holding its email', async () => {
    const address = email('held');
    const holder = (await t.shop.api('POST', '/customers/', { email: address })).body;
    const bought = await purchase(address, `someone-${randomUUID()}`);
    expect(bought.customerId).not.toBe(holder.id);
    expect((await t.shop.api('GET', `/customers/${holder.id}`)).body.external_id).toBeNull();
    expect((await t.shop.polar.orders.list({ customerId: holder.id })).result.items).toEqual([]);
  });
});

describe('an address the organization set', () => {
  it('reaches the customer the organization created with it, whatever its case', async () => {
    const address = email('known');
    const known = (await t.shop.api('POST', '/customers/', { email: address })).body;
    const bought = await purchase(address.toUpperCase());
    expect(bought.customerId).toBe(known.id);
    expect(bought.order.customerId).toBe(known.id);
  });

  it("is held once the organization sets it on a checkout's customer, and later checkouts reach that customer", async () => {
    const address = email('adopted');
    const first = await purchase(address);
    const set = await t.shop.api('PATCH', `/customers/${first.customerId}`, { email: address });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.email_verified).toBe(false);
    const again = await purchase(address);
    expect(again.customerId).toBe(first.customerId);
  });

  it('is refused when another customer of the organization holds it, and allowed when a checkout only typed it', async () => {
    const address = email('typed');
    const typed = await purchase(address);
    const created = await t.shop.api('POST', '/customers/', { email: address });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.id).not.toBe(typed.customerId);
    const second = await t.shop.api('POST', '/customers/', { email: address.toUpperCase() });
    expect(second.status).toBe(422);
  });
});
