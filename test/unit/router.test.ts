// One table says which endpoint a request is for: each kind, in both environments, and what
// falls through to the REST API (which answers unknown paths and methods itself).
import { describe, expect, it } from 'vitest';
import { createRouter } from '../../src/http/router.ts';
import { isProviderPath } from '../../src/oauth/routes.ts';
import { graphiqlAssetPrefix } from '../../src/pages/graphiql.ts';

const route = createRouter({ isProviderPath, graphiqlAssetPrefix });
const id = '0b6f6a0e-5b8e-4c1e-9d43-1f2a3b4c5d6e';

describe('the router', () => {
  it('answers health and readiness outside the environments', () => {
    expect(route('GET', '/healthz')).toEqual({ kind: 'health' });
    expect(route('GET', '/readyz')).toEqual({ kind: 'readiness' });
  });

  it('answers the metrics at /metrics only, outside the environments', () => {
    expect(route('GET', '/metrics')).toEqual({ kind: 'metrics' });
    expect(route('POST', '/metrics')).toEqual({ kind: 'metrics' });
    expect(route('GET', '/sandbox/metrics')).toEqual({ kind: 'nowhere' });
    expect(route('GET', '/v1/metrics/')).toEqual({ kind: 'api', environment: 'production', path: '/v1/metrics/' });
  });

  it('sends the provider and the hosted pages to the provider, in the environment the prefix names', () => {
    expect(route('POST', '/v1/oauth2/token')).toEqual({ kind: 'provider', environment: 'production', path: '/v1/oauth2/token' });
    expect(route('GET', '/sandbox/.well-known/jwks.json')).toEqual({ kind: 'provider', environment: 'sandbox', path: '/.well-known/jwks.json' });
    expect(route('GET', '/sandbox/checkout/abc')).toEqual({ kind: 'provider', environment: 'sandbox', path: '/checkout/abc' });
    expect(route('GET', '/portal/shop')).toEqual({ kind: 'provider', environment: 'production', path: '/portal/shop' });
  });

  it('finds nothing outside /v1 and /sandbox/v1', () => {
    for (const path of ['/', '/v2/products/', '/sandbox', '/sandboxv1/products/', '/v1x']) expect(route('GET', path), path).toEqual({ kind: 'nowhere' });
    expect(route('GET', '/sandbox/v1')).toEqual({ kind: 'api', environment: 'sandbox', path: '/v1' });
  });

  it('matches the byte endpoints by method, and leaves other methods to the API', () => {
    expect(route('PUT', `/v1/files/${id}/parts/3`)).toEqual({ kind: 'file-part', environment: 'production', path: `/v1/files/${id}/parts/3`, fileId: id, part: 3 });
    expect(route('GET', `/sandbox/v1/files/${id}/download`)).toMatchObject({ kind: 'file-download', environment: 'sandbox', fileId: id });
    expect(route('GET', `/v1/invoices/${id}.pdf`)).toMatchObject({ kind: 'invoice-pdf', invoiceId: id });
    expect(route('POST', '/v1/integrations/secret-scanning')).toMatchObject({ kind: 'secret-scanning' });
    expect(route('GET', `/v1/files/${id}/parts/3`).kind).toBe('api');
    expect(route('PUT', `/v1/files/${id}/parts/0`).kind).toBe('api');
    expect(route('DELETE', `/v1/invoices/${id}.pdf`).kind).toBe('api');
    expect(route('GET', '/v1/integrations/secret-scanning').kind).toBe('api');
  });

  it("sends a GET of a checkout link's public URL to the link, and leaves the resource's REST paths and other methods to the API", () => {
    expect(route('GET', '/sandbox/v1/checkout-links/kassa_cl_a-B_9/redirect')).toEqual({
      kind: 'checkout-link', environment: 'sandbox', path: '/v1/checkout-links/kassa_cl_a-B_9/redirect', clientSecret: 'kassa_cl_a-B_9',
    });
    expect(route('POST', '/v1/checkout-links/kassa_cl_x/redirect').kind).toBe('api');
    expect(route('GET', `/v1/checkout-links/${id}`).kind).toBe('api');
    expect(route('GET', '/v1/checkout-links/').kind).toBe('api');
    expect(route('GET', '/v1/checkout-links/a/b/redirect').kind).toBe('api');
  });

  it('tells GraphQL and GraphiQL assets from REST', () => {
    expect(route('POST', '/v1/graphql')).toEqual({ kind: 'graphql', environment: 'production', path: '/v1/graphql' });
    expect(route('GET', `/sandbox/v1/${graphiqlAssetPrefix}graphiql.js`)).toMatchObject({ kind: 'graphiql-asset', environment: 'sandbox', asset: 'graphiql.js' });
    expect(route('POST', `/v1/${graphiqlAssetPrefix}graphiql.js`).kind).toBe('api');
    expect(route('GET', '/v1/products/')).toEqual({ kind: 'api', environment: 'production', path: '/v1/products/' });
  });
});
