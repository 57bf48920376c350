// Organizations over REST (/v1/organizations/) through the official client library: list and get
// as each kind of token reaches them, update of the profile and settings (with its
// organization.updated event), and create by a signed-in user. From the attacker's side: another
// organization's token, an organization token creating, no token, malformed bodies that must
// leave everything as it was, and two creates racing for one slug. The setting Kassa acts on,
// allow_customer_updates, is tried on a real subscription in sandbox.
import { Polar } from '@polar-sh/sdk';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { WebhookOrganizationUpdatedPayload$inboundSchema } from '@polar-sh/sdk/models/components/webhookorganizationupdatedpayload.js';
import type { EnvironmentName } from '../../src/config.ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient, restClient, settleJobs } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { enumName, eventsOf, sdkServerURL, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { expectErrorBody, expectValidationError } from '../helpers/responses.ts';
import { rejectionOf } from '../helpers/waiting.ts';

const t = useTestServer({
  env: { TEST_CARD_DELAY_MS: '0' },
  stopSandboxJobs: true,
  organizations: { shop: 'production', other: 'production', sandboxShop: 'sandbox' },
});

const wireKeys = [
  'avatar_url',
  'created_at',
  'details_submitted_at',
  'email',
  'feature_settings',
  'id',
  'modified_at',
  'name',
  'notification_settings',
  'slug',
  'socials',
  'status',
  'subscription_settings',
  'website',
];

const prisma = (environment: EnvironmentName = 'production') => t.server.kassa.environments[environment].environment.prisma;
const rest = (token?: string, environment: EnvironmentName = 'production') => restClient(t.server.base(environment), token);
const sdk = (token: string | undefined, environment: EnvironmentName = 'production') =>
  new Polar({ ...(token ? { accessToken: token } : {}), serverURL: sdkServerURL(t.server, environment) });

async function signIn(org: Org): Promise<string> {
  const response = await graphqlClient(t.server.base(org.environment))('mutation ($email: String!, $password: String!) { signIn(email: $email, password: $password) { token } }', {
    email: org.userEmail,
    password: org.userPassword,
  });
  expect(response.body.errors).toBeUndefined();
  return response.body.data.signIn.token;
}

async function personalToken(session: string, scopes: string[], environment: EnvironmentName = 'production'): Promise<string> {
  const response = await graphqlClient(t.server.base(environment), session)(
    'mutation ($input: PersonalAccessTokenCreateInput!) { core { personalAccessTokenCreate(input: $input) { token } } }',
    { input: { comment: 'organizations test', scopes: scopes.map(enumName) } },
  );
  expect(response.body.errors).toBeUndefined();
  return response.body.data.core.personalAccessTokenCreate.token;
}

/** The organization's row as stored, to tell that a refused request wrote nothing. */
const rowOf = (id: string, environment: EnvironmentName = 'production') => prisma(environment).organization.findUniqueOrThrow({ where: { id } });

let slugCounter = 0;
const freshSlug = (prefix = 'shop') => `${prefix}-${Date.now().toString(36)}-${++slugCounter}`;

describe('listing and reading organizations', () => {
  it('an organization token lists and gets its own organization only, in the shape of the client library, in both environments', async () => {
    for (const org of [t.shop, t.sandboxShop]) {
      const page = await org.polar.organizations.list({});
      expect(page.result.items.map((o) => o.id)).toEqual([org.organizationId]);
      expect(page.result.pagination).toEqual({ totalCount: 1, maxPage: 1 });
      const got = await org.polar.organizations.get({ id: org.organizationId });
      expect(got).toMatchObject({
        id: org.organizationId,
        status: 'active',
        avatarUrl: null,
        socials: [],
        featureSettings: { issueFundingEnabled: false },
        subscriptionSettings: { allowMultipleSubscriptions: false, allowCustomerUpdates: true, prorationBehavior: 'prorate' },
        notificationSettings: { newOrder: true, newSubscription: true },
      });
      const raw = await org.api('GET', `/organizations/${org.organizationId}`);
      expect(Object.keys(raw.body).sort()).toEqual(wireKeys);
    }
  });

  it("another organization's token gets 404 for it, and a production token is unknown in sandbox", async () => {
    expect(await rejectionOf(t.other.polar.organizations.get({ id: t.shop.organizationId }))).toBeInstanceOf(ResourceNotFound);
    expectErrorBody(await rest(t.shop.token, 'sandbox')('GET', `/organizations/${t.sandboxShop.organizationId}`), 401, 'Unauthorized');
  });

  it('no token gets 401', async () => {
    expectErrorBody(await rest()('GET', '/organizations/'), 401, 'Unauthorized');
    expectErrorBody(await rest()('GET', `/organizations/${t.shop.organizationId}`), 401, 'Unauthorized');
  });

  it('a user sees the organizations they belong to, filtered by slug and sorted as asked', async () => {
    const session = await signIn(t.shop);
    const pat = await personalToken(session, ['organizations:write']);
    const created = await sdk(pat).organizations.create({ name: 'Aardvark goods', slug: freshSlug('aardvark') });
    for (const token of [session, pat]) {
      const user = sdk(token);
      const all = await user.organizations.list({ sorting: ['name'] });
      expect(all.result.items.map((o) => o.id)).toEqual([created.id, t.shop.organizationId]);
      const bySlug = await user.organizations.list({ slug: created.slug });
      expect(bySlug.result.items.map((o) => o.id)).toEqual([created.id]);
      expect((await user.organizations.list({ sorting: ['-created_at'], limit: 1, page: 2 })).result.items.map((o) => o.id)).toEqual([t.shop.organizationId]);
      expect((await user.organizations.get({ id: created.id })).name).toBe('Aardvark goods');
      expect(await rejectionOf(user.organizations.get({ id: t.other.organizationId }))).toBeInstanceOf(ResourceNotFound);
    }
    // The slug of an organization the user does not belong to finds nothing.
    expect((await sdk(session).organizations.list({ slug: (await rowOf(t.other.organizationId)).slug })).result.items).toEqual([]);
  });

  it('a token without an organizations scope gets 403', async () => {
    const token = await tokenWithScopes(t.server, t.shop, ['products:read']);
    expectErrorBody(await rest(token)('GET', '/organizations/'), 403, 'NotPermitted');
  });
});

describe('updating an organization', () => {
  it('changes the profile and settings, answers the Organization shape and records organization.updated with what a GET returns', async () => {
    const before = (await eventsOf(t.server, t.shop.organizationId)).length;
    const updated = await t.shop.polar.organizations.update({
      id: t.shop.organizationId,
      organizationUpdate: {
        name: 'Shop, renamed',
        avatarUrl: 'https://cdn.example.com/logo.png',
        email: 'hello@shop.example',
        website: 'https://shop.example',
        socials: [{ platform: 'github', url: 'https://github.com/shop' }],
        details: { about: 'We sell ebooks.', productDescription: 'Ebooks', intendedUse: 'Checkouts', customerAcquisition: ['website'], futureAnnualRevenue: 10000 },
        featureSettings: { issueFundingEnabled: true },
        subscriptionSettings: { allowMultipleSubscriptions: true, allowCustomerUpdates: false, prorationBehavior: 'prorate' },
        notificationSettings: { newOrder: false, newSubscription: true },
      },
    });
    expect(updated).toMatchObject({
      id: t.shop.organizationId,
      name: 'Shop, renamed',
      avatarUrl: 'https://cdn.example.com/logo.png',
      email: 'hello@shop.example',
      website: 'https://shop.example',
      socials: [{ platform: 'github', url: 'https://github.com/shop' }],
      detailsSubmittedAt: expect.any(Date),
      featureSettings: { issueFundingEnabled: true },
      subscriptionSettings: { allowMultipleSubscriptions: true, allowCustomerUpdates: false, prorationBehavior: 'prorate' },
      notificationSettings: { newOrder: false, newSubscription: true },
    });
    expect(await t.shop.polar.organizations.get({ id: t.shop.organizationId })).toEqual(updated);

    const events = (await eventsOf(t.server, t.shop.organizationId)).slice(before);
    expect(events.map((e) => e.type)).toEqual(['organization.updated']);
    const got = await t.shop.api('GET', `/organizations/${t.shop.organizationId}`);
    expect(events[0].data).toEqual(got.body);
    WebhookOrganizationUpdatedPayload$inboundSchema.parse({ type: 'organization.updated', timestamp: new Date().toISOString(), data: events[0].data });

    // Only the fields given change; null clears a nullable one.
    const again = await t.shop.polar.organizations.update({ id: t.shop.organizationId, organizationUpdate: { website: null } });
    expect(again).toMatchObject({ name: 'Shop, renamed', website: null, email: 'hello@shop.example', subscriptionSettings: { allowCustomerUpdates: false } });
  });

  it("keeps the business details from buyers: a checkout's public organization shows them as null, its profile stays readable", async () => {
    const product = await t.shop.polar.products.create({ name: 'Ebook', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 500, priceCurrency: 'usd' }] });
    const checkout = await t.shop.polar.checkouts.create({ products: [product.id] });
    const selection = 'query ($s: String!) { checkoutClient(clientSecret: $s) { organization { name details { about futureAnnualRevenue } } } }';
    const asBuyer = await t.shop.publicGql(selection, { s: checkout.clientSecret });
    expect(asBuyer.body.errors).toBeUndefined();
    expect(asBuyer.body.data.checkoutClient.organization.details).toBeNull();
    expect(JSON.stringify(asBuyer.body.data)).not.toContain('ebooks');
    const core = await t.shop.gql('query ($id: UUID!) { core { organization(id: $id) { details { about } } } }', { id: t.shop.organizationId });
    expect(core.body.data.core.organization.details).toEqual({ about: 'We sell ebooks.' });
  });

  it('in sandbox too', async () => {
    const updated = await t.sandboxShop.polar.organizations.update({ id: t.sandboxShop.organizationId, organizationUpdate: { name: 'Sandbox shop' } });
    expect(updated.name).toBe('Sandbox shop');
    expect((await prisma('production').organization.count({ where: { name: 'Sandbox shop' } }))).toBe(0);
  });

  it("another organization's token gets 404 and changes nothing", async () => {
    const before = await rowOf(t.shop.organizationId);
    expect(await rejectionOf(t.other.polar.organizations.update({ id: t.shop.organizationId, organizationUpdate: { name: 'Taken over' } }))).toBeInstanceOf(ResourceNotFound);
    expect(await rowOf(t.shop.organizationId)).toEqual(before);
  });

  it('needs organizations:write: a read-only token gets 403, no token 401', async () => {
    const token = await tokenWithScopes(t.server, t.shop, ['organizations:read']);
    expectErrorBody(await rest(token)('PATCH', `/organizations/${t.shop.organizationId}`, { name: 'Read only' }), 403, 'NotPermitted');
    expectErrorBody(await rest()('PATCH', `/organizations/${t.shop.organizationId}`, { name: 'Nobody' }), 401, 'Unauthorized');
  });

  it('refuses malformed bodies with 422 naming each field, and writes nothing', async () => {
    const before = await rowOf(t.shop.organizationId);
    const eventsBefore = (await eventsOf(t.server, t.shop.organizationId)).length;
    const patch = (body: unknown) => t.shop.api('PATCH', `/organizations/${t.shop.organizationId}`, body);

    expectValidationError(await patch({ name: 'x'.repeat(300) }), ['body', 'name'], 'string_too_long');
    expectValidationError(await patch({ name: null }), ['body', 'name']);
    const unknownProration = await patch({ name: 'Fine name', subscription_settings: { allow_multiple_subscriptions: false, allow_customer_updates: true, proration_behavior: 'immediately' } });
    expectValidationError(unknownProration, ['body', 'subscription_settings', 'proration_behavior']);
    expectValidationError(
      await patch({ subscription_settings: { allow_multiple_subscriptions: false, allow_customer_updates: true, proration_behavior: 'invoice' } }),
      ['body', 'subscription_settings', 'proration_behavior'],
    );
    expectValidationError(await patch({ subscription_settings: { allow_customer_updates: false } }), ['body', 'subscription_settings', 'allow_multiple_subscriptions']);
    const several = await patch({ name: 'Fine name', email: 'not an email', website: 'javascript:alert(1)', socials: [{ platform: 'x', url: 'ftp://x' }] });
    expectValidationError(several, ['body', 'email']);
    expectValidationError(several, ['body', 'website']);
    expectValidationError(several, ['body', 'socials', 0, 'url']);
    expectValidationError(await patch({ socials: [{ platform: 'myspace', url: 'https://myspace.com/shop' }] }), ['body', 'socials', 0, 'platform']);

    expect(await rowOf(t.shop.organizationId)).toEqual(before);
    expect((await eventsOf(t.server, t.shop.organizationId)).length).toBe(eventsBefore);
    // Through the client library, the same 422 is its typed error.
    expect(await rejectionOf(t.shop.polar.organizations.update({ id: t.shop.organizationId, organizationUpdate: { name: 'ab' } }))).toBeInstanceOf(HTTPValidationError);
  });
});

describe('creating an organization', () => {
  it('a signed-in user creates one, as its member, with 201 and the Organization shape; its session reaches it at once', async () => {
    const session = await signIn(t.other);
    const slug = freshSlug('new');
    const response = await rest(session)('POST', '/organizations/', { name: 'New venture', slug, subscription_settings: { allow_multiple_subscriptions: true, allow_customer_updates: true, proration_behavior: 'prorate' } });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(Object.keys(response.body).sort()).toEqual(wireKeys);
    expect(response.body).toMatchObject({ name: 'New venture', slug, status: 'active', subscription_settings: { allow_multiple_subscriptions: true } });
    const member = await prisma().organizationMember.findFirst({ where: { organizationId: response.body.id } });
    expect(member).not.toBeNull();
    expect((await sdk(session).organizations.get({ id: response.body.id })).slug).toBe(slug);
    // A token of the organization it came from still reaches only its own.
    expect(await rejectionOf(t.other.polar.organizations.get({ id: response.body.id }))).toBeInstanceOf(ResourceNotFound);
  });

  it('a personal access token with organizations:write creates through the client library, in sandbox too', async () => {
    const session = await signIn(t.sandboxShop);
    const pat = await personalToken(session, ['organizations:write'], 'sandbox');
    const created = await sdk(pat, 'sandbox').organizations.create({ name: 'Sandbox venture', slug: freshSlug('sandbox') });
    expect(created).toMatchObject({ name: 'Sandbox venture', status: 'active', subscriptionSettings: { allowCustomerUpdates: true, prorationBehavior: 'prorate' } });
    expect(await prisma('production').organization.findUnique({ where: { id: created.id } })).toBeNull();
    expect((await sdk(pat, 'sandbox').organizations.list({ slug: created.slug })).result.items.map((o) => o.id)).toEqual([created.id]);
  });

  it('a personal access token without organizations:write gets 403', async () => {
    const pat = await personalToken(await signIn(t.shop), ['organizations:read']);
    const slug = freshSlug('denied');
    expectErrorBody(await rest(pat)('POST', '/organizations/', { name: 'Denied', slug }), 403, 'NotPermitted');
    expect(await prisma().organization.findUnique({ where: { slug } })).toBeNull();
  });

  it('an organization token cannot create organizations (403), no token gets 401, and nothing is written', async () => {
    const slug = freshSlug('refused');
    expectErrorBody(await t.shop.api('POST', '/organizations/', { name: 'By a token', slug }), 403, 'NotPermitted');
    const sdkRefusal = await rejectionOf(t.shop.polar.organizations.create({ name: 'By a token', slug }));
    expect(sdkRefusal).toBeInstanceOf(SDKError);
    expect((sdkRefusal as SDKError).statusCode).toBe(403);
    expectErrorBody(await rest()('POST', '/organizations/', { name: 'Nobody', slug }), 401, 'Unauthorized');
    expect(await prisma().organization.findUnique({ where: { slug } })).toBeNull();
  });

  it('refuses a bad slug, a taken slug and an overlong name with 422, writing nothing', async () => {
    const session = await signIn(t.shop);
    const post = (body: unknown) => rest(session)('POST', '/organizations/', body);
    const count = await prisma().organization.count();
    expectValidationError(await post({ name: 'Bad slug', slug: 'Not A Slug!' }), ['body', 'slug'], 'string_pattern_mismatch');
    expectValidationError(await post({ name: 'Bad slug', slug: 'ab' }), ['body', 'slug'], 'string_too_short');
    expectValidationError(await post({ name: 'x'.repeat(300), slug: freshSlug() }), ['body', 'name'], 'string_too_long');
    expectValidationError(await post({ name: 'No slug' }), ['body', 'slug']);
    const taken = await post({ name: 'Copycat', slug: (await rowOf(t.other.organizationId)).slug });
    expect(expectValidationError(taken, ['body', 'slug']).msg).toMatch(/already exists/);
    expect(await prisma().organization.count()).toBe(count);
  });

  it('of concurrent creates of one slug, exactly one succeeds and the others hear the slug is taken', async () => {
    const session = await signIn(t.shop);
    const slug = freshSlug('race');
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => rest(session)('POST', '/organizations/', { name: `Racer ${i}`, slug })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 422, 422, 422, 422]);
    for (const answer of answers.filter((a) => a.status === 422)) expect(expectValidationError(answer, ['body', 'slug']).msg).toMatch(/already exists/);
    expect(await prisma().organization.count({ where: { slug } })).toBe(1);
  });
});

describe('allow_customer_updates, on a real subscription', () => {
  const sandbox = () => t.server.kassa.environments.sandbox;
  async function settle() {
    await settleJobs(sandbox().jobs);
  }

  it("while off, a customer cannot change their subscription's product in the portal (422); the organization still can", async () => {
    const org = t.sandboxShop;
    const plan = (name: string, amount: number) => org.polar.products.create({ name, recurringInterval: 'month', prices: [{ amountType: 'fixed', priceAmount: amount, priceCurrency: 'usd' }] });
    const basic = await plan('Basic', 1000);
    const pro = await plan('Pro', 3000);
    const checkout = await org.polar.checkouts.create({ products: [basic.id] });
    await org.buyer.checkouts.clientConfirm({
      clientSecret: checkout.clientSecret,
      checkoutConfirmStripe: { customerEmail: 'ada@buyer.test', customerName: 'Ada Buyer', confirmationTokenId: 'tok_visa' },
    });
    await settle();
    const subscription = await prisma('sandbox').subscription.findFirstOrThrow({ where: { checkoutId: checkout.id } });
    const customerToken = (await org.polar.customerSessions.create({ customerId: subscription.customerId })).token;
    const portal = sdk(undefined, 'sandbox');

    await org.polar.organizations.update({
      id: org.organizationId,
      organizationUpdate: { subscriptionSettings: { allowMultipleSubscriptions: false, allowCustomerUpdates: false, prorationBehavior: 'prorate' } },
    });
    const refusal = await rejectionOf(portal.customerPortal.subscriptions.update({ customerSession: customerToken }, { id: subscription.id, customerSubscriptionUpdate: { productId: pro.id } }));
    expect(refusal).toBeInstanceOf(HTTPValidationError);
    expect(JSON.stringify((refusal as HTTPValidationError).detail)).toMatch(/does not let customers change/);
    expect((await prisma('sandbox').subscription.findUniqueOrThrow({ where: { id: subscription.id } })).productId).toBe(basic.id);

    const changed = await org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { productId: pro.id } });
    expect(changed.productId).toBe(pro.id);

    await org.polar.organizations.update({
      id: org.organizationId,
      organizationUpdate: { subscriptionSettings: { allowMultipleSubscriptions: false, allowCustomerUpdates: true, prorationBehavior: 'prorate' } },
    });
    const byCustomer = await portal.customerPortal.subscriptions.update({ customerSession: customerToken }, { id: subscription.id, customerSubscriptionUpdate: { productId: basic.id } });
    expect(byCustomer.productId).toBe(basic.id);
  });
});
