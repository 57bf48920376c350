// Discounts end to end, in sandbox: the resource through the official client (@polar-sh/sdk), whose
// schemas parse every response; applied to checkouts by the organization (discount_id) and by the
// buyer (discount_code); re-checked and redeemed when a checkout is confirmed, exactly up to
// max_redemptions however many buyers confirm at once; and carried by subscriptions to the
// renewals their duration covers.
import { randomUUID } from 'node:crypto';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { tokenWithScopes } from '../helpers/organizations.ts';
import { fixedProduct } from '../helpers/purchases.ts';
import { expectStatus, expectValidationError } from '../helpers/responses.ts';
import { datetime, uuid } from '../helpers/matchers.ts';
import { rejectionOf } from '../helpers/waiting.ts';
import { restClient } from '../helpers/server.ts';

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
