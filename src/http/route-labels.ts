// The route a request is counted under in the metrics: the template of the path it reached
// (`/v1/products/{id}`, under the environment's base), never the path itself, which holds ids.
// A path no endpoint serves is `unmatched`, so no client can grow the number of series.
import type { Endpoint } from './router.ts';

/** A method and a documented path with `{name}` parameters, as the route tables give them. */
export interface PathTemplate {
  method: string;
  path: string;
}

interface CompiledTemplate extends PathTemplate {
  pattern: RegExp;
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function compile(template: PathTemplate): CompiledTemplate {
  return { ...template, pattern: new RegExp(`^${template.path.split(/\{\w+\}/).map(escape).join('[^/]+')}$`) };
}

/** The template a path matches: the one for its method first (tables list a path per method), else any. */
function matching(templates: readonly CompiledTemplate[], method: string, path: string): string {
  const verb = method === 'HEAD' ? 'GET' : method;
  return (templates.find((t) => t.method === verb && t.pattern.test(path)) ?? templates.find((t) => t.pattern.test(path)))?.path ?? 'unmatched';
}

/**
 * `provider` and `api` are the route tables of the endpoints whose paths hold parameters (the
 * OAuth provider and pages; the REST routes and the API's documents); every other kind of
 * endpoint has one template, named here.
 */
export function routeLabels(tables: { provider: readonly PathTemplate[]; api: readonly PathTemplate[]; graphiqlAssetPrefix: string }): (method: string, endpoint: Endpoint) => string {
  const provider = tables.provider.map(compile);
  const api = tables.api.map(compile);
  return (method, endpoint) => {
    switch (endpoint.kind) {
      case 'health':
        return '/healthz';
      case 'readiness':
        return '/readyz';
      case 'metrics':
        return '/metrics';
      case 'nowhere':
        return 'unmatched';
      case 'secret-scanning':
      case 'stripe-webhook':
      case 'graphql':
        return endpoint.path;
      case 'invoice-pdf':
        return '/v1/invoices/{id}.pdf';
      case 'checkout-link':
        return '/v1/checkout-links/{client_secret}/redirect';
      case 'file-part':
        return '/v1/files/{id}/parts/{part}';
      case 'file-download':
        return '/v1/files/{id}/download';
      case 'graphiql-asset':
        return `/v1/${tables.graphiqlAssetPrefix}{asset}`;
      case 'provider':
        return matching(provider, method, endpoint.path);
      case 'api':
        return matching(api, method, endpoint.path);
    }
  };
}
