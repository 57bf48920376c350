// The official client library, @polar-sh/sdk, against a real Kassa server in both environments.
// Every response the SDK receives is parsed by its own schemas: a wire-format mistake surfaces as
// a ResponseValidationError, which fails the test that made the call.
import { randomUUID } from 'node:crypto';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { ResponseValidationError } from '@polar-sh/sdk/models/errors/responsevalidationerror.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import type { Product } from '@polar-sh/sdk/models/components/product.js';
import { describe, expect, it } from 'vitest';
import type { EnvironmentName } from '../../src/config.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, sdkServerURL } from '../helpers/organizations.ts';
import { createAndConfirmCheckout } from '../helpers/purchases.ts';
import { eventually, rejectionOf } from '../helpers/waiting.ts';
import { Polar } from '@polar-sh/sdk';

const t = useTestServer();

function expectWellFormedProduct(product: Product, organizationId: string) {
  expect(typeof product.id).toBe('string');
  expect(product.organizationId).toBe(organizationId);
  expect(product.createdAt).toBeInstanceOf(Date);
  expect(Number.isNaN(product.createdAt.getTime())).toBe(false);
  expect(product.metadata).toEqual({});
  expect(product.benefits).toEqual([]);
  expect(product.medias).toEqual([]);
  expect(product.attachedCustomFields).toEqual([]);
  expect(product.isArchived).toBe(false);
  expect(product.prices).toHaveLength(1);
  expect(product.prices[0].createdAt).toBeInstanceOf(Date);
  expect(product.prices[0].productId).toBe(product.id);
}

describe.each<EnvironmentName>(['production', 'sandbox'])('the official SDK against %s', (environment) => {
  it('creates a one-time product with a fixed price and returns it as a typed Product', async () => {
    const { polar, organizationId } = await newOrganization(t.server, environment);
    const startedAt = Date.now();
    const product = await polar.products.create({
      name: 'E-book',
      description: 'A book, once.',
      recurringInterval: null,
      prices: [{ amountType: 'fixed', priceAmount: 1500, priceCurrency: 'usd' }],
    });
    expectWellFormedProduct(product, organizationId);
    expect(product).toMatchObject({ name: 'E-book', description: 'A book, once.', recurringInterval: null, isRecurring: false });
    expect(product.createdAt.getTime()).toBeGreaterThanOrEqual(startedAt - 5_000);
    expect(product.createdAt.getTime()).toBeLessThanOrEqual(Date.now() + 5_000);
    expect(product.prices[0]).toMatchObject({ amountType: 'fixed', priceAmount: 1500, priceCurrency: 'usd', type: 'one_time', recurringInterval: null, isArchived: false });
  });

  it('creates a monthly subscription product whose price is recurring', async () => {
    const { polar, organizationId } = await newOrganization(t.server, environment);
    const product = await polar.products.create({
      name: 'Pro plan',
      recurringInterval: 'month',
      prices: [{ amountType: 'fixed', priceAmount: 900 }],
    });
    expectWellFormedProduct(product, organizationId);
    expect(product).toMatchObject({ name: 'Pro plan', description: null, recurringInterval: 'month', isRecurring: true });
    expect(product.prices[0]).toMatchObject({ amountType: 'fixed', priceAmount: 900, priceCurrency: 'usd', type: 'recurring', recurringInterval: 'month' });
  });

  it('creates a pay-what-you-want product with minimum, maximum and preset amounts', async () => {
    const { polar, organizationId } = await newOrganization(t.server, environment);
    const product = await polar.products.create({
      name: 'Donation',
      recurringInterval: null,
      prices: [{ amountType: 'custom', priceCurrency: 'eur', minimumAmount: 500, maximumAmount: 10_000, presetAmount: 2_000 }],
    });
    expectWellFormedProduct(product, organizationId);
    expect(product.prices[0]).toMatchObject({ amountType: 'custom', priceCurrency: 'eur', minimumAmount: 500, maximumAmount: 10_000, presetAmount: 2_000, type: 'one_time' });
  });

  it('creates a pay-what-you-want product without bounds, reporting the amounts as null', async () => {
    const { polar, organizationId } = await newOrganization(t.server, environment);
    const product = await polar.products.create({ name: 'Tip jar', recurringInterval: null, prices: [{ amountType: 'custom' }] });
    expectWellFormedProduct(product, organizationId);
    expect(product.prices[0]).toMatchObject({ amountType: 'custom', priceCurrency: 'usd', minimumAmount: null, maximumAmount: null, presetAmount: null });
  });

  it('creates a free product', async () => {
    const { polar, organizationId } = await newOrganization(t.server, environment);
    const product = await polar.products.create({ name: 'Free sample', recurringInterval: null, prices: [{ amountType: 'free' }] });
    expectWellFormedProduct(product, organizationId);
    expect(product).toMatchObject({ name: 'Free sample', isRecurring: false, recurringInterval: null });
    expect(product.prices[0]).toMatchObject({ amountType: 'free', type: 'one_time', isArchived: false });
  });

  it('creates a yearly free product with metadata and reads the metadata back', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const metadata = { plan: 'community', seats: 5, ratio: 0.5, internal: true };
    const product = await polar.products.create({ name: 'Community', recurringInterval: 'year', prices: [{ amountType: 'free' }], metadata });
    expect(product.metadata).toEqual(metadata);
    expect(product.prices[0]).toMatchObject({ amountType: 'free', type: 'recurring', recurringInterval: 'year' });
    expect((await polar.products.get({ id: product.id })).metadata).toEqual(metadata);
  });

  it('lists products across pages with the async iterator, collecting every id exactly once', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const created: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const product = await polar.products.create({ name: `Paged product ${i}`, recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 100 * i }] });
      created.push(product.id);
    }
    const pageSizes: number[] = [];
    const seen: string[] = [];
    for await (const page of await polar.products.list({ limit: 2 })) {
      pageSizes.push(page.result.items.length);
      expect(page.result.pagination).toEqual({ totalCount: 5, maxPage: 3 });
      for (const item of page.result.items) {
        expect(item.createdAt).toBeInstanceOf(Date);
        seen.push(item.id);
      }
    }
    expect(pageSizes).toEqual([2, 2, 1]);
    expect(seen).toHaveLength(5);
    expect(new Set(seen)).toEqual(new Set(created));
    // The default order is newest first.
    expect(seen).toEqual([...created].reverse());
  });

  it('lists an organization without products as a single empty page', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const pages = [];
    for await (const page of await polar.products.list({})) pages.push(page.result);
    expect(pages).toEqual([{ items: [], pagination: { totalCount: 0, maxPage: 0 } }]);
  });

  it('filters the list by archived state and by name', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const kept = await polar.products.create({ name: 'Alpha widget', recurringInterval: null, prices: [{ amountType: 'free' }] });
    const archived = await polar.products.create({ name: 'Beta gadget', recurringInterval: null, prices: [{ amountType: 'free' }] });
    await polar.products.update({ id: archived.id, productUpdate: { isArchived: true } });
    const live = await polar.products.list({ isArchived: false });
    expect(live.result.items.map((p) => p.id)).toEqual([kept.id]);
    const byName = await polar.products.list({ query: 'GADGET' });
    expect(byName.result.items.map((p) => p.id)).toEqual([archived.id]);
  });

  it("sorts by price and filters by metadata through the SDK's query encoding", async () => {
    const { polar } = await newOrganization(t.server, environment);
    const cheap = await polar.products.create({ name: 'Cheap', recurringInterval: null, metadata: { tier: 'basic' }, prices: [{ amountType: 'fixed', priceAmount: 500 }] });
    const dear = await polar.products.create({ name: 'Dear', recurringInterval: 'year', metadata: { tier: 'gold', seats: 10 }, prices: [{ amountType: 'fixed', priceAmount: 9_000 }] });
    const middle = await polar.products.create({ name: 'Middle', recurringInterval: 'month', metadata: { tier: 'gold', seats: 3 }, prices: [{ amountType: 'custom', minimumAmount: 2_000 }] });
    const ids = (page: { result: { items: { id: string }[] } }) => page.result.items.map((p) => p.id);
    expect(ids(await polar.products.list({ sorting: ['-price_amount'] }))).toEqual([dear.id, middle.id, cheap.id]);
    expect(ids(await polar.products.list({ sorting: ['name'] }))).toEqual([cheap.id, dear.id, middle.id]);
    expect(ids(await polar.products.list({ metadata: { tier: 'gold' }, sorting: ['name'] }))).toEqual([dear.id, middle.id]);
    expect(ids(await polar.products.list({ metadata: { tier: ['basic', 'gold'], seats: 3 } }))).toEqual([middle.id]);
    expect(ids(await polar.products.list({ isRecurring: false }))).toEqual([cheap.id]);
    expect(ids(await polar.products.list({ id: [cheap.id, dear.id], sorting: ['price_amount'] }))).toEqual([cheap.id, dear.id]);
  });

  it('gets a product by id, equal to what create returned', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const created = await polar.products.create({ name: 'Gettable', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 4200 }] });
    const fetched = await polar.products.get({ id: created.id });
    expect(fetched).toEqual(created);
  });

  it('renames a product, keeping its id and its price', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const created = await polar.products.create({ name: 'Old name', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 1000 }] });
    const updated = await polar.products.update({ id: created.id, productUpdate: { name: 'New name' } });
    expect(updated.id).toBe(created.id);
    expect(updated.name).toBe('New name');
    expect(updated.prices.map((p) => p.id)).toEqual([created.prices[0].id]);
    expect(updated.modifiedAt).toBeInstanceOf(Date);
    expect((await polar.products.get({ id: created.id })).name).toBe('New name');
  });

  it('archives a product, which is still readable by id and reports isArchived', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const created = await polar.products.create({ name: 'Retiring', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000 }] });
    const archived = await polar.products.update({ id: created.id, productUpdate: { isArchived: true } });
    expect(archived.isArchived).toBe(true);
    expect((await polar.products.get({ id: created.id })).isArchived).toBe(true);
    const unarchived = await polar.products.update({ id: created.id, productUpdate: { isArchived: false } });
    expect(unarchived.isArchived).toBe(false);
  });

  it('replaces the price with a new one, which gets a new id while the old one leaves the product', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const created = await polar.products.create({ name: 'Repriced', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000 }] });
    const updated = await polar.products.update({ id: created.id, productUpdate: { prices: [{ amountType: 'fixed', priceAmount: 2500, priceCurrency: 'usd' }] } });
    expect(updated.prices).toHaveLength(1);
    expect(updated.prices[0].id).not.toBe(created.prices[0].id);
    expect(updated.prices[0]).toMatchObject({ amountType: 'fixed', priceAmount: 2500, type: 'recurring', recurringInterval: 'month', isArchived: false });
    expect((await polar.products.get({ id: created.id })).prices.map((p) => p.id)).toEqual([updated.prices[0].id]);
  });

  it('replaces a fixed price with a pay-what-you-want price', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const created = await polar.products.create({ name: 'Now flexible', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 1000 }] });
    const updated = await polar.products.update({ id: created.id, productUpdate: { prices: [{ amountType: 'custom', minimumAmount: 100 }] } });
    expect(updated.prices).toHaveLength(1);
    expect(updated.prices[0]).toMatchObject({ amountType: 'custom', minimumAmount: 100, maximumAmount: null, presetAmount: null });
  });

  it('keeps an existing price when it is sent back by id alongside other changes', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const created = await polar.products.create({ name: 'Stable price', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 3000 }] });
    const priceId = created.prices[0].id;
    const updated = await polar.products.update({
      id: created.id,
      productUpdate: { name: 'Stable price, new name', description: 'Now described', prices: [{ id: priceId }] },
    });
    expect(updated).toMatchObject({ name: 'Stable price, new name', description: 'Now described' });
    expect(updated.prices).toHaveLength(1);
    expect(updated.prices[0]).toMatchObject({ id: priceId, amountType: 'fixed', priceAmount: 3000 });
  });

  it('applies concurrent price replacements one after the other, leaving exactly one live price', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const created = await polar.products.create({ name: 'Contended', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 100 }] });
    const updates = await Promise.all(
      [1, 2, 3, 4].map((i) => polar.products.update({ id: created.id, productUpdate: { prices: [{ amountType: 'fixed', priceAmount: 1_000 * i }] } })),
    );
    for (const updated of updates) expect(updated.prices).toHaveLength(1);
    const final = await polar.products.get({ id: created.id });
    expect(final.prices).toHaveLength(1);
    expect(updates.map((u) => u.prices[0].id)).toContain(final.prices[0].id);
  });

  it('accepts an empty update and returns the product unchanged', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const created = await polar.products.create({ name: 'Untouched', recurringInterval: null, prices: [{ amountType: 'free' }] });
    const updated = await polar.products.update({ id: created.id, productUpdate: {} });
    expect({ ...updated, modifiedAt: undefined }).toEqual({ ...created, modifiedAt: undefined });
  });

  it('throws ResourceNotFound when getting an id that does not exist', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const error = await rejectionOf(polar.products.get({ id: randomUUID() }));
    expect(error).toBeInstanceOf(ResourceNotFound);
    expect(error).not.toBeInstanceOf(ResponseValidationError);
    const notFound = error as ResourceNotFound;
    expect(notFound.statusCode).toBe(404);
    expect(notFound.error).toBe('ResourceNotFound');
    expect(notFound.detail).toMatch(/not found/i);
  });

  it('throws the typed ResourceNotFound for a path Kassa does not serve, not a validation error', async () => {
    // Every REST operation of the client library is served now: one pointed under an unknown prefix
    // meets only paths Kassa does not serve.
    const { token } = await newOrganization(t.server, environment);
    const astray = new Polar({ accessToken: token, serverURL: `${sdkServerURL(t.server, environment)}/not-served` });
    const error = await rejectionOf(astray.products.get({ id: randomUUID() }));
    expect(error).toBeInstanceOf(ResourceNotFound);
    expect(error).not.toBeInstanceOf(ResponseValidationError);
    expect((error as ResourceNotFound).statusCode).toBe(404);
    expect((error as ResourceNotFound).detail).toMatch(/^No endpoint at (\/sandbox)?\/not-served\/v1\/products\//);
  });

  it('creates, lists, gets, updates and deletes a custom field, and attaches it to a product', async () => {
    const { polar, organizationId } = await newOrganization(t.server, environment);
    const created = await polar.customFields.create({
      type: 'select', slug: 'Plan-Size', name: 'Plan size', properties: { formLabel: 'Size', options: [{ value: 'team', label: 'Team' }] }, metadata: { source: 'sdk' },
    });
    expect(created).toMatchObject({ type: 'select', slug: 'plan-size', organizationId, metadata: { source: 'sdk' }, properties: { formLabel: 'Size', options: [{ value: 'team', label: 'Team' }] } });
    expect(await polar.customFields.get({ id: created.id })).toEqual(created);
    const listed = await polar.customFields.list({ typeFilter: 'select' });
    expect(listed.result.items.map((f) => f.id)).toEqual([created.id]);
    const updated = await polar.customFields.update({ id: created.id, customFieldUpdate: { type: 'select', name: 'Team size', properties: { options: [{ value: 'team', label: 'Team' }, { value: 'org', label: 'Organization' }] } } });
    expect(updated).toMatchObject({ name: 'Team size', properties: { options: [{ value: 'team', label: 'Team' }, { value: 'org', label: 'Organization' }] } });
    const product = await polar.products.create({
      name: 'Seats', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 1000, priceCurrency: 'usd' }], attachedCustomFields: [{ customFieldId: created.id, required: true }],
    });
    expect(product.attachedCustomFields).toEqual([{ customFieldId: created.id, customField: updated, order: 0, required: true }]);
    await polar.customFields.delete({ id: created.id });
    expect(await rejectionOf(polar.customFields.get({ id: created.id }))).toBeInstanceOf(ResourceNotFound);
    expect((await polar.products.get({ id: product.id })).attachedCustomFields).toEqual([]);
  });

  it('throws HTTPValidationError for a bad custom field and ResourceNotFound for an unknown one', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const invalid = await rejectionOf(polar.customFields.create({ type: 'number', slug: 'seats', name: 'Seats', properties: { ge: 10, le: 1 } }));
    expect(invalid).toBeInstanceOf(HTTPValidationError);
    expect((invalid as HTTPValidationError).detail?.map((d) => d.loc)).toEqual([['body', 'properties', 'le']]);
    await polar.customFields.create({ type: 'number', slug: 'seats', name: 'Seats', properties: {} });
    expect(await rejectionOf(polar.customFields.create({ type: 'text', slug: 'SEATS', name: 'Again', properties: {} }))).toBeInstanceOf(HTTPValidationError);
    for (const call of [
      () => polar.customFields.get({ id: randomUUID() }),
      () => polar.customFields.update({ id: randomUUID(), customFieldUpdate: { type: 'text', name: 'Ghost' } }),
      () => polar.customFields.delete({ id: randomUUID() }),
    ]) {
      const error = await rejectionOf(call());
      expect(error).toBeInstanceOf(ResourceNotFound);
      expect(error).not.toBeInstanceOf(ResponseValidationError);
    }
  });

  it('throws ResourceNotFound when updating an id that does not exist', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const error = await rejectionOf(polar.products.update({ id: randomUUID(), productUpdate: { name: 'Ghost product' } }));
    expect(error).toBeInstanceOf(ResourceNotFound);
    expect((error as ResourceNotFound).statusCode).toBe(404);
  });

  it("throws ResourceNotFound for another organization's product", async () => {
    const owner = await newOrganization(t.server, environment);
    const stranger = await newOrganization(t.server, environment);
    const product = await owner.polar.products.create({ name: 'Private', recurringInterval: null, prices: [{ amountType: 'free' }] });
    expect(await rejectionOf(stranger.polar.products.get({ id: product.id }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(stranger.polar.products.update({ id: product.id, productUpdate: { name: 'Hijacked' } }))).toBeInstanceOf(ResourceNotFound);
    expect((await owner.polar.products.get({ id: product.id })).name).toBe('Private');
  });

  it('throws HTTPValidationError naming the path id when it is not a UUID', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const error = await rejectionOf(polar.products.get({ id: 'not-a-uuid' }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).statusCode).toBe(422);
    expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['path', 'id'] })]);
  });

  it('throws HTTPValidationError naming the price when asked for a metered price on a one-time product', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const error = await rejectionOf(
      polar.products.create({ name: 'Metered once', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 100, priceCurrency: 'usd' }, { amountType: 'metered_unit', meterId: randomUUID(), unitAmount: 5 }] }),
    );
    expect(error).toBeInstanceOf(HTTPValidationError);
    const locs = (error as HTTPValidationError).detail!.map((d) => d.loc.join('.'));
    expect(locs.some((loc) => loc.startsWith('body.prices.1'))).toBe(true);
  });

  it('throws HTTPValidationError naming the name field when the name is too short', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const error = await rejectionOf(polar.products.create({ name: 'ab', recurringInterval: null, prices: [{ amountType: 'free' }] }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    const invalid = error as HTTPValidationError;
    expect(invalid.statusCode).toBe(422);
    expect(invalid.detail).toEqual([expect.objectContaining({ loc: ['body', 'name'], type: 'string_too_short' })]);
    expect(invalid.detail![0].msg).toMatch(/at least 3 characters/);
  });

  it('throws HTTPValidationError naming the price amount when it is below the minimum', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const error = await rejectionOf(polar.products.create({ name: 'Too cheap', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 10 }] }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail).toEqual([
      expect.objectContaining({ loc: ['body', 'prices', 0, 'price_amount'], type: 'greater_than_equal' }),
    ]);
  });

  it('throws HTTPValidationError naming the price id when keeping a price the product does not have', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const created = await polar.products.create({ name: 'Strict', recurringInterval: null, prices: [{ amountType: 'free' }] });
    const error = await rejectionOf(polar.products.update({ id: created.id, productUpdate: { prices: [{ id: randomUUID() }] } }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'prices', 0, 'id'] })]);
    expect((await polar.products.get({ id: created.id })).prices.map((p) => p.id)).toEqual([created.prices[0].id]);
  });

  it('lists, creates, gets, updates and deletes checkout links as typed CheckoutLinks', async () => {
    const { polar, organizationId } = await newOrganization(t.server, environment);
    const [first, second] = await Promise.all(['Link one', 'Link two'].map((name) => polar.products.create({ name, recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 1200 }] })));
    const discount = await polar.discounts.create({ name: 'Link discount', type: 'fixed', amount: 200, currency: 'usd', duration: 'once' });
    const created = await polar.checkoutLinks.create({
      paymentProcessor: 'stripe', products: [first.id, second.id], label: 'Both', discountId: discount.id, successUrl: 'https://shop.example/ok', metadata: { team: 'growth' },
    });
    expect(created).toMatchObject({
      organizationId, label: 'Both', discountId: discount.id, successUrl: 'https://shop.example/ok', allowDiscountCodes: true, requireBillingAddress: false, metadata: { team: 'growth' }, paymentProcessor: 'stripe',
    });
    expect(created.url).toBe(`${t.server.base(environment)}/checkout-links/${created.clientSecret}/redirect`);
    expect(created.products.map((p) => p.id)).toEqual([first.id, second.id]);
    expect(created.discount).toMatchObject({ id: discount.id, amount: 200 });
    const single = await polar.checkoutLinks.create({ paymentProcessor: 'stripe', productId: second.id, label: 'One' });
    expect(single.products.map((p) => p.id)).toEqual([second.id]);

    expect(await polar.checkoutLinks.get({ id: created.id })).toEqual(created);
    const pages = [];
    for await (const page of await polar.checkoutLinks.list({ productId: second.id, limit: 1, sorting: ['label'] })) pages.push(page.result.items.map((l) => l.label));
    expect(pages).toEqual([['Both'], ['One']]);
    const updated = await polar.checkoutLinks.update({ id: created.id, checkoutLinkUpdate: { label: 'Renamed', products: [first.id], discountId: null, allowDiscountCodes: false } });
    expect(updated).toMatchObject({ label: 'Renamed', discountId: null, discount: null, allowDiscountCodes: false, modifiedAt: expect.any(Date) });
    expect(updated.products.map((p) => p.id)).toEqual([first.id]);

    await polar.checkoutLinks.delete({ id: created.id });
    expect(await rejectionOf(polar.checkoutLinks.get({ id: created.id }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(polar.checkoutLinks.delete({ id: created.id }))).toBeInstanceOf(ResourceNotFound);
    expect((await polar.checkoutLinks.list({ organizationId })).result.items.map((l) => l.id)).toEqual([single.id]);
  });

  it('throws the typed errors for checkout links: ResourceNotFound for an unknown or foreign link, HTTPValidationError for bad products, discount or URL', async () => {
    const owner = await newOrganization(t.server, environment);
    const stranger = await newOrganization(t.server, environment);
    const product = await owner.polar.products.create({ name: 'Owned', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 800 }] });
    const theirDiscount = await stranger.polar.discounts.create({ name: 'Foreign', type: 'percentage', basisPoints: 100, duration: 'once' });
    const locOf = async (call: Promise<unknown>) => {
      const error = await rejectionOf(call);
      expect(error).toBeInstanceOf(HTTPValidationError);
      return (error as HTTPValidationError).detail!.map((d) => d.loc.join('.'));
    };
    const link = await owner.polar.checkoutLinks.create({ paymentProcessor: 'stripe', products: [product.id], label: 'Owned' });
    const byPrice = await owner.polar.checkoutLinks.create({ paymentProcessor: 'stripe', productPriceId: product.prices[0].id });
    expect(byPrice.products.map((p) => p.id)).toEqual([product.id]);
    expect(await locOf(stranger.polar.checkoutLinks.create({ paymentProcessor: 'stripe', productPriceId: product.prices[0].id }))).toEqual(['body.product_price_id']);

    expect(await rejectionOf(owner.polar.checkoutLinks.get({ id: randomUUID() }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(owner.polar.checkoutLinks.update({ id: randomUUID(), checkoutLinkUpdate: { label: 'Ghost' } }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(stranger.polar.checkoutLinks.get({ id: link.id }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(stranger.polar.checkoutLinks.update({ id: link.id, checkoutLinkUpdate: { label: 'Hijacked' } }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(stranger.polar.checkoutLinks.delete({ id: link.id }))).toBeInstanceOf(ResourceNotFound);

    expect(await locOf(stranger.polar.checkoutLinks.create({ paymentProcessor: 'stripe', products: [product.id] }))).toEqual(['body.products.0']);
    expect(await locOf(owner.polar.checkoutLinks.create({ paymentProcessor: 'stripe', products: [] }))).toEqual(['body.products']);
    expect(await locOf(owner.polar.checkoutLinks.create({ paymentProcessor: 'stripe', products: [product.id], discountId: theirDiscount.id }))).toEqual(['body.discount_id']);
    expect(await locOf(owner.polar.checkoutLinks.update({ id: link.id, checkoutLinkUpdate: { successUrl: 'javascript:alert(1)' } }))).toEqual(['body.success_url']);
    expect(await owner.polar.checkoutLinks.get({ id: link.id })).toEqual(link);
  });

  it('throws HTTPValidationError naming the interval when changing a product from monthly to yearly', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const created = await polar.products.create({ name: 'Monthly only', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 900 }] });
    const error = await rejectionOf(polar.products.update({ id: created.id, productUpdate: { recurringInterval: 'year' } }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'recurring_interval'] })]);
  });
});

describe.each<EnvironmentName>(['production', 'sandbox'])('usage events and meters through the official SDK against %s', (environment) => {
  it('ingests, lists, gets and names events; creates, lists, gets, updates and reads quantities of a meter', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const customer = await polar.customers.create({ email: `${randomUUID()}@example.com`, externalId: `usage-${randomUUID()}` });
    const day = new Date('2026-02-10T12:00:00Z');
    expect(
      await polar.events.ingest({
        events: [
          { name: 'upload', customerId: customer.id, timestamp: day, metadata: { bytes: 300 } },
          { name: 'upload', externalCustomerId: customer.externalId!, timestamp: day, metadata: { bytes: 200 } },
        ],
      }),
    ).toEqual({ inserted: 2 });
    const events = await polar.events.list({ customerId: customer.id });
    expect(events.result.items.map((e) => [e.name, e.source, e.customerId])).toEqual([
      ['upload', 'user', customer.id],
      ['upload', 'user', customer.id],
    ]);
    expect(await polar.events.get({ id: events.result.items[0].id })).toEqual(events.result.items[0]);
    expect((await polar.events.listNames({})).result.items).toEqual([{ name: 'upload', source: 'user', occurrences: 2, firstSeen: day, lastSeen: day }]);

    const meter = await polar.meters.create({
      name: 'Bytes uploaded',
      filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'upload' }] },
      aggregation: { func: 'sum', property: 'bytes' },
    });
    expect(await polar.meters.get({ id: meter.id })).toEqual(meter);
    expect((await polar.meters.list({})).result.items.map((m) => m.id)).toEqual([meter.id]);
    expect((await polar.meters.update({ id: meter.id, meterUpdate: { name: 'Bytes' } })).name).toBe('Bytes');
    const quantities = await polar.meters.quantities({
      id: meter.id,
      startTimestamp: new Date('2026-02-09T00:00:00Z'),
      endTimestamp: new Date('2026-02-11T00:00:00Z'),
      interval: 'day',
      customerId: customer.id,
    });
    expect(quantities).toEqual({
      quantities: [
        { timestamp: new Date('2026-02-09T00:00:00Z'), quantity: 0 },
        { timestamp: new Date('2026-02-10T00:00:00Z'), quantity: 500 },
        { timestamp: new Date('2026-02-11T00:00:00Z'), quantity: 0 },
      ],
      total: 500,
    });
  });

  it('throws the typed errors: HTTPValidationError for an unknown customer, ResourceNotFound for an unknown meter or event', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const invalid = await rejectionOf(polar.events.ingest({ events: [{ name: 'x', customerId: randomUUID() }] }));
    expect(invalid).toBeInstanceOf(HTTPValidationError);
    expect((invalid as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'events', 0, 'customer_id'] })]);
    expect(await rejectionOf(polar.meters.get({ id: randomUUID() }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(polar.events.get({ id: randomUUID() }))).toBeInstanceOf(ResourceNotFound);
    const missing = await rejectionOf(polar.meters.create({ name: 'No property', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'avg', property: '' } }));
    expect(missing).toBeInstanceOf(HTTPValidationError);
  });
});

describe.each<EnvironmentName>(['production', 'sandbox'])('metrics through the official SDK against %s', (environment) => {
  it('metrics.get answers a typed MetricsResponse: every period of the range, totals and definitions', async () => {
    const { RFCDate } = await import('@polar-sh/sdk/types/rfcdate.js');
    const { polar, organizationId } = await newOrganization(t.server, environment);
    const result = await polar.metrics.get({
      startDate: new RFCDate('2026-03-07'),
      endDate: new RFCDate('2026-03-09'),
      interval: 'day',
      timezone: 'Europe/Paris',
      organizationId,
      billingType: ['one_time', 'recurring'],
    });
    expect(result.periods.map((p) => p.timestamp.toISOString())).toEqual(['2026-03-06T23:00:00.000Z', '2026-03-07T23:00:00.000Z', '2026-03-08T23:00:00.000Z']);
    expect(result.periods[0]).toMatchObject({ orders: 0, revenue: 0, activeSubscriptions: 0, checkoutsConversion: 0 });
    expect(result.totals).toMatchObject({ orders: 0, monthlyRecurringRevenue: 0, committedMonthlyRecurringRevenue: 0 });
    expect(Object.keys(result.metrics)).toHaveLength(22);
    expect(result.metrics.monthlyRecurringRevenue).toEqual({ slug: 'monthly_recurring_revenue', displayName: 'Monthly Recurring Revenue', type: 'currency' });
  });

  it('metrics.limits answers the earliest date and each interval\'s longest range; bad input throws HTTPValidationError', async () => {
    const { RFCDate } = await import('@polar-sh/sdk/types/rfcdate.js');
    const { polar } = await newOrganization(t.server, environment);
    const limits = await polar.metrics.limits();
    expect(limits.minDate.toString()).toBe('2023-01-01');
    expect(limits.intervals.hour.maxDays).toBe(7);
    const error = await rejectionOf(polar.metrics.get({ startDate: new RFCDate('2026-03-07'), endDate: new RFCDate('2026-03-09'), interval: 'day', timezone: 'Nowhere/Atlantis' }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['query', 'timezone'] })]);
  });
});

describe.each<EnvironmentName>(['production', 'sandbox'])('metered prices, meter credits and customer meters through the official SDK against %s', (environment) => {
  it('creates a metered price and a meter_credit benefit, and reads the customer meter in Core and in the portal', async () => {
    const org = await newOrganization(t.server, environment);
    const { polar } = org;
    const meter = await polar.meters.create({ name: 'Requests', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'request' }] }, aggregation: { func: 'count' } });
    const product = await polar.products.create({
      name: 'Metered SDK plan',
      recurringInterval: 'month',
      // A free base: production on PostgreSQL has no payment processor here, and usage is billed later.
      prices: [
        { amountType: 'free' },
        { amountType: 'metered_unit', meterId: meter.id, unitAmount: 0.25, capAmount: 100, priceCurrency: 'usd' },
      ],
    });
    expect(product.prices[1]).toMatchObject({ amountType: 'metered_unit', unitAmount: '0.25', capAmount: 100, meterId: meter.id, meter: { id: meter.id, name: 'Requests' } });
    const benefit = await polar.benefits.create({ type: 'meter_credit', description: 'Included requests', properties: { meterId: meter.id, units: 50, rollover: true } });
    expect(benefit).toMatchObject({ type: 'meter_credit', properties: { meterId: meter.id, units: 50, rollover: true } });
    await polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [benefit.id] } });

    await createAndConfirmCheckout(org, product.id, `metered-sdk-${environment}@example.com`);
    const page = await eventually(() => polar.customerMeters.list({ meterId: meter.id }), (p) => p.result.items.length === 1, 'the credited customer meter');
    const customerMeter = page.result.items[0];
    expect(customerMeter).toMatchObject({ meterId: meter.id, consumedUnits: 0, creditedUnits: 50, balance: 50, meter: { id: meter.id }, customer: { email: `metered-sdk-${environment}@example.com` } });
    expect(await polar.customerMeters.get({ id: customerMeter.id })).toEqual(customerMeter);
    await polar.events.ingest({ events: [{ name: 'request', customerId: customerMeter.customerId }, { name: 'request', customerId: customerMeter.customerId }] });
    expect(await polar.customerMeters.get({ id: customerMeter.id })).toMatchObject({ consumedUnits: 2, balance: 48 });
    expect((await polar.customers.getState({ id: customerMeter.customerId })).activeMeters).toEqual([expect.objectContaining({ meterId: meter.id, creditedUnits: 50, consumedUnits: 2 })]);

    const session = await polar.customerSessions.create({ customerId: customerMeter.customerId });
    const portal = new Polar({ serverURL: sdkServerURL(t.server, environment) });
    const own = await portal.customerPortal.customerMeters.list({ customerSession: session.token }, {});
    expect(own.result.items).toEqual([expect.objectContaining({ id: customerMeter.id, consumedUnits: 2, creditedUnits: 50, balance: 48, meter: expect.objectContaining({ id: meter.id, name: 'Requests' }) })]);
    expect(await portal.customerPortal.customerMeters.get({ customerSession: session.token }, { id: customerMeter.id })).toEqual(own.result.items[0]);
    expect(await rejectionOf(portal.customerPortal.customerMeters.get({ customerSession: session.token }, { id: randomUUID() }))).toBeInstanceOf(ResourceNotFound);
  });

  it('throws the typed errors: HTTPValidationError for a bad unit amount or meter, ResourceNotFound for an unknown customer meter', async () => {
    const { polar } = await newOrganization(t.server, environment);
    const meter = await polar.meters.create({ name: 'Requests', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    const create = (metered: Record<string, unknown>) =>
      polar.products.create({ name: 'Refused plan', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 1000 }, { amountType: 'metered_unit', meterId: meter.id, unitAmount: '1', ...metered } as never] });
    for (const [metered, field] of [[{ unitAmount: '-1' }, 'unit_amount'], [{ unitAmount: 'abc' }, 'unit_amount'], [{ capAmount: -5 }, 'cap_amount'], [{ meterId: randomUUID() }, 'meter_id']] as const) {
      const error = await rejectionOf(create(metered));
      expect(error).toBeInstanceOf(HTTPValidationError);
      expect((error as HTTPValidationError).detail).toEqual([expect.objectContaining({ loc: ['body', 'prices', 1, field] })]);
    }
    expect(await rejectionOf(polar.customerMeters.get({ id: randomUUID() }))).toBeInstanceOf(ResourceNotFound);
  });
});

describe('discounts, payments, portal payment retries, benefit grant update and the subscriptions export through the official SDK', () => {
  // Production's processor is the test one here on both databases: the embedded database gives it by
  // default, PostgreSQL only when asked, so the paid and declined purchases run in both environments.
  const s = useTestServer({ env: { PRODUCTION_PAYMENT_PROCESSOR: 'test', TEST_CARD_DELAY_MS: '0' } });

  describe.each<EnvironmentName>(['production', 'sandbox'])('against %s', (environment) => {
    it('creates, lists, gets, updates and deletes a discount; a deleted one is ResourceNotFound', async () => {
      const { polar } = await newOrganization(s.server, environment);
      const discount = await polar.discounts.create({ name: 'Ten off', type: 'percentage', basisPoints: 1000, duration: 'once', code: 'TENOFF' });
      expect(discount).toMatchObject({ name: 'Ten off', type: 'percentage', basisPoints: 1000, duration: 'once', code: 'TENOFF', redemptionsCount: 0 });
      const other = await polar.discounts.create({ name: 'Two dollars', type: 'fixed', amount: 200, currency: 'usd', duration: 'forever' });
      expect((await polar.discounts.list({ sorting: ['name'] })).result.items.map((d) => d.id)).toEqual([discount.id, other.id]);
      expect(await polar.discounts.get({ id: discount.id })).toEqual(discount);
      const updated = await polar.discounts.update({ id: discount.id, discountUpdate: { name: 'Ten percent', maxRedemptions: 3 } });
      expect(updated).toMatchObject({ id: discount.id, name: 'Ten percent', maxRedemptions: 3, basisPoints: 1000, code: 'TENOFF' });
      expect(await polar.discounts.get({ id: discount.id })).toEqual(updated);
      await polar.discounts.delete({ id: discount.id });
      expect(await rejectionOf(polar.discounts.get({ id: discount.id }))).toBeInstanceOf(ResourceNotFound);
      expect(await rejectionOf(polar.discounts.update({ id: discount.id, discountUpdate: { name: 'Back' } }))).toBeInstanceOf(ResourceNotFound);
      expect(await rejectionOf(polar.discounts.delete({ id: discount.id }))).toBeInstanceOf(ResourceNotFound);
      expect((await polar.discounts.list({})).result.items.map((d) => d.id)).toEqual([other.id]);
    });

    it('lists and gets payments; a declined order shows its failure in the portal and is paid with a new card', async () => {
      const org = await newOrganization(s.server, environment);
      const { polar, buyer } = org;
      const product = await polar.products.create({ name: 'Course', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 1500, priceCurrency: 'usd' }] });
      const paidCheckout = await createAndConfirmCheckout(org, product.id, `paid-${environment}@example.com`);
      const [paid] = await eventually(async () => (await polar.orders.list({ checkoutId: paidCheckout.id })).result.items, (items) => items.length === 1 && items[0].paid, 'the paid order');
      const payments = (await polar.payments.list({ orderId: paid.id })).result.items;
      expect(payments).toEqual([expect.objectContaining({ orderId: paid.id, checkoutId: paidCheckout.id, status: 'succeeded', amount: 1500, currency: 'usd' })]);
      expect(await polar.payments.get({ id: payments[0].id })).toEqual(payments[0]);
      expect(await rejectionOf(polar.payments.get({ id: randomUUID() }))).toBeInstanceOf(ResourceNotFound);

      const declinedCheckout = await createAndConfirmCheckout(org, product.id, `declined-${environment}@example.com`, { card: 'tok_chargeDeclined' });
      await eventually(() => polar.checkouts.get({ id: declinedCheckout.id }), (c) => c.status === 'failed', 'the checkout to fail');
      const [declined] = (await polar.orders.list({ checkoutId: declinedCheckout.id })).result.items;
      expect([declined.status, declined.paid]).toEqual(['pending', false]);
      const session = { customerSession: (await polar.customerSessions.create({ customerId: declined.customerId })).token };
      expect(await buyer.customerPortal.orders.getPaymentStatus(session, { id: declined.id })).toEqual({ status: 'failed', error: 'The card was declined.' });
      expect(await buyer.customerPortal.orders.confirmRetryPayment(session, { id: declined.id, customerOrderConfirmPayment: { confirmationTokenId: 'tok_visa' } })).toEqual({
        status: 'pending',
        clientSecret: null,
        error: null,
      });
      await eventually(() => polar.orders.get({ id: declined.id }), (o) => o.paid, 'the retried order to be paid');
      expect(await buyer.customerPortal.orders.getPaymentStatus(session, { id: declined.id })).toEqual({ status: 'succeeded', error: null });
      expect((await polar.payments.list({ orderId: declined.id, sorting: ['created_at'] })).result.items.map((p) => p.status)).toEqual(['failed', 'succeeded']);
      expect(await rejectionOf(buyer.customerPortal.orders.getPaymentStatus(session, { id: paid.id }))).toBeInstanceOf(ResourceNotFound);
    });

    it('updates a benefit grant from the portal, and exports the subscriptions as CSV the client library cannot parse', async () => {
      const org = await newOrganization(s.server, environment);
      const { polar, buyer } = org;
      const product = await polar.products.create({ name: 'Plan', recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: 900, priceCurrency: 'usd' }] });
      const benefit = await polar.benefits.create({ type: 'custom', description: 'Welcome note', properties: { note: 'Thanks!' } });
      await polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [benefit.id] } });
      const email = `subscriber-${environment}@example.com`;
      const checkout = await createAndConfirmCheckout(org, product.id, email);
      const [order] = await eventually(async () => (await polar.orders.list({ checkoutId: checkout.id })).result.items, (items) => items.length === 1 && items[0].paid, 'the paid order');
      const session = { customerSession: (await polar.customerSessions.create({ customerId: order.customerId })).token };
      const grants = await eventually(async () => (await buyer.customerPortal.benefitGrants.list(session, {})).result.items, (items) => items.length === 1, 'the grant');
      expect(await buyer.customerPortal.benefitGrants.update(session, { id: grants[0].id, customerBenefitGrantUpdate: { benefitType: 'custom' } })).toEqual(grants[0]);
      const refused = await rejectionOf(buyer.customerPortal.benefitGrants.update(session, { id: grants[0].id, customerBenefitGrantUpdate: { benefitType: 'license_keys' } }));
      expect(refused).toBeInstanceOf(HTTPValidationError);
      expect((refused as HTTPValidationError).detail!.map((d) => d.loc)).toEqual([['body', 'benefit_type']]);

      // The client library declares the export's answer as JSON while the service sends CSV: it
      // reports the 200 as an unexpected content type, carrying the file.
      const error = await rejectionOf(polar.subscriptions.export({ organizationId: org.organizationId }));
      expect(error).toBeInstanceOf(SDKError);
      expect((error as SDKError).statusCode).toBe(200);
      expect((error as SDKError).contentType).toBe('text/csv; charset=utf-8');
      const rows = (error as SDKError).body.split('\r\n');
      expect(rows[0]).toBe('Email,Created At,Active,Product,Price,Currency,Interval');
      expect(rows.slice(1).filter(Boolean).map((row) => row.split(',')[0])).toEqual([email]);
    });
  });
});
