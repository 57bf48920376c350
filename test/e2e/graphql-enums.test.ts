// The schema's value sets and shared interfaces as a GraphQL client meets them: a value the schema
// does not offer is refused before anything runs, and the views of one concept share an interface.
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { expectGraphQLError } from '../helpers/responses.ts';

const t = useTestServer({ organizations: { org: 'production' } });

const CREATE_BENEFIT = `mutation ($input: BenefitCreateInput!) { core { benefitCreate(input: $input) { id type } } }`;
const BENEFIT_COUNT = `{ core { benefits { pagination { totalCount } } } }`;

describe('benefit types', () => {
  it('creates a benefit of a type Kassa grants', async () => {
    const { body } = await t.org.gql(CREATE_BENEFIT, { input: { type: 'custom', description: 'Support line', properties: { note: 'Call us' } } });
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    expect(body.data.core.benefitCreate.type).toBe('custom');
  });

  it.each(['discord', 'github_repository', 'meter_credit'])('does not offer %s for a new benefit: refused before anything runs', async (type) => {
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
