// Entitlements from the attacker's side: subscriptions, benefits and their grants, license keys,
// files and customer sessions, probed by other organizations, by customers, by anonymous callers and
// by concurrent or malformed requests. Each test states the rule that must hold.
//
// In sandbox, on a test clock, with the sandbox job runner stopped: the tests run the due work
// themselves (`settle`, or the renewal sweep directly), so every interleaving is deterministic.
import { randomUUID } from 'node:crypto';
import type { Subscription } from '@polar-sh/sdk/models/components/subscription.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
// The server (and with it the whole schema) first: the services below import each other in cycles.
import { graphqlClient, restClient, settleJobs } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, type Org } from '../helpers/organizations.ts';
import { uploadFile } from '../helpers/files.ts';
import { linkKey, signLink } from '../../src/auth/signed-links.ts';
import type { Db } from '../../src/db/client.ts';
import { enqueueJob, type JobContext } from '../../src/jobs/runner.ts';
import { fileDownloadLink } from '../../src/modules/files/service.ts';
import { systemContext } from '../../src/context.ts';
import { renewSubscriptions, settleSubscriptionOrder } from '../../src/modules/subscriptions/service.ts';

const start = new Date('2031-03-01T00:00:00.000Z');
const MINUTE = 60_000;

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, stopSandboxJobs: true, clock: start });

const sandbox = () => t.server.kassa.environments.sandbox;
const prisma = () => sandbox().environment.prisma;
const quietLogger = { info() {}, warn() {}, error() {}, debug() {}, child() { return this; } } as never;

/** Runs the sweeps and every due job until nothing is left to do at the current time. */
async function settle() {
  await settleJobs(sandbox().jobs);
}

/** The renewal sweep alone, as the runner calls it, at the test clock. */
function sweepContext(db: Db = prisma()): JobContext {
  return { environment: sandbox().environment, prisma: db, now: () => t.server.clock.now ?? new Date(), logger: quietLogger };
}

// Every subscription a test starts is revoked after it, so no later sweep finds a crowd of them due.
const started: { org: Org; id: string }[] = [];
afterEach(async () => {
  for (const { org, id } of started.splice(0)) {
    const live = await prisma().subscription.findUnique({ where: { id }, select: { endedAt: true } });
    if (live && live.endedAt === null) await org.api('DELETE', `/subscriptions/${id}`);
  }
  t.server.clock.now = start;
});

async function product(org: Org, name: string, price: Record<string, unknown>, options: { recurring?: boolean; benefits?: string[] } = {}) {
  const created = await org.polar.products.create({ name, recurringInterval: options.recurring === false ? null : 'month', prices: [price as never] });
  if (options.benefits?.length) await org.polar.products.updateBenefits({ id: created.id, productBenefitsUpdate: { benefits: options.benefits } });
  return created;
}
const monthly = (org: Org, name: string, amount: number, benefits: string[] = []) =>
  product(org, name, { amountType: 'fixed', priceAmount: amount, priceCurrency: 'usd' }, { benefits });

/** A checkout confirmed by the buyer with a test card; nothing is settled yet. Returns the confirmation. */
async function confirm(org: Org, productId: string, email: string, extra: Record<string, unknown> = {}) {
  const checkout = await org.polar.checkouts.create({ products: [productId] });
  return org.buyer.checkouts.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: { customerEmail: email, customerName: 'Ada Buyer', confirmationTokenId: 'tok_visa', ...extra },
  });
}

async function subscribe(org: Org, productId: string, email: string, extra: Record<string, unknown> = {}): Promise<Subscription> {
  const confirmed = await confirm(org, productId, email, extra);
  await settle();
  const found = await prisma().subscription.findFirstOrThrow({ where: { checkoutId: confirmed.id } });
  started.push({ org, id: found.id });
  return org.polar.subscriptions.get({ id: found.id });
}

async function setPaymentMethod(org: Org, id: string, paymentMethod: string) {
  const { body } = await org.gql(`mutation ($id: UUID!, $pm: String!) { core { subscriptionPaymentMethodUpdate(id: $id, paymentMethod: $pm) { id } } }`, { id, pm: paymentMethod });
  expect(body.errors).toBeUndefined();
}

const ordersOf = (subscriptionId: string) =>
  prisma().order.findMany({ where: { subscriptionId }, orderBy: { billingPeriodStart: 'asc' }, include: { items: true, payments: true, refunds: true } });

async function eventTypes(resourceId: string) {
  return (await prisma().event.findMany({ where: { resourceId }, orderBy: { sequence: 'asc' } })).map((e) => e.type);
}


/** A 4xx, never a 500: the server understood the request was bad. */
function expectClientError(response: { status: number; body: unknown }, what: string) {
  expect(response.status, `${what}: ${JSON.stringify(response.body)}`).toBeGreaterThanOrEqual(400);
  expect(response.status, `${what}: ${JSON.stringify(response.body)}`).toBeLessThan(500);
}

// =============================================================================================
// Problems found in review
// =============================================================================================

describe('a checkout confirmed with someone else’s email signs the confirmer in to that checkout only', () => {
  it('gives an anonymous buyer who types a victim’s email no access to the victim’s downloadables', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const secret = Buffer.from('the victim paid for this');
    const file = await uploadFile(org, secret, 'paid-report.pdf');
    const benefit = await org.polar.benefits.create({ type: 'downloadables', description: 'Paid report', properties: { files: [file.id] } });
    const report = await product(org, 'Paid report', { amountType: 'fixed', priceAmount: 4900, priceCurrency: 'usd' }, { recurring: false, benefits: [benefit.id] });
    const freebie = await product(org, 'Free newsletter', { amountType: 'free' }, { recurring: false });

    // The victim buys the report.
    await confirm(org, report.id, 'victim@example.com');
    await settle();
    expect(await prisma().benefitGrant.count({ where: { benefitId: benefit.id, grantedAt: { not: null } } })).toBe(1);

    // The attacker opens any checkout of the shop (here: the free newsletter, as a storefront would
    // hand out) and confirms it with the victim's email address, which nobody verifies.
    const stolen = await confirm(org, freebie.id, 'victim@example.com', { confirmationTokenId: undefined });
    const token = stolen.customerSessionToken;
    const attacker = restClient(t.server.base('sandbox'), token);
    const listed = await attacker('GET', '/customer-portal/downloadables/');
    // Whatever the answer (no token, a token for a new customer, a 401/403), the victim's file must
    // not be listed to the attacker, nor a link that downloads it.
    const items: { file: { id: string; download: { url: string } } }[] = listed.status === 200 ? listed.body.items : [];
    expect(items.map((d) => d.file.id), 'the victim’s file is listed to the attacker').not.toContain(file.id);
  });

  it('still lists to a buyer the files that their own checkout bought', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const file = await uploadFile(org, Buffer.from('bought just now'), 'guide.pdf');
    const benefit = await org.polar.benefits.create({ type: 'downloadables', description: 'Guide', properties: { files: [file.id] } });
    const guide = await product(org, 'Guide', { amountType: 'fixed', priceAmount: 900, priceCurrency: 'usd' }, { recurring: false, benefits: [benefit.id] });
    const confirmed = await confirm(org, guide.id, 'reader@example.com');
    await settle();
    const listed = await restClient(t.server.base('sandbox'), confirmed.customerSessionToken)('GET', '/customer-portal/downloadables/');
    expect(listed.status).toBe(200);
    expect(listed.body.items.map((d: { file: { id: string } }) => d.file.id)).toEqual([file.id]);
  });
});

describe('the renewal sweep with 20 or more subscriptions due at once', () => {
  it('bills twenty due subscriptions and returns', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const plan = await monthly(org, 'Crowded plan', 500);
    // Twenty buyers at the same instant: their first periods end together.
    await Promise.all(Array.from({ length: 20 }, (_, i) => confirm(org, plan.id, `crowd${i}@example.com`)));
    await settle();
    const subscriptions = await prisma().subscription.findMany({ where: { productId: plan.id } });
    expect(subscriptions.filter((s) => s.status === 'active')).toHaveLength(20);
    started.push(...subscriptions.map((s) => ({ org, id: s.id })));

    t.server.clock.now = new Date(subscriptions[0].currentPeriodEnd.getTime() + MINUTE);
    // The sweep's own loop, bounded: each pass is one transaction. A correct sweep needs two passes
    // here (twenty to bill, then none); after ten it is spinning on work it cannot do.
    let passes = 0;
    const counting = {
      $transaction: (...args: Parameters<Db['$transaction']>) => {
        if (++passes > 10) throw new Error(`the renewal sweep is still looping after ${passes - 1} passes`);
        return (prisma().$transaction as (...a: unknown[]) => Promise<unknown>)(...args);
      },
    } as unknown as Db;
    let failure: unknown = null;
    try {
      await renewSubscriptions(sweepContext(counting));
    } catch (error) {
      failure = error;
    }
    // Each period was billed once, whatever else happened.
    const renewals = await prisma().order.count({ where: { productId: plan.id, billingReason: 'subscription_cycle' } });
    expect(renewals).toBe(20);
    expect(failure, 'the sweep looped on subscriptions whose renewal payment is still pending').toBeNull();
  });
});

describe('a pay-what-you-want subscription renews at the amount chosen', () => {
  it('charges the amount the buyer chose on every renewal, not 0', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const plan = await product(org, 'Supporter', { amountType: 'custom', minimumAmount: 500, priceCurrency: 'usd' });
    const subscription = await subscribe(org, plan.id, 'supporter@example.com', { amount: 2500 });
    expect(subscription).toMatchObject({ status: 'active', amount: 2500 });
    t.server.clock.now = new Date(subscription.currentPeriodEnd!.getTime() + MINUTE);
    await settle();
    const [first, renewal] = await ordersOf(subscription.id);
    expect(first.totalAmount).toBe(2500);
    expect(renewal).toMatchObject({ billingReason: 'subscription_cycle' });
    expect(renewal.totalAmount, 'the renewal order of a 2500/month subscription').toBe(2500);
  });
});

describe('a subscription that ends while its renewal payment is scheduled is not charged', () => {
  it('does not take the money for a period after a revoke, nor for a subscription revoked before its first payment', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const plan = await monthly(org, 'Ending plan', 1500);

    // A renewal is billed (the order and its payment made), then the subscription is revoked before
    // the payment job runs.
    const subscription = await subscribe(org, plan.id, 'leaving@example.com');
    t.server.clock.now = new Date(subscription.currentPeriodEnd!.getTime() + MINUTE);
    await renewSubscriptions(sweepContext());
    await org.polar.subscriptions.revoke({ id: subscription.id });
    await settle();
    const renewal = (await ordersOf(subscription.id)).at(-1)!;
    expect(renewal.billingReason).toBe('subscription_cycle');
    const charged = renewal.payments.filter((p) => p.status === 'succeeded').reduce((sum, p) => sum + p.amount, 0);
    const refunded = renewal.refunds.filter((r) => r.status !== 'failed').reduce((sum, r) => sum + r.amount, 0);
    expect(charged - refunded, 'kept for a period the revoked subscription never gets').toBe(0);

    // A subscription revoked while still incomplete (its first payment not yet processed).
    t.server.clock.now = start;
    const confirmed = await confirm(org, plan.id, 'changed-mind@example.com');
    const incomplete = await prisma().subscription.findFirstOrThrow({ where: { checkoutId: confirmed.id } });
    expect(incomplete.status).toBe('incomplete');
    expect((await org.api('DELETE', `/subscriptions/${incomplete.id}`)).status).toBe(200);
    await settle();
    const [first] = await ordersOf(incomplete.id);
    const kept = first.payments.filter((p) => p.status === 'succeeded').reduce((sum, p) => sum + p.amount, 0) - first.refunds.reduce((sum, r) => sum + r.amount, 0);
    expect((await prisma().subscription.findUniqueOrThrow({ where: { id: incomplete.id } })).status).toBe('canceled');
    expect(kept, 'kept for a subscription that was revoked before it started').toBe(0);
  });
});

describe('a plan change while the renewal payment is in flight', () => {
  it('is refused with SubscriptionLocked until the renewal settles, then bills the upgrade for the period that just started', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const basic = await monthly(org, 'Basic window', 1000);
    const pro = await monthly(org, 'Pro window', 3000);
    const subscription = await subscribe(org, basic.id, 'window@example.com');
    const periodEnd = subscription.currentPeriodEnd!;
    t.server.clock.now = new Date(periodEnd.getTime() + MINUTE);
    await renewSubscriptions(sweepContext()); // the next period is ordered at 1000, payment pending
    const locked = await org.api('PATCH', `/subscriptions/${subscription.id}`, { product_id: pro.id });
    expect(locked.status, JSON.stringify(locked.body)).toBe(409);
    expect(locked.body.error).toBe('SubscriptionLocked');
    expect((await org.polar.subscriptions.get({ id: subscription.id })).productId).toBe(basic.id);

    await settle();
    const change = await org.api('PATCH', `/subscriptions/${subscription.id}`, { product_id: pro.id });
    expect(change.status, JSON.stringify(change.body)).toBe(200);
    const renewed = await org.polar.subscriptions.get({ id: subscription.id });
    expect(renewed).toMatchObject({ status: 'active', productId: pro.id, currentPeriodStart: periodEnd });
    // The period [periodEnd, next) was paid at the Basic price, but Pro is used for all of it but a
    // minute: about 2000 more is due, on the next order.
    t.server.clock.now = new Date(renewed.currentPeriodEnd!.getTime() + MINUTE);
    await settle();
    const next = (await ordersOf(subscription.id)).at(-1)!;
    expect(next.billingPeriodStart).toEqual(renewed.currentPeriodEnd);
    const prorations = next.items.filter((i) => i.proration).reduce((sum, i) => sum + i.amount, 0);
    expect(prorations, 'the upgrade difference for the period that had just begun').toBeGreaterThan(1990);
  });
});

describe('a past-due renewal retried while its retry payment is in flight', () => {
  it('makes no second payment for the period, so the period is charged once', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const plan = await monthly(org, 'Retried plan', 1200);
    const subscription = await subscribe(org, plan.id, 'retried@example.com');
    await setPaymentMethod(org, subscription.id, 'tok_chargeDeclined');
    t.server.clock.now = new Date(subscription.currentPeriodEnd!.getTime() + MINUTE);
    await settle();
    expect((await org.polar.subscriptions.get({ id: subscription.id })).status).toBe('past_due');

    // A new card asks for a retry now; the retry's payment is made, its job not run yet.
    await setPaymentMethod(org, subscription.id, 'tok_visa');
    await renewSubscriptions(sweepContext());
    // The customer saves the card again: a retry is due again while the first one is in flight.
    await setPaymentMethod(org, subscription.id, 'tok_visa');
    await renewSubscriptions(sweepContext());
    const renewal = (await ordersOf(subscription.id)).at(-1)!;
    expect(renewal.payments.map((p) => p.status).sort()).toEqual(['failed', 'pending']);

    await settle();
    const paid = (await ordersOf(subscription.id)).at(-1)!;
    expect(paid.id).toBe(renewal.id);
    expect(paid.payments.map((p) => p.status).sort()).toEqual(['failed', 'succeeded']);
    expect(paid.payments.filter((p) => p.status === 'succeeded').reduce((sum, p) => sum + p.amount, 0)).toBe(1200);
    expect((await org.polar.subscriptions.get({ id: subscription.id })).currentPeriodStart).toEqual(subscription.currentPeriodEnd);
  });
});

describe('a payment result for a period that is no longer current', () => {
  it('is ignored: a late decline or a late success of a paid renewal leaves the subscription and its period as they are', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const plan = await monthly(org, 'Late result plan', 800);
    const subscription = await subscribe(org, plan.id, 'late@example.com');
    t.server.clock.now = new Date(subscription.currentPeriodEnd!.getTime() + MINUTE);
    await settle();
    const [, renewal] = await ordersOf(subscription.id);
    expect(renewal).toMatchObject({ billingReason: 'subscription_cycle', paid: true });
    const before = await prisma().subscription.findUniqueOrThrow({ where: { id: subscription.id } });
    expect(before.currentPeriodStart).toEqual(renewal.billingPeriodStart);

    // What the payment job does with the outcome of a second charge of that order, arriving now.
    for (const outcome of ['failed', 'succeeded'] as const) {
      await prisma().$transaction(async (tx) => {
        const ctx = systemContext(sandbox().environment, tx as Db, org.organizationId, () => t.server.clock.now!, 'late-payment');
        await settleSubscriptionOrder(ctx, tx as Db, renewal, outcome);
      });
      const after = await prisma().subscription.findUniqueOrThrow({ where: { id: subscription.id } });
      expect(after, `after a late ${outcome} result`).toMatchObject({
        status: 'active',
        cycles: before.cycles,
        currentPeriodStart: before.currentPeriodStart,
        currentPeriodEnd: before.currentPeriodEnd,
        failedAttempts: 0,
        retryAt: null,
      });
    }
  });
});

describe('canceling at period end while the first payment is in progress', () => {
  it('is refused with SubscriptionLocked and leaves the subscription uncanceled', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const plan = await monthly(org, 'Undecided plan', 900);
    const confirmed = await confirm(org, plan.id, 'undecided@example.com');
    const incomplete = await prisma().subscription.findFirstOrThrow({ where: { checkoutId: confirmed.id } });
    started.push({ org, id: incomplete.id });
    expect(incomplete.status).toBe('incomplete');
    const refused = await org.api('PATCH', `/subscriptions/${incomplete.id}`, { cancel_at_period_end: true });
    expect(refused.status, JSON.stringify(refused.body)).toBe(409);
    expect(refused.body.error).toBe('SubscriptionLocked');
    expect(await prisma().subscription.findUniqueOrThrow({ where: { id: incomplete.id } })).toMatchObject({ status: 'incomplete', cancelAtPeriodEnd: false, canceledAt: null });
    expect(await eventTypes(incomplete.id)).toEqual(['subscription.created']);
  });
});

describe('malformed input', () => {
  let org: Org;
  let key: { id: string; key: string };
  let activationId: string;
  let subscriptionId: string;
  const anonymous = () => restClient(t.server.base('sandbox'));

  beforeAll(async () => {
    t.server.clock.now = start;
    org = await newOrganization(t.server, 'sandbox');
    const benefit = await org.polar.benefits.create({ type: 'license_keys', description: 'Unlimited usage', properties: { activations: { limit: 3, enableCustomerAdmin: true } } });
    const plan = await monthly(org, 'Keyed plan', 900, [benefit.id]);
    const subscription = await subscribe(org, plan.id, 'malformed@example.com');
    started.splice(0); // kept for the whole describe; revoked in afterAll
    subscriptionId = subscription.id;
    key = await prisma().licenseKey.findFirstOrThrow({ where: { benefitId: benefit.id } });
    const activation = await anonymous()('POST', '/customer-portal/license-keys/activate', { key: key.key, organization_id: org.organizationId, label: 'Laptop' });
    expect(activation.status).toBe(200);
    activationId = activation.body.id;
  });
  afterAll(async () => {
    await org.api('DELETE', `/subscriptions/${subscriptionId}`);
  });

  it('a UUID with a stray closing brace is refused with a 4xx on every new endpoint, anonymous ones included, and changes nothing', async () => {
    // graphql-scalars' UUID accepts "…}" (an optional trailing brace) and hands it on; the
    // database's uuid cast then fails.
    const u = `${randomUUID()}}`;
    const e = encodeURIComponent(u);
    const api = anonymous();
    const answers: [string, { status: number; body: unknown }][] = [
      ['anonymous validate, organization_id', await api('POST', '/customer-portal/license-keys/validate', { key: key.key, organization_id: `${org.organizationId}}` })],
      ['anonymous validate, activation_id', await api('POST', '/customer-portal/license-keys/validate', { key: key.key, organization_id: org.organizationId, activation_id: u })],
      ['anonymous activate, organization_id', await api('POST', '/customer-portal/license-keys/activate', { key: key.key, organization_id: `${org.organizationId}}`, label: 'x' })],
      ['anonymous deactivate, activation_id', await api('POST', '/customer-portal/license-keys/deactivate', { key: key.key, organization_id: org.organizationId, activation_id: `${activationId}}` })],
      ['GET /subscriptions/{id}', await org.api('GET', `/subscriptions/${subscriptionId}%7D`)],
      ['PATCH /subscriptions/{id}', await org.api('PATCH', `/subscriptions/${subscriptionId}%7D`, { cancel_at_period_end: true })],
      ['DELETE /subscriptions/{id}', await org.api('DELETE', `/subscriptions/${subscriptionId}%7D`)],
      ['GET /subscriptions/?customer_id', await org.api('GET', `/subscriptions/?customer_id=${e}`)],
      ['GET /license-keys/{id}', await org.api('GET', `/license-keys/${key.id}%7D`)],
      ['PATCH /license-keys/{id}', await org.api('PATCH', `/license-keys/${key.id}%7D`, { status: 'disabled' })],
      ['GET /license-keys/?benefit_id', await org.api('GET', `/license-keys/?benefit_id=${e}`)],
      ['GET /license-keys/{id}/activations/{activation_id}', await org.api('GET', `/license-keys/${key.id}/activations/${e}`)],
      ['GET /benefits/{id}/grants', await org.api('GET', `/benefits/${e}/grants`)],
      ['POST /files/{id}/uploaded', await org.api('POST', `/files/${e}/uploaded`, { id: u, path: 'x', parts: [] })],
      ['DELETE /files/{id}', await org.api('DELETE', `/files/${e}`)],
      ['GET /files/?ids', await org.api('GET', `/files/?ids=${e}`)],
    ];
    const serverErrors = answers.filter(([, response]) => response.status >= 500).map(([what]) => what);
    expect(serverErrors, 'answered 500').toEqual([]);
    for (const [what, response] of answers) expectClientError(response, what);
    expect(await prisma().licenseKeyActivation.count({ where: { licenseKeyId: key.id } })).toBe(1);
    expect(await prisma().licenseKey.findUniqueOrThrow({ where: { id: key.id } })).toMatchObject({ status: 'granted', validations: 0 });
    expect(await prisma().subscription.findUniqueOrThrow({ where: { id: subscriptionId } })).toMatchObject({ status: 'active', cancelAtPeriodEnd: false });
  });

  it('adding to the usage of a key without a usage limit past the largest integer is a 4xx, and the usage stays', async () => {
    const api = anonymous();
    const max = await api('POST', '/customer-portal/license-keys/validate', { key: key.key, organization_id: org.organizationId, increment_usage: 2147483647 });
    expect(max.status, JSON.stringify(max.body)).toBe(200);
    expect(max.body.usage).toBe(2147483647);
    const past = await api('POST', '/customer-portal/license-keys/validate', { key: key.key, organization_id: org.organizationId, increment_usage: 1 });
    expectClientError(past, 'usage past 2^31-1');
    expect((await prisma().licenseKey.findUniqueOrThrow({ where: { id: key.id } })).usage).toBe(2147483647);
  });

  it('PATCH of a subscription with product_id null is a 422, not a 500', async () => {
    const response = await org.api('PATCH', `/subscriptions/${subscriptionId}`, { product_id: null });
    expect(response.status, JSON.stringify(response.body)).toBe(422);
    expect(await prisma().subscriptionPendingItem.count({ where: { subscriptionId } })).toBe(0);
  });
});

// =============================================================================================
// Rules that hold, pinned from the attacker's side
// =============================================================================================

describe('a customer session token', () => {
  let org: Org;
  let token: string;
  let subscriptionId: string;
  let keyValue: string;

  beforeAll(async () => {
    t.server.clock.now = start;
    org = await newOrganization(t.server, 'sandbox');
    const benefit = await org.polar.benefits.create({ type: 'license_keys', description: 'Portal key', properties: { prefix: 'CST' } });
    const plan = await monthly(org, 'Portal plan', 700, [benefit.id]);
    const confirmed = await confirm(org, plan.id, 'portal@example.com');
    await settle();
    token = confirmed.customerSessionToken;
    subscriptionId = (await prisma().subscription.findFirstOrThrow({ where: { checkoutId: confirmed.id } })).id;
    keyValue = (await prisma().licenseKey.findFirstOrThrow({ where: { benefitId: benefit.id } })).key;
  });
  afterAll(async () => {
    await org.api('DELETE', `/subscriptions/${subscriptionId}`);
  });

  it('reaches none of the Core subscription, benefit and license-key endpoints, and changes nothing through them', async () => {
    const asCustomer = restClient(t.server.base('sandbox'), token);
    expect((await asCustomer('GET', '/customer-portal/downloadables/')).status).toBe(200);
    for (const [method, path, body] of [
      ['GET', '/subscriptions/', undefined],
      ['GET', `/subscriptions/${subscriptionId}`, undefined],
      ['PATCH', `/subscriptions/${subscriptionId}`, { cancel_at_period_end: true }],
      ['DELETE', `/subscriptions/${subscriptionId}`, undefined],
      ['GET', '/benefits/', undefined],
      ['GET', '/license-keys/', undefined],
      ['POST', '/license-keys/validate', { key: keyValue, organization_id: org.organizationId }],
    ] as const) {
      const response = await asCustomer(method, path, body);
      expect(response.status, `${method} ${path}`).toBe(403);
      expect(response.body.error).toBe('NotPermitted');
    }
    const gql = graphqlClient(t.server.base('sandbox'), token);
    const revoke = await gql('mutation ($id: UUID!) { core { subscriptionRevoke(id: $id) { id } } }', { id: subscriptionId });
    expect(revoke.body.errors?.[0].extensions.code).toBe('NOT_PERMITTED');
    const state = await gql('query ($id: UUID!) { core { customerState(id: $id) { email } } }', { id: randomUUID() });
    expect(state.body.errors?.[0].extensions.code).toBe('NOT_PERMITTED');
    expect(await prisma().subscription.findUniqueOrThrow({ where: { id: subscriptionId } })).toMatchObject({ status: 'active', cancelAtPeriodEnd: false });
    expect(await prisma().licenseKey.findFirstOrThrow({ where: { key: keyValue } })).toMatchObject({ validations: 0 });
  });

  it('is unknown in production, and so is a sandbox license key', async () => {
    const production = restClient(t.server.base('production'), token);
    expect((await production('GET', '/customer-portal/downloadables/')).status).toBe(401);
    const validate = await restClient(t.server.base('production'))('POST', '/customer-portal/license-keys/validate', { key: keyValue, organization_id: org.organizationId });
    expect(validate.status).toBe(404);
    expect(validate.body).toEqual({ error: 'ResourceNotFound', detail: 'License key not found.' });
  });
});

describe('another organization', () => {
  it('cannot find the subscriptions, grants and activations of another, by filter or by id, nor change a payment method', async () => {
    t.server.clock.now = start;
    const owner = await newOrganization(t.server, 'sandbox');
    const intruder = await newOrganization(t.server, 'sandbox');
    const benefit = await owner.polar.benefits.create({ type: 'license_keys', description: 'Owner key', properties: { activations: { limit: 2, enableCustomerAdmin: false } } });
    const plan = await monthly(owner, 'Owner plan', 1100, [benefit.id]);
    // The owner set the buyer's address, so both subscriptions below reach one customer.
    await owner.polar.customers.create({ email: 'owned@example.com' });
    const subscription = await subscribe(owner, plan.id, 'owned@example.com');
    const grant = await prisma().benefitGrant.findFirstOrThrow({ where: { subscriptionId: subscription.id } });
    const key = await prisma().licenseKey.findFirstOrThrow({ where: { grantId: grant.id } });
    const activation = await restClient(t.server.base('sandbox'))('POST', '/customer-portal/license-keys/activate', { key: key.key, organization_id: owner.organizationId, label: 'Owner PC' });
    expect(activation.status).toBe(200);

    for (const query of [`customer_id=${subscription.customerId}`, `organization_id=${owner.organizationId}`, `product_id=${plan.id}`]) {
      const listed = await intruder.api('GET', `/subscriptions/?${query}`);
      expect(listed.status).toBe(200);
      expect(listed.body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
    }
    const pm = await intruder.gql('mutation ($id: UUID!) { core { subscriptionPaymentMethodUpdate(id: $id, paymentMethod: "tok_chargeDeclined") { id } } }', { id: subscription.id });
    expect(pm.body.errors?.[0].extensions.code).toBe('RESOURCE_NOT_FOUND');
    expect((await prisma().subscription.findUniqueOrThrow({ where: { id: subscription.id } })).paymentMethod).toBe('tok_visa');
    const grantRead = await intruder.gql('query ($id: UUID!) { core { benefitGrant(id: $id) { id properties } } }', { id: grant.id });
    expect(grantRead.body.errors?.[0].extensions.code).toBe('RESOURCE_NOT_FOUND');
    const state = await intruder.gql('query ($id: UUID!) { core { customerState(id: $id) { licenseKeys { key } } } }', { id: subscription.customerId });
    expect(state.body.errors?.[0].extensions.code).toBe('RESOURCE_NOT_FOUND');

    // Within the owner too, an activation is found only under its own key.
    const otherKey = await owner.polar.benefits.create({ type: 'license_keys', description: 'Second key', properties: {} });
    const second = await monthly(owner, 'Second plan', 100, [otherKey.id]);
    const secondSubscription = await subscribe(owner, second.id, 'owned@example.com');
    const secondKey = await prisma().licenseKey.findFirstOrThrow({ where: { benefitId: otherKey.id } });
    expect(secondSubscription.customerId).toBe(subscription.customerId);
    const crossed = await owner.api('GET', `/license-keys/${secondKey.id}/activations/${activation.body.id}`);
    expect(crossed.status).toBe(404);
  });
});

describe('a downloadables benefit changed to name another organization’s file', () => {
  it('is refused with 422 at the file, in any letter case, with no event and no grant sync', async () => {
    t.server.clock.now = null;
    const org = await newOrganization(t.server, 'sandbox');
    const stranger = await newOrganization(t.server, 'sandbox');
    const own = await uploadFile(org, Buffer.from('own bytes'), 'own.pdf');
    const foreign = await uploadFile(stranger, Buffer.from('foreign bytes'), 'foreign.pdf');
    const benefit = await org.polar.benefits.create({ type: 'downloadables', description: 'Own files', properties: { files: [own.id] } });
    const jobsBefore = await prisma().job.count();
    const eventsBefore = await prisma().event.count({ where: { resourceId: benefit.id } });
    for (const id of [foreign.id, foreign.id.toUpperCase()]) {
      const response = await org.api('PATCH', `/benefits/${benefit.id}`, { properties: { files: [own.id, id], archived: { [id]: true } } });
      expect(response.status, JSON.stringify(response.body)).toBe(422);
      expect(response.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([['body', 'properties', 'files', 1]]);
    }
    const stored = await prisma().benefit.findUniqueOrThrow({ where: { id: benefit.id } });
    expect(stored.properties).toEqual({ files: [own.id], archived: {} });
    expect(await prisma().job.count()).toBe(jobsBefore);
    expect(await prisma().event.count({ where: { resourceId: benefit.id } })).toBe(eventsBefore);
    t.server.clock.now = start;
  });
});

describe('anonymous license-key checks', () => {
  it('answer deactivation of another organization’s key exactly as an unknown key, and remove nothing', async () => {
    t.server.clock.now = start;
    const owner = await newOrganization(t.server, 'sandbox');
    const other = await newOrganization(t.server, 'sandbox');
    const benefit = await owner.polar.benefits.create({ type: 'license_keys', description: 'Deactivation key', properties: { activations: { limit: 2, enableCustomerAdmin: false } } });
    const plan = await monthly(owner, 'Deactivation plan', 300, [benefit.id]);
    await subscribe(owner, plan.id, 'deactivate@example.com');
    const key = await prisma().licenseKey.findFirstOrThrow({ where: { benefitId: benefit.id } });
    const api = restClient(t.server.base('sandbox'));
    const activation = await api('POST', '/customer-portal/license-keys/activate', { key: key.key, organization_id: owner.organizationId, label: 'Desk' });
    const wrongOrganization = await api('POST', '/customer-portal/license-keys/deactivate', { key: key.key, organization_id: other.organizationId, activation_id: activation.body.id });
    const unknownKey = await api('POST', '/customer-portal/license-keys/deactivate', { key: randomUUID().toUpperCase(), organization_id: owner.organizationId, activation_id: activation.body.id });
    expect(wrongOrganization.status).toBe(404);
    expect(wrongOrganization.body).toEqual(unknownKey.body);
    expect(await prisma().licenseKeyActivation.count({ where: { licenseKeyId: key.id } })).toBe(1);
  });
});

describe('concurrent duplicates', () => {
  it('five concurrent revokes of one subscription: one succeeds, one set of events, one revocation of its grants', async () => {
    t.server.clock.now = start;
    const org = await newOrganization(t.server, 'sandbox');
    const benefit = await org.polar.benefits.create({ type: 'custom', description: 'Race perk', properties: { note: 'hi' } });
    const plan = await monthly(org, 'Race plan', 800, [benefit.id]);
    const subscription = await subscribe(org, plan.id, 'race@example.com');
    const responses = await Promise.all(Array.from({ length: 5 }, () => org.api('DELETE', `/subscriptions/${subscription.id}`)));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 403, 403, 403, 403]);
    await settle();
    const types = await eventTypes(subscription.id);
    expect(types.filter((t) => t === 'subscription.revoked')).toHaveLength(1);
    expect(types.filter((t) => t === 'subscription.canceled')).toHaveLength(1);
    const grants = await prisma().benefitGrant.findMany({ where: { subscriptionId: subscription.id } });
    expect(grants).toHaveLength(1);
    expect(grants[0].revokedAt).not.toBeNull();
    expect(await eventTypes(grants[0].id)).toEqual(['benefit_grant.created', 'benefit_grant.revoked']);
  });

  it('four concurrent changes to the same product: one applies, the others are 422, and the proration is recorded once', async () => {
    t.server.clock.now = start;
    const org = await newOrganization(t.server, 'sandbox');
    const basic = await monthly(org, 'Race basic', 1000);
    const pro = await monthly(org, 'Race pro', 3000);
    const subscription = await subscribe(org, basic.id, 'race-change@example.com');
    t.server.clock.now = new Date(start.getTime() + 10 * 86_400_000);
    const responses = await Promise.all(Array.from({ length: 4 }, () => org.api('PATCH', `/subscriptions/${subscription.id}`, { product_id: pro.id })));
    expect(responses.map((r) => r.status).sort()).toEqual([200, 422, 422, 422]);
    const pending = await prisma().subscriptionPendingItem.findMany({ where: { subscriptionId: subscription.id } });
    expect(pending).toHaveLength(2);
    expect((await eventTypes(subscription.id)).filter((t) => t === 'subscription.updated')).toHaveLength(2); // activation, then the one change
  });

  it('five grant syncs of one purchase running at once: one grant per benefit, one license key, one created event each', async () => {
    t.server.clock.now = start;
    const org = await newOrganization(t.server, 'sandbox');
    const keys = await org.polar.benefits.create({ type: 'license_keys', description: 'Synced key', properties: { prefix: 'SYNC' } });
    const perk = await org.polar.benefits.create({ type: 'custom', description: 'Synced perk', properties: { note: 'hi' } });
    const item = await product(org, 'One-time synced', { amountType: 'fixed', priceAmount: 1200, priceCurrency: 'usd' }, { recurring: false, benefits: [keys.id, perk.id] });
    await settle(); // the product's own sync job, from attaching the benefits
    const confirmed = await confirm(org, item.id, 'synced@example.com');
    const order = await prisma().order.findFirstOrThrow({ where: { checkoutId: confirmed.id } });
    // The payment alone: it schedules one sync; four more are scheduled beside it.
    expect(await sandbox().jobs.runDue()).toBe(1);
    expect(await prisma().order.findUniqueOrThrow({ where: { id: order.id } })).toMatchObject({ paid: true });
    for (let i = 0; i < 4; i++) await enqueueJob(prisma(), 'benefits.sync', { orderId: order.id }, t.server.clock.now!);
    // Claimed together and run concurrently, beside the paid order's email job.
    const due = await prisma().job.groupBy({ by: ['kind'], where: { completedAt: null, runAt: { lte: t.server.clock.now! } }, _count: true });
    expect(Object.fromEntries(due.map((d) => [d.kind, d._count]))).toEqual({ 'benefits.sync': 5, 'email.event': 1 });
    expect(await sandbox().jobs.runDue()).toBe(6);
    await settle();
    const grants = await prisma().benefitGrant.findMany({ where: { orderId: order.id } });
    expect(grants.map((g) => g.benefitId).sort()).toEqual([keys.id, perk.id].sort());
    expect(grants.every((g) => g.grantedAt !== null && g.revokedAt === null)).toBe(true);
    expect(await prisma().licenseKey.count({ where: { customerId: order.customerId } })).toBe(1);
    for (const grant of grants) expect(await eventTypes(grant.id)).toEqual(['benefit_grant.created']);
  });
});

describe('money on plan changes', () => {
  it('carries a downgrade credit larger than a period to the next orders exactly, never billing a negative total', async () => {
    t.server.clock.now = start;
    const org = await newOrganization(t.server, 'sandbox');
    const pro = await monthly(org, 'Carry pro', 3000);
    const basic = await monthly(org, 'Carry basic', 1000);
    const subscription = await subscribe(org, pro.id, 'carry@example.com');
    // At the very start of the period: the whole Pro period is credited, a whole Basic one charged.
    await org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { productId: basic.id } });
    let current = await org.polar.subscriptions.get({ id: subscription.id });
    for (let i = 0; i < 3; i++) {
      t.server.clock.now = new Date(current.currentPeriodEnd!.getTime() + MINUTE);
      await settle();
      current = await org.polar.subscriptions.get({ id: subscription.id });
    }
    const renewals = (await ordersOf(subscription.id)).filter((o) => o.billingReason === 'subscription_cycle');
    // 1000 - 2000 credit: nothing due, 1000 carried; 1000 - 1000: nothing due; then full price.
    expect(renewals.map((o) => o.totalAmount)).toEqual([0, 0, 1000]);
    for (const order of renewals) {
      expect(order.totalAmount).toBeGreaterThanOrEqual(0);
      expect(order.items.reduce((sum, item) => sum + item.amount, 0)).toBe(order.subtotalAmount);
    }
    expect(await prisma().subscriptionPendingItem.count({ where: { subscriptionId: subscription.id, orderId: null } })).toBe(0);
  });
});

describe('signed file links', () => {
  it('do not stand in for one another: a part link does not download, a download link does not upload, an invoice-key signature opens nothing', async () => {
    t.server.clock.now = null; // links are signed and checked on the real clock here
    const org = await newOrganization(t.server, 'sandbox');
    const bytes = Buffer.from('0123456789abcdef');
    const file = await org.polar.files.create({
      service: 'downloadable',
      organizationId: org.organizationId,
      name: 'links.pdf',
      mimeType: 'application/pdf',
      size: bytes.length,
      upload: { parts: [{ number: 1, chunkStart: 0, chunkEnd: bytes.length }] },
    });
    const [part] = file.upload.parts;
    const partQuery = new URL(part.url).searchParams;
    const downloadUrl = `${t.server.base('sandbox')}/files/${file.id}/download?${partQuery.toString()}`;
    expect((await fetch(downloadUrl)).status).toBe(403);

    const put = await fetch(part.url, { method: 'PUT', body: new Uint8Array(bytes) });
    expect(put.status).toBe(200);
    await org.polar.files.uploaded({ id: file.id, fileUploadCompleted: { id: file.upload.id, path: file.upload.path, parts: [{ number: 1, checksumEtag: put.headers.get('etag')!, checksumSha256Base64: null }] } });
    expect((await fetch(downloadUrl)).status).toBe(403);

    // A genuine download link's signature on the part URL of the same file.
    const download = await fileDownloadLink(sandbox().environment, { id: file.id }, new Date());
    const downloadQuery = new URL(download.url).searchParams;
    const partWithDownloadSignature = `${t.server.base('sandbox')}/files/${file.id}/parts/1?${downloadQuery.toString()}`;
    const reput = await fetch(partWithDownloadSignature, { method: 'PUT', body: new Uint8Array(bytes) });
    expect(reput.status).toBe(403);

    // The right subject, signed with the environment's invoice-link key: refused.
    const invoiceKey = await linkKey(prisma(), 'invoice-links');
    const forged = signLink(invoiceKey, `file-download:${file.id}`, new Date(Date.now() + 600_000));
    expect((await fetch(`${t.server.base('sandbox')}/files/${file.id}/download?${forged.query}`)).status).toBe(403);
    expect((await fetch(download.url)).status).toBe(200);
    t.server.clock.now = start;
  });
});
