// The provider's HTTP plumbing, below the endpoints: how a request finds its route, how bodies are
// read and refused, how an error becomes its RFC 6749 / RFC 6750 answer, and the discovery document.
// The endpoints themselves run against a live server in test/e2e/oauth-*.test.ts.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Environment } from '../../src/context.ts';
import { allScopes } from '../../src/auth/scopes.ts';
import { requestFacts } from '../../src/http/request.ts';
import { createLogger } from '../../src/logger.ts';
import { discoveryRoutes, providerMetadata } from '../../src/oauth/discovery.ts';
import {
  AccessDenied,
  InvalidClient,
  InvalidClientMetadata,
  InvalidGrant,
  InvalidRedirectUri,
  InvalidRequest,
  InvalidScope,
  InvalidToken,
  OAuthError,
  UnauthorizedClient,
  UnsupportedGrantType,
  UnsupportedResponseType,
} from '../../src/oauth/errors.ts';
import { bearer, cookies, formBody, json, jsonBody, oauthErrorResponse, redirect, refuseNul, singleValued, type OAuthRequest } from '../../src/oauth/http.ts';
import { createProvider, maxOAuthBodyBytes, type Provider, type ProviderRequest } from '../../src/oauth/provider.ts';
import { isProviderPath, matchOAuthRoute, oauthRouteTable, type OAuthRoute } from '../../src/oauth/routes.ts';

const handler = async () => json(200, {});

function request(headers: Record<string, string>, body = ''): OAuthRequest {
  return { method: 'POST', path: '/v1/oauth2/token', params: {}, query: new URLSearchParams(), facts: requestFacts(headers), body: Buffer.from(body), clientIp: '127.0.0.1', requestId: 'req-1' };
}

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(OAuthError);
    return (error as OAuthError).toJSON();
  }
  throw new Error('expected a refusal');
};

// Tables and providers are built inside each test, never while the file loads: what runs at load is
// out of reach of mutation testing's per-test runs.
describe('the route table', () => {
  const table = () =>
    oauthRouteTable([
      { method: 'GET', path: '/.well-known/jwks.json', handler },
      { method: 'GET', path: '/v1/oauth2/register/{client_id}', handler },
      { method: 'PUT', path: '/v1/oauth2/register/{client_id}', handler },
      { method: 'POST', path: '/v1/oauth2/token', handler },
    ]);
  const matched = (method: string, path: string) => {
    const match = matchOAuthRoute(table(), method, path);
    return match === null || match === 'method-not-allowed' ? match : { method: match.route.method, path: match.route.path, params: match.params };
  };

  it('matches a path exactly, a dot as a dot, and names its segments', () => {
    expect(matched('GET', '/.well-known/jwks.json')).toEqual({ method: 'GET', path: '/.well-known/jwks.json', params: {} });
    expect(matched('GET', '/Xwell-known/jwksXjson')).toBeNull();
    expect(matched('GET', '/.well-known/jwks.json/extra')).toBeNull();
    expect(matched('GET', '/prefix/.well-known/jwks.json')).toBeNull();
    expect(matched('PUT', '/v1/oauth2/register/service_ci_abc')).toEqual({ method: 'PUT', path: '/v1/oauth2/register/{client_id}', params: { client_id: 'service_ci_abc' } });
    expect(matched('GET', '/v1/oauth2/register/a/b')).toBeNull();
    expect(matched('GET', '/v1/oauth2/register/')).toBeNull();
  });

  it('answers HEAD as GET, and tells a known path asked with another method from an unknown one', () => {
    expect(matched('HEAD', '/.well-known/jwks.json')).toMatchObject({ method: 'GET' });
    expect(matched('HEAD', '/v1/oauth2/token')).toBe('method-not-allowed');
    expect(matched('DELETE', '/v1/oauth2/register/x')).toBe('method-not-allowed');
    expect(matched('GET', '/v1/oauth2/token')).toBe('method-not-allowed');
    expect(matched('POST', '/v1/oauth2/nothing')).toBeNull();
  });

  it('refuses a method and path given twice, and takes the same path with another method', () => {
    const route: OAuthRoute = { method: 'POST', path: '/v1/oauth2/token', handler };
    expect(() => oauthRouteTable([route, { ...route }])).toThrow('Duplicate OAuth route POST /v1/oauth2/token');
    expect(oauthRouteTable([route, { ...route, method: 'GET' }]).routes).toHaveLength(2);
  });

  it('knows the paths of the provider and the hosted pages', () => {
    for (const path of ['/v1/oauth2/token', '/oauth2/authorize', '/.well-known/jwks.json', '/checkout/cs_1', '/portal/shop']) expect(isProviderPath(path), path).toBe(true);
    for (const path of ['/v1/products/', '/oauth2', '/v1/oauth2', '/checkouts/x', '/portals/x', '/well-known/x', '/']) expect(isProviderPath(path), path).toBe(false);
  });
});

describe('answers', () => {
  it('never lets a JSON answer be cached, and keeps the headers it is given', () => {
    expect(json(201, { a: 1 }, { 'x-extra': 'yes' })).toEqual({
      status: 201,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache', 'x-extra': 'yes' },
      body: '{"a":1}',
    });
    expect(json(200, null, { 'cache-control': 'public, max-age=60' }).headers).toMatchObject({ 'cache-control': 'public, max-age=60' });
  });

  it('redirects with 303 and no caching', () => {
    expect(redirect('https://client.example/cb?code=x')).toEqual({ status: 303, headers: { location: 'https://client.example/cb?code=x', 'cache-control': 'no-store' } });
    expect(redirect('/oauth2/login', { 'set-cookie': 'a=b' }).headers).toEqual({ location: '/oauth2/login', 'cache-control': 'no-store', 'set-cookie': 'a=b' });
  });

  it('gives each error its code and status', () => {
    const cases: [OAuthError, string, number][] = [
      [new InvalidRequest('d'), 'invalid_request', 400],
      [new InvalidClient('d'), 'invalid_client', 401],
      [new InvalidGrant('d'), 'invalid_grant', 400],
      [new UnauthorizedClient('d'), 'unauthorized_client', 400],
      [new UnsupportedGrantType('d'), 'unsupported_grant_type', 400],
      [new UnsupportedResponseType('d'), 'unsupported_response_type', 400],
      [new InvalidScope('d'), 'invalid_scope', 400],
      [new AccessDenied('d'), 'access_denied', 403],
      [new InvalidToken('d'), 'invalid_token', 401],
      [new InvalidRedirectUri('d'), 'invalid_redirect_uri', 400],
      [new InvalidClientMetadata('d'), 'invalid_client_metadata', 400],
    ];
    for (const [error, code, status] of cases) {
      expect([error.error, error.status, error.description, error.message, error.name], code).toEqual([code, status, 'd', 'd', 'OAuthError']);
      expect(error.toJSON()).toEqual({ error: code, error_description: 'd' });
    }
  });

  it('challenges a refused client with Basic and a refused token with Bearer, quotes left out', () => {
    const client = oauthErrorResponse(new InvalidClient('Unknown "client".'));
    expect(client).toEqual({
      status: 401,
      headers: { 'content-type': 'application/json', 'cache-control': 'no-store', pragma: 'no-cache', 'www-authenticate': 'Basic realm="kassa"' },
      body: JSON.stringify({ error: 'invalid_client', error_description: 'Unknown "client".' }),
    });
    expect(oauthErrorResponse(new InvalidToken('The "token" \\ expired.')).headers!['www-authenticate']).toBe('Bearer error="invalid_token", error_description="The token  expired."');
    const insufficient = oauthErrorResponse(new OAuthError('insufficient_scope', 'Needs user:read.', 403));
    expect(insufficient.headers!['www-authenticate']).toBe('Bearer error="insufficient_scope", error_description="Needs user:read."');
    // A 403 of a client, and any 400, carry no challenge.
    expect(oauthErrorResponse(new AccessDenied('No.')).headers).not.toHaveProperty('www-authenticate');
    expect(oauthErrorResponse(new InvalidGrant('No.')).headers).not.toHaveProperty('www-authenticate');
    expect(oauthErrorResponse(new InvalidRequest('Bad.'), 'Bearer').headers).not.toHaveProperty('www-authenticate');
    expect(oauthErrorResponse(new InvalidToken('Bad.'), 'Basic').headers!['www-authenticate']).toBe('Basic realm="kassa"');
    expect(oauthErrorResponse(new InvalidClient('Bad.'), 'Bearer').headers!['www-authenticate']).toBe('Bearer error="invalid_client", error_description="Bad."');
    expect(oauthErrorResponse(new OAuthError('server_error', 'Oops.', 500)).status).toBe(500);
  });
});

describe('request bodies', () => {
  it('reads a form only when it says it is one', () => {
    const form = formBody(request({ 'content-type': 'Application/X-WWW-Form-Urlencoded; charset=utf-8' }, 'grant_type=refresh_token&scope=a+b'));
    expect([...form]).toEqual([
      ['grant_type', 'refresh_token'],
      ['scope', 'a b'],
    ]);
    const wrongType = { error: 'invalid_request', error_description: 'Send the parameters form-encoded, with "Content-Type: application/x-www-form-urlencoded".' };
    expect(refusal(() => formBody(request({ 'content-type': 'application/json' }, '{}')))).toEqual(wrongType);
    expect(refusal(() => formBody(request({}, 'a=b')))).toEqual(wrongType);
  });

  it('refuses a parameter given twice and the NUL character, in names and values', () => {
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    expect(refusal(() => formBody(request(form, 'a=1&b=2&a=3')))).toEqual({ error: 'invalid_request', error_description: 'The parameter "a" was given more than once.' });
    expect(refusal(() => formBody(request(form, 'a=1&code=x%00y')))).toEqual({ error: 'invalid_request', error_description: 'The parameter "code" contains the NUL character.' });
    expect(refusal(() => formBody(request(form, 'co%00de=x')))).toEqual({ error: 'invalid_request', error_description: 'The parameter "code" contains the NUL character.' });
    expect(() => singleValued(new URLSearchParams('a=1&b=1&c=1'))).not.toThrow();
    expect(() => refuseNul(new URLSearchParams('a=1&b=%C3%A9'))).not.toThrow();
  });

  it('reads a JSON object only, and says what is wrong with anything else', () => {
    const asJson = { 'content-type': 'application/json; charset=utf-8' };
    expect(jsonBody(request(asJson, '{"client_name":"App","redirect_uris":["https://a.example/cb"]}'))).toEqual({ client_name: 'App', redirect_uris: ['https://a.example/cb'] });
    expect(refusal(() => jsonBody(request({ 'content-type': 'text/plain' }, '{}')))).toEqual({
      error: 'invalid_request',
      error_description: 'Send the body as JSON, with "Content-Type: application/json".',
    });
    const broken = refusal(() => jsonBody(request(asJson, '{"a":')));
    expect(broken.error_description).toMatch(/^The body is not valid JSON: .+/);
    for (const body of ['[1]', 'null', '"text"', '12']) {
      expect(refusal(() => jsonBody(request(asJson, body))), body).toEqual({ error: 'invalid_request', error_description: 'The body must be a JSON object.' });
    }
    const deep = `{"ok":1,"contacts":${'['.repeat(32)}${']'.repeat(32)}}`;
    expect(refusal(() => jsonBody(request(asJson, deep)))).toEqual({
      error: 'invalid_request',
      error_description: '"contacts" nests arrays and objects more than 32 levels deep; no client metadata field takes a value nested this deep.',
    });
    const deepest = `{"contacts":${'['.repeat(31)}${']'.repeat(31)}}`;
    expect(jsonBody(request(asJson, deepest))).toHaveProperty('contacts');
  });

  it('reads the bearer token and the cookies from the parsed headers', () => {
    expect(bearer(request({ authorization: 'Bearer abc' }))).toBe('abc');
    expect(bearer(request({ authorization: 'Basic YTpi' }))).toBeUndefined();
    expect(bearer(request({}))).toBeUndefined();
    expect([...cookies(request({ cookie: 'kassa_session=s1; other=2' }))]).toEqual([
      ['kassa_session', 's1'],
      ['other', '2'],
    ]);
  });
});

describe('the provider', () => {
  function capture() {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    return { logger: createLogger('info', sink), lines };
  }
  const environment = {} as Environment;
  const now = new Date('2026-11-28T10:00:00Z');
  const seen: unknown[] = [];
  const provider: Provider = (...args) => providerOf()(...args);
  const providerOf = () => createProvider([
    {
      method: 'POST',
      path: '/v1/oauth2/register/{client_id}',
      handler: async (_environment, given, at) => {
        seen.push({ ...given, at });
        return json(200, { ok: true });
      },
    },
    {
      method: 'GET',
      path: '/v1/oauth2/refuse',
      handler: async () => {
        throw new InvalidGrant('The code was already used.');
      },
    },
    {
      method: 'GET',
      path: '/v1/oauth2/crash',
      handler: async () => {
        throw new TypeError('cannot read properties of undefined');
      },
    },
  ]);
  const limits: number[] = [];
  function providerRequest(method: string, path: string, options: { query?: string; body?: Buffer | null } = {}): ProviderRequest {
    return {
      method,
      path,
      query: new URLSearchParams(options.query ?? ''),
      facts: requestFacts({ 'content-type': 'application/x-www-form-urlencoded' }),
      requestId: 'req-42',
      clientIp: '10.0.0.1',
      readBody: async (limit) => {
        limits.push(limit);
        return options.body === undefined ? Buffer.from('a=1') : options.body;
      },
    };
  }

  it('hands a matched request to its handler with everything it needs', async () => {
    const { logger } = capture();
    const answer = await provider(environment, providerRequest('POST', '/v1/oauth2/register/service_ci_x', { query: 'q=1' }), now, logger);
    expect(answer.status).toBe(200);
    expect(limits.at(-1)).toBe(maxOAuthBodyBytes);
    expect(maxOAuthBodyBytes).toBe(65_536);
    expect(seen.at(-1)).toEqual({
      method: 'POST',
      path: '/v1/oauth2/register/service_ci_x',
      params: { client_id: 'service_ci_x' },
      query: new URLSearchParams('q=1'),
      facts: expect.objectContaining({ mediaType: 'application/x-www-form-urlencoded' }),
      body: Buffer.from('a=1'),
      clientIp: '10.0.0.1',
      requestId: 'req-42',
      at: now,
    });
  });

  it('answers an unknown path 404, a wrong method 405 and an oversized body 413, each saying which', async () => {
    const { logger } = capture();
    const body = async (method: string, path: string, options = {}) => {
      const answer = await provider(environment, providerRequest(method, path, options), now, logger);
      return [answer.status, JSON.parse(String(answer.body))];
    };
    expect(await body('GET', '/v1/oauth2/none')).toEqual([404, { error: 'ResourceNotFound', detail: 'No endpoint at GET /v1/oauth2/none.' }]);
    expect(await body('DELETE', '/v1/oauth2/refuse')).toEqual([405, { error: 'MethodNotAllowed', detail: 'DELETE is not allowed on /v1/oauth2/refuse.' }]);
    expect(await body('POST', '/v1/oauth2/register/x', { body: null })).toEqual([413, { error: 'invalid_request', error_description: 'The request body exceeds 65536 bytes.' }]);
    expect(await body('POST', '/v1/oauth2/register/x', { query: 'state=a%00b' })).toEqual([
      400,
      { error: 'invalid_request', error_description: 'The parameter "state" contains the NUL character.' },
    ]);
  });

  it("answers the provider's own errors with their RFC body, and anything else with a logged 500 naming the request", async () => {
    const { logger, lines } = capture();
    const refused = await provider(environment, providerRequest('GET', '/v1/oauth2/refuse'), now, logger);
    expect([refused.status, JSON.parse(String(refused.body))]).toEqual([400, { error: 'invalid_grant', error_description: 'The code was already used.' }]);
    expect(lines).toEqual([]);
    const crashed = await provider(environment, providerRequest('GET', '/v1/oauth2/crash'), now, logger);
    expect([crashed.status, JSON.parse(String(crashed.body))]).toEqual([
      500,
      { error: 'server_error', error_description: 'An unexpected error occurred. Quote request id req-42 when reporting it.' },
    ]);
    expect(crashed.headers).not.toHaveProperty('www-authenticate');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'unexpected error', requestId: 'req-42', err: { type: 'TypeError', message: 'cannot read properties of undefined' } });
  });
});

describe('discovery', () => {
  const environment = { publicUrl: 'https://kassa.example/sandbox', config: { idTokenSigningAlgorithm: 'ES256' } } as unknown as Environment;
  const issuer = 'https://kassa.example/sandbox';
  const authMethods = ['client_secret_basic', 'client_secret_post', 'none'];

  it('describes the provider from the values its code enforces', () => {
    expect(providerMetadata(environment)).toEqual({
      issuer,
      authorization_endpoint: `${issuer}/oauth2/authorize`,
      token_endpoint: `${issuer}/v1/oauth2/token`,
      userinfo_endpoint: `${issuer}/v1/oauth2/userinfo`,
      jwks_uri: `${issuer}/.well-known/jwks.json`,
      registration_endpoint: `${issuer}/v1/oauth2/register`,
      revocation_endpoint: `${issuer}/v1/oauth2/revoke`,
      introspection_endpoint: `${issuer}/v1/oauth2/introspect`,
      scopes_supported: [...allScopes],
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: ['ES256'],
      token_endpoint_auth_methods_supported: authMethods,
      revocation_endpoint_auth_methods_supported: authMethods,
      introspection_endpoint_auth_methods_supported: authMethods,
      code_challenge_methods_supported: ['S256'],
      claims_supported: ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'sub_type', 'name', 'email', 'email_verified'],
      prompt_values_supported: ['none', 'login', 'consent'],
      authorization_response_iss_parameter_supported: true,
      claims_parameter_supported: false,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      require_request_uri_registration: false,
    });
  });

  it('serves it at both well-known names, public and cacheable for an hour', async () => {
    const routes = discoveryRoutes.map((r) => `${r.method} ${r.path}`);
    expect(routes).toEqual(['GET /.well-known/openid-configuration', 'GET /.well-known/oauth-authorization-server', 'GET /.well-known/jwks.json']);
    for (const route of discoveryRoutes.slice(0, 2)) {
      const answer = await route.handler(environment, request({}), new Date());
      expect(answer.headers, route.path).toEqual({ 'content-type': 'application/json', 'cache-control': 'public, max-age=3600', 'access-control-allow-origin': '*' });
      expect(JSON.parse(String(answer.body))).toEqual(providerMetadata(environment));
    }
  });
});
