// The REST layer's own documentation, served by each environment without a token:
//   GET {base}/v1/openapi.json        the OpenAPI 3.1 document (rest/openapi.ts), its server the environment's URL
//   GET {base}/v1/reference           an API reference page: Swagger UI, from the installed swagger-ui-dist
//   GET {base}/v1/reference/<asset>   the page's script and stylesheet, from this server only
// The page loads nothing from elsewhere, so it works offline and under a policy that allows only
// this server's own scripts, styles and requests.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { restError } from './adapter.ts';
import { forServer, type OpenApiDocument } from './openapi.ts';

export const documentPath = '/v1/openapi.json';
export const pagePath = '/v1/reference';

export interface ReferenceResponse {
  status: number;
  headers: Record<string, string>;
  body?: Buffer;
}

/** A file the reference serves: read on first request, then kept with its ETag (nothing changes while the process runs). */
class Resource {
  private loaded: { body: Buffer; etag: string } | undefined;
  constructor(
    readonly contentType: string,
    private readonly read: () => Buffer | string,
    readonly headers: Record<string, string> = {},
  ) {}

  get content(): { body: Buffer; etag: string } {
    if (!this.loaded) {
      const body = Buffer.from(this.read());
      this.loaded = { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
    }
    return this.loaded;
  }
}

const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

/**
 * Starts Swagger UI on the page's element with the document next to the page. The page's query
 * string configures nothing (no `?url=` to show another document), and no validator badge is
 * fetched: nothing is sent elsewhere.
 */
const startScript = `window.ui = SwaggerUIBundle({
  url: new URL('openapi.json', document.baseURI).href,
  dom_id: '#swagger-ui',
  deepLinking: true,
  queryConfigEnabled: false,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
});
`;

function pageHtml(environment: string): string {
  const title = `Kassa REST API reference (${environment})`;
  // Relative links: the page lives at …/v1/reference, its assets under it, the document beside it.
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="icon" type="image/png" href="reference/favicon.png">
<link rel="stylesheet" href="reference/swagger-ui.css">
</head>
<body>
<noscript><p>This page needs JavaScript. The document it shows is at <a href="openapi.json">openapi.json</a>.</p></noscript>
<div id="swagger-ui"></div>
<script src="reference/swagger-ui-bundle.js"></script>
<script src="reference/start.js"></script>
</body>
</html>
`;
}

// The assets change only with the package, but a deployment may upgrade it under the same path: an hour, then revalidated by ETag.
const assetCaching = { 'cache-control': 'public, max-age=3600' };
const assets: Record<string, Resource> = {
  'swagger-ui.css': new Resource('text/css; charset=utf-8', () => withoutSourceMap(readFileSync(join(swaggerUi, 'swagger-ui.css'), 'utf8')), assetCaching),
  'swagger-ui-bundle.js': new Resource('text/javascript; charset=utf-8', () => withoutSourceMap(readFileSync(join(swaggerUi, 'swagger-ui-bundle.js'), 'utf8')), assetCaching),
  'start.js': new Resource('text/javascript; charset=utf-8', () => startScript, assetCaching),
  'favicon.png': new Resource('image/png', () => readFileSync(join(swaggerUi, 'favicon-32x32.png')), assetCaching),
};

/** The source map the package does not serve would be asked for by every browser's developer tools. */
function withoutSourceMap(file: string): string {
  return file.replace(/\n?\/[*/]# sourceMappingURL=[^\n]*$/, '');
}

export class ApiReference {
  /** The document and the page of each environment, made on first request: the public URL is known only once the server listens. */
  private readonly byEnvironment = new Map<string, { document: Resource; page: Resource }>();

  /** `document` is the environment-independent document, built once at start-up. */
  constructor(private readonly document: OpenApiDocument) {}

  /**
   * The answer for a request to `path` (under the environment's base), or null when the path is not
   * the reference's. `publicUrl` is the environment's base URL, for the document's server and the
   * page's policy.
   */
  serve(request: { method: string; path: string; ifNoneMatch?: string }, environment: { name: string; publicUrl: string }): ReferenceResponse | null {
    const resource = this.resource(request.path, environment);
    if (!resource) return null;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      // As the REST adapter answers a method a path does not serve, naming the ones it does.
      const body = Buffer.from(JSON.stringify(restError(405, 'MethodNotAllowed', `${request.method} is not allowed on ${request.path}.`).body));
      return { status: 405, headers: { allow: 'GET, HEAD', 'content-type': 'application/json', 'content-length': String(body.length) }, body };
    }
    const { body, etag } = resource.content;
    const headers: Record<string, string> = { 'content-type': resource.contentType, etag, 'x-content-type-options': 'nosniff', ...resource.headers };
    if (request.ifNoneMatch?.split(',').some((tag) => tag.trim() === etag || tag.trim() === '*')) return { status: 304, headers };
    return { status: 200, headers: { ...headers, 'content-length': String(body.length) }, body };
  }

  private resource(path: string, environment: { name: string; publicUrl: string }): Resource | null {
    if (path === documentPath || path === pagePath) {
      let served = this.byEnvironment.get(environment.name);
      if (!served) {
        served = {
          // Public and credential-free, so any origin may read it (editors and client generators fetch it).
          document: new Resource('application/json', () => JSON.stringify(forServer(this.document, environment.publicUrl, environment.name)), {
            'cache-control': 'no-cache',
            'access-control-allow-origin': '*',
          }),
          page: new Resource('text/html; charset=utf-8', () => pageHtml(environment.name), { 'cache-control': 'no-cache', ...pageHeaders(environment.publicUrl) }),
        };
        this.byEnvironment.set(environment.name, served);
      }
      return path === documentPath ? served.document : served.page;
    }
    const asset = path.startsWith(`${pagePath}/`) ? path.slice(pagePath.length + 1) : null;
    return asset !== null && Object.hasOwn(assets, asset) ? assets[asset] : null;
  }
}

/**
 * The page runs only this server's script and styles (Swagger UI sets element styles from script,
 * which the policy does not restrict), shows inline SVG icons as data: images, and sends "try it
 * out" requests only to this server and the environment's public URL.
 */
function pageHeaders(publicUrl: string): Record<string, string> {
  const origins = ["'self'", ...(publicUrl ? [new URL(publicUrl).origin] : [])].join(' ');
  return {
    'content-security-policy': `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src ${origins}; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`,
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
  };
}
