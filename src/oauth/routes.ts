// The OAuth 2.0 / OpenID Connect provider's endpoints and the server-rendered pages (sign-in and
// consent, checkout, customer portal), by method and path. They are not REST routes: their wire
// formats are fixed by the RFCs (form-encoded requests, RFC 6749 error bodies, redirects) or are
// HTML forms, so each is a plain handler (the pages then run GraphQL operations in-process). Paths are under the environment's base
// (`/sandbox` for sandbox), as the rest of the API is.
import type { OAuthHandler } from './http.ts';

export interface OAuthRoute {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  handler: OAuthHandler;
}

/** Routes with their path patterns compiled; a method and path given twice is refused. */
export interface OAuthRouteTable {
  routes: readonly (OAuthRoute & { pattern: RegExp })[];
}

const pattern = (path: string) => new RegExp(`^${path.replace(/[.]/g, '\\.').replace(/\{(\w+)\}/g, '(?<$1>[^/]+)')}$`);

export function oauthRouteTable(entries: readonly OAuthRoute[]): OAuthRouteTable {
  const routes: (OAuthRoute & { pattern: RegExp })[] = [];
  for (const entry of entries) {
    if (routes.some((r) => r.method === entry.method && r.path === entry.path)) throw new Error(`Duplicate OAuth route ${entry.method} ${entry.path}`);
    routes.push({ ...entry, pattern: pattern(entry.path) });
  }
  return { routes };
}

/** The route for a request, `method-not-allowed` for a known path with another method, or null. */
export function matchOAuthRoute(table: OAuthRouteTable, method: string, path: string): { route: OAuthRoute; params: Record<string, string> } | 'method-not-allowed' | null {
  let known = false;
  for (const route of table.routes) {
    const m = route.pattern.exec(path);
    if (!m) continue;
    known = true;
    if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { route, params: { ...m.groups } };
  }
  return known ? 'method-not-allowed' : null;
}

/** Whether a path (under an environment's base) belongs to the provider or the hosted pages (`/checkout/…`, `/portal/…`). */
export function isProviderPath(path: string): boolean {
  return ['/v1/oauth2/', '/oauth2/', '/.well-known/', '/checkout/', '/portal/'].some((prefix) => path.startsWith(prefix));
}
