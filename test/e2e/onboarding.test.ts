// A new merchant onboarded over the API while the server runs, on the database the tests use (the
// embedded one unless told): sign-up, the verification mail's link, an organization, an access
// token for it, a product, and a buyer paying for it at checkout; the merchant is told of the order.
import { randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { describe, expect, it } from 'vitest';
import type { EnvironmentName } from '../../src/config.ts';
import type { MemoryTransport } from '../../src/email/transport.ts';
import { enumName, sdkServerURL } from '../helpers/organizations.ts';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';

// Production pays with the test processor here whatever the database (the embedded one has it by default).
const t = useTestServer({ env: { EMAIL_TRANSPORT: 'memory', JOB_POLL_INTERVAL_MS: '20', TEST_CARD_DELAY_MS: '0', PRODUCTION_PAYMENT_PROCESSOR: 'test' } });

const password = 'a long enough passphrase';
const mailbox = (environment: EnvironmentName) => t.server.kassa.environments[environment].environment.email as MemoryTransport;
const mailsTo = (environment: EnvironmentName, to: string, count: number) =>
  eventually(async () => mailbox(environment).sent.filter((m) => m.to === to), (mails) => mails.length >= count, `${count} mail(s) to ${to}`);

describe.each(['production', 'sandbox'] as const)('onboarding a merchant in %s', (environment) => {
  it('sign-up → verified email → organization → access token → product → a buyer pays at checkout → the order is paid', async () => {
    const base = t.server.base(environment);
    const anonymous = graphqlClient(base);
    const prisma = t.server.kassa.environments[environment].environment.prisma;
    const email = `merchant-${randomUUID()}@example.com`;

    expect((await anonymous('mutation ($email: String!, $password: String!) { signUp(email: $email, password: $password) { email } }', { email, password })).body).toEqual({ data: { signUp: { email } } });
    const [verification] = await mailsTo(environment, email, 1);
    expect(verification.subject).toBe('Confirm your email address for Kassa');
    const link = /(https?:\/\/\S+\/verify-email\?token=\S+)/.exec(verification.text)![1];
    const token = new URL(link).searchParams.get('token')!;
    expect((await anonymous('mutation ($token: String!) { userEmailVerify(token: $token) { email emailVerified } }', { token })).body).toEqual({
      data: { userEmailVerify: { email, emailVerified: true } },
    });

    const signIn = await anonymous('mutation ($email: String!, $password: String!) { signIn(email: $email, password: $password) { token } }', { email, password });
    expect(signIn.body.errors).toBeUndefined();
    const session = signIn.body.data.signIn.token as string;
    const slug = `shop-${randomUUID().slice(0, 8)}`;
    const created = await restClient(base, session)('POST', '/organizations/', { name: 'New shop', slug });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ name: 'New shop', slug });
    const organizationId = created.body.id as string;
    expect(await prisma.organizationMember.count({ where: { organizationId, user: { email } } })).toBe(1);

    const scopes = ['products:read', 'products:write', 'checkouts:read', 'checkouts:write', 'orders:read'];
    const issued = await graphqlClient(base, session)(
      'mutation ($input: OrganizationAccessTokenCreateInput!) { core { organizationAccessTokenCreate(input: $input) { token } } }',
      { input: { organizationId, comment: 'storefront', scopes: scopes.map(enumName) } },
    );
    expect(issued.body.errors).toBeUndefined();
    const polar = new Polar({ accessToken: issued.body.data.core.organizationAccessTokenCreate.token, serverURL: sdkServerURL(t.server, environment) });
    const buyer = new Polar({ serverURL: sdkServerURL(t.server, environment) });

    const product = await polar.products.create({ name: 'Starter kit', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 1200, priceCurrency: 'usd' }] });
    expect(product.organizationId).toBe(organizationId);
    const checkout = await polar.checkouts.create({ products: [product.id] });
    expect(checkout).toMatchObject({ productId: product.id, totalAmount: 1200, status: 'open' });
    const customerEmail = `first-buyer-${randomUUID()}@example.com`;
    await buyer.checkouts.clientConfirm({ clientSecret: checkout.clientSecret, checkoutConfirmStripe: { customerEmail, confirmationTokenId: 'tok_visa' } });
    const [order] = await eventually(async () => (await polar.orders.list({ checkoutId: checkout.id })).result.items, (items) => items.length === 1 && items[0].paid, 'the order to be paid');
    expect(order).toMatchObject({ status: 'paid', paid: true, totalAmount: 1200, productId: product.id, customer: expect.objectContaining({ email: customerEmail }) });
    expect((await eventually(() => polar.checkouts.get({ id: checkout.id }), (c) => c.status === 'succeeded', 'the checkout to succeed')).status).toBe('succeeded');

    // The new member hears of the first order; the buyer gets the receipt.
    const [, notice] = await mailsTo(environment, email, 2);
    expect(notice.subject).toBe('New order: Starter kit for $12.00');
    expect((await mailsTo(environment, customerEmail, 1))[0].subject).toBe('Your receipt from New shop');
  });
});
