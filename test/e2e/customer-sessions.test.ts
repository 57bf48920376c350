// Customer sessions: an organization signs one of its customers in to the Customer Portal, server
// side, by customer id or external id. The token is shown once and stored hashed; it is bound to
// its environment, expires, and the organization can end it at once.
import { createHash, randomUUID } from 'node:crypto';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { describe, expect, it } from 'vitest';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { expectErrorBody, expectValidationError } from '../helpers/responses.ts';
import { datetime, uuid } from '../helpers/matchers.ts';
import { rejectionOf } from '../helpers/waiting.ts';

const t = useTestServer({ organizations: { org: 'production', other: 'production' }, resetClockAfterEach: true });

const prisma = () => t.server.kassa.environments.production.environment.prisma;
const signedInAs = 'query { customerPortal { organization { id } } }';

async function customer(of: Org, body: Record<string, unknown> = {}) {
  const response = await of.api('POST', '/customers/', { email: `${randomUUID()}@example.com`, ...body });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body as { id: string; external_id: string | null };
}

/** Whether `token` signs a customer in right now, over GraphQL. */
async function signsIn(token: string, environment: 'production' | 'sandbox' = 'production') {
  const response = await graphqlClient(t.server.base(environment), token)(signedInAs);
  if (response.status === 401) return false;
  expect(response.body.errors, JSON.stringify(response.body)).toBeUndefined();
  return true;
}

describe('creating a customer session', () => {
  it('signs in the customer named by external id, through the official client', async () => {
    const buyer = await customer(t.org, { external_id: `ext-${randomUUID()}` });
    const session = await t.org.polar.customerSessions.create({ externalCustomerId: buyer.external_id! });
    expect(session.customerId).toBe(buyer.id);
    expect(session.customer.id).toBe(buyer.id);
    expect(session.token).toMatch(/^[a-z]+_cst_[0-9A-Za-z]+/);
    expect(session.expiresAt.getTime() - Date.now()).toBeGreaterThan(59 * 60_000);
    expect(session.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(60 * 60_000);
    const slug = (await prisma().organization.findUniqueOrThrow({ where: { id: t.org.organizationId } })).slug;
    expect(session.customerPortalUrl).toBe(`${t.server.base('production').replace(/\/v1$/, '')}/portal/${slug}?customer_session_token=${session.token}`);
    expect(await signsIn(session.token)).toBe(true);
  });

  it('answers 201 with the documented body when named by customer_id over REST', async () => {
    const buyer = await customer(t.org);
    const response = await t.org.api('POST', '/customer-sessions/', { customer_id: buyer.id });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body).toMatchObject({
      id: uuid,
      created_at: datetime,
      modified_at: null,
      token: expect.stringMatching(/^[a-z]+_cst_[0-9A-Za-z]+/),
      expires_at: datetime,
      customer_portal_url: expect.stringContaining(encodeURIComponent(response.body.token)),
      customer_id: buyer.id,
      customer: { id: buyer.id, organization_id: t.org.organizationId },
    });
  });

  it('accepts the deprecated customer_external_id and returns it', async () => {
    const buyer = await customer(t.org, { external_id: `legacy-${randomUUID()}` });
    const response = await t.org.api('POST', '/customer-sessions/', { customer_external_id: buyer.external_id });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
    expect(response.body.customer_id).toBe(buyer.id);
    expect(response.body.customer_external_id).toBe(buyer.external_id);
  });

  it('stores only the SHA-256 of the token', async () => {
    const buyer = await customer(t.org);
    const { body } = await t.org.api('POST', '/customer-sessions/', { customer_id: buyer.id });
    const row = await prisma().customerSession.findUniqueOrThrow({ where: { id: body.id } });
    expect(row.tokenHash).toBe(createHash('sha256').update(body.token).digest('hex'));
    expect(JSON.stringify(row)).not.toContain(body.token);
  });

  it('answers a customer of another organization exactly as an unknown one, and signs no one in', async () => {
    const foreign = await customer(t.other, { external_id: `shared-${randomUUID()}` });
    const before = await prisma().customerSession.count();
    const byForeignId = await t.org.api('POST', '/customer-sessions/', { customer_id: foreign.id });
    const byUnknownId = await t.org.api('POST', '/customer-sessions/', { customer_id: randomUUID() });
    expectValidationError(byForeignId, ['body', 'customer_id']);
    expect(byForeignId.body).toEqual(byUnknownId.body);
    expect(byForeignId.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'customer_id'], msg: 'Customer does not exist.' })]);

    const byForeignExternalId = await t.org.api('POST', '/customer-sessions/', { external_customer_id: foreign.external_id });
    const byUnknownExternalId = await t.org.api('POST', '/customer-sessions/', { external_customer_id: `nobody-${randomUUID()}` });
    expectValidationError(byForeignExternalId, ['body', 'external_customer_id']);
    expect(byForeignExternalId.body.detail).toEqual(byUnknownExternalId.body.detail);
    expect(await prisma().customerSession.count()).toBe(before);
  });

  it('raises the client library\'s HTTPValidationError for an unknown customer', async () => {
    const error = await rejectionOf(t.org.polar.customerSessions.create({ customerId: randomUUID() }));
    expect(error).toBeInstanceOf(HTTPValidationError);
  });

  it('refuses a deleted customer', async () => {
    const buyer = await customer(t.org);
    expect((await t.org.api('DELETE', `/customers/${buyer.id}`)).status).toBe(204);
    expectValidationError(await t.org.api('POST', '/customer-sessions/', { customer_id: buyer.id }), ['body', 'customer_id']);
  });

  it('asks for exactly one way of naming the customer', async () => {
    const buyer = await customer(t.org, { external_id: `both-${randomUUID()}` });
    const none = await t.org.api('POST', '/customer-sessions/', {});
    expectValidationError(none, ['body']);
    expect(JSON.stringify(none.body.detail)).toContain('customer_id or external_customer_id');
    const both = await t.org.api('POST', '/customer-sessions/', { customer_id: buyer.id, external_customer_id: buyer.external_id });
    expectValidationError(both, ['body']);
    const disagreeing = await t.org.api('POST', '/customer-sessions/', { external_customer_id: buyer.external_id, customer_external_id: 'someone-else' });
    expectValidationError(disagreeing, ['body', 'customer_external_id']);
    expectValidationError(await t.org.api('POST', '/customer-sessions/', { customer_id: 'not-a-uuid' }), ['body', 'customer_id']);
  });

  it('needs the customer_sessions:write scope, which customer tokens never hold', async () => {
    const buyer = await customer(t.org);
    const readOnly = await tokenWithScopes(t.server, t.org, ['customers:read', 'customers:write']);
    const refused = await restClient(t.server.base('production'), readOnly)('POST', '/customer-sessions/', { customer_id: buyer.id });
    expectErrorBody(refused, 403, 'NotPermitted');
    expect(refused.body.detail).toContain('customer_sessions:write');

    const allowed = await tokenWithScopes(t.server, t.org, ['customer_sessions:write']);
    const { body } = await restClient(t.server.base('production'), allowed)('POST', '/customer-sessions/', { customer_id: buyer.id });
    const byCustomer = await restClient(t.server.base('production'), body.token)('POST', '/customer-sessions/', { customer_id: buyer.id });
    expect(byCustomer.status).toBe(403);
    expect((await restClient(t.server.base('production'))('POST', '/customer-sessions/', { customer_id: buyer.id })).status).toBe(401);
  });
});

describe('a customer session', () => {
  it('is unknown in the other environment', async () => {
    const buyer = await customer(t.org);
    const { body } = await t.org.api('POST', '/customer-sessions/', { customer_id: buyer.id });
    expect(await signsIn(body.token, 'sandbox')).toBe(false);
    expect(await signsIn(body.token, 'production')).toBe(true);
  });

  it('expires an hour after it was created', async () => {
    const buyer = await customer(t.org);
    const { body } = await t.org.api('POST', '/customer-sessions/', { customer_id: buyer.id });
    t.server.clock.now = new Date(new Date(body.expires_at).getTime() - 1000);
    try {
      expect(await signsIn(body.token)).toBe(true);
      t.server.clock.now = new Date(new Date(body.expires_at).getTime() + 1);
      expect(await signsIn(body.token)).toBe(false);
    } finally {
      t.server.clock.now = null;
    }
  });

  it('ends at once when its organization revokes it, and only its organization can', async () => {
    const buyer = await customer(t.org);
    const { body } = await t.org.api('POST', '/customer-sessions/', { customer_id: buyer.id });
    expect(await signsIn(body.token)).toBe(true);

    const byOther = await t.other.api('DELETE', `/customer-sessions/${body.id}`);
    expectErrorBody(byOther, 404, 'ResourceNotFound');
    expect(await signsIn(body.token)).toBe(true);

    expect((await t.org.api('DELETE', `/customer-sessions/${body.id}`)).status).toBe(204);
    expect(await signsIn(body.token)).toBe(false);
    const portal = await restClient(t.server.base('production'), body.token)('GET', '/customer-portal/customers/me');
    expect(portal.status).toBe(401);
    // Revoking again changes nothing and is not an error.
    expect((await t.org.api('DELETE', `/customer-sessions/${body.id}`)).status).toBe(204);
    expectErrorBody(await t.org.api('DELETE', `/customer-sessions/${randomUUID()}`), 404, 'ResourceNotFound');
  });

  it('ends when the customer signs out, leaving their other sessions alone', async () => {
    const buyer = await customer(t.org);
    const first = (await t.org.api('POST', '/customer-sessions/', { customer_id: buyer.id })).body;
    const second = (await t.org.api('POST', '/customer-sessions/', { customer_id: buyer.id })).body;
    const signOut = await graphqlClient(t.server.base('production'), first.token)('mutation { customerPortal { signOut } }');
    expect(signOut.body).toEqual({ data: { customerPortal: { signOut: true } } });
    expect(await signsIn(first.token)).toBe(false);
    expect(await signsIn(second.token)).toBe(true);
    const byOrganization = await t.org.gql('mutation { customerPortal { signOut } }');
    expect(byOrganization.body.errors?.[0].extensions.code).toBe('NOT_PERMITTED');
  });

  it('ends with its customer', async () => {
    const buyer = await customer(t.org);
    const { body } = await t.org.api('POST', '/customer-sessions/', { customer_id: buyer.id });
    expect((await t.org.api('DELETE', `/customers/${buyer.id}`)).status).toBe(204);
    expect(await signsIn(body.token)).toBe(false);
  });
});
