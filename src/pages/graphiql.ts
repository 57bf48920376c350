// GraphiQL, served whole by Kassa: the page and every script, stylesheet and editor worker it loads
// come from this origin, out of the installed @graphql-yoga/render-graphiql (the build of GraphiQL
// that matches the installed yoga), so it works offline and under a CSP that names no other host.
// The page's markup holds no inline script or style: its options travel in a JSON data block, which
// the browser never executes (the editor writes styles of its own as it runs: see the CSP below).
// Assets are named by their content's digest and cached for a year.
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { escape } from './html.ts';

const gzipped = promisify(gzip);

/** Where the assets live, relative to the GraphQL endpoint (`/v1/graphql` → `/v1/graphiql/…`). */
export const graphiqlAssetPrefix = 'graphiql/';

interface Asset {
  name: string;
  contentType: string;
  body: Buffer;
  etag: string;
  gzip?: Promise<Buffer>;
}

interface Assets {
  byName: Map<string, Asset>;
  script: Asset;
  style: Asset;
  favicon: Asset;
}

let loaded: Promise<Assets> | undefined;

function asset(base: string, extension: string, contentType: string, body: Buffer): Asset {
  const digest = createHash('sha256').update(body).digest('hex').slice(0, 16);
  return { name: `${base}.${digest}.${extension}`, contentType, body, etag: `"${digest}"` };
}

/**
 * The bundle is about 9 MB of JavaScript text; it is read on the first visit, not at start.
 * Monaco asks `MonacoEnvironment.getWorkerUrl` for each worker: it gets a URL of this origin.
 */
function loadAssets(): Promise<Assets> {
  loaded ??= import('@graphql-yoga/render-graphiql/graphiql').then((bundle) => {
    const workers = {
      editorWorkerService: asset('editor.worker', 'js', 'text/javascript; charset=utf-8', Buffer.from(bundle.editorWorkerService)),
      json: asset('json.worker', 'js', 'text/javascript; charset=utf-8', Buffer.from(bundle.jsonWorker)),
      graphql: asset('graphql.worker', 'js', 'text/javascript; charset=utf-8', Buffer.from(bundle.graphqlWorker)),
    };
    const workerNames = Object.fromEntries(Object.entries(workers).map(([label, worker]) => [label, worker.name]));
    // Runs before the bundle (Monaco reads MonacoEnvironment when it loads) and starts it after.
    const prelude = `(function () {
  var base = document.currentScript.src;
  var workers = ${JSON.stringify(workerNames)};
  self.MonacoEnvironment = { globalAPI: false, getWorkerUrl: function (moduleId, label) { return new URL(workers[label] || workers.editorWorkerService, base).href; } };
})();\n`;
    const start = `\n;(function () {
  var options = JSON.parse(document.getElementById('graphiql-options').textContent);
  YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), options);
})();\n`;
    const script = asset('graphiql', 'js', 'text/javascript; charset=utf-8', Buffer.from(prelude + bundle.js + start));
    const style = asset('graphiql', 'css', 'text/css; charset=utf-8', Buffer.from(bundle.css));
    const icon = /^data:([^;,]+);base64,(.*)$/s.exec(bundle.favicon);
    const favicon = asset('favicon', 'ico', icon?.[1] ?? 'image/x-icon', Buffer.from(icon?.[2] ?? '', 'base64'));
    const all = [script, style, favicon, ...Object.values(workers)];
    return { byName: new Map(all.map((a) => [a.name, a])), script, style, favicon };
  });
  // A failed load is not kept: the next visit tries again rather than failing until a restart.
  loaded.catch(() => {
    loaded = undefined;
  });
  return loaded;
}

/**
 * What the page loads, and nothing more: scripts and workers of this origin only, never inline;
 * requests to this origin only. Styles may be inline too: the editor (Monaco) and GraphiQL's
 * dialogs write `<style>` elements and `style` attributes at run time, which no nonce or hash can
 * cover; its fonts and icons are data: URLs in its stylesheet.
 */
export const graphiqlContentSecurityPolicy =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; font-src data:; img-src 'self' data:; connect-src 'self'; worker-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

export interface GraphiqlResponse {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer;
}

/** The GraphiQL page of one environment's endpoint. */
export async function graphiqlPage(title: string): Promise<GraphiqlResponse> {
  const { script, style, favicon } = await loadAssets();
  // `<` is escaped so no option can end the data block early.
  const options = JSON.stringify({ title }).replace(/</g, '\\u003c');
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escape(title)}</title>
<link rel="icon" href="${graphiqlAssetPrefix}${favicon.name}">
<link rel="stylesheet" href="${graphiqlAssetPrefix}${style.name}">
</head>
<body id="body" class="no-focus-outline">
<noscript>GraphiQL needs JavaScript. The endpoint also answers GraphQL over HTTP: POST {"query": "…"} as JSON.</noscript>
<div id="root"></div>
<script type="application/json" id="graphiql-options">${options}</script>
<script src="${graphiqlAssetPrefix}${script.name}"></script>
</body>
</html>`;
  return {
    status: 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': graphiqlContentSecurityPolicy,
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    },
    body,
  };
}

/** One of the page's assets by its name, gzipped when the client takes it; null when there is no such asset. */
export async function graphiqlAsset(name: string, acceptEncoding: string | undefined, ifNoneMatch: string | undefined): Promise<GraphiqlResponse | null> {
  const found = (await loadAssets()).byName.get(name);
  if (!found) return null;
  const headers: Record<string, string> = {
    'content-type': found.contentType,
    // The name changes with the content, so a cached copy never goes stale.
    'cache-control': 'public, max-age=31536000, immutable',
    etag: found.etag,
    vary: 'accept-encoding',
    'x-content-type-options': 'nosniff',
    'cross-origin-resource-policy': 'same-origin',
  };
  if (ifNoneMatch === found.etag) return { status: 304, headers, body: Buffer.alloc(0) };
  if (/\bgzip\b/i.test(acceptEncoding ?? '') && found.body.length > 1024) {
    // A failed compression is not kept: the next request tries again.
    found.gzip ??= gzipped(found.body).catch((error: unknown) => {
      found.gzip = undefined;
      throw error;
    });
    return { status: 200, headers: { ...headers, 'content-encoding': 'gzip' }, body: await found.gzip };
  }
  return { status: 200, headers, body: found.body };
}

