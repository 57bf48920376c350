// Which endpoint a request is for, from its method and path alone: one table for every kind of
// endpoint Kassa serves (health, the OAuth provider and hosted pages, integrations, documents,
// file bytes, GraphQL and GraphiQL, REST). Each kind has its handler in http/handlers/, listed in
// server.ts's table (http/endpoints.ts).
import type { EnvironmentName } from '../config.ts';

export type Endpoint =
  | { kind: 'health' }
  | { kind: 'readiness' }
  /** The operators' Prometheus metrics, when a token is configured for them (else a 404). */
  | { kind: 'metrics' }
  /** The OAuth provider's endpoints and the hosted pages (oauth/routes.ts isProviderPath). */
  | { kind: 'provider'; environment: EnvironmentName; path: string }
  /** Under neither environment's API. */
  | { kind: 'nowhere' }
  | { kind: 'secret-scanning'; environment: EnvironmentName; path: string }
  /** Stripe's events for the environment's Stripe account. */
  | { kind: 'stripe-webhook'; environment: EnvironmentName; path: string }
  | { kind: 'invoice-pdf'; environment: EnvironmentName; path: string; invoiceId: string }
  /** A checkout link's public URL: each visit opens a new checkout and is sent to it. */
  | { kind: 'checkout-link'; environment: EnvironmentName; path: string; clientSecret: string }
  | { kind: 'file-part'; environment: EnvironmentName; path: string; fileId: string; part: number }
  | { kind: 'file-download'; environment: EnvironmentName; path: string; fileId: string }
  /** GraphiQL's page (when HTML is preferred) or the GraphQL endpoint. */
  | { kind: 'graphql'; environment: EnvironmentName; path: string }
  | { kind: 'graphiql-asset'; environment: EnvironmentName; path: string; asset: string }
  /** The REST API and its documents (the OpenAPI document, the reference page). */
  | { kind: 'api'; environment: EnvironmentName; path: string };

const uuid = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const invoicePdf = new RegExp(`^/v1/invoices/(${uuid})\\.pdf$`);
const filePart = new RegExp(`^/v1/files/(${uuid})/parts/([1-9]\\d{0,4})$`);
const fileDownload = new RegExp(`^/v1/files/(${uuid})/download$`);
const checkoutLink = /^\/v1\/checkout-links\/([A-Za-z0-9_-]{1,200})\/redirect$/;

export interface RouterOptions {
  /** Whether a path (under an environment's base) belongs to the OAuth provider or the pages. */
  isProviderPath(path: string): boolean;
  /** Where GraphiQL's assets are served from, under `/v1/`. */
  graphiqlAssetPrefix: string;
}

export function createRouter(options: RouterOptions): (method: string, pathname: string) => Endpoint {
  const assets = `/v1/${options.graphiqlAssetPrefix}`;
  return (method, pathname) => {
    if (pathname === '/healthz') return { kind: 'health' };
    if (pathname === '/readyz') return { kind: 'readiness' };
    if (pathname === '/metrics') return { kind: 'metrics' };
    const sandbox = pathname.startsWith('/sandbox/');
    const environment: EnvironmentName = sandbox ? 'sandbox' : 'production';
    const underBase = sandbox ? pathname.slice('/sandbox'.length) : pathname;
    if (options.isProviderPath(underBase)) return { kind: 'provider', environment, path: underBase };
    if (underBase !== '/v1' && !underBase.startsWith('/v1/')) return { kind: 'nowhere' };
    const path = underBase;
    if (path === '/v1/integrations/secret-scanning' && method === 'POST') return { kind: 'secret-scanning', environment, path };
    if (path === '/v1/integrations/stripe/webhook' && method === 'POST') return { kind: 'stripe-webhook', environment, path };
    const link = checkoutLink.exec(path);
    if (link && method === 'GET') return { kind: 'checkout-link', environment, path, clientSecret: link[1] };
    const invoice = invoicePdf.exec(path);
    if (invoice && method === 'GET') return { kind: 'invoice-pdf', environment, path, invoiceId: invoice[1] };
    const part = filePart.exec(path);
    if (part && method === 'PUT') return { kind: 'file-part', environment, path, fileId: part[1], part: Number(part[2]) };
    const download = fileDownload.exec(path);
    if (download && method === 'GET') return { kind: 'file-download', environment, path, fileId: download[1] };
    if (path === '/v1/graphql') return { kind: 'graphql', environment, path };
    if (path.startsWith(assets) && (method === 'GET' || method === 'HEAD')) return { kind: 'graphiql-asset', environment, path, asset: path.slice(assets.length) };
    return { kind: 'api', environment, path };
  };
}
