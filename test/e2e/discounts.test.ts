// Discounts end to end, in sandbox: the resource through the official client (@polar-sh/sdk), whose
// schemas parse every response; applied to checkouts by the organization (discount_id) and by the
// buyer (discount_code); re-checked and redeemed when a checkout is confirmed, exactly up to
// max_redemptions however many buyers confirm at once; and carried by subscriptions to the
// renewals their duration covers.
import { randomUUID } from 'node:crypto';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import type { Checkout } from '@polar-sh/sdk/models/components/checkout.js';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { checkoutWhen, fixedProduct, paidOrderOf } from '../helpers/purchases.ts';
import { expectStatus, expectValidationError } from '../helpers/responses.ts';
import { datetime, uuid } from '../helpers/matchers.ts';
import { rejectionOf } from '../helpers/waiting.ts';
import { restClient, settleJobs } from '../helpers/server.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { org: 'sandbox', other: 'sandbox' } });

const code = () => `SAVE${randomUUID().slice(0, 8)}`;

describe('the discounts resource through the client library', () => {
  it('creates each of the four kinds and reads them back as typed discounts', async () => {
    const product = await fixedProduct(t.org, 'Course', 5000);
    const fixedOnce = await t.org.polar.discounts.create({ name: 'Five off', type: 'fixed', amount: 500, currency: 'usd', duration: 'once' });
    expect(fixedOnce).toEqual({
      id: uuid,
      createdAt: expect.any(Date),
      modifiedAt: expect.any(Date),
      metadata: {},
      name: 'Five off',
      code: null,
      type: 'fixed',
      duration: 'once',
      amount: 500,
      currency: 'usd',
      startsAt: null,
      endsAt: null,
      maxRedemptions: null,
      redemptionsCount: 0,
      organizationId: t.org.organizationId,
      products: [],
    });
    const fixedRepeat = await t.org.polar.discounts.create({ name: 'Two months', type: 'fixed', amount: 300, currency: 'eur', duration: 'repeating', durationInMonths: 2 });
    expect(fixedRepeat).toMatchObject({ type: 'fixed', duration: 'repeating', durationInMonths: 2, amount: 300, currency: 'eur' });
    const percentForever = await t.org.polar.discounts.create({
      name: 'Tenth', type: 'percentage', basisPoints: 1000, duration: 'forever', code: code(), maxRedemptions: 3, products: [product.id], metadata: { campaign: 'spring' },
    });
    expect(percentForever).toMatchObject({ type: 'percentage', duration: 'forever', basisPoints: 1000, maxRedemptions: 3, metadata: { campaign: 'spring' } });
    expect(percentForever.products.map((p) => [p.id, p.name])).toEqual([[product.id, 'Course']]);
    const percentRepeat = await t.org.polar.discounts.create({ name: 'Half, 3 months', type: 'percentage', basisPoints: 5000, duration: 'repeating', durationInMonths: 3 });
    expect(percentRepeat).toMatchObject({ basisPoints: 5000, durationInMonths: 3 });

    for (const discount of [fixedOnce, fixedRepeat, percentForever, percentRepeat]) {
      expect(await t.org.polar.discounts.get({ id: discount.id })).toEqual(discount);
    }
    const raw = expectStatus(await t.org.api('GET', `/discounts/${fixedOnce.id}`), 200);
    expect(raw).not.toHaveProperty('basis_points');
    expect(raw).not.toHaveProperty('duration_in_months');
    expect(raw.created_at).toEqual(datetime);
  });

  it('lists by page, filters by query on name and code, and sorts', async () => {
    const org = t.other;
    const prefix = randomUUID().slice(0, 6);
    for (const [i, name] of ['Alpha', 'Beta', 'Gamma'].entries()) {
      await org.polar.discounts.create({ name: `${prefix} ${name}`, type: 'percentage', basisPoints: 100 * (i + 1), duration: 'once', code: `${prefix}${name}` });
    }
    const pages = [];
    for await (const page of await org.polar.discounts.list({ query: prefix, limit: 2, sorting: ['name'] })) pages.push(page.result.items.map((d) => d.name));
    expect(pages).toEqual([[`${prefix} Alpha`, `${prefix} Beta`], [`${prefix} Gamma`]]);
    const byCode = await org.polar.discounts.list({ query: `${prefix}GAM` });
    expect(byCode.result.items.map((d) => d.name)).toEqual([`${prefix} Gamma`]);
    const sorted = await org.polar.discounts.list({ query: prefix, sorting: ['-name'] });
    expect(sorted.result.items.map((d) => d.name)).toEqual([`${prefix} Gamma`, `${prefix} Beta`, `${prefix} Alpha`]);
    expect(sorted.result.pagination).toEqual({ totalCount: 3, maxPage: 1 });
  });

  it('updates only the fields given, and deletes softly: gone from reads, its code free again', async () => {
    const shared = code();
    const discount = await t.org.polar.discounts.create({ name: 'Old', type: 'percentage', basisPoints: 1500, duration: 'once', code: shared });
    const renamed = await t.org.polar.discounts.update({ id: discount.id, discountUpdate: { name: 'New', maxRedemptions: 10 } });
    expect(renamed).toMatchObject({ name: 'New', maxRedemptions: 10, basisPoints: 1500, code: shared, modifiedAt: expect.any(Date) });
    const fixed = await t.org.polar.discounts.update({ id: discount.id, discountUpdate: { type: 'fixed', amount: 700, currency: 'eur' } });
    expect(fixed).toMatchObject({ type: 'fixed', amount: 700, currency: 'eur' });
    expect(fixed).not.toHaveProperty('basisPoints');

    const taken = await rejectionOf(t.org.polar.discounts.create({ name: 'Clash', type: 'percentage', basisPoints: 100, duration: 'once', code: shared.toLowerCase() }));
    expect(taken).toBeInstanceOf(HTTPValidationError);
    expect((taken as HTTPValidationError).detail?.[0]?.loc).toEqual(['body', 'code']);

    await t.org.polar.discounts.delete({ id: discount.id });
    expect(await rejectionOf(t.org.polar.discounts.get({ id: discount.id }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(t.org.polar.discounts.delete({ id: discount.id }))).toBeInstanceOf(ResourceNotFound);
    const again = await t.org.polar.discounts.create({ name: 'Reuse', type: 'percentage', basisPoints: 100, duration: 'once', code: shared });
    expect(again.code).toBe(shared);
  });

  it('refuses invalid terms with 422 naming each field', async () => {
    const response = await t.org.api('POST', '/discounts/', { name: 'Bad', type: 'percentage', basis_points: 10001, duration: 'repeating' });
    expectValidationError(response, ['body', 'basis_points']);
    expectValidationError(response, ['body', 'duration_in_months'], 'missing');
    expectValidationError(await t.org.api('POST', '/discounts/', { name: 'Bad', type: 'fixed', amount: 0, duration: 'once' }), ['body', 'amount']);
    expectValidationError(await t.org.api('POST', '/discounts/', { name: 'Bad', type: 'fixed', amount: 100, currency: 'xxx1', duration: 'once' }), ['body', 'currency']);
    expectValidationError(await t.org.api('POST', '/discounts/', { name: 'Bad', type: 'fixed', amount: 100, duration: 'once', products: [randomUUID()] }), ['body', 'products', 0]);
    expectValidationError(
      await t.org.api('POST', '/discounts/', { name: 'Bad', type: 'fixed', amount: 100, duration: 'once', starts_at: '2031-01-02T00:00:00Z', ends_at: '2031-01-01T00:00:00Z' }),
      ['body', 'ends_at'],
    );
  });

  it("another organization's token neither reads, changes nor deletes a discount; a token without the scope is refused", async () => {
    const discount = await t.org.polar.discounts.create({ name: 'Mine', type: 'percentage', basisPoints: 100, duration: 'once' });
    expect(await rejectionOf(t.other.polar.discounts.get({ id: discount.id }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(t.other.polar.discounts.update({ id: discount.id, discountUpdate: { name: 'Theirs' } }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(t.other.polar.discounts.delete({ id: discount.id }))).toBeInstanceOf(ResourceNotFound);
    const listed = await t.other.polar.discounts.list({ limit: 100 });
    expect(listed.result.items.map((d) => d.id)).not.toContain(discount.id);
    const otherProduct = await fixedProduct(t.other, 'Theirs', 1000);
    expectValidationError(await t.org.api('POST', '/discounts/', { name: 'Sneaky', type: 'fixed', amount: 100, duration: 'once', products: [otherProduct.id] }), ['body', 'products', 0]);

    const readOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.org, ['discounts:read']));
    expectStatus(await readOnly('GET', `/discounts/${discount.id}`), 200);
    expect((await readOnly('POST', '/discounts/', { name: 'No', type: 'percentage', basis_points: 100, duration: 'once' })).status).toBe(403);
    const productsOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.org, ['products:read']));
    expect((await productsOnly('GET', '/discounts/')).status).toBe(403);
    const error = await rejectionOf(t.org.buyer.discounts.list({}));
    expect(error).toBeInstanceOf(SDKError);
  });
});

// ---------------------------------------------------------------------------------------------
// Discounts applied to checkouts
// ---------------------------------------------------------------------------------------------

const HOUR = 3_600_000;
const prisma = () => t.server.kassa.environments.sandbox.environment.prisma;

/** The buyer confirms with a test card; `discountCode` is entered at the same time when given. */
function confirm(org: Org, checkout: Checkout, customerEmail: string, discountCode?: string) {
  return org.buyer.checkouts.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: { customerEmail, confirmationTokenId: 'tok_visa', ...(discountCode ? { discountCode } : {}) },
  });
}

/** Everything a confirm would write for a checkout: its orders, redemption and state, and the customer of an email. */
async function writtenFor(checkoutId: string, email: string, discountId: string) {
  const [orders, redemptions, checkout, customers, discount] = await Promise.all([
    prisma().order.count({ where: { checkoutId } }),
    prisma().discountRedemption.count({ where: { checkoutId } }),
    prisma().checkout.findUniqueOrThrow({ where: { id: checkoutId } }),
    prisma().customer.count({ where: { email } }),
    prisma().discount.findUniqueOrThrow({ where: { id: discountId } }),
  ]);
  return { orders, redemptions, status: checkout.status, customerEmail: checkout.customerEmail, customers, redemptionsCount: discount.redemptionsCount };
}

describe('a discount applied to a checkout', () => {
  it('by the organization (discount_id): a percentage rounded half up, reflected in every amount, the order and the redemption count', async () => {
    const product = await fixedProduct(t.org, 'Ten percent book', 1995);
    const discount = await t.org.polar.discounts.create({ name: 'Tenth', type: 'percentage', basisPoints: 1000, duration: 'once' });
    const checkout = await t.org.polar.checkouts.create({ products: [product.id], discountId: discount.id });
    // 10% of 1995 is 199.5: rounded half up, 200.
    expect(checkout).toMatchObject({ amount: 1995, discountAmount: 200, netAmount: 1795, totalAmount: 1795, discountId: discount.id, allowDiscountCodes: true, isDiscountApplicable: true });
    expect(checkout.discount).toEqual({ id: discount.id, name: 'Tenth', code: null, type: 'percentage', duration: 'once', basisPoints: 1000 });
    const seen = await t.org.buyer.checkouts.clientGet({ clientSecret: checkout.clientSecret });
    expect(seen).toMatchObject({ discountAmount: 200, totalAmount: 1795, discount: { name: 'Tenth' } });
    expect(seen.discount).not.toHaveProperty('metadata');

    await confirm(t.org, checkout, `tenth-${randomUUID()}@example.com`);
    const order = await paidOrderOf(t.org, checkout.id);
    expect(order).toMatchObject({ subtotalAmount: 1995, discountAmount: 200, netAmount: 1795, totalAmount: 1795, discountId: discount.id });
    expect(order.discount).toMatchObject({ id: discount.id, name: 'Tenth', basisPoints: 1000, redemptionsCount: 1 });
    const payments = await prisma().payment.findMany({ where: { orderId: order.id } });
    expect(payments.map((p) => p.amount)).toEqual([1795]);
    expect((await t.org.polar.discounts.get({ id: discount.id })).redemptionsCount).toBe(1);
  });

  it('by the buyer (discount_code), in any case, at update or at confirm; refused where the checkout takes no codes', async () => {
    const product = await fixedProduct(t.org, 'Coded book', 1999);
    const shared = code();
    const discount = await t.org.polar.discounts.create({ name: 'Five off', type: 'fixed', amount: 500, currency: 'usd', duration: 'once', code: shared });

    const checkout = await t.org.polar.checkouts.create({ products: [product.id] });
    const updated = await t.org.buyer.checkouts.clientUpdate({ clientSecret: checkout.clientSecret, checkoutUpdatePublic: { discountCode: shared.toLowerCase() } });
    expect(updated).toMatchObject({ discountId: discount.id, discountAmount: 500, netAmount: 1499, totalAmount: 1499 });
    expect(updated.discount).toEqual({ id: discount.id, name: 'Five off', code: shared, type: 'fixed', duration: 'once', amount: 500, currency: 'usd' });
    const removed = await t.org.buyer.checkouts.clientUpdate({ clientSecret: checkout.clientSecret, checkoutUpdatePublic: { discountCode: null } });
    expect(removed).toMatchObject({ discountId: null, discountAmount: 0, totalAmount: 1999, discount: null });

    await confirm(t.org, checkout, `coded-${randomUUID()}@example.com`, shared.toUpperCase());
    const order = await paidOrderOf(t.org, checkout.id);
    expect(order).toMatchObject({ discountId: discount.id, discountAmount: 500, netAmount: 1499, totalAmount: 1499 });

    const unknown = await rejectionOf(t.org.buyer.checkouts.clientUpdate({ clientSecret: (await t.org.polar.checkouts.create({ products: [product.id] })).clientSecret, checkoutUpdatePublic: { discountCode: 'NOSUCHCODE' } }));
    expect(unknown).toBeInstanceOf(HTTPValidationError);
    expect((unknown as HTTPValidationError).detail?.[0]?.loc).toEqual(['body', 'discount_code']);

    const closed = await t.org.polar.checkouts.create({ products: [product.id], allowDiscountCodes: false });
    expect(closed.allowDiscountCodes).toBe(false);
    const refused = await rejectionOf(confirm(t.org, closed, `closed-${randomUUID()}@example.com`, shared));
    expect(refused).toBeInstanceOf(HTTPValidationError);
    expect((refused as HTTPValidationError).detail?.[0]?.loc).toEqual(['body', 'discount_code']);
    expect((await t.org.polar.checkouts.get({ id: closed.id })).status).toBe('open');
  });

  it('a fixed discount never takes more than the price: a free order needs no card', async () => {
    const product = await fixedProduct(t.org, 'Cheap book', 300);
    const discount = await t.org.polar.discounts.create({ name: 'Big', type: 'fixed', amount: 1000, currency: 'usd', duration: 'once' });
    const checkout = await t.org.polar.checkouts.create({ products: [product.id], discountId: discount.id });
    expect(checkout).toMatchObject({ amount: 300, discountAmount: 300, netAmount: 0, totalAmount: 0, isPaymentRequired: false });
    await t.org.buyer.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { customerEmail: `free-${randomUUID()}@example.com` } });
    expect(await paidOrderOf(t.org, checkout.id)).toMatchObject({ subtotalAmount: 300, discountAmount: 300, netAmount: 0, totalAmount: 0 });
  });

  it('refuses a discount not started, ended, used up, for another product, in another currency or of another organization, writing nothing', async () => {
    const now = Date.now();
    const product = await fixedProduct(t.org, 'Guarded book', 2000);
    const otherProduct = await fixedProduct(t.org, 'Other book', 2000);
    const euroProduct = await t.org.polar.products.create({ name: 'Euro book', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 2000, priceCurrency: 'eur' }] });
    const create = (body: Parameters<typeof t.org.polar.discounts.create>[0]) => t.org.polar.discounts.create(body);
    const base = { type: 'percentage' as const, basisPoints: 2500, duration: 'once' as const };
    const refusals: [string, string, string][] = [
      ['not started', (await create({ ...base, name: 'Later', startsAt: new Date(now + 24 * HOUR) })).id, product.id],
      ['ended', (await create({ ...base, name: 'Over', startsAt: new Date(now - 48 * HOUR), endsAt: new Date(now - 24 * HOUR) })).id, product.id],
      ['for another product', (await create({ ...base, name: 'Other', products: [otherProduct.id] })).id, product.id],
      ['in another currency', (await create({ name: 'Dollars', type: 'fixed', amount: 100, currency: 'usd', duration: 'once' })).id, euroProduct.id],
      ['of another organization', (await t.other.polar.discounts.create({ ...base, name: 'Theirs' })).id, product.id],
    ];
    const usedUp = await create({ ...base, name: 'Once only', maxRedemptions: 1 });
    const first = await t.org.polar.checkouts.create({ products: [product.id], discountId: usedUp.id });
    await confirm(t.org, first, `first-${randomUUID()}@example.com`);
    refusals.push(['used up', usedUp.id, product.id]);

    for (const [why, discountId, productId] of refusals) {
      const before = await prisma().checkout.count();
      const response = await t.org.api('POST', '/checkouts/', { products: [productId], discount_id: discountId });
      expectValidationError(response, ['body', 'discount_id']);
      expect(await prisma().checkout.count(), why).toBe(before);
    }
  });

  it('re-checks the discount at confirm: one that ended or was deleted since is refused with 422 and nothing is written', async () => {
    const product = await fixedProduct(t.org, 'Late book', 2000);
    for (const change of ['ended', 'deleted'] as const) {
      const discount = await t.org.polar.discounts.create({ name: `Soon ${change}`, type: 'percentage', basisPoints: 5000, duration: 'once' });
      const checkout = await t.org.polar.checkouts.create({ products: [product.id], discountId: discount.id });
      if (change === 'ended') await t.org.polar.discounts.update({ id: discount.id, discountUpdate: { endsAt: new Date(Date.now() - 1000) } });
      else await t.org.polar.discounts.delete({ id: discount.id });
      const email = `late-${randomUUID()}@example.com`;
      const refused = await rejectionOf(confirm(t.org, checkout, email));
      expect(refused, change).toBeInstanceOf(HTTPValidationError);
      expect((refused as HTTPValidationError).detail?.[0]).toMatchObject({ loc: ['body', 'discount_id'], msg: expect.stringContaining('can no longer be used') });
      expect(await writtenFor(checkout.id, email, discount.id)).toEqual({ orders: 0, redemptions: 0, status: 'open', customerEmail: null, customers: 0, redemptionsCount: 0 });
    }
  });

  it('refuses an expired discount code at confirm with 422 on discount_code, entered then or applied before it ended, writing nothing', async () => {
    const product = await fixedProduct(t.org, 'Expired code book', 2000);
    const expired = code();
    const discount = await t.org.polar.discounts.create({ name: 'Gone', type: 'percentage', basisPoints: 5000, duration: 'once', code: expired, endsAt: new Date(Date.now() - HOUR) });
    const checkout = await t.org.polar.checkouts.create({ products: [product.id] });
    const email = `expired-${randomUUID()}@example.com`;
    const response = await t.org.publicApi('POST', `/checkouts/client/${checkout.clientSecret}/confirm`, { customer_email: email, confirmation_token_id: 'tok_visa', discount_code: expired.toLowerCase() });
    expect(response.status).toBe(422);
    expect(response.body).toEqual({ detail: [{ loc: ['body', 'discount_code'], msg: 'This discount has ended.', type: expect.any(String) }] });
    expect(await writtenFor(checkout.id, email, discount.id)).toEqual({ orders: 0, redemptions: 0, status: 'open', customerEmail: null, customers: 0, redemptionsCount: 0 });
    expect(await t.org.polar.checkouts.get({ id: checkout.id })).toMatchObject({ discountId: null, discountAmount: 0, totalAmount: 2000, status: 'open' });

    // A code the buyer applied while it was valid, which ended before they confirmed.
    const ending = code();
    const soon = await t.org.polar.discounts.create({ name: 'Ending', type: 'percentage', basisPoints: 5000, duration: 'once', code: ending });
    const applied = await t.org.polar.checkouts.create({ products: [product.id] });
    expect(await t.org.buyer.checkouts.clientUpdate({ clientSecret: applied.clientSecret, checkoutUpdatePublic: { discountCode: ending } })).toMatchObject({ discountId: soon.id, discountAmount: 1000 });
    await t.org.polar.discounts.update({ id: soon.id, discountUpdate: { endsAt: new Date(Date.now() - 1000) } });
    const late = `late-code-${randomUUID()}@example.com`;
    const refused = await rejectionOf(confirm(t.org, applied, late, ending));
    expect(refused).toBeInstanceOf(HTTPValidationError);
    expect((refused as HTTPValidationError).statusCode).toBe(422);
    expect((refused as HTTPValidationError).detail?.map((d) => [d.loc, d.msg])).toEqual([[['body', 'discount_code'], 'This discount has ended.']]);
    expect(await writtenFor(applied.id, late, soon.id)).toEqual({ orders: 0, redemptions: 0, status: 'open', customerEmail: null, customers: 0, redemptionsCount: 0 });
  });

  it('a buyer cannot pass discount_id on the client endpoints, nor use another organization’s code', async () => {
    const product = await fixedProduct(t.org, 'Buyer book', 2000);
    const mine = await t.org.polar.discounts.create({ name: 'Org only', type: 'percentage', basisPoints: 9000, duration: 'once' });
    const theirs = await t.other.polar.discounts.create({ name: 'Theirs', type: 'percentage', basisPoints: 9000, duration: 'once', code: code() });
    const checkout = await t.org.polar.checkouts.create({ products: [product.id] });
    for (const path of [`/checkouts/client/${checkout.clientSecret}`, `/checkouts/client/${checkout.clientSecret}/confirm`]) {
      const body = { discount_id: mine.id, customer_email: `sneaky-${randomUUID()}@example.com`, confirmation_token_id: 'tok_visa' };
      const response = await t.org.publicApi(path.endsWith('confirm') ? 'POST' : 'PATCH', path, body);
      expectValidationError(response, ['body', 'discount_id'], 'extra_forbidden');
    }
    const foreign = await t.org.publicApi('PATCH', `/checkouts/client/${checkout.clientSecret}`, { discount_code: theirs.code });
    expectValidationError(foreign, ['body', 'discount_code']);
    expect(await t.org.polar.checkouts.get({ id: checkout.id })).toMatchObject({ discountId: null, discountAmount: 0, status: 'open' });
    // Nor can the other organization's token apply its own discount to this organization's checkout.
    expect((await t.other.api('PATCH', `/checkouts/${checkout.id}`, { discount_id: theirs.id })).status).toBe(404);
    expectValidationError(await t.org.api('PATCH', `/checkouts/${checkout.id}`, { discount_id: theirs.id }), ['body', 'discount_id']);
  });

  it('drops the discount when the buyer switches to a product it does not cover, and recomputes it on a new amount', async () => {
    const covered = await fixedProduct(t.org, 'Covered', 1000);
    const pwyw = await t.org.polar.products.create({ name: 'Pay what you want', recurringInterval: null, prices: [{ amountType: 'custom', minimumAmount: 500, presetAmount: 1000, priceCurrency: 'usd' }] });
    const discount = await t.org.polar.discounts.create({ name: 'Quarter', type: 'percentage', basisPoints: 2500, duration: 'once', products: [pwyw.id] });
    const checkout = await t.org.polar.checkouts.create({ products: [pwyw.id, covered.id], discountId: discount.id });
    expect(checkout).toMatchObject({ amount: 1000, discountAmount: 250 });
    const more = await t.org.buyer.checkouts.clientUpdate({ clientSecret: checkout.clientSecret, checkoutUpdatePublic: { amount: 2002 } });
    // 25% of 2002 is 500.5: 501.
    expect(more).toMatchObject({ amount: 2002, discountAmount: 501, netAmount: 1501 });
    const switched = await t.org.buyer.checkouts.clientUpdate({ clientSecret: checkout.clientSecret, checkoutUpdatePublic: { productId: covered.id } });
    expect(switched).toMatchObject({ productId: covered.id, discountId: null, discountAmount: 0, totalAmount: 1000 });
  });

  it('max_redemptions holds under 50 concurrent confirms: exactly 5 orders get the discount, the other 45 are refused with 422', async () => {
    const product = await fixedProduct(t.org, 'Rush book', 1000);
    const discount = await t.org.polar.discounts.create({ name: 'First five', type: 'fixed', amount: 100, currency: 'usd', duration: 'once', maxRedemptions: 5 });
    const checkouts: Checkout[] = [];
    for (let i = 0; i < 50; i++) checkouts.push(await t.org.polar.checkouts.create({ products: [product.id], discountId: discount.id }));
    const results = await Promise.all(checkouts.map((checkout, i) => t.org.publicApi('POST', `/checkouts/client/${checkout.clientSecret}/confirm`, {
      customer_email: `rush-${i}-${randomUUID()}@example.com`, confirmation_token_id: 'tok_visa',
    })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 422)).toHaveLength(45);
    for (const refused of results.filter((r) => r.status === 422)) {
      expect(refused.body.detail[0]).toMatchObject({ loc: ['body', 'discount_id'], msg: expect.stringContaining('maximum number of times') });
    }
    const ids = checkouts.map((c) => c.id);
    expect(await prisma().order.count({ where: { checkoutId: { in: ids } } })).toBe(5);
    expect(await prisma().order.count({ where: { discountId: discount.id } })).toBe(5);
    expect(await prisma().discountRedemption.count({ where: { discountId: discount.id } })).toBe(5);
    expect((await t.org.polar.discounts.get({ id: discount.id })).redemptionsCount).toBe(5);
    expect(await prisma().checkout.count({ where: { id: { in: ids }, status: 'open' } })).toBe(45);
    await Promise.all(checkouts.filter((_, i) => statuses[i] === 200).map((c) => checkoutWhen(t.org, c.id, 'succeeded')));
  }, 120_000); // 100 requests and 5 payments: minutes on a loaded 2-core machine

  it('once redeemed, what a discount takes off can no longer change; its name and limit still can', async () => {
    const product = await fixedProduct(t.org, 'Locked book', 1000);
    const discount = await t.org.polar.discounts.create({ name: 'Fixed terms', type: 'percentage', basisPoints: 1000, duration: 'once' });
    await confirm(t.org, await t.org.polar.checkouts.create({ products: [product.id], discountId: discount.id }), `locked-${randomUUID()}@example.com`);
    expectValidationError(await t.org.api('PATCH', `/discounts/${discount.id}`, { basis_points: 2000 }), ['body']);
    expect(await t.org.polar.discounts.update({ id: discount.id, discountUpdate: { name: 'Renamed', maxRedemptions: 3 } })).toMatchObject({ name: 'Renamed', basisPoints: 1000, maxRedemptions: 3 });
  });
});

// ---------------------------------------------------------------------------------------------
// Subscriptions keep their discount for its duration
// ---------------------------------------------------------------------------------------------

describe('a subscription bought with a discount', () => {
  const start = new Date('2027-03-15T09:00:00.000Z');
  const s = useTestServer({ stopSandboxJobs: true, clock: start, organizations: { org: 'sandbox' } });
  const environment = () => s.server.kassa.environments.sandbox;

  /** Runs the scheduler and every job it causes until nothing is left to do at the current time. */
  async function settle() {
    await settleJobs(environment().jobs);
  }

  /** Buys the monthly plan with the discount, then renews it `renewals` times; returns its orders, oldest first. */
  async function subscribeAndRenew(discountId: string | null, renewals: number) {
    s.server.clock.now = start;
    const plan = await s.org.polar.products.create({ name: `Plan ${randomUUID().slice(0, 6)}`, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000, priceCurrency: 'usd' }] });
    const checkout = await s.org.polar.checkouts.create({ products: [plan.id], discountId });
    await confirm(s.org, checkout, `sub-${randomUUID()}@example.com`);
    await settle();
    const [subscription] = (await s.org.polar.subscriptions.list({ productId: plan.id })).result.items;
    for (let i = 0; i < renewals; i++) {
      const current = await s.org.polar.subscriptions.get({ id: subscription.id });
      s.server.clock.now = new Date(current.currentPeriodEnd!.getTime() + 60_000);
      await settle();
    }
    const orders = await environment().environment.prisma.order.findMany({ where: { subscriptionId: subscription.id }, orderBy: { billingPeriodStart: 'asc' } });
    return { subscription: await s.org.polar.subscriptions.get({ id: subscription.id }), orders };
  }

  it('repeating for 2 months: the first two monthly orders are discounted, the later ones are not', async () => {
    const discount = await s.org.polar.discounts.create({ name: 'Half, two months', type: 'percentage', basisPoints: 5000, duration: 'repeating', durationInMonths: 2 });
    const { subscription, orders } = await subscribeAndRenew(discount.id, 3);
    expect(subscription).toMatchObject({ status: 'active', discountId: discount.id, discount: { id: discount.id, durationInMonths: 2 } });
    expect(orders.map((o) => [o.billingReason, o.subtotalAmount, o.discountAmount, o.netAmount, o.totalAmount, o.discountId, o.paid])).toEqual([
      ['subscription_create', 1000, 500, 500, 500, discount.id, true],
      ['subscription_cycle', 1000, 500, 500, 500, discount.id, true],
      ['subscription_cycle', 1000, 0, 1000, 1000, null, true],
      ['subscription_cycle', 1000, 0, 1000, 1000, null, true],
    ]);
    const payments = await environment().environment.prisma.payment.findMany({ where: { orderId: { in: orders.map((o) => o.id) } }, orderBy: { createdAt: 'asc' } });
    expect(payments.map((p) => p.amount)).toEqual([500, 500, 1000, 1000]);
    expect((await s.org.polar.subscriptions.list({ discountId: [discount.id] })).result.items.map((i) => i.id)).toEqual([subscription.id]);
  });

  it('once: only the first order; forever: every order, even after the discount is deleted', async () => {
    const once = await s.org.polar.discounts.create({ name: 'First month', type: 'fixed', amount: 300, currency: 'usd', duration: 'once' });
    const first = await subscribeAndRenew(once.id, 2);
    expect(first.orders.map((o) => o.discountAmount)).toEqual([300, 0, 0]);

    const forever = await s.org.polar.discounts.create({ name: 'Always', type: 'percentage', basisPoints: 1000, duration: 'forever' });
    s.server.clock.now = start;
    const plan = await s.org.polar.products.create({ name: 'Forever plan', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000, priceCurrency: 'usd' }] });
    await confirm(s.org, await s.org.polar.checkouts.create({ products: [plan.id], discountId: forever.id }), `forever-${randomUUID()}@example.com`);
    await settle();
    await s.org.polar.discounts.delete({ id: forever.id });
    const [subscription] = (await s.org.polar.subscriptions.list({ productId: plan.id })).result.items;
    for (let i = 0; i < 2; i++) {
      const current = await s.org.polar.subscriptions.get({ id: subscription.id });
      s.server.clock.now = new Date(current.currentPeriodEnd!.getTime() + 60_000);
      await settle();
    }
    const orders = await s.org.polar.orders.list({ productId: plan.id, sorting: ['created_at'] });
    expect(orders.result.items.map((o) => [o.discountAmount, o.netAmount, o.discountId])).toEqual([
      [100, 900, forever.id],
      [100, 900, forever.id],
      [100, 900, forever.id],
    ]);
  });

  it('applied to a live subscription: from the next renewal, counted from there, redeemed once; removed with null', async () => {
    const { subscription } = await subscribeAndRenew(null, 1);
    expect(subscription.discountId).toBeNull();
    const discount = await s.org.polar.discounts.create({ name: 'Loyalty', type: 'percentage', basisPoints: 2000, duration: 'repeating', durationInMonths: 2, maxRedemptions: 1 });
    const applied = await s.org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { discountId: discount.id } });
    expect(applied).toMatchObject({ discountId: discount.id, discount: { id: discount.id }, amount: 1000 });
    expect((await s.org.polar.discounts.get({ id: discount.id })).redemptionsCount).toBe(1);
    // The same discount again changes nothing and redeems nothing.
    await s.org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { discountId: discount.id } });
    expect((await s.org.polar.discounts.get({ id: discount.id })).redemptionsCount).toBe(1);
    // Exhausted now: another subscription cannot take it, and keeps no discount.
    const other = await subscribeAndRenew(null, 0);
    const refused = await rejectionOf(s.org.polar.subscriptions.update({ id: other.subscription.id, subscriptionUpdate: { discountId: discount.id } }));
    expect(refused).toBeInstanceOf(HTTPValidationError);
    expect((refused as HTTPValidationError).detail?.[0]).toMatchObject({ loc: ['body', 'discount_id'] });
    expect((await s.org.polar.subscriptions.get({ id: other.subscription.id })).discountId).toBeNull();

    for (let i = 0; i < 3; i++) {
      const current = await s.org.polar.subscriptions.get({ id: subscription.id });
      s.server.clock.now = new Date(current.currentPeriodEnd!.getTime() + 60_000);
      await settle();
    }
    const orders = () => environment().environment.prisma.order.findMany({ where: { subscriptionId: subscription.id }, orderBy: { billingPeriodStart: 'asc' } });
    expect((await orders()).map((o) => [o.discountAmount, o.totalAmount, o.discountId])).toEqual([
      [0, 1000, null],
      [0, 1000, null],
      [200, 800, discount.id],
      [200, 800, discount.id],
      [0, 1000, null],
    ]);

    const forever = await s.org.polar.discounts.create({ name: 'Always a tenth', type: 'percentage', basisPoints: 1000, duration: 'forever' });
    await s.org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { discountId: forever.id } });
    const removed = await s.org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { discountId: null } });
    expect(removed.discountId).toBeNull();
    const current = await s.org.polar.subscriptions.get({ id: subscription.id });
    s.server.clock.now = new Date(current.currentPeriodEnd!.getTime() + 60_000);
    await settle();
    expect((await orders()).at(-1)).toMatchObject({ discountAmount: 0, totalAmount: 1000, discountId: null });
  });

  it('refuses a discount of another currency, of another organization, or on an ended subscription, and changes nothing', async () => {
    const { subscription } = await subscribeAndRenew(null, 0);
    const euros = await s.org.polar.discounts.create({ name: 'Euro off', type: 'fixed', amount: 100, currency: 'eur', duration: 'once' });
    const wrongCurrency = await rejectionOf(s.org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { discountId: euros.id } }));
    expect(wrongCurrency).toBeInstanceOf(HTTPValidationError);
    const stranger = await newOrganization(s.server, 'sandbox');
    const theirs = await stranger.polar.discounts.create({ name: 'Theirs', type: 'percentage', basisPoints: 9000, duration: 'forever' });
    const foreign = await rejectionOf(s.org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { discountId: theirs.id } }));
    expect(foreign).toBeInstanceOf(HTTPValidationError);
    expect(String((foreign as Error).message)).toContain('Discount not found');
    // Nor can they apply ours to their view of our subscription: it is not theirs to see.
    const ours = await s.org.polar.discounts.create({ name: 'Ours', type: 'percentage', basisPoints: 1000, duration: 'forever' });
    expect(await rejectionOf(stranger.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { discountId: ours.id } }))).toBeInstanceOf(ResourceNotFound);
    expect((await s.org.polar.discounts.get({ id: ours.id })).redemptionsCount).toBe(0);
    await s.org.polar.subscriptions.revoke({ id: subscription.id });
    const ended = await rejectionOf(s.org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { discountId: ours.id } }));
    expect(ended).toMatchObject({ statusCode: 403 });
    expect((await s.org.polar.subscriptions.get({ id: subscription.id })).discountId).toBeNull();
    expect((await s.org.polar.discounts.get({ id: ours.id })).redemptionsCount).toBe(0);
  });

  it('shows the customer, in the portal, the discount of their orders and subscription', async () => {
    const discount = await s.org.polar.discounts.create({ name: 'Portal view', type: 'percentage', basisPoints: 5000, duration: 'forever' });
    const { subscription } = await subscribeAndRenew(discount.id, 0);
    const session = await s.org.polar.customerSessions.create({ customerId: subscription.customerId });
    const portal = restClient(s.server.base('sandbox'), session.token);
    const orders = expectStatus(await portal('GET', '/customer-portal/orders/'), 200);
    expect(orders.items.map((o: { discount_id: string; subscription: { discount_id: string } }) => [o.discount_id, o.subscription.discount_id])).toEqual([[discount.id, discount.id]]);
    const subscriptions = expectStatus(await portal('GET', '/customer-portal/subscriptions/'), 200);
    expect(subscriptions.items.map((i: { discount_id: string }) => i.discount_id)).toEqual([discount.id]);
  });
});
