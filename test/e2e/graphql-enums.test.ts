// The schema's value sets and shared interfaces as a GraphQL client meets them: a value the schema
// does not offer is refused before anything runs, and the views of one concept share an interface.
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, type Org } from '../helpers/organizations.ts';
import { graphqlClient } from '../helpers/server.ts';
import { expectGraphQLError } from '../helpers/responses.ts';
import { eventually } from '../helpers/waiting.ts';

const t = useTestServer({ organizations: { org: 'production' } });

const CREATE_BENEFIT = `mutation ($input: BenefitCreateInput!) { core { benefitCreate(input: $input) { id type } } }`;
const BENEFIT_COUNT = `{ core { benefits { pagination { totalCount } } } }`;

describe('benefit types', () => {
  it('creates a benefit of a type Kassa grants', async () => {
    const { body } = await t.org.gql(CREATE_BENEFIT, { input: { type: 'custom', description: 'Support line', properties: { note: 'Call us' } } });
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    expect(body.data.core.benefitCreate.type).toBe('custom');
  });

  it.each(['discord', 'github_repository'])('does not offer %s for a new benefit: refused before anything runs', async (type) => {
    const before = (await t.org.gql(BENEFIT_COUNT)).body.data.core.benefits.pagination.totalCount;
    const response = await t.org.gql(CREATE_BENEFIT, { input: { type, description: 'Not grantable', properties: {} } });
    expect(response.body.data).toBeUndefined();
    expect(expectGraphQLError(response, 'BAD_USER_INPUT').message).toContain('GrantableBenefitType');
    expect((await t.org.gql(BENEFIT_COUNT)).body.data.core.benefits.pagination.totalCount).toBe(before);
  });

  it('refuses a type written in the document as a validation error', async () => {
    const response = await t.org.gql(`mutation { core { benefitCreate(input: { type: discord, description: "Discord role", properties: {} }) { id } } }`);
    expect(response.body.data).toBeUndefined();
    expectGraphQLError(response, 'GRAPHQL_VALIDATION_FAILED');
  });
});

describe('shared interfaces', () => {
  it('selects the fields every view of a customer shares through CustomerFields', async () => {
    const created = await t.org.gql(`mutation { core { customerCreate(input: { email: "shared@example.com", name: "Shared" }) { id } } }`);
    expect(created.body.errors, JSON.stringify(created.body.errors)).toBeUndefined();
    const id = created.body.data.core.customerCreate.id;
    const { body } = await t.org.gql(
      `fragment Shared on CustomerFields { __typename email name }
       query ($id: UUID!) { core { customer(id: $id) { ...Shared } customerState(id: $id) { ...Shared } } }`,
      { id },
    );
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    expect(body.data.core).toEqual({
      customer: { __typename: 'Customer', email: 'shared@example.com', name: 'Shared' },
      customerState: { __typename: 'CustomerState', email: 'shared@example.com', name: 'Shared' },
    });
  });

  it('keeps id off the shared interfaces', async () => {
    const { body } = await t.org.gql(`{ __type(name: "OrderFields") { kind fields { name } possibleTypes { name } } }`);
    expect(body.data.__type.kind).toBe('INTERFACE');
    expect(body.data.__type.fields.map((f: { name: string }) => f.name)).not.toContain('id');
    expect(body.data.__type.possibleTypes.map((t: { name: string }) => t.name).sort()).toEqual(['CustomerOrder', 'Order']);
  });
});

// Event types are strings with dots outside GraphQL (`order.paid`); GraphQL names them with `_`,
// takes and answers only those names, and the services keep receiving and storing the strings.
describe('event types', () => {
  const CREATE_ENDPOINT = `mutation ($input: WebhookEndpointCreateInput!) { core { webhookEndpointCreate(input: $input) { id events } } }`;
  const receiver = 'http://127.0.0.1:4100/hooks/kassa';
  let sandboxOrg: Org;
  beforeAll(async () => {
    sandboxOrg = await newOrganization(t.server, 'sandbox');
  });
  const storedEvents = async (id: string) => (await t.server.kassa.environments.sandbox.environment.prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } })).events;
  const endpointCount = async () => t.server.kassa.environments.sandbox.environment.prisma.webhookEndpoint.count({ where: { organizationId: sandboxOrg.organizationId } });

  it('takes and answers the enum names, and stores the wire strings', async () => {
    const events = ['order_paid', 'customer_state_changed', 'token_leaked', 'benefit_grant_cycled', 'order_paid'];
    const { body } = await sandboxOrg.gql(CREATE_ENDPOINT, { input: { url: receiver, format: 'raw', events } });
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    const { id } = body.data.core.webhookEndpointCreate;
    expect(body.data.core.webhookEndpointCreate.events).toEqual(['order_paid', 'customer_state_changed', 'token_leaked', 'benefit_grant_cycled']);
    expect(await storedEvents(id)).toEqual(['order.paid', 'customer.state_changed', 'token.leaked', 'benefit_grant.cycled']);

    const updated = await sandboxOrg.gql(`mutation ($id: UUID!) { core { webhookEndpointUpdate(id: $id, input: { events: [customer_created, subscription_active] }) { events } } }`, { id });
    expect(updated.body.data.core.webhookEndpointUpdate.events).toEqual(['customer_created', 'subscription_active']);
    expect(await storedEvents(id)).toEqual(['customer.created', 'subscription.active']);
    const read = await sandboxOrg.gql(`query ($id: UUID!) { core { webhookEndpoint(id: $id) { events } } }`, { id });
    expect(read.body.data.core.webhookEndpoint.events).toEqual(['customer_created', 'subscription_active']);
  });

  it.each([['the wire spelling', 'order.paid'], ['an unknown type', 'order_shipped'], ['a type in capitals', 'ORDER_PAID']])(
    'refuses %s with BAD_USER_INPUT before anything runs',
    async (_what, type) => {
      const before = await endpointCount();
      const response = await sandboxOrg.gql(CREATE_ENDPOINT, { input: { url: receiver, format: 'raw', events: ['customer_created', type] } });
      expect(response.body.data).toBeUndefined();
      expect(expectGraphQLError(response, 'BAD_USER_INPUT').message).toContain(`at "input.events[1]"; Value "${type}" does not exist in "WebhookEventType" enum.`);
      expect(await endpointCount()).toBe(before);
    },
  );

  it('answers the type of each event sent to an endpoint by its name', async () => {
    const { body } = await sandboxOrg.gql(CREATE_ENDPOINT, { input: { url: receiver, format: 'raw', events: ['customer_created'] } });
    const endpointId = body.data.core.webhookEndpointCreate.id;
    expect((await sandboxOrg.api('POST', '/customers/', { email: 'typed-event@example.com' })).status).toBe(201);
    const listed = await eventually(
      async () => (await sandboxOrg.gql(`query ($e: [UUID!]) { core { webhookEvents(endpointId: $e) { items { type } } } }`, { e: [endpointId] })).body,
      (answer) => answer.data?.core.webhookEvents.items.length > 0,
      'the event queued for the endpoint',
    );
    expect(listed.data.core.webhookEvents.items).toEqual([{ type: 'customer_created' }]);
  });

  it('describes every value with its wire spelling', async () => {
    for (const name of ['EventType', 'WebhookEventType']) {
      const { body } = await t.org.gql(`query ($name: String!) { __type(name: $name) { kind enumValues { name description } } }`, { name });
      expect(body.data.__type.kind).toBe('ENUM');
      for (const value of body.data.__type.enumValues) {
        const wire = /\(`([a-z_]+\.[a-z_]+)` on REST and in webhooks\)\.$/.exec(value.description)?.[1];
        expect(wire?.replace('.', '_'), value.name).toBe(value.name);
      }
    }
  });
});

// Scopes are `products:read` in OAuth, the CLI and stored tokens; GraphQL names them `products_read`,
// and each kind of token takes only the scopes it may hold.
describe('token scopes', () => {
  const CREATE_TOKEN = `mutation ($input: OrganizationAccessTokenCreateInput!) { core { organizationAccessTokenCreate(input: $input) { organizationAccessToken { id scopes } } } }`;
  let session: string;
  beforeAll(async () => {
    const signIn = await t.org.publicGql('mutation ($email: String!, $password: String!) { signIn(email: $email, password: $password) { token } }', { email: t.org.userEmail, password: t.org.userPassword });
    session = signIn.body.data.signIn.token;
  });
  const prisma = () => t.server.kassa.environments.production.environment.prisma;
  const tokenCount = () => prisma().organizationAccessToken.count({ where: { organizationId: t.org.organizationId } });

  it('takes and answers the enum names, and stores the scopes as tokens spell them', async () => {
    const input = { organizationId: t.org.organizationId, comment: 'enum scopes', scopes: ['products_read', 'organization_access_tokens_write', 'products_read'] };
    const { body } = await graphqlClient(t.server.base(), session)(CREATE_TOKEN, { input });
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    const token = body.data.core.organizationAccessTokenCreate.organizationAccessToken;
    expect(token.scopes).toEqual(['products_read', 'organization_access_tokens_write']);
    expect((await prisma().organizationAccessToken.findUniqueOrThrow({ where: { id: token.id } })).scopes).toEqual(['products:read', 'organization_access_tokens:write']);
    const listed = await t.org.gql(`{ core { organizationAccessTokens(limit: 100) { items { id scopes } } } }`);
    expect(listed.body.data.core.organizationAccessTokens.items).toContainEqual({ id: token.id, scopes: ['products_read', 'organization_access_tokens_write'] });
  });

  it.each([['the spelling tokens carry', 'products:read'], ['an unknown scope', 'products_admin'], ['a sign-in scope, which only OAuth clients hold', 'openid']])(
    'refuses %s with BAD_USER_INPUT before anything runs',
    async (_what, scope) => {
      const before = await tokenCount();
      const response = await graphqlClient(t.server.base(), session)(CREATE_TOKEN, { input: { organizationId: t.org.organizationId, comment: 'refused', scopes: [scope] } });
      expect(response.body.data).toBeUndefined();
      expect(expectGraphQLError(response, 'BAD_USER_INPUT').message).toContain(`at "input.scopes[0]"; Value "${scope}" does not exist in "OrganizationAccessTokenScope" enum.`);
      expect(await tokenCount()).toBe(before);
    },
  );

  it('offers each kind of token its own scopes, each described with its wire spelling', async () => {
    const valuesOf = async (name: string) => {
      const { body } = await t.org.gql(`query ($name: String!) { __type(name: $name) { enumValues { name description } } }`, { name });
      for (const value of body.data.__type.enumValues) {
        const wire = /\(`([a-z_:]+)` in OAuth, the CLI and error messages\)\.$/.exec(value.description)?.[1];
        expect(wire?.replace(':', '_'), value.name).toBe(value.name);
      }
      return body.data.__type.enumValues.map((v: { name: string }) => v.name);
    };
    const [all, organization, personal] = [await valuesOf('Scope'), await valuesOf('OrganizationAccessTokenScope'), await valuesOf('PersonalAccessTokenScope')];
    expect(all).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'user_read', 'products_read', 'webhooks_write']));
    expect([...organization].sort()).toEqual(all.filter((name: string) => !['openid', 'profile', 'email', 'user_read'].includes(name)).sort());
    expect([...personal].sort()).toEqual([...organization, 'user_read'].sort());
  });
});
