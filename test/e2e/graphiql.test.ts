// GraphiQL without the network: the page Kassa serves at each GraphQL endpoint references only its
// own origin, every script, stylesheet, icon and worker it names is served by Kassa with the right
// type, and its Content-Security-Policy allows exactly that. In Chromium, with the CSP enforced,
// the editor loads the schema and runs a query with no request leaving the origin and no violation.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { launchChromium, screenshots } from '../helpers/chromium.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const t = useTestServer();

async function fetchPage(base: string) {
  const response = await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } });
  return { response, html: await response.text() };
}

/** Every URL the page's markup references: script src, link href, and any other src/href. */
function referencedUrls(html: string): { tag: string; url: string }[] {
  return [...html.matchAll(/<(\w+)\b[^>]*?\s(?:src|href)="([^"]*)"/g)].map((m) => ({ tag: m[1], url: m[2] }));
}

/** The CSP's directives, by name. */
function directives(csp: string): Map<string, string[]> {
  return new Map(csp.split(';').map((d) => d.trim().split(/\s+/)).filter((d) => d[0]).map(([name, ...values]) => [name, values]));
}

describe('the GraphiQL page', () => {
  for (const environment of ['production', 'sandbox'] as const) {
    test(`${environment}: every script, style and icon it references is same-origin and served by Kassa`, async () => {
      const base = t.server.base(environment);
      const { response, html } = await fetchPage(base);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(html).toContain(`<title>Kassa GraphQL (${environment})</title>`);
      // No URL to any host at all in the markup: the page names only relative paths.
      expect(html).not.toMatch(/https?:\/\//);
      const pageUrl = new URL(`${base}/graphql`);
      const references = referencedUrls(html);
      expect(references.map((r) => r.tag).sort()).toEqual(['link', 'link', 'script']);
      for (const { tag, url } of references) {
        const resolved = new URL(url, pageUrl);
        expect(resolved.origin, url).toBe(pageUrl.origin);
        const asset = await fetch(resolved);
        expect(asset.status, url).toBe(200);
        const body = Buffer.from(await asset.arrayBuffer());
        expect(body.length, url).toBeGreaterThan(0);
        expect(asset.headers.get('x-content-type-options')).toBe('nosniff');
        const type = asset.headers.get('content-type');
        if (tag === 'script') expect(type).toBe('text/javascript; charset=utf-8');
        else if (url.endsWith('.css')) expect(type).toBe('text/css; charset=utf-8');
        else expect(type).toBe('image/x-icon');
      }
      // The stylesheet links and the script are the page's only external resources; the rest is inline data.
      expect(html.match(/<script\b/g)).toHaveLength(2);
      expect(html).toMatch(/<script type="application\/json" id="graphiql-options">\{"title":"Kassa GraphQL \(\w+\)"\}<\/script>/);
      expect(html).not.toMatch(/<style\b|\sstyle="|\son\w+="/);
    });
  }

  test('its CSP allows this origin and data: fonts and images, nothing else, and no inline script', async () => {
    const { response } = await fetchPage(t.server.base());
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toBeTruthy();
    const policy = directives(csp);
    expect(Object.fromEntries(policy)).toEqual({
      'default-src': ["'none'"],
      'script-src': ["'self'"],
      'style-src': ["'self'", "'unsafe-inline'"],
      'font-src': ['data:'],
      'img-src': ["'self'", 'data:'],
      'connect-src': ["'self'"],
      'worker-src': ["'self'"],
      'form-action': ["'none'"],
      'frame-ancestors': ["'none'"],
      'base-uri': ["'none'"],
    });
    expect(csp.replace("style-src 'self' 'unsafe-inline'", '')).not.toMatch(/unsafe-|https?:|\*/);
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
  });

  test('the editor workers Monaco asks for are served too, and assets are cached by name and gzipped', async () => {
    const { html } = await fetchPage(t.server.base());
    const pageUrl = new URL(`${t.server.base()}/graphql`);
    const scriptUrl = new URL(/<script src="([^"]+)"/.exec(html)![1], pageUrl);
    const script = await (await fetch(scriptUrl)).text();
    const workers = JSON.parse(/var workers = (\{[^}]*\})/.exec(script)![1]) as Record<string, string>;
    expect(Object.keys(workers).sort()).toEqual(['editorWorkerService', 'graphql', 'json']);
    for (const name of Object.values(workers)) {
      const worker = await fetch(new URL(name, scriptUrl));
      expect(worker.status, name).toBe(200);
      expect(worker.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    }
    const zipped = await fetch(scriptUrl, { headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expect(zipped.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const etag = zipped.headers.get('etag')!;
    expect((await fetch(scriptUrl, { headers: { 'if-none-match': etag } })).status).toBe(304);
    // fetch undoes the gzip: the same script either way.
    expect(await zipped.text()).toBe(script);
  });

  test('an unknown asset name is no asset, and the endpoint still answers GraphQL requests', async () => {
    const missing = await fetch(`${t.server.base()}/graphiql/graphiql.0000000000000000.js`);
    expect(missing.status).toBe(404);
    const traversal = await fetch(`${t.server.base()}/graphiql/..%2Fpackage.json`);
    expect(traversal.status).toBe(404);
    const json = await fetch(`${t.server.base()}/graphql?query=${encodeURIComponent('{ __typename }')}`, { headers: { accept: 'application/json' } });
    expect(json.status).toBe(200);
    expect(await json.json()).toEqual({ data: { __typename: 'Query' } });
  });

  test('is shown only to a client that weighs HTML highest, and answers HEAD with its headers alone', async () => {
    const url = `${t.server.base()}/graphql?query=${encodeURIComponent('{ __typename }')}`;
    const refusedHtml = await fetch(url, { headers: { accept: 'text/html;q=0, application/json' } });
    expect(refusedHtml.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await refusedHtml.json()).toEqual({ data: { __typename: 'Query' } });
    const jsonFirst = await fetch(url, { headers: { accept: 'application/json, text/html;q=0.5' } });
    expect(jsonFirst.headers.get('content-type')).toMatch(/^application\/json/);
    const head = await fetch(`${t.server.base()}/graphql`, { method: 'HEAD', headers: { accept: 'text/html' } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await head.text()).toBe('');
  });
});

describe('GraphiQL in Chromium, offline, with the CSP enforced', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());

  test('loads the schema and runs a query; nothing leaves the origin and nothing is refused', async () => {
    // The CSP is not bypassed here (unlike the pages' axe-core runs): a violation would show.
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    context.setDefaultTimeout(20_000);
    const page = await context.newPage();
    const origin = new URL(t.server.url).origin;
    const foreign: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
      foreign.push(url);
      return route.abort();
    });
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    await page.addInitScript(() => {
      document.addEventListener('securitypolicyviolation', (event) => {
        console.error(`Refused to load: ${event.violatedDirective} ${event.blockedURI}`);
      });
    });
    // The schema arrives over this origin (GraphiQL's introspection query) as the page opens.
    const introspected = page.waitForResponse((r) => r.url().endsWith('/sandbox/v1/graphql') && (r.request().postData() ?? '').includes('__schema'));
    await page.goto(`${t.server.base('sandbox')}/graphql`);
    const introspection = await introspected;
    expect(introspection.status()).toBe(200);
    expect((await introspection.json()).data.__schema.queryType).toMatchObject({ name: 'Query' });
    // Type a query into the editor (Monaco, running its workers from this origin) and run it.
    const editor = page.locator('.graphiql-query-editor .monaco-editor').first();
    await editor.click();
    await page.keyboard.press('ControlOrMeta+A');
    // The editor closes the brace itself.
    await page.keyboard.type('{ __typename');
    // Closes the editor's suggestions (the schema's fields: the graphql worker is running).
    await page.locator('.suggest-widget').getByText('__typename').first().waitFor();
    await page.keyboard.press('Escape');
    const answered = page.waitForResponse((r) => r.url().endsWith('/sandbox/v1/graphql') && r.request().method() === 'POST' && !(r.request().postData() ?? '').includes('__schema'));
    await page.getByRole('button', { name: /Execute query/i }).click();
    const response = await answered;
    expect(JSON.parse(response.request().postData()!).query).toMatch(/^\{ ?__typename ?\}$/);
    expect(await response.json()).toEqual({ data: { __typename: 'Query' } });
    await page.locator('.graphiql-response').getByText('"Query"').waitFor();
    await page.screenshot({ path: `${screenshots}/graphiql-sandbox.png` });
    expect(foreign).toEqual([]);
    expect(violations).toEqual([]);
    await context.close();
  });
});

