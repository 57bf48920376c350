// Orders as the orders service builds them from a confirmed checkout, in sandbox: whose order it is
// (the customer the checkout names, the one holding the external id or the email, or a new one
// carrying what the buyer gave), what it copies from the checkout, how custom field answers add up
// on the customer, and the list's sorting by every property, Core and Customer Portal. Each case
// holds a value the others do not, so a wrong field or a wrong sort key shows.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, type Org } from '../helpers/organizations.ts';
import { buyWithCheckout, checkoutWhen, fixedProduct, ordersOfCheckout, paidOrderOf } from '../helpers/purchases.ts';
import { expectErrorBody, expectGraphQLError, expectStatus, graphqlData, graphqlFailure } from '../helpers/responses.ts';
import { eventually } from '../helpers/waiting.ts';
import { restClient } from '../helpers/server.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' } });

const ADDRESS = { line1: '3 Rue Oberkampf', line2: null, postal_code: '75011', city: 'Paris', state: null, country: 'FR' };

/** Confirms the checkout (REST, as the hosted page does) with the buyer's fields; returns the paid order. */
async function confirm(org: Org, checkout: { id: string; client_secret: string }, buyer: Record<string, unknown>) {
  const confirmed = await org.publicApi('POST', `/checkouts/client/${checkout.client_secret}/confirm`, { confirmation_token_id: 'tok_visa', ...buyer });
  expectStatus(confirmed, 200);
  return paidOrderOf(org, checkout.id);
}

async function newCheckout(org: Org, body: Record<string, unknown>) {
  return expectStatus(await org.api('POST', '/checkouts/', body), 201) as { id: string; client_secret: string };
}

async function customersOf(org: Org) {
  return expectStatus(await org.api('GET', '/customers/?limit=100'), 200).items as { id: string; email: string }[];
}

describe('the customer of a new order', () => {
  let org: Org;
  let product: string;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    product = (await fixedProduct(org, 'Print', 1200)).id;
  });

  it('is the customer the checkout names, even one whose email no one holds', async () => {
    // A buyer's own purchase makes a customer that carries the typed email without holding it.
    const first = await buyWithCheckout(org, product, 'walk-in@example.com');
    const checkout = await newCheckout(org, { products: [product], customer_id: first.order.customerId });
    const order = await confirm(org, checkout, {});
    expect(order.customerId).toBe(first.order.customerId);
    expect((await customersOf(org)).map((c) => c.id)).toEqual([first.order.customerId]);
  });

  it('is a new customer for a new email, never an existing customer without an external id', async () => {
    const before = await customersOf(org);
    const { order } = await buyWithCheckout(org, product, 'stranger@example.com');
    expect(before.map((c) => c.id)).not.toContain(order.customerId);
    expect(await customersOf(org)).toHaveLength(before.length + 1);
  });

  it('is the customer given the external id after the checkout was made, whatever email the buyer types', async () => {
    const checkout = await newCheckout(org, { products: [product], external_customer_id: 'crm-late' });
    const customer = expectStatus(await org.api('POST', '/customers/', { email: 'late@example.com', external_id: 'crm-late' }), 201);
    const count = (await customersOf(org)).length;
    const order = await confirm(org, checkout, { customer_email: 'typed@example.com' });
    expect(order.customerId).toBe(customer.id);
    expect(await customersOf(org)).toHaveLength(count);
  });

  it('is a new customer holding nothing when no customer has the checkout’s external id yet', async () => {
    const before = (await customersOf(org)).length;
    const checkout = await newCheckout(org, { products: [product], external_customer_id: 'crm-new' });
    const order = await confirm(org, checkout, { customer_email: 'newcomer@example.com' });
    const customer = expectStatus(await org.api('GET', `/customers/${order.customerId}`), 200);
    expect(customer).toMatchObject({ email: 'newcomer@example.com', external_id: 'crm-new' });
    expect(await customersOf(org)).toHaveLength(before + 1);
  });

  it('is a new customer with the email set on the checkout or typed at confirm, spaces around it trimmed; no email is refused, nothing written', async () => {
    const checkoutsBefore = (expectStatus(await org.api('GET', '/checkouts/?limit=100'), 200).items as unknown[]).length;
    for (const bad of ['not-an-email', 'two words@example.com', `${'a'.repeat(310)}@example.com`]) {
      expect(expectStatus(await org.api('POST', '/checkouts/', { products: [product], customer_email: bad }), 422).detail).toEqual([
        { loc: ['body', 'customer_email'], msg: 'value is not a valid email address', type: 'value_error' },
      ]);
      const error = expectGraphQLError(
        await org.gql('mutation ($input: CheckoutCreateInput!) { core { checkoutCreate(input: $input) { id } } }', { input: { products: [product], customerEmail: bad } }),
        'BAD_USER_INPUT',
      );
      expect(error.extensions.issues.map((issue: { loc: unknown }) => issue.loc)).toEqual([['input', 'customerEmail']]);
    }
    expect(expectStatus(await org.api('GET', '/checkouts/?limit=100'), 200).items).toHaveLength(checkoutsBefore);

    const set = await newCheckout(org, { products: [product], customer_email: ' Pad@Example.com ' });
    expect(expectStatus(await org.api('GET', `/checkouts/${set.id}`), 200).customer_email).toBe('Pad@Example.com');
    const first = await confirm(org, set, {});
    expect(expectStatus(await org.api('GET', `/customers/${first.customerId}`), 200).email).toBe('Pad@Example.com');

    const typed = await newCheckout(org, { products: [product] });
    const refused = await org.publicApi('POST', `/checkouts/client/${typed.client_secret}/confirm`, { confirmation_token_id: 'tok_visa', customer_email: 'typed at@example.com' });
    expect(expectStatus(refused, 422).detail).toEqual([{ loc: ['body', 'customer_email'], msg: 'value is not a valid email address', type: 'value_error' }]);
    expect(expectStatus(await org.api('GET', `/checkouts/${typed.id}`), 200)).toMatchObject({ status: 'open', customer_email: null });
    // From the buyer's page, which needs no token: a long value is refused on its length, at once.
    const long = await org.publicApi('PATCH', `/checkouts/client/${typed.client_secret}`, { customer_email: `a@${'a.'.repeat(50_000)}@` });
    expect(expectStatus(long, 422).detail).toEqual([{ loc: ['body', 'customer_email'], msg: 'value is not a valid email address', type: 'value_error' }]);
    expect(expectStatus(await org.api('GET', `/checkouts/${typed.id}`), 200)).toMatchObject({ status: 'open', customer_email: null });
    const second = await confirm(org, typed, { customer_email: '  Typed@Example.com\t' });
    expect(expectStatus(await org.api('GET', `/customers/${second.customerId}`), 200).email).toBe('Typed@Example.com');
  });

  it('is the customer holding the email, whatever its case', async () => {
    const holder = expectStatus(await org.api('POST', '/customers/', { email: 'Holder@Example.com' }), 201);
    const checkout = await newCheckout(org, { products: [product] });
    const order = await confirm(org, checkout, { customer_email: 'HOLDER@example.COM' });
    expect(order.customerId).toBe(holder.id);
  });

  it('is a new customer carrying the buyer’s name, billing address and the checkout’s customer metadata', async () => {
    const checkout = await newCheckout(org, { products: [product], customer_metadata: { segment: 'smb' }, metadata: { campaign: 'autumn' } });
    const order = await confirm(org, checkout, {
      customer_email: 'nia@example.com', customer_name: 'Nia Okafor', customer_billing_name: 'Okafor SARL', customer_billing_address: ADDRESS,
    });
    const customer = expectStatus(await org.api('GET', `/customers/${order.customerId}`), 200);
    expect(customer).toMatchObject({ email: 'nia@example.com', name: 'Nia Okafor', billing_address: ADDRESS, metadata: { segment: 'smb' } });
    const rest = expectStatus(await org.api('GET', `/orders/${order.id}`), 200);
    expect(rest).toMatchObject({ billing_name: 'Okafor SARL', billing_address: ADDRESS, metadata: { campaign: 'autumn' }, custom_field_data: {} });
  });

  it('is billed to the buyer’s name when no billing name is given, with no address when none is given', async () => {
    const checkout = await newCheckout(org, { products: [product] });
    const order = await confirm(org, checkout, { customer_email: 'plain@example.com', customer_name: 'Pat Plain' });
    const rest = expectStatus(await org.api('GET', `/orders/${order.id}`), 200);
    expect(rest).toMatchObject({ billing_name: 'Pat Plain', billing_address: null, metadata: {}, subscription_id: null });
    const customer = expectStatus(await org.api('GET', `/customers/${order.customerId}`), 200);
    expect(customer).toMatchObject({ billing_address: null, metadata: {} });
  });

  it('of a subscription is the subscription’s first, for its first period', async () => {
    const plan = (await fixedProduct(org, 'Plan', 900, 'month')).id;
    const { order } = await buyWithCheckout(org, plan, 'subscriber@example.com');
    const subscription = expectStatus(await org.api('GET', `/subscriptions/?customer_id=${order.customerId}`), 200).items[0];
    expect(order.subscriptionId).toBe(subscription.id);
    expect(order.billingReason).toBe('subscription_create');
    const stored = await t.server.kassa.environments.sandbox.environment.prisma.order.findUniqueOrThrow({ where: { id: order.id } });
    expect(stored.billingPeriodStart?.toISOString()).toBe(new Date(subscription.current_period_start).toISOString());
  });
});

describe('custom field answers', () => {
  it('are kept on the order as given, and add up on the customer: a later answer replaces an earlier one, no answer changes nothing', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const company = expectStatus(await org.api('POST', '/custom-fields/', { type: 'text', slug: 'company', name: 'Company', properties: {} }), 201);
    const seats = expectStatus(await org.api('POST', '/custom-fields/', { type: 'number', slug: 'seats', name: 'Seats', properties: {} }), 201);
    const product = expectStatus(
      await org.api('POST', '/products/', {
        name: 'Workshop',
        prices: [{ amount_type: 'fixed', price_amount: 3000, price_currency: 'usd' }],
        attached_custom_fields: [{ custom_field_id: company.id, required: false }, { custom_field_id: seats.id, required: false }],
      }),
      201,
    );
    const customer = expectStatus(await org.api('POST', '/customers/', { email: 'team@example.com' }), 201);
    const buyAnswering = async (answers: Record<string, unknown>) => {
      const checkout = await newCheckout(org, { products: [product.id] });
      const order = await confirm(org, checkout, { customer_email: 'team@example.com', custom_field_data: answers });
      expect(order.customerId).toBe(customer.id);
      return expectStatus(await org.api('GET', `/orders/${order.id}`), 200);
    };
    const answers = async () =>
      (await graphqlData(org.gql('query ($id: UUID!) { core { customer(id: $id) { customFieldData modifiedAt } } }', { id: customer.id }))).core.customer as {
        customFieldData: Record<string, unknown>;
        modifiedAt: string | null;
      };

    expect((await buyAnswering({ company: 'Acme' })).custom_field_data).toEqual({ company: 'Acme' });
    expect((await answers()).customFieldData).toEqual({ company: 'Acme' });
    expect((await buyAnswering({ seats: 3 })).custom_field_data).toEqual({ seats: 3 });
    expect((await answers()).customFieldData).toEqual({ company: 'Acme', seats: 3 });
    expect((await buyAnswering({ company: 'Beta' })).custom_field_data).toEqual({ company: 'Beta' });
    const afterAnswers = await answers();
    expect(afterAnswers.customFieldData).toEqual({ company: 'Beta', seats: 3 });

    expect((await buyAnswering({})).custom_field_data).toEqual({});
    const unchanged = await answers();
    expect(unchanged.customFieldData).toEqual({ company: 'Beta', seats: 3 });
    expect(unchanged.modifiedAt).toBe(afterAnswers.modifiedAt);
  });
});

describe('sorting the orders list', () => {
  let org: Org;
  // Three orders whose every sort key orders them differently:
  //   made first:  "Mid" 3000, abe@,  refunded
  //   made second: "Zed" 1000, cy@,   pending (declined card)
  //   made third:  "Ace" 2000 less 1500 off (net 500), bo@, paid
  let first: string;
  let second: string;
  let third: string;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    const mid = (await fixedProduct(org, 'Mid', 3000)).id;
    const zed = (await fixedProduct(org, 'Zed', 1000)).id;
    const ace = (await fixedProduct(org, 'Ace', 2000)).id;
    first = (await buyWithCheckout(org, mid, 'abe@example.com')).order.id;

    const declined = await newCheckout(org, { products: [zed] });
    expectStatus(await org.publicApi('POST', `/checkouts/client/${declined.client_secret}/confirm`, { confirmation_token_id: 'tok_chargeDeclined', customer_email: 'cy@example.com' }), 200);
    await checkoutWhen(org, declined.id, 'failed');
    second = (await ordersOfCheckout(org, declined.id))[0].id;

    const discount = expectStatus(
      await org.api('POST', '/discounts/', { name: 'Big', type: 'fixed', amount: 1500, currency: 'usd', duration: 'once', products: [ace] }),
      201,
    );
    third = (await confirm(org, await newCheckout(org, { products: [ace], discount_id: discount.id }), { customer_email: 'bo@example.com' })).id;

    expectStatus(await org.api('POST', '/refunds/', { order_id: first, reason: 'customer_request', amount: 3000 }), 200);
    await eventually(async () => expectStatus(await org.api('GET', `/orders/${first}`), 200).status, (status) => status === 'refunded', 'the first order to be refunded');
  });

  const listed = async (query: string) => expectStatus(await org.api('GET', `/orders/?${query}`), 200).items.map((o: { id: string }) => o.id);

  it.each([
    ['created_at', () => [first, second, third]],
    ['status', () => [second, third, first]],
    ['amount', () => [second, third, first]],
    ['net_amount', () => [third, second, first]],
    ['customer', () => [first, third, second]],
    ['product', () => [third, first, second]],
  ])('sorts by %s, ascending and descending', async (property, expected) => {
    expect(await listed(`sorting=${property}`)).toEqual(expected());
    expect(await listed(`sorting=-${property}`)).toEqual(expected().reverse());
  });

  it('sorts newest first when not told, and by a second key on a tie', async () => {
    expect(await listed('')).toEqual([third, second, first]);
    // Two of the three share the status sorted on first: the second key decides between them.
    expectStatus(await org.api('POST', '/refunds/', { order_id: third, reason: 'customer_request', amount: 500 }), 200);
    await eventually(async () => expectStatus(await org.api('GET', `/orders/${third}`), 200).status, (status) => status === 'refunded', 'the third order to be refunded');
    expect(await listed('sorting=status&sorting=-amount')).toEqual([second, first, third]);
    expect(await listed('sorting=status&sorting=amount')).toEqual([second, third, first]);
  });

  it('orders by the same keys over GraphQL', async () => {
    const data = await graphqlData(org.gql('{ core { orders(first: 10, sorting: [net_amount_desc]) { edges { node { id } } } } }'));
    expect(data.core.orders.edges.map((edge: { node: { id: string } }) => edge.node.id)).toEqual([first, second, third]);
  });
});

describe('a customer sorting their own orders by subscription', () => {
  it('puts the orders of each subscription together, in the subscriptions’ order, one-time orders last', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const monthly = (await fixedProduct(org, 'Monthly', 500, 'month')).id;
    const yearly = (await fixedProduct(org, 'Yearly', 5000, 'year')).id;
    const once = (await fixedProduct(org, 'Once', 700)).id;
    const customer = expectStatus(await org.api('POST', '/customers/', { email: 'many@example.com' }), 201);
    const orders = [];
    for (const product of [once, monthly, yearly]) orders.push((await buyWithCheckout(org, product, 'many@example.com')).order);
    expect(new Set(orders.map((o) => o.customerId))).toEqual(new Set([customer.id]));
    const token = (await org.polar.customerSessions.create({ customerId: customer.id })).token;
    const portal = restClient(t.server.base('sandbox'), token);
    const bySubscription = [...orders.filter((o) => o.subscriptionId)].sort((a, b) => a.subscriptionId!.localeCompare(b.subscriptionId!));
    const ascending = [...bySubscription.map((o) => o.id), orders[0].id];
    const list = async (sorting: string) => expectStatus(await portal('GET', `/customer-portal/orders/?sorting=${sorting}`), 200).items.map((o: { id: string }) => o.id);
    expect(await list('subscription')).toEqual(ascending);
    expect(await list('-subscription')).toEqual([...ascending].reverse());
  });
});

describe('reading and updating one order', () => {
  let org: Org;
  let orderId: string;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    const product = (await fixedProduct(org, 'Lamp', 4500)).id;
    const checkout = await newCheckout(org, { products: [product] });
    orderId = (await confirm(org, checkout, { customer_email: 'lamp@example.com', customer_billing_name: 'Lamp Co', customer_billing_address: ADDRESS })).id;
  });

  it('answers 404 for an order that does not exist, over REST and GraphQL', async () => {
    const id = randomUUID();
    for (const answer of [await org.api('GET', `/orders/${id}`), await org.api('PATCH', `/orders/${id}`, { billing_name: 'Nobody' })]) {
      expectErrorBody(answer, 404, 'ResourceNotFound');
      expect(answer.body.detail).toBe('Order not found.');
    }
    await graphqlFailure(org.gql('query ($id: UUID!) { core { order(id: $id) { id } } }', { id }), 'RESOURCE_NOT_FOUND');
  });

  it('changes only the billing detail sent: the name alone keeps the address, the address alone keeps the name', async () => {
    const named = expectStatus(await org.api('PATCH', `/orders/${orderId}`, { billing_name: 'Lamp Holdings' }), 200);
    expect(named).toMatchObject({ billing_name: 'Lamp Holdings', billing_address: ADDRESS });
    const moved = { ...ADDRESS, line1: '9 Quai de Valmy', postal_code: '75010' };
    const addressed = expectStatus(await org.api('PATCH', `/orders/${orderId}`, { billing_address: moved }), 200);
    expect(addressed).toMatchObject({ billing_name: 'Lamp Holdings', billing_address: moved });
    expect(expectStatus(await org.api('GET', `/orders/${orderId}`), 200)).toMatchObject({ billing_name: 'Lamp Holdings', billing_address: moved });
  });
});
