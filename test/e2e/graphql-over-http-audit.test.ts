// The GraphQL over HTTP specification, as graphql-http's server audit checks it, on both
// environments' endpoints: every MUST and every SHOULD passes; the MAY audits are listed, not required.
import { describe, expect, test } from 'vitest';
import { serverAudits, type AuditResult } from 'graphql-http';
import type { EnvironmentName } from '../../src/config.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const t = useTestServer();

/** graphql-http 1.23 holds 61 audits, 36 of them MUST or SHOULD; far fewer means the suite did not run. */
const minimumAudits = 55;
const minimumRequired = 30;

async function audit(environment: EnvironmentName): Promise<AuditResult[]> {
  const audits = serverAudits({ url: `${t.server.base(environment)}/graphql`, fetchFn: fetch });
  const results: AuditResult[] = [];
  // In sequence (auditServer sends them all at once), so a failing audit's log lines stay together.
  for (const { fn } of audits) results.push(await fn());
  return results;
}

const unmet = (results: AuditResult[]) => results.flatMap((result) => (result.status === 'ok' ? [] : [`${result.id} ${result.name}: ${result.reason}`]));

describe.each(['production', 'sandbox'] as const)('the %s GraphQL endpoint', (environment) => {
  test('passes every MUST and SHOULD audit of the GraphQL over HTTP specification', async () => {
    const results = await audit(environment);
    expect(results.length).toBeGreaterThanOrEqual(minimumAudits);
    const required = results.filter((result) => /^(MUST|SHOULD) /.test(result.name));
    expect(required.length).toBeGreaterThanOrEqual(minimumRequired);
    const optional = unmet(results.filter((result) => result.name.startsWith('MAY ')));
    expect(unmet(required), `MAY audits not met: ${optional.length ? `\n${optional.join('\n')}` : 'none'}`).toEqual([]);
  });
});

/** A GraphQL POST with the given Accept header, answered as status, media type and body. */
async function post(environment: EnvironmentName, accept: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${t.server.base(environment)}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept, ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, mediaType: response.headers.get('content-type') ?? '', body: (await response.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] } };
}

const graphqlResponse = 'application/graphql-response+json';
const json = 'application/json';

// The audit's own coercion probe declares a variable it never uses, so it fails validation before
// any variable is coerced; these requests reach coercion.
describe.each(['production', 'sandbox'] as const)('the %s endpoint beyond the audit', (environment) => {
  test('a variable its type refuses is a request error: 400 under application/graphql-response+json, 200 under application/json', async () => {
    const refused = [
      { query: 'query ($name: String!) { __type(name: $name) { name } }', variables: {} },
      { query: 'query ($name: String!) { __type(name: $name) { name } }', variables: { name: 7 } },
    ];
    for (const body of refused) {
      const strict = await post(environment, graphqlResponse, body);
      expect(strict.status, JSON.stringify(strict.body)).toBe(400);
      expect(strict.mediaType).toMatch(/^application\/graphql-response\+json/);
      expect(strict.body.data).toBeUndefined();
      expect(strict.body.errors![0].extensions!.code).toBe('BAD_USER_INPUT');
      const legacy = await post(environment, json, body);
      expect(legacy.status, JSON.stringify(legacy.body)).toBe(200);
      expect(legacy.body.errors![0].extensions!.code).toBe('BAD_USER_INPUT');
    }
  });

  test('an operation that cannot be determined is a request error: 400 under application/graphql-response+json, 200 under application/json', async () => {
    for (const body of [{ query: 'query A { __typename } query B { __typename }' }, { query: 'query A { __typename }', operationName: 'B' }]) {
      const strict = await post(environment, graphqlResponse, body);
      expect(strict.status, JSON.stringify(strict.body)).toBe(400);
      expect(strict.body.data).toBeUndefined();
      expect(strict.body.errors![0].extensions!.code).toBe('OPERATION_RESOLUTION_FAILURE');
      const legacy = await post(environment, json, body);
      expect(legacy.status, JSON.stringify(legacy.body)).toBe(200);
      expect(legacy.body.errors![0].extensions!.code).toBe('OPERATION_RESOLUTION_FAILURE');
    }
  });

  test('a request without a document is not a GraphQL-over-HTTP request: 400 whatever the media type, over POST and GET', async () => {
    for (const accept of [graphqlResponse, json]) {
      for (const body of [{}, { query: null }, { variables: { name: 'Query' } }]) {
        const answer = await post(environment, accept, body);
        expect(answer.status, `${accept} ${JSON.stringify(body)}: ${JSON.stringify(answer.body)}`).toBe(400);
        expect(answer.body.errors![0].extensions!.code).toBe('BAD_REQUEST');
      }
      const get = await fetch(`${t.server.base(environment)}/graphql?variables=%7B%7D`, { headers: { accept } });
      expect(get.status, `${accept} GET`).toBe(400);
    }
  });

  test('Accept is read by weight: the highest weighted media type is answered, and a request accepting nothing gets 406', async () => {
    const query = { query: '{ __typename }' };
    expect((await post(environment, 'application/json;q=0.5, application/graphql-response+json', query)).mediaType).toMatch(/^application\/graphql-response\+json/);
    expect((await post(environment, 'application/graphql-response+json;q=0.2, application/json;q=0.9', query)).mediaType).toMatch(/^application\/json/);
    expect((await post(environment, 'application/json;q=0, application/graphql-response+json;q=0.1', query)).mediaType).toMatch(/^application\/graphql-response\+json/);
    const refused = await fetch(`${t.server.base(environment)}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json;q=0' }, body: JSON.stringify(query) });
    expect(refused.status).toBe(406);
  });

  test('answers made before the document is read are in the media type the client asked for', async () => {
    const invalidToken = await post(environment, graphqlResponse, { query: '{ __typename }' }, { authorization: 'Bearer kassa_oat_000000000000000000000000000000000000' });
    expect(invalidToken.status).toBe(401);
    expect(invalidToken.mediaType).toMatch(/^application\/graphql-response\+json/);
    expect(invalidToken.body).toEqual({ errors: [{ message: expect.any(String), extensions: { code: 'UNAUTHENTICATED' } }] });
    const plainText = await fetch(`${t.server.base(environment)}/graphql`, { method: 'POST', headers: { 'content-type': 'text/plain', accept: graphqlResponse }, body: '{ __typename }' });
    expect(plainText.status).toBe(415);
    expect(plainText.headers.get('content-type')).toMatch(/^application\/graphql-response\+json/);
    for (const accept of [json, '*/*']) {
      const legacy = await post(environment, accept, { query: '{ __typename }' }, { authorization: 'Bearer kassa_oat_000000000000000000000000000000000000' });
      expect(legacy.status).toBe(401);
      expect(legacy.mediaType).toMatch(/^application\/json/);
    }
  });
});
