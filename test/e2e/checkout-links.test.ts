// Checkout links end to end: the resource through GraphQL and REST (list, get, create, update,
// soft delete), refused from the attacker's side (no token, another organization's token, a token
// without the scope, a sandbox token on production), bad input answered 422 with nothing written;
// and the link's public URL, which opens a fresh checkout for each visit that the buyer can pay,
// answers a page instead of a checkout once the link is deleted or has nothing left to sell, and
// is counted per client address.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { checkoutWhen, fixedProduct, paidOrderOf } from '../helpers/purchases.ts';
import { expectGraphQLError, expectStatus, expectValidationError, graphqlData } from '../helpers/responses.ts';
import { datetime, uuid } from '../helpers/matchers.ts';
import { restClient } from '../helpers/server.ts';

const visitsPerMinute = 25;
const t = useTestServer({
  // The limits on, the others out of the way: only visits to links are counted here.
  env: {
    TEST_CARD_DELAY_MS: '0',
    RATE_LIMITS: 'on',
    RATE_LIMIT_CHECKOUT_LINK_PER_MINUTE: String(visitsPerMinute),
    RATE_LIMIT_PER_MINUTE: '100000',
    RATE_LIMIT_IP_PER_SECOND: '100000',
    RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000',
  },
  organizations: { org: 'sandbox', other: 'sandbox', live: 'production' },
  resetClockAfterEach: true,
});

/** Opens a link's URL as a browser would, without following the redirect. */
async function visit(url: string) {
  const response = await fetch(url, { redirect: 'manual' });
  return { status: response.status, location: response.headers.get('location'), type: response.headers.get('content-type'), text: await response.text(), headers: response.headers };
}

/** The checkout a visit was sent to, as its buyer sees it. */
async function checkoutAt(org: Org, location: string) {
  const clientSecret = new URL(location).pathname.split('/').pop()!;
  return { clientSecret, checkout: expectStatus(await org.publicApi('GET', `/checkouts/client/${clientSecret}`), 200) };
}

const linkFields = `id clientSecret url label successUrl allowDiscountCodes requireBillingAddress discountId organizationId metadata products { id name }`;

describe('checkout links through GraphQL', () => {
  it('creates, lists, reads (also as a node), updates and deletes a link', async () => {
    const [first, second] = [await fixedProduct(t.org, 'Guide', 2500), await fixedProduct(t.org, 'Workbook', 1500)];
    const created = (
      await graphqlData(
        t.org.gql(`mutation ($input: CheckoutLinkCreateInput!) { core { checkoutLinkCreate(input: $input) { ${linkFields} } } }`, {
          input: { products: [first.id, second.id], label: 'Spring mailing', successUrl: 'https://shop.example/thanks', metadata: { campaign: 'spring' } },
        }),
      )
    ).core.checkoutLinkCreate;
    expect(created).toEqual({
      id: uuid,
      clientSecret: expect.stringMatching(/^[a-z0-9]+_cl_[A-Za-z0-9_-]{43}$/),
      url: `${t.server.base('sandbox')}/checkout-links/${created.clientSecret}/redirect`,
      label: 'Spring mailing',
      successUrl: 'https://shop.example/thanks',
      allowDiscountCodes: true,
      requireBillingAddress: false,
      discountId: null,
      organizationId: t.org.organizationId,
      metadata: { campaign: 'spring' },
      products: [{ id: first.id, name: 'Guide' }, { id: second.id, name: 'Workbook' }],
    });

    const listed = await graphqlData(t.org.gql(`query ($p: [UUID!]) { core { checkoutLinks(productId: $p) { items { id } pagination { totalCount } } } }`, { p: [second.id] }));
    expect(listed.core.checkoutLinks).toEqual({ items: [{ id: created.id }], pagination: { totalCount: 1 } });
    const read = await graphqlData(t.org.gql(`query ($id: UUID!) { core { checkoutLink(id: $id) { ${linkFields} } } }`, { id: created.id }));
    expect(read.core.checkoutLink).toEqual(created);
    const node = await graphqlData(t.org.gql(`query ($id: ID!) { node(id: $id) { __typename ... on CheckoutLink { label } } }`, { id: created.id }));
    expect(node.node).toEqual({ __typename: 'CheckoutLink', label: 'Spring mailing' });

    const updated = await graphqlData(
      t.org.gql(`mutation ($id: UUID!, $input: CheckoutLinkUpdateInput!) { core { checkoutLinkUpdate(id: $id, input: $input) { ${linkFields} } } }`, {
        id: created.id,
        input: { label: null, products: [second.id], allowDiscountCodes: false },
      }),
    );
    expect(updated.core.checkoutLinkUpdate).toMatchObject({ label: null, allowDiscountCodes: false, successUrl: 'https://shop.example/thanks', products: [{ id: second.id, name: 'Workbook' }] });

    expect(await graphqlData(t.org.gql(`mutation ($id: UUID!) { core { checkoutLinkDelete(id: $id) } }`, { id: created.id }))).toEqual({ core: { checkoutLinkDelete: true } });
    expectGraphQLError(await t.org.gql(`query ($id: UUID!) { core { checkoutLink(id: $id) { id } } }`, { id: created.id }), 'RESOURCE_NOT_FOUND');
    const after = await graphqlData(t.org.gql(`query ($p: [UUID!]) { core { checkoutLinks(productId: $p) { items { id } } } }`, { p: [second.id] }));
    expect(after.core.checkoutLinks.items).toEqual([]);
  });

  it('refuses bad input with BAD_USER_INPUT at each field', async () => {
    const theirs = await fixedProduct(t.other, 'Theirs', 1000);
    const create = (input: object) => t.org.gql(`mutation ($input: CheckoutLinkCreateInput!) { core { checkoutLinkCreate(input: $input) { id } } }`, { input });
    const error = expectGraphQLError(await create({ products: [theirs.id] }), 'BAD_USER_INPUT');
    expect(error.extensions.issues).toEqual([expect.objectContaining({ loc: ['input', 'products', 0], msg: 'Product not found.' })]);
    expectGraphQLError(await create({ products: [] }), 'BAD_USER_INPUT');
  });
});

describe('checkout links through REST', () => {
  it('creates with the documented shape, lists, filters, sorts, updates and soft-deletes', async () => {
    const product = await fixedProduct(t.org, 'Course', 5000);
    const discount = await t.org.polar.discounts.create({ name: 'Ten off', type: 'percentage', basisPoints: 1000, duration: 'once', products: [product.id] });
    const body = expectStatus(
      await t.org.api('POST', '/checkout-links/', { payment_processor: 'stripe', products: [product.id], discount_id: discount.id, label: 'B', metadata: { source: 'newsletter' } }),
      201,
    );
    expect(body).toEqual({
      id: uuid,
      created_at: datetime,
      modified_at: datetime,
      metadata: { source: 'newsletter' },
      payment_processor: 'stripe',
      client_secret: expect.any(String),
      url: `${t.server.base('sandbox')}/checkout-links/${body.client_secret}/redirect`,
      success_url: null,
      label: 'B',
      allow_discount_codes: true,
      require_billing_address: false,
      discount_id: discount.id,
      organization_id: t.org.organizationId,
      products: [expect.objectContaining({ id: product.id, name: 'Course', is_archived: false, prices: [expect.objectContaining({ price_amount: 5000 })], medias: [] })],
      discount: expect.objectContaining({ id: discount.id, type: 'percentage', basis_points: 1000, duration: 'once' }),
    });
    const second = expectStatus(await t.org.api('POST', '/checkout-links/', { payment_processor: 'stripe', product_id: product.id, label: 'A' }), 201);
    expect(second.products.map((p: { id: string }) => p.id)).toEqual([product.id]);

    expect(expectStatus(await t.org.api('GET', `/checkout-links/${body.id}`), 200)).toEqual(body);
    const sorted = expectStatus(await t.org.api('GET', `/checkout-links/?product_id=${product.id}&sorting=label`), 200);
    expect(sorted.items.map((l: { label: string }) => l.label)).toEqual(['A', 'B']);
    expect(sorted.pagination).toEqual({ total_count: 2, max_page: 1 });
    const paged = expectStatus(await t.org.api('GET', `/checkout-links/?product_id=${product.id}&sorting=-label&limit=1&page=2`), 200);
    expect(paged.items.map((l: { label: string }) => l.label)).toEqual(['A']);

    const patched = expectStatus(await t.org.api('PATCH', `/checkout-links/${body.id}`, { success_url: 'https://shop.example/done?c={CHECKOUT_ID}', discount_id: null, require_billing_address: true }), 200);
    expect(patched).toMatchObject({ success_url: 'https://shop.example/done?c={CHECKOUT_ID}', discount_id: null, discount: null, require_billing_address: true, label: 'B' });

    expect((await t.org.api('DELETE', `/checkout-links/${body.id}`)).status).toBe(204);
    expectStatus(await t.org.api('GET', `/checkout-links/${body.id}`), 404);
    expectStatus(await t.org.api('PATCH', `/checkout-links/${body.id}`, { label: 'Back' }), 404);
    expectStatus(await t.org.api('DELETE', `/checkout-links/${body.id}`), 404);
    const left = expectStatus(await t.org.api('GET', `/checkout-links/?product_id=${product.id}`), 200);
    expect(left.items.map((l: { id: string }) => l.id)).toEqual([second.id]);
  });

  it('refuses bad input with 422 at each field and writes nothing', async () => {
    const mine = await fixedProduct(t.org, 'Mine', 1000);
    const theirs = await fixedProduct(t.other, 'Theirs', 1000);
    const theirDiscount = await t.other.polar.discounts.create({ name: 'Theirs', type: 'percentage', basisPoints: 500, duration: 'once' });
    const otherProduct = await fixedProduct(t.org, 'Other', 1000);
    const narrowDiscount = await t.org.polar.discounts.create({ name: 'Only other', type: 'percentage', basisPoints: 500, duration: 'once', products: [otherProduct.id] });
    const create = (body: object) => t.org.api('POST', '/checkout-links/', { payment_processor: 'stripe', ...body });
    const before = expectStatus(await t.org.api('GET', '/checkout-links/?limit=100'), 200).pagination.total_count;

    expectValidationError(await create({ products: [theirs.id] }), ['body', 'products', 0]);
    expectValidationError(await create({ products: [mine.id, theirs.id] }), ['body', 'products', 1]);
    expectValidationError(await create({ products: [] }), ['body', 'products'], 'too_short');
    expectValidationError(await create({ products: [randomUUID()] }), ['body', 'products', 0]);
    expectValidationError(await create({ products: [mine.id, mine.id] }), ['body', 'products']);
    expectValidationError(await create({ products: [mine.id], discount_id: theirDiscount.id }), ['body', 'discount_id']);
    expectValidationError(await create({ products: [mine.id], discount_id: narrowDiscount.id }), ['body', 'discount_id']);
    for (const url of ['ftp://shop.example/thanks', 'javascript:alert(1)', 'not a url']) {
      expectValidationError(await create({ products: [mine.id], success_url: url }), ['body', 'success_url']);
    }
    expect(expectStatus(await t.org.api('GET', '/checkout-links/?limit=100'), 200).pagination.total_count).toBe(before);

    const link = expectStatus(await create({ products: [mine.id], label: 'Kept' }), 201);
    expectValidationError(await t.org.api('PATCH', `/checkout-links/${link.id}`, { products: [] }), ['body', 'products'], 'too_short');
    expectValidationError(await t.org.api('PATCH', `/checkout-links/${link.id}`, { products: [theirs.id] }), ['body', 'products', 0]);
    expectValidationError(await t.org.api('PATCH', `/checkout-links/${link.id}`, { discount_id: theirDiscount.id, label: 'Changed' }), ['body', 'discount_id']);
    expectValidationError(await t.org.api('PATCH', `/checkout-links/${link.id}`, { success_url: 'ftp://x.example' }), ['body', 'success_url']);
    const narrowed = expectStatus(await create({ products: [otherProduct.id], discount_id: narrowDiscount.id }), 201);
    expectValidationError(await t.org.api('PATCH', `/checkout-links/${narrowed.id}`, { products: [mine.id] }), ['body', 'products']);
    expect(expectStatus(await t.org.api('PATCH', `/checkout-links/${narrowed.id}`, { products: [mine.id], discount_id: null }), 200)).toMatchObject({ discount_id: null });
    expect(expectStatus(await t.org.api('GET', `/checkout-links/${link.id}`), 200)).toMatchObject({ label: 'Kept', discount_id: null, success_url: null, products: [expect.objectContaining({ id: mine.id })] });

    expectStatus(await t.org.api('GET', `/checkout-links/${randomUUID()}`), 404);
    expectStatus(await t.org.api('PATCH', `/checkout-links/${randomUUID()}`, { label: 'x' }), 404);
    expectStatus(await t.org.api('DELETE', `/checkout-links/${randomUUID()}`), 404);
  });

  it("never shows or changes another organization's link, and refuses tokens without the scope, or none, or from the other environment", async () => {
    const product = await fixedProduct(t.org, 'Private', 1000);
    const link = expectStatus(await t.org.api('POST', '/checkout-links/', { payment_processor: 'stripe', products: [product.id], label: 'Private' }), 201);
    for (const [method, body] of [['GET'], ['PATCH', { label: 'Hijacked' }], ['DELETE']] as const) {
      const answer = await t.other.api(method, `/checkout-links/${link.id}`, body);
      expectStatus(answer, 404);
      expect(JSON.stringify(answer.body)).not.toContain(link.client_secret);
    }
    const theirs = expectStatus(await t.other.api('GET', '/checkout-links/?limit=100'), 200);
    expect(theirs.items.map((l: { id: string }) => l.id)).not.toContain(link.id);
    const node = await t.other.gql(`query ($id: ID!) { node(id: $id) { id } }`, { id: link.id });
    expect(node.body.data?.node ?? null).toBeNull();
    expect(expectStatus(await t.org.api('GET', `/checkout-links/${link.id}`), 200).label).toBe('Private');

    expect((await t.org.publicApi('GET', `/checkout-links/${link.id}`)).status).toBe(401);
    expect((await t.org.publicApi('POST', '/checkout-links/', { payment_processor: 'stripe', products: [product.id] })).status).toBe(401);
    const readOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.org, ['checkout_links:read']));
    expectStatus(await readOnly('GET', `/checkout-links/${link.id}`), 200);
    expect((await readOnly('PATCH', `/checkout-links/${link.id}`, { label: 'No' })).status).toBe(403);
    expect((await readOnly('POST', '/checkout-links/', { payment_processor: 'stripe', products: [product.id] })).status).toBe(403);
    const checkoutsOnly = restClient(t.server.base('sandbox'), await tokenWithScopes(t.server, t.org, ['checkouts:read', 'checkouts:write']));
    expect((await checkoutsOnly('GET', '/checkout-links/')).status).toBe(403);

    const liveProduct = await fixedProduct(t.live, 'Live', 1000);
    const liveLink = expectStatus(await t.live.api('POST', '/checkout-links/', { payment_processor: 'stripe', products: [liveProduct.id] }), 201);
    expect(liveLink.url).toBe(`${t.server.base('production')}/checkout-links/${liveLink.client_secret}/redirect`);
    const sandboxTokenOnProduction = restClient(t.server.base('production'), t.org.token);
    expect((await sandboxTokenOnProduction('GET', `/checkout-links/${liveLink.id}`)).status).toBe(401);
    expect((await sandboxTokenOnProduction('DELETE', `/checkout-links/${liveLink.id}`)).status).toBe(401);
    expectStatus(await t.live.api('GET', `/checkout-links/${liveLink.id}`), 200);
    // The link's secret addresses it in its own environment only.
    expect((await visit(`${t.server.base('sandbox')}/checkout-links/${liveLink.client_secret}/redirect`)).status).toBe(404);
  });
});

describe("a checkout link's public URL", () => {
  it('opens a fresh checkout for each visit, each of which the buyer can pay', async () => {
    const product = await fixedProduct(t.org, 'Template pack', 4000);
    const extra = await fixedProduct(t.org, 'Bonus', 1000);
    const discount = await t.org.polar.discounts.create({ name: 'Quarter off', type: 'percentage', basisPoints: 2500, duration: 'once' });
    const link = expectStatus(
      await t.org.api('POST', '/checkout-links/', {
        payment_processor: 'stripe', products: [product.id, extra.id], discount_id: discount.id, success_url: 'https://shop.example/thanks', metadata: { channel: 'social' }, require_billing_address: false,
      }),
      201,
    );

    const [first, second] = [await visit(link.url), await visit(link.url)];
    for (const answer of [first, second]) {
      expect(answer.status).toBe(303);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.location).toMatch(new RegExp(`^${t.server.base('sandbox').replace(/\/v1$/, '')}/checkout/`));
    }
    expect(first.location).not.toBe(second.location);

    const opened = [await checkoutAt(t.org, first.location!), await checkoutAt(t.org, second.location!)];
    expect(opened[0].checkout.id).not.toBe(opened[1].checkout.id);
    for (const { checkout } of opened) {
      expect(checkout).toMatchObject({
        status: 'open', product_id: product.id, amount: 4000, discount_id: discount.id, discount_amount: 1000, total_amount: 3000, success_url: 'https://shop.example/thanks', allow_discount_codes: true,
      });
      // The checkout remembers the link that opened it.
      const row = await t.server.kassa.environments.sandbox.environment.prisma.checkout.findUniqueOrThrow({ where: { id: checkout.id } });
      expect(row.checkoutLinkId).toBe(link.id);
      expect(checkout.products.map((p: { id: string }) => p.id)).toEqual([product.id, extra.id]);
      const full = await t.org.polar.checkouts.get({ id: checkout.id });
      expect(full.metadata).toEqual({ channel: 'social' });
      const page = await fetch(first.location!);
      expect(page.status).toBe(200);
    }

    for (const [i, { clientSecret, checkout }] of opened.entries()) {
      await t.org.buyer.checkouts.clientConfirm({ clientSecret, checkoutConfirmStripe: { customerEmail: `visitor${i}-${randomUUID()}@example.com`, confirmationTokenId: 'tok_visa' } });
      const order = await paidOrderOf(t.org, checkout.id);
      expect(order).toMatchObject({ totalAmount: 3000, discountId: discount.id, metadata: { channel: 'social' } });
      await checkoutWhen(t.org, checkout.id, 'succeeded');
    }
    expect((await t.org.polar.discounts.get({ id: discount.id })).redemptionsCount).toBe(2);
  });

  it('fills in what its query string carries: email, name, a discount code, a reference', async () => {
    const product = await fixedProduct(t.org, 'Prefilled', 2000);
    const code = `LINK${randomUUID().slice(0, 6)}`;
    await t.org.polar.discounts.create({ name: 'Code', type: 'fixed', amount: 500, currency: 'usd', duration: 'once', code });
    const link = expectStatus(await t.org.api('POST', '/checkout-links/', { payment_processor: 'stripe', products: [product.id], metadata: { channel: 'ads' } }), 201);
    const query = new URLSearchParams({ customer_email: 'ada@example.com', customer_name: 'Ada', discount_code: code.toLowerCase(), reference_id: 'ref-42', utm_source: 'mail' });
    const answer = await visit(`${link.url}?${query}`);
    expect(answer.status).toBe(303);
    const { checkout } = await checkoutAt(t.org, answer.location!);
    expect(checkout).toMatchObject({ customer_email: 'ada@example.com', customer_name: 'Ada', discount_amount: 500, total_amount: 1500 });
    expect((await t.org.polar.checkouts.get({ id: checkout.id })).metadata).toEqual({ channel: 'ads', reference_id: 'ref-42', utm_source: 'mail' });

    // What does not fit is left out, and the checkout still opens.
    const odd = await visit(`${link.url}?customer_email=not-an-email&discount_code=NOSUCHCODE`);
    expect(odd.status).toBe(303);
    expect((await checkoutAt(t.org, odd.location!)).checkout).toMatchObject({ customer_email: null, discount_id: null });
    const closed = expectStatus(await t.org.api('PATCH', `/checkout-links/${link.id}`, { allow_discount_codes: false }), 200);
    const noCodes = await visit(`${closed.url}?discount_code=${code}`);
    expect((await checkoutAt(t.org, noCodes.location!)).checkout).toMatchObject({ discount_id: null, allow_discount_codes: false });
  });

  it('leaves out archived products and a discount that no longer applies; with nothing left to sell it answers 410', async () => {
    const kept = await fixedProduct(t.org, 'Kept', 3000);
    const retired = await fixedProduct(t.org, 'Retired', 3000);
    const discount = await t.org.polar.discounts.create({ name: 'Ended', type: 'percentage', basisPoints: 1000, duration: 'once' });
    const link = expectStatus(await t.org.api('POST', '/checkout-links/', { payment_processor: 'stripe', products: [retired.id, kept.id], discount_id: discount.id }), 201);
    expectStatus(await t.org.api('PATCH', `/products/${retired.id}`, { is_archived: true }), 200);
    await t.org.polar.discounts.update({ id: discount.id, discountUpdate: { endsAt: new Date(Date.now() - 1000) } });

    const answer = await visit(link.url);
    expect(answer.status).toBe(303);
    const { checkout } = await checkoutAt(t.org, answer.location!);
    expect(checkout).toMatchObject({ product_id: kept.id, discount_id: null, total_amount: 3000 });
    expect(checkout.products.map((p: { id: string }) => p.id)).toEqual([kept.id]);

    expectStatus(await t.org.api('PATCH', `/products/${kept.id}`, { is_archived: true }), 200);
    const gone = await visit(link.url);
    expect(gone.status).toBe(410);
    expect(gone.type).toMatch(/^text\/html/);
    expect(gone.text).toContain('No longer available');
    // The link itself is still there, listing its archived products.
    expect(expectStatus(await t.org.api('GET', `/checkout-links/${link.id}`), 200).products.map((p: { is_archived: boolean }) => p.is_archived)).toEqual([true, true]);
  });

  it('stops working once the link is deleted, while the checkouts it opened keep working; an unknown secret is 404', async () => {
    const product = await fixedProduct(t.org, 'Short-lived', 1200);
    const link = expectStatus(await t.org.api('POST', '/checkout-links/', { payment_processor: 'stripe', products: [product.id] }), 201);
    const before = await visit(link.url);
    const { clientSecret, checkout } = await checkoutAt(t.org, before.location!);
    expect((await t.org.api('DELETE', `/checkout-links/${link.id}`)).status).toBe(204);

    const after = await visit(link.url);
    expect(after.status).toBe(404);
    expect(after.type).toMatch(/^text\/html/);
    expect(after.text).toContain('Link not found');
    await t.org.buyer.checkouts.clientConfirm({ clientSecret, checkoutConfirmStripe: { customerEmail: `late-${randomUUID()}@example.com`, confirmationTokenId: 'tok_visa' } });
    await paidOrderOf(t.org, checkout.id);

    const unknown = await visit(`${t.server.base('sandbox')}/checkout-links/${link.client_secret.slice(0, -4)}AAAA/redirect`);
    expect(unknown.status).toBe(404);
    expect((await fetch(link.url, { method: 'POST', redirect: 'manual' })).status).not.toBe(303);
  });

  it('counts visits per client address: past the limit a visit is refused with 429 and opens no checkout', async () => {
    const product = await fixedProduct(t.org, 'Popular', 900);
    const link = expectStatus(await t.org.api('POST', '/checkout-links/', { payment_processor: 'stripe', products: [product.id] }), 201);
    // A minute of its own, so visits of the tests before do not count.
    t.server.clock.now = new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 3_600_000);
    const opened = async () => (await t.org.polar.checkouts.list({ productId: [product.id], limit: 100 })).result.pagination.totalCount;
    for (let i = 0; i < visitsPerMinute; i++) expect((await visit(link.url)).status).toBe(303);
    const refused = await visit(link.url);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(JSON.parse(refused.text)).toMatchObject({ error: 'RateLimitExceeded', limit: { name: 'checkout_link', limit: visitsPerMinute } });
    expect(await opened()).toBe(visitsPerMinute);
  });
});
