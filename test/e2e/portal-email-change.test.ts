// A customer changes their email in the portal only by proving they receive mail at the new
// address: the change waits for the code sent there. From the attacker's side: claiming another
// buyer's address, guessing, replaying or outliving a code, confirming someone else's change, and
// telling a taken address from a free one.
//
// In sandbox (the test processor pays), with mail kept in memory where the tests read it.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventsOf, type Org } from '../helpers/organizations.ts';
import { paidOrderOf } from '../helpers/purchases.ts';
import { expectErrorBody, expectValidationError } from '../helpers/responses.ts';
import { eventually } from '../helpers/waiting.ts';
import type { MemoryTransport } from '../../src/email/transport.ts';

const t = useTestServer({
  env: { TEST_CARD_DELAY_MS: '0', EMAIL_TRANSPORT: 'memory' },
  organizations: { shop: 'sandbox', elsewhere: 'sandbox' },
  resetClockAfterEach: true,
});
let productId: string;
beforeAll(async () => {
  const licenses = await t.shop.polar.benefits.create({ type: 'license_keys', description: 'Studio license', properties: { prefix: 'STUDIO' } });
  const product = await t.shop.polar.products.create({ name: 'Studio', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 4900, priceCurrency: 'usd' }] });
  await t.shop.polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [licenses.id] } });
  productId = product.id;
});

const address = (name = 'customer') => `${name}-${randomUUID()}@example.com`;
const mailbox = () => t.server.kassa.environments.sandbox.environment.email as MemoryTransport;
const VERIFY = '/customer-portal/customers/me/email/verify';

/** The mail sent to `to`, newest last. */
const mailTo = (to: string) => mailbox().sent.filter((m) => m.to === to);

/** The code in the newest mail sent to `to`. */
function codeSentTo(to: string): string {
  const mails = mailTo(to);
  expect(mails.length, `no mail was sent to ${to}`).toBeGreaterThan(0);
  const code = /\b(\d{6})\b/.exec(mails.at(-1)!.text)?.[1];
  expect(code, mails.at(-1)!.text).toBeDefined();
  return code!;
}

/** A customer the organization created, signed in to the portal by a session it issued. */
async function signedIn(of: Org = t.shop) {
  const email = address();
  const created = await of.api('POST', '/customers/', { email });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const session = await of.polar.customerSessions.create({ customerId: created.body.id });
  const base = t.server.base(of.environment);
  return { id: created.body.id as string, email, session, api: restClient(base, session.token), gql: graphqlClient(base, session.token) };
}

/** The customer as the organization sees it. */
const asOrganization = async (id: string, of: Org = t.shop) => (await of.api('GET', `/customers/${id}`)).body;

/** A paid purchase by a buyer typing `customerEmail`. */
async function purchase(customerEmail: string) {
  const checkout = await t.shop.polar.checkouts.create({ products: [productId] });
  const confirmed = await t.shop.buyer.checkouts.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: { customerEmail, customerName: 'A Buyer', confirmationTokenId: 'tok_visa' },
  });
  const order = await paidOrderOf(t.shop, checkout.id);
  return { customerId: confirmed.customerId!, order };
}

describe("claiming another buyer's email", () => {
  it("leaves the claimant's email as it was, and the owner's next purchase is not attached to the claimant", async () => {
    const claimant = await signedIn();
    const owner = address('owner');
    const claimed = await claimant.api('PATCH', '/customer-portal/customers/me', { email: owner });
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
    expect(claimed.body).toMatchObject({ email: claimant.email, email_verified: false });
    expect((await asOrganization(claimant.id)).email).toBe(claimant.email);

    const bought = await purchase(owner);
    expect(bought.customerId).not.toBe(claimant.id);
    await eventually(() => t.server.kassa.environments.sandbox.environment.prisma.licenseKey.count({ where: { customerId: bought.customerId } }), (n) => n === 1, 'the key to be granted');
    expect((await claimant.api('GET', '/customer-portal/orders/')).body.items).toEqual([]);
    expect((await claimant.api('GET', '/customer-portal/license-keys/')).body.items).toEqual([]);
    expect((await claimant.api('GET', '/customer-portal/downloadables/')).body.items).toEqual([]);
  });

  it('leaves it as it was through GraphQL too', async () => {
    const claimant = await signedIn();
    const owner = address('owner');
    const claimed = await claimant.gql('mutation ($input: CustomerPortalCustomerUpdateInput!) { customerPortal { customerUpdate(input: $input) { email emailVerified pendingEmail } } }', {
      input: { email: owner },
    });
    expect(claimed.body).toEqual({ data: { customerPortal: { customerUpdate: { email: claimant.email, emailVerified: false, pendingEmail: owner } } } });
    const bought = await purchase(owner);
    expect(bought.customerId).not.toBe(claimant.id);
  });
});

describe('a verified email change', () => {
  it('sends a code to the new address; the code makes it the customer’s, verified, and checkouts then reach them', async () => {
    const me = await signedIn();
    const next = address('next');
    const asked = await me.api('PATCH', '/customer-portal/customers/me', { email: next, billing_name: 'Applied at once' });
    expect(asked.status, JSON.stringify(asked.body)).toBe(200);
    expect(asked.body).toMatchObject({ email: me.email, billing_name: 'Applied at once' });
    const [mail] = mailTo(next);
    expect(mail).toMatchObject({ to: next, from: 'Kassa <no-reply@localhost>' });
    expect(mail.text).toContain('15 minutes');
    expect(mailTo(me.email)).toEqual([]);

    const verified = await me.api('POST', VERIFY, { code: codeSentTo(next) });
    expect(verified.status, JSON.stringify(verified.body)).toBe(200);
    expect(verified.body).toMatchObject({ id: me.id, email: next, email_verified: true });
    expect(await asOrganization(me.id)).toMatchObject({ email: next, email_verified: true });
    const updates = (await eventsOf(t.server, t.shop.organizationId, 'sandbox')).filter((e) => e.resourceId === me.id && e.type === 'customer.updated');
    expect(updates.map((e) => (e.data as { email: string }).email)).toEqual([me.email, next]);

    const bought = await purchase(next.toUpperCase());
    expect(bought.customerId).toBe(me.id);
    expect((await me.api('GET', '/customer-portal/orders/')).body.items.map((o: { id: string }) => o.id)).toEqual([bought.order.id]);
  });

  it('confirms through GraphQL, and shows the pending address until then', async () => {
    const me = await signedIn();
    const next = address('next');
    await me.gql('mutation ($input: CustomerPortalCustomerUpdateInput!) { customerPortal { customerUpdate(input: $input) { id } } }', { input: { email: next } });
    expect((await me.gql('{ customerPortal { customer { email pendingEmail } } }')).body.data.customerPortal.customer).toEqual({ email: me.email, pendingEmail: next });
    const verified = await me.gql('mutation ($input: CustomerPortalEmailVerifyInput!) { customerPortal { customerEmailVerify(input: $input) { email emailVerified pendingEmail } } }', {
      input: { code: codeSentTo(next) },
    });
    expect(verified.body).toEqual({ data: { customerPortal: { customerEmailVerify: { email: next, emailVerified: true, pendingEmail: null } } } });
  });

  it('lets a customer verify the address they already have, and then change only its case at once', async () => {
    const me = await signedIn();
    expect((await me.api('PATCH', '/customer-portal/customers/me', { email: me.email })).body.email_verified).toBe(false);
    expect((await me.api('POST', VERIFY, { code: codeSentTo(me.email) })).body).toMatchObject({ email: me.email, email_verified: true });
    const sent = mailbox().sent.length;
    const recased = await me.api('PATCH', '/customer-portal/customers/me', { email: me.email.toUpperCase() });
    expect(recased.body).toMatchObject({ email: me.email.toUpperCase(), email_verified: true });
    expect(mailbox().sent.length).toBe(sent);
  });

  it('keeps the verified mark when the organization changes only the case, and loses it with a new address the organization sets', async () => {
    const me = await signedIn();
    await me.api('PATCH', '/customer-portal/customers/me', { email: me.email });
    expect((await me.api('POST', VERIFY, { code: codeSentTo(me.email) })).body.email_verified).toBe(true);
    const recased = await t.shop.api('PATCH', `/customers/${me.id}`, { email: me.email.toUpperCase() });
    expect(recased.body).toMatchObject({ email: me.email.toUpperCase(), email_verified: true });
    const moved = address('moved');
    const set = await t.shop.api('PATCH', `/customers/${me.id}`, { email: moved });
    expect(set.body).toMatchObject({ email: moved, email_verified: false });
    expect((await purchase(moved)).customerId).toBe(me.id);
  });

  it('refuses a wrong code with 422 at body.code, counting down; after five the right code no longer works', async () => {
    const me = await signedIn();
    const next = address('next');
    await me.api('PATCH', '/customer-portal/customers/me', { email: next });
    const right = codeSentTo(next);
    const wrong = right === '000000' ? '000001' : '000000';
    for (let left = 4; left >= 0; left--) {
      const refused = await me.api('POST', VERIFY, { code: wrong });
      expectValidationError(refused, ['body', 'code'], 'code_invalid');
      expect(refused.body.detail[0].msg).toContain(left > 0 ? `${left} ${left === 1 ? 'try' : 'tries'} left` : 'last try');
    }
    expectValidationError(await me.api('POST', VERIFY, { code: right }), ['body', 'code'], 'email_change_not_pending');
    expect(await asOrganization(me.id)).toMatchObject({ email: me.email, email_verified: false });
  });

  it('takes a code once: the same code again finds nothing pending', async () => {
    const me = await signedIn();
    const next = address('next');
    await me.api('PATCH', '/customer-portal/customers/me', { email: next });
    const code = codeSentTo(next);
    expect((await me.api('POST', VERIFY, { code })).status).toBe(200);
    expectValidationError(await me.api('POST', VERIFY, { code }), ['body', 'code'], 'email_change_not_pending');
  });

  it('lets exactly one of five concurrent confirms of one code through', async () => {
    const me = await signedIn();
    const next = address('next');
    await me.api('PATCH', '/customer-portal/customers/me', { email: next });
    const code = codeSentTo(next);
    const answers = await Promise.all(Array.from({ length: 5 }, () => me.api('POST', VERIFY, { code })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 422, 422, 422, 422]);
    const updates = (await eventsOf(t.server, t.shop.organizationId, 'sandbox')).filter((e) => e.resourceId === me.id && e.type === 'customer.updated');
    expect(updates).toHaveLength(1);
  });

  it('refuses a code after 15 minutes, changing nothing', async () => {
    const me = await signedIn();
    const next = address('next');
    const asked = new Date();
    t.server.clock.now = asked;
    await me.api('PATCH', '/customer-portal/customers/me', { email: next });
    const code = codeSentTo(next);
    t.server.clock.now = new Date(asked.getTime() + 15 * 60_000);
    expectValidationError(await me.api('POST', VERIFY, { code }), ['body', 'code'], 'code_expired');
    expect((await me.gql('{ customerPortal { customer { email pendingEmail } } }')).body.data.customerPortal.customer).toEqual({ email: me.email, pendingEmail: null });
  });

  it('ends the previous code with a new request', async () => {
    const me = await signedIn();
    const [first, second] = [address('first'), address('second')];
    await me.api('PATCH', '/customer-portal/customers/me', { email: first });
    const firstCode = codeSentTo(first);
    await me.api('PATCH', '/customer-portal/customers/me', { email: second });
    const secondCode = codeSentTo(second);
    if (firstCode !== secondCode) expectValidationError(await me.api('POST', VERIFY, { code: firstCode }), ['body', 'code'], 'code_invalid');
    expect((await me.api('POST', VERIFY, { code: secondCode })).body.email).toBe(second);
  });

  it('refuses the code when another customer took the address meanwhile', async () => {
    const me = await signedIn();
    const next = address('next');
    await me.api('PATCH', '/customer-portal/customers/me', { email: next });
    expect((await t.shop.api('POST', '/customers/', { email: next })).status).toBe(201);
    expectValidationError(await me.api('POST', VERIFY, { code: codeSentTo(next) }), ['body', 'code'], 'email_unavailable');
    expect((await asOrganization(me.id)).email).toBe(me.email);
  });

  it('answers a sixth request within an hour with 429, sending nothing', async () => {
    const me = await signedIn();
    for (let i = 0; i < 5; i++) expect((await me.api('PATCH', '/customer-portal/customers/me', { email: address('many') })).status).toBe(200);
    const sent = mailbox().sent.length;
    expectErrorBody(await me.api('PATCH', '/customer-portal/customers/me', { email: address('many') }), 429, 'TooManyRequests');
    expect(mailbox().sent.length).toBe(sent);
  });
});

describe('a taken address', () => {
  it('gets the same answer as a free one, over REST and GraphQL; its owner is told, and no code applies it', async () => {
    const me = await signedIn();
    const holder = await signedIn();
    const free = address('free');
    const taken = await me.api('PATCH', '/customer-portal/customers/me', { email: holder.email.toUpperCase() });
    const untaken = await me.api('PATCH', '/customer-portal/customers/me', { email: free });
    expect([taken.status, untaken.status]).toEqual([200, 200]);
    expect(taken.body).toEqual(untaken.body);

    const query = 'mutation ($input: CustomerPortalCustomerUpdateInput!) { customerPortal { customerUpdate(input: $input) { id email emailVerified } } }';
    expect((await me.gql(query, { input: { email: holder.email } })).body).toEqual((await me.gql(query, { input: { email: address('free') } })).body);

    await me.api('PATCH', '/customer-portal/customers/me', { email: holder.email.toUpperCase() });
    const notice = mailTo(holder.email.toUpperCase()).at(-1)!;
    expect(notice.text).toContain('already belongs to a customer account');
    expect(notice.text).not.toMatch(/\b\d{6}\b/);
    expectValidationError(await me.api('POST', VERIFY, { code: '123456' }), ['body', 'code'], 'code_invalid');
    expect((await asOrganization(holder.id)).email).toBe(holder.email);
    expect((await asOrganization(me.id)).email).toBe(me.email);
  });
});

describe('who may confirm a change', () => {
  it("refuses another customer of the organization, and a customer of another organization, holding the code", async () => {
    const me = await signedIn();
    const next = address('next');
    await me.api('PATCH', '/customer-portal/customers/me', { email: next });
    const code = codeSentTo(next);
    const neighbour = await signedIn();
    expectValidationError(await neighbour.api('POST', VERIFY, { code }), ['body', 'code'], 'email_change_not_pending');
    const stranger = await signedIn(t.elsewhere);
    expectValidationError(await stranger.api('POST', VERIFY, { code }), ['body', 'code'], 'email_change_not_pending');
    expect((await asOrganization(neighbour.id)).email).toBe(neighbour.email);
    expect((await me.api('POST', VERIFY, { code })).body.email).toBe(next);
  });

  it("refuses a checkout's session and an organization token with 403", async () => {
    const checkout = await t.shop.polar.checkouts.create({ products: [productId] });
    const confirmed = await t.shop.buyer.checkouts.clientConfirm({
      clientSecret: checkout.clientSecret,
      checkoutConfirmStripe: { customerEmail: address('buyer'), confirmationTokenId: 'tok_visa' },
    });
    const asBuyer = restClient(t.server.base('sandbox'), confirmed.customerSessionToken);
    expectErrorBody(await asBuyer('PATCH', '/customer-portal/customers/me', { email: address() }), 403, 'NotPermitted');
    expectErrorBody(await asBuyer('POST', VERIFY, { code: '123456' }), 403, 'NotPermitted');
    expectErrorBody(await t.shop.api('POST', VERIFY, { code: '123456' }), 403, 'NotPermitted');
  });

  it('refuses no token with 401', async () => {
    expectErrorBody(await t.shop.publicApi('POST', VERIFY, { code: '123456' }), 401, 'Unauthorized');
    const gql = await t.shop.publicGql('mutation { customerPortal { customerEmailVerify(input: { code: "123456" }) { id } } }');
    expect(gql.body.errors?.[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('refuses a body without a code with 422', async () => {
    const me = await signedIn();
    expectValidationError(await me.api('POST', VERIFY, {}), ['body', 'code'], 'missing');
  });

  it('answers a code of the wrong type, shape or size with 422 at body.code, and the pending change still takes the right code', async () => {
    const me = await signedIn();
    const next = address('shapes');
    await me.api('PATCH', '/customer-portal/customers/me', { email: next });
    for (const code of [123456, null, ['123456'], '12345a', ' 123456', '1'.repeat(100_000)]) {
      const refused = await me.api('POST', VERIFY, { code });
      expect(refused.status, JSON.stringify(code).slice(0, 40)).toBe(422);
      expect(refused.body.detail.map((issue: { loc: unknown[] }) => issue.loc)).toContainEqual(['body', 'code']);
    }
    const confirmed = await me.api('POST', VERIFY, { code: codeSentTo(next) });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    expect(confirmed.body).toMatchObject({ email: next, email_verified: true });
  });
});
