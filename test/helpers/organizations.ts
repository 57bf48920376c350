// An organization to test in, bootstrapped through the services (a user, the organization, an
// all-scopes token), with the clients the end-to-end tests talk to it through; and what the tests
// read about an organization: its events, tokens of fewer scopes.
import { Polar } from '@polar-sh/sdk';
import { expect } from 'vitest';
import type { BootstrapOptions } from '../../src/bootstrap.ts';
import type { EnvironmentName } from '../../src/config.ts';
import { graphqlClient, restClient, type Api, type Gql, type TestServer } from './server.ts';

export interface Org {
  environment: EnvironmentName;
  organizationId: string;
  /** The organization's all-scopes access token. */
  token: string;
  /** The owner's credentials. */
  userEmail: string;
  userPassword: string;
  /** The organization's SDK client (its all-scopes token). */
  polar: Polar;
  /** An SDK client without a token: the buyer's. */
  buyer: Polar;
  /** REST with the organization's token. */
  api: Api;
  /** REST without a token: the buyer's. */
  publicApi: Api;
  /** GraphQL with the organization's token. */
  gql: Gql;
  /** GraphQL without a token: the buyer's. */
  publicGql: Gql;
}

export interface OrganizationOptions extends BootstrapOptions {
  /** REST clients that check on every response that it carries a request id. */
  checkRequestId?: boolean;
}

/** The server URL the official client takes for an environment (it adds /v1 itself). */
export function sdkServerURL(server: TestServer, environment: EnvironmentName = 'production'): string {
  return `${server.url}${environment === 'sandbox' ? '/sandbox' : ''}`;
}

/** A fresh organization of the environment, with its clients. */
export async function newOrganization(server: TestServer, environment: EnvironmentName = 'production', options: OrganizationOptions = {}): Promise<Org> {
  const { checkRequestId = false, ...bootstrapOptions } = options;
  const boot = await server.bootstrap(environment, bootstrapOptions);
  const base = server.base(environment);
  const rest = checkRequestId ? restClientCheckingRequestId : restClient;
  const serverURL = sdkServerURL(server, environment);
  return {
    ...boot,
    environment,
    polar: new Polar({ accessToken: boot.token, serverURL }),
    buyer: new Polar({ serverURL }),
    api: rest(base, boot.token),
    publicApi: rest(base),
    gql: graphqlClient(base, boot.token),
    publicGql: graphqlClient(base),
  };
}

/** The REST client of the helpers, checking on every response that it carries a request id. */
export function restClientCheckingRequestId(base: string, token?: string): Api {
  const call = restClient(base, token);
  return async (method, path, body, headers) => {
    const response = await call(method, path, body, headers);
    expect(response.headers.get('x-request-id'), `${method} ${path} answered without x-request-id`).toMatch(/^[\w.:-]+$/);
    return response;
  };
}

/** The organization's events in the environment's outbox, oldest first. */
export async function eventsOf(server: TestServer, organizationId: string, environment: EnvironmentName = 'production') {
  return server.kassa.environments[environment].environment.prisma.event.findMany({ where: { organizationId }, orderBy: { sequence: 'asc' } });
}

/** The GraphQL name of a scope or event type: `products_read` for `products:read`, `order_paid` for `order.paid`. */
export const enumName = (wire: string) => wire.replace(/[.:]/g, '_');

/** An organization access token with only `scopes` (as tokens spell them), created by the owner signed in, as a user would. */
export async function tokenWithScopes(server: TestServer, org: Org, scopes: string[], comment = `only ${scopes.join(' ')}`): Promise<string> {
  const signIn = await org.publicGql('mutation ($email: String!, $password: String!) { signIn(email: $email, password: $password) { token } }', {
    email: org.userEmail,
    password: org.userPassword,
  });
  expect(signIn.body.errors).toBeUndefined();
  const created = await graphqlClient(server.base(org.environment), signIn.body.data.signIn.token)(
    'mutation ($input: OrganizationAccessTokenCreateInput!) { core { organizationAccessTokenCreate(input: $input) { token } } }',
    { input: { organizationId: org.organizationId, comment, scopes: scopes.map(enumName) } },
  );
  expect(created.body.errors).toBeUndefined();
  return created.body.data.core.organizationAccessTokenCreate.token;
}
