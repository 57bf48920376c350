// The Customer Portal's subscriptions, end to end in sandbox on a test clock: a customer signed in by
// their organization lists and reads their own subscriptions, cancels and uncancels them, and moves
// to another plan through the official client, by the Core rules and with the Core events. From the
// attacker's side: another customer's subscription is answered as one that does not exist and stays
// as it was; a checkout's session reads what the checkout bought and changes nothing; an
// organization token, a revoked token and no token are refused. The job runner is stopped: the test
// runs the due work itself (`settle`).
import { randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { AlreadyCanceledSubscription } from '@polar-sh/sdk/models/errors/alreadycanceledsubscription.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient, restClient, settleJobs } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, sdkServerURL, type Org } from '../helpers/organizations.ts';
import { expectErrorBody, expectStatus } from '../helpers/responses.ts';
import { datetime, uuid } from '../helpers/matchers.ts';
import { rejectionOf } from '../helpers/waiting.ts';

let portal: Polar;
// Monthly periods from here: January 1st to February 1st, 31 days.
const start = new Date('2032-01-01T00:00:00.000Z');
const DAY = 86_400_000;

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, stopSandboxJobs: true, clock: start });
beforeAll(() => {
  portal = new Polar({ serverURL: sdkServerURL(t.server, 'sandbox') });
});

const sandbox = () => t.server.kassa.environments.sandbox;
const prisma = () => sandbox().environment.prisma;
const rest = (token?: string) => restClient(t.server.base('sandbox'), token);

/** Runs the due jobs until nothing is left to do at the current time. */
async function settle() {
  await settleJobs(sandbox().jobs);
}

async function plan(org: Org, name: string, amount: number, recurringInterval: 'month' | 'year' | null = 'month', benefits: string[] = []) {
  const product = await org.polar.products.create({ name, recurringInterval, prices: [{ amountType: 'fixed', priceAmount: amount, priceCurrency: 'usd' }] });
  if (benefits.length) await org.polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits } });
  return product;
}

/** The buyer confirms a checkout of the product with a test card; once settled, the subscription it started and the checkout's session token. */
async function subscribe(org: Org, productId: string, email: string) {
  const checkout = await org.polar.checkouts.create({ products: [productId] });
  const confirmed = await org.buyer.checkouts.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: { customerEmail: email, customerName: 'Ada Buyer', confirmationTokenId: 'tok_visa' },
  });
  await settle();
  const subscription = await prisma().subscription.findFirstOrThrow({ where: { checkoutId: checkout.id } });
  expect(subscription.status).toBe('active');
  return { subscription, checkoutToken: confirmed.customerSessionToken };
}

/** A customer session the organization issues, at the current test clock. */
async function signIn(org: Org, customerId: string) {
  return (await org.polar.customerSessions.create({ customerId })).token;
}

async function eventTypes(resourceId: string) {
  return (await prisma().event.findMany({ where: { resourceId }, orderBy: { sequence: 'asc' } })).map((e) => e.type);
}

/** Everything a change could touch: the subscription as Core reads it, its pending items and its events. */
async function stateOf(org: Org, id: string) {
  const subscription = await org.api('GET', `/subscriptions/${id}`);
  const pending = await prisma().subscriptionPendingItem.findMany({ where: { subscriptionId: id }, orderBy: { createdAt: 'asc' } });
  return { subscription: subscription.body, pending, events: await eventTypes(id) };
}

describe('a customer’s own subscriptions, through the official client', () => {
  let org: Org;
  let basic: Awaited<ReturnType<typeof plan>>;
  let pro: Awaited<ReturnType<typeof plan>>;
  let benefitId: string;
  let mine: { id: string; customerId: string };
  let second: { id: string };
  let token: string;

  beforeAll(async () => {
    t.server.clock.now = start;
    org = await newOrganization(t.server, 'sandbox');
    benefitId = (await org.polar.benefits.create({ type: 'custom', description: 'Priority support', properties: { note: 'Write to us' } })).id;
    basic = await plan(org, 'Basic monthly', 1000, 'month', [benefitId]);
    pro = await plan(org, 'Pro monthly', 2000);
    // The organization set the reader's address, so both subscriptions reach one customer.
    await org.polar.customers.create({ email: 'reader@example.com' });
    mine = (await subscribe(org, basic.id, 'reader@example.com')).subscription;
    second = (await subscribe(org, pro.id, 'reader@example.com')).subscription;
    await subscribe(org, basic.id, 'neighbour@example.com');
    token = await signIn(org, mine.customerId);
  });

  it('lists only the customer’s own subscriptions, newest start first, and filters them', async () => {
    const page = await portal.customerPortal.subscriptions.list({ customerSession: token }, {});
    expect(page.result.items.map((s) => s.id).sort()).toEqual([mine.id, second.id].sort());
    expect(page.result.pagination).toEqual({ totalCount: 2, maxPage: 1 });

    const byProduct = await portal.customerPortal.subscriptions.list({ customerSession: token }, { productId: pro.id });
    expect(byProduct.result.items.map((s) => s.id)).toEqual([second.id]);
    const byQuery = await portal.customerPortal.subscriptions.list({ customerSession: token }, { query: 'basic' });
    expect(byQuery.result.items.map((s) => s.id)).toEqual([mine.id]);
    const byAmount = await portal.customerPortal.subscriptions.list({ customerSession: token }, { sorting: ['-amount'] });
    expect(byAmount.result.items.map((s) => s.id)).toEqual([second.id, mine.id]);
    const inactive = await portal.customerPortal.subscriptions.list({ customerSession: token }, { active: false });
    expect(inactive.result.items).toEqual([]);
  });

  it('reads one with its product, benefits, organization and prices, and nothing of the merchant’s', async () => {
    const subscription = await portal.customerPortal.subscriptions.get({ customerSession: token }, { id: mine.id });
    expect(subscription).toMatchObject({
      id: mine.id,
      status: 'active',
      amount: 1000,
      currency: 'usd',
      recurringInterval: 'month',
      cancelAtPeriodEnd: false,
      currentPeriodStart: start,
      currentPeriodEnd: new Date('2032-02-01T00:00:00.000Z'),
      customerId: mine.customerId,
      productId: basic.id,
      discountId: null,
      meters: [],
      product: { id: basic.id, name: 'Basic monthly', isRecurring: true, organizationId: org.organizationId, medias: [] },
    });
    expect(subscription.product.organization).toMatchObject({ id: org.organizationId, status: 'active' });
    expect(subscription.product.benefits).toEqual([expect.objectContaining({ id: benefitId, type: 'custom', description: 'Priority support' })]);
    expect(subscription.prices).toEqual([expect.objectContaining({ amountType: 'fixed', priceAmount: 1000 })]);

    const raw = expectStatus(await rest(token)('GET', `/customer-portal/subscriptions/${mine.id}`), 200);
    expect(raw).toMatchObject({ id: uuid, created_at: datetime, customer_cancellation_reason: null, checkout_id: uuid });
    expect(Object.keys(raw)).not.toEqual(expect.arrayContaining(['metadata']));
    expect(raw).not.toHaveProperty('customer');
    expect(raw.product).not.toHaveProperty('metadata');
    expect(raw.product.benefits[0]).not.toHaveProperty('properties');
    expect(raw.product.benefits[0]).not.toHaveProperty('metadata');
  });

  it('offers no path from a portal subscription to the customer, its orders or metadata over GraphQL', async () => {
    const gql = graphqlClient(t.server.base('sandbox'), token);
    for (const selection of ['customer { id }', 'orders { id }', 'metadata', 'product { metadata }', 'product { benefits { properties } }']) {
      const response = await gql(`query ($id: UUID!) { customerPortal { subscription(id: $id) { id ${selection} } } }`, { id: mine.id });
      expect(response.body.errors?.[0]?.extensions?.code, selection).toBe('GRAPHQL_VALIDATION_FAILED');
    }
  });

  it('cancels at period end with a reason and uncancels, recording the Core events', async () => {
    const canceled = await portal.customerPortal.subscriptions.update(
      { customerSession: token },
      { id: mine.id, customerSubscriptionUpdate: { cancelAtPeriodEnd: true, cancellationReason: 'too_expensive', cancellationComment: 'Cheaper elsewhere' } },
    );
    expect(canceled).toMatchObject({
      status: 'active',
      cancelAtPeriodEnd: true,
      canceledAt: start,
      endsAt: canceled.currentPeriodEnd,
      customerCancellationReason: 'too_expensive',
      customerCancellationComment: 'Cheaper elsewhere',
    });
    expect((await eventTypes(mine.id)).slice(-2)).toEqual(['subscription.updated', 'subscription.canceled']);

    const resumed = await portal.customerPortal.subscriptions.update({ customerSession: token }, { id: mine.id, customerSubscriptionUpdate: { cancelAtPeriodEnd: false } });
    expect(resumed).toMatchObject({ cancelAtPeriodEnd: false, canceledAt: null, endsAt: null, customerCancellationReason: null, customerCancellationComment: null });
    expect((await eventTypes(mine.id)).slice(-2)).toEqual(['subscription.updated', 'subscription.uncanceled']);
    expect((await org.polar.subscriptions.get({ id: mine.id })).cancelAtPeriodEnd).toBe(false);
  });

  it('cancels at period end with DELETE, and refuses a second cancel as Core does', async () => {
    const canceled = await portal.customerPortal.subscriptions.cancel({ customerSession: token }, { id: second.id });
    expect(canceled).toMatchObject({ id: second.id, status: 'active', cancelAtPeriodEnd: true, endsAt: canceled.currentPeriodEnd });
    expect((await eventTypes(second.id)).slice(-2)).toEqual(['subscription.updated', 'subscription.canceled']);
    const again = await rejectionOf(portal.customerPortal.subscriptions.cancel({ customerSession: token }, { id: second.id }));
    expect(again).toBeInstanceOf(AlreadyCanceledSubscription);
    await portal.customerPortal.subscriptions.update({ customerSession: token }, { id: second.id, customerSubscriptionUpdate: { cancelAtPeriodEnd: false } });
  });

  it('moves to another recurring plan mid-period, prorated as Core does', async () => {
    t.server.clock.now = new Date(start.getTime() + 15.5 * DAY);
    const midToken = await signIn(org, mine.customerId);
    const eventsBefore = (await eventTypes(mine.id)).length;
    const changed = await portal.customerPortal.subscriptions.update({ customerSession: midToken }, { id: mine.id, customerSubscriptionUpdate: { productId: pro.id } });
    expect(changed).toMatchObject({ productId: pro.id, amount: 2000, product: { id: pro.id, name: 'Pro monthly' } });
    expect(changed.prices.map((p) => p.id)).toEqual(pro.prices.map((p) => p.id));
    // Half of the 31-day period is left: half of the old price back, half of the new one due.
    const pending = await prisma().subscriptionPendingItem.findMany({ where: { subscriptionId: mine.id }, orderBy: { amount: 'asc' } });
    expect(pending.map((p) => p.amount)).toEqual([-500, 1000]);
    expect((await eventTypes(mine.id)).slice(eventsBefore)).toEqual(['subscription.updated']);
    expect((await org.polar.subscriptions.get({ id: mine.id })).productId).toBe(pro.id);
    t.server.clock.now = start;
  });
});

describe('bad changes are refused with 422 and change nothing', () => {
  let org: Org;
  let subscriptionId: string;
  let token: string;
  const refused: Record<string, string> = {};

  beforeAll(async () => {
    t.server.clock.now = start;
    org = await newOrganization(t.server, 'sandbox');
    const other = await newOrganization(t.server, 'sandbox');
    const current = await plan(org, 'Starter', 900);
    const archived = await plan(org, 'Retired plan', 1200);
    await org.polar.products.update({ id: archived.id, productUpdate: { isArchived: true } });
    refused.archived = archived.id;
    refused.oneTime = (await plan(org, 'Handbook', 3000, null)).id;
    refused.yearly = (await plan(org, 'Starter yearly', 9000, 'year')).id;
    refused.foreign = (await plan(other, 'Their plan', 1500)).id;
    refused.unknown = randomUUID();
    refused.current = current.id;
    const { subscription } = await subscribe(org, current.id, 'careful@example.com');
    subscriptionId = subscription.id;
    token = await signIn(org, subscription.customerId);
  });

  it('refuses a product that is archived, one-time, of another interval, of another organization, unknown, or the current one', async () => {
    const before = await stateOf(org, subscriptionId);
    for (const [what, productId] of Object.entries(refused)) {
      const response = await rest(token)('PATCH', `/customer-portal/subscriptions/${subscriptionId}`, { product_id: productId });
      expect(response.status, what).toBe(422);
      expect(response.body.detail, what).toEqual([expect.objectContaining({ loc: ['body', 'product_id'], msg: expect.any(String) })]);
    }
    const error = await rejectionOf(portal.customerPortal.subscriptions.update({ customerSession: token }, { id: subscriptionId, customerSubscriptionUpdate: { productId: refused.archived } }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect(await stateOf(org, subscriptionId)).toEqual(before);
  });

  it('refuses a request of both kinds, of neither, or malformed', async () => {
    const before = await stateOf(org, subscriptionId);
    for (const [body, loc] of [
      [{ cancel_at_period_end: true, product_id: refused.current }, ['body']],
      [{ cancellation_reason: 'unused', product_id: refused.current }, ['body']],
      [{}, ['body']],
      [{ cancellation_reason: 'unused' }, ['body', 'cancel_at_period_end']],
      [{ cancel_at_period_end: null }, ['body', 'cancel_at_period_end']],
      [{ product_id: null }, ['body', 'product_id']],
      [{ cancel_at_period_end: false, cancellation_comment: 'changed my mind' }, ['body', 'cancel_at_period_end']],
      [{ cancel_at_period_end: true, cancellation_reason: 'bored' }, ['body', 'cancellation_reason']],
      [{ cancel_at_period_end: 'yes' }, ['body', 'cancel_at_period_end']],
      [{ product_id: 'not-a-uuid' }, ['body', 'product_id']],
      [{ cancel_at_period_end: true, revoke: true }, ['body', 'revoke']],
    ] as const) {
      const response = await rest(token)('PATCH', `/customer-portal/subscriptions/${subscriptionId}`, body);
      expect(response.status, `${JSON.stringify(body)}: ${JSON.stringify(response.body)}`).toBe(422);
      expect(response.body.detail, JSON.stringify(body)).toEqual([expect.objectContaining({ loc })]);
    }
    expect(await stateOf(org, subscriptionId)).toEqual(before);
  });

  it('answers a malformed subscription id with 422', async () => {
    expect((await rest(token)('GET', '/customer-portal/subscriptions/not-a-uuid')).status).toBe(422);
    expect((await rest(token)('DELETE', '/customer-portal/subscriptions/not-a-uuid')).status).toBe(422);
  });
});

describe('a subscription that has ended', () => {
  it('cannot be canceled or resumed from the portal: the same AlreadyCanceledSubscription as Core', async () => {
    t.server.clock.now = start;
    const org = await newOrganization(t.server, 'sandbox');
    const { subscription } = await subscribe(org, (await plan(org, 'Short-lived', 500)).id, 'gone@example.com');
    expectStatus(await org.api('DELETE', `/subscriptions/${subscription.id}`), 200);
    const token = await signIn(org, subscription.customerId);
    const before = await stateOf(org, subscription.id);

    const core = await org.api('PATCH', `/subscriptions/${subscription.id}`, { cancel_at_period_end: true });
    expectErrorBody(core, 403, 'AlreadyCanceledSubscription');
    const canceled = await rest(token)('PATCH', `/customer-portal/subscriptions/${subscription.id}`, { cancel_at_period_end: true });
    expect(canceled.body).toEqual(core.body);
    expect(canceled.status).toBe(403);
    expect(await rejectionOf(portal.customerPortal.subscriptions.cancel({ customerSession: token }, { id: subscription.id }))).toBeInstanceOf(AlreadyCanceledSubscription);
    const resumed = await rest(token)('PATCH', `/customer-portal/subscriptions/${subscription.id}`, { cancel_at_period_end: false });
    expectErrorBody(resumed, 403, 'AlreadyCanceledSubscription');
    expect(await stateOf(org, subscription.id)).toEqual(before);
  });
});

describe('from the attacker’s side', () => {
  let org: Org;
  let victim: { id: string; customerId: string };
  let victimCheckoutToken: string;
  let attackerToken: string;
  let foreignToken: string;

  beforeAll(async () => {
    t.server.clock.now = start;
    org = await newOrganization(t.server, 'sandbox');
    const other = await newOrganization(t.server, 'sandbox');
    const monthly = await plan(org, 'Team plan', 3000);
    await plan(org, 'Enterprise plan', 9000);
    // The organization set the victim's address, so each of the victim's checkouts reaches them.
    await org.polar.customers.create({ email: 'victim@example.com' });
    const bought = await subscribe(org, monthly.id, 'victim@example.com');
    victim = bought.subscription;
    victimCheckoutToken = bought.checkoutToken;
    const attacker = (await subscribe(org, monthly.id, 'attacker@example.com')).subscription;
    attackerToken = await signIn(org, attacker.customerId);
    const foreign = (await subscribe(other, (await plan(other, 'Elsewhere', 1000)).id, 'victim@example.com')).subscription;
    foreignToken = await signIn(other, foreign.customerId);
  });

  it('answers another customer’s subscription exactly as an unknown one, on every route, and changes nothing', async () => {
    const before = await stateOf(org, victim.id);
    const pro = (await org.polar.products.list({ query: 'Enterprise' })).result.items[0];
    for (const token of [attackerToken, foreignToken]) {
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { cancel_at_period_end: true }],
        ['PATCH', { product_id: pro.id }],
        ['DELETE', undefined],
      ] as const) {
        const victims = await rest(token)(method, `/customer-portal/subscriptions/${victim.id}`, body);
        const unknown = await rest(token)(method, `/customer-portal/subscriptions/${randomUUID()}`, body);
        expectErrorBody(victims, 404, 'ResourceNotFound');
        expect(victims.body, `${method} ${JSON.stringify(body)}`).toEqual(unknown.body);
      }
      const listed = await portal.customerPortal.subscriptions.list({ customerSession: token }, {});
      expect(listed.result.items.map((s) => s.id)).not.toContain(victim.id);
      const gql = graphqlClient(t.server.base('sandbox'), token);
      const mutation = await gql('mutation ($id: UUID!) { customerPortal { subscriptionCancel(id: $id) { id } } }', { id: victim.id });
      expect(mutation.body.errors?.[0]?.extensions?.code).toBe('RESOURCE_NOT_FOUND');
    }
    expect(await rejectionOf(portal.customerPortal.subscriptions.get({ customerSession: attackerToken }, { id: victim.id }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(portal.customerPortal.subscriptions.cancel({ customerSession: attackerToken }, { id: victim.id }))).toBeInstanceOf(ResourceNotFound);
    expect(await stateOf(org, victim.id)).toEqual(before);
  });

  it('lets a checkout’s session read the subscription it bought, and change nothing', async () => {
    const before = await stateOf(org, victim.id);
    const read = await portal.customerPortal.subscriptions.get({ customerSession: victimCheckoutToken }, { id: victim.id });
    expect(read.id).toBe(victim.id);
    const listed = await portal.customerPortal.subscriptions.list({ customerSession: victimCheckoutToken }, {});
    expect(listed.result.items.map((s) => s.id)).toEqual([victim.id]);
    for (const [method, body] of [
      ['PATCH', { cancel_at_period_end: true }],
      ['DELETE', undefined],
    ] as const) {
      expectErrorBody(await rest(victimCheckoutToken)(method, `/customer-portal/subscriptions/${victim.id}`, body), 403, 'NotPermitted');
    }
    expect(await stateOf(org, victim.id)).toEqual(before);
  });

  it('keeps a checkout’s session to that checkout: the same customer’s other subscription is not found', async () => {
    const other = await subscribe(org, (await plan(org, 'Add-on', 700)).id, 'victim@example.com');
    expect(other.subscription.customerId).toBe(victim.customerId);
    expectErrorBody(await rest(other.checkoutToken)('GET', `/customer-portal/subscriptions/${victim.id}`), 404, 'ResourceNotFound');
    const listed = await portal.customerPortal.subscriptions.list({ customerSession: other.checkoutToken }, {});
    expect(listed.result.items.map((s) => s.id)).toEqual([other.subscription.id]);
  });

  it('refuses an organization token (403), no token and a revoked customer token (401)', async () => {
    const before = await stateOf(org, victim.id);
    for (const [method, path, body] of [
      ['GET', '/customer-portal/subscriptions/', undefined],
      ['GET', `/customer-portal/subscriptions/${victim.id}`, undefined],
      ['PATCH', `/customer-portal/subscriptions/${victim.id}`, { cancel_at_period_end: true }],
      ['DELETE', `/customer-portal/subscriptions/${victim.id}`, undefined],
    ] as const) {
      expectErrorBody(await org.api(method, path, body), 403, 'NotPermitted');
      expect((await rest()(method, path, body)).status, `${method} ${path}`).toBe(401);
    }
    const session = await org.polar.customerSessions.create({ customerId: victim.customerId });
    expectStatus(await rest(session.token)('GET', `/customer-portal/subscriptions/${victim.id}`), 200);
    expect((await org.api('DELETE', `/customer-sessions/${session.id}`)).status).toBe(204);
    expect((await rest(session.token)('DELETE', `/customer-portal/subscriptions/${victim.id}`)).status).toBe(401);
    expect(await stateOf(org, victim.id)).toEqual(before);
  });
});
