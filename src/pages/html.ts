// Server-rendered pages: plain HTML forms that work without JavaScript, one small stylesheet
// (inline, allowed by its hash), and headers that forbid framing, scripts and foreign resources.
// A page that must run a script (the checkout's card field when Stripe takes the payments) names
// it in `scripts`: its inline scripts are allowed by their hashes, never by 'unsafe-inline', and
// only that page's policy admits the other origins it lists.
import { createHash } from 'node:crypto';
import type { EnvironmentName } from '../config.ts';
import type { OAuthResponse } from '../oauth/http.ts';

const style = `
:root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #0a58ca; --danger: #b42318; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f6f8fa; }
main { max-width: 28rem; margin: 2rem auto; padding: 1.5rem; background: #fff; border: 1px solid var(--line); border-radius: 8px; }
h1 { font-size: 1.4rem; margin: 0 0 1rem; }
p { margin: 0 0 1rem; }
.muted { color: var(--muted); }
.banner { background: #fff3cd; color: #5c4400; text-align: center; padding: .5rem; font-weight: 600; border-bottom: 1px solid #e0c36a; }
label { display: block; font-weight: 600; margin: 0 0 .25rem; }
input[type=email], input[type=password], input[type=text], input[type=number], input[type=date], select, textarea { width: 100%; padding: .6rem; border: 1px solid var(--line); border-radius: 6px; font: inherit; margin-bottom: 1rem; }
fieldset { border: 1px solid var(--line); border-radius: 6px; margin: 0 0 1rem; padding: .75rem; }
legend { font-weight: 600; padding: 0 .25rem; }
.choice { display: flex; gap: .5rem; align-items: center; margin: .25rem 0; }
.choice label { font-weight: 400; margin: 0; }
ul.scopes { padding-left: 1.25rem; margin: 0 0 1rem; }
.actions { display: flex; gap: .75rem; flex-wrap: wrap; }
button { font: inherit; padding: .6rem 1.2rem; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; }
button.secondary { background: #fff; color: var(--accent); }
button.link { background: none; border: 0; padding: 0; color: var(--accent); text-decoration: underline; }
select { width: 100%; padding: .6rem; border: 1px solid var(--line); border-radius: 6px; font: inherit; margin-bottom: 1rem; background: #fff; }
table.summary { width: 100%; border-collapse: collapse; margin: 0 0 1rem; }
table.summary th { text-align: left; font-weight: 400; padding: .35rem 0; }
table.summary td { text-align: right; padding: .35rem 0; white-space: nowrap; }
table.summary tr.total th, table.summary tr.total td { font-weight: 600; border-top: 1px solid var(--line); }
:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
.items { list-style: none; padding: 0; margin: 0 0 1rem; }
.item { border-top: 1px solid var(--line); padding: .75rem 0; }
.item form { margin-top: .5rem; }
h2 { font-size: 1.1rem; margin: 1.5rem 0 .5rem; }
h3 { font-size: 1rem; margin: 1rem 0 .5rem; }
code { font-size: .9rem; word-break: break-all; }
.answers { margin: .5rem 0 0; }
.answers div { display: flex; gap: .25rem; }
.answers dt { font-weight: 600; }
.answers dd { margin: 0; }
.notice { background: #ecfdf3; border: 1px solid #abefc6; border-radius: 6px; padding: .6rem; margin: 0 0 1rem; }
.error { color: var(--danger); background: #fef3f2; border: 1px solid #fecdca; border-radius: 6px; padding: .6rem; margin: 0 0 1rem; }
@media (max-width: 30rem) { main { margin: 0; border: 0; border-radius: 0; min-height: 100vh; } }
`;
const styleSource = hashSource(style);

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for HTML content and attribute values. */
export function escape(value: string): string {
  return value.replace(/[&<>"']/g, (c) => entities[c]);
}

/** A template tag that escapes every interpolated value, except values already made with `html`. */
export class Html {
  constructor(readonly value: string) {}
  toString() {
    return this.value;
  }
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0];
  values.forEach((value, i) => {
    const part = Array.isArray(value) ? value.map((v) => (v instanceof Html ? v.value : escape(String(v)))).join('') : value instanceof Html ? value.value : value === null || value === undefined || value === false ? '' : escape(String(value));
    out += part + strings[i + 1];
  });
  return new Html(out);
}

/** What a page runs. Every other page runs no script, and its policy admits no other origin. */
export interface PageScripts {
  /** Scripts loaded, in order, from another origin that requires serving them itself (Stripe.js). */
  external: string[];
  /** The page's own scripts, run after the external ones: each allowed by its SHA-256 hash. */
  inline: string[];
  /** Other origins the policy admits, by directive: scripts (with those of `external`), frames, and the scripts' requests. */
  origins: { script: string[]; frame: string[]; connect: string[] };
}

/** A CSP hash source of a script or stylesheet: the exact text between its tags. */
export function hashSource(text: string): string {
  return `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
}

export interface PageOptions {
  title: string;
  environment: EnvironmentName;
  status?: number;
  /** Origins a form on the page may submit to, or be redirected to after submitting, besides the page's own. */
  formTargets?: string[];
  headers?: Record<string, string | string[]>;
  scripts?: PageScripts;
}

/** A complete page with its security headers. */
export function page(body: Html, options: PageOptions): OAuthResponse {
  const scriptTags = [...(options.scripts?.external ?? []).map((src) => html`<script src="${src}"></script>\n`), ...(options.scripts?.inline ?? []).map((script) => html`<script>${new Html(script)}</script>\n`)];
  const banner = options.environment === 'sandbox' ? html`<div class="banner" role="note">Sandbox: test data only, no real money moves.</div>` : html``;
  const document = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${options.title} · Kassa</title>
<style>${new Html(style)}</style>
</head>
<body>
${banner}
<main>
${body}
</main>
${scriptTags}</body>
</html>`;
  const formAction = ["'self'", ...(options.formTargets ?? [])].join(' ');
  const scripts = options.scripts;
  const scriptPolicy = scripts
    ? `; script-src ${[...scripts.inline.map(hashSource), ...scripts.origins.script].join(' ')}` +
      (scripts.origins.frame.length ? `; frame-src ${scripts.origins.frame.join(' ')}` : '') +
      (scripts.origins.connect.length ? `; connect-src ${scripts.origins.connect.join(' ')}` : '')
    : '';
  return {
    status: options.status ?? 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': `default-src 'none'; style-src ${styleSource}; img-src 'self'; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'${scriptPolicy}`,
      'x-frame-options': 'DENY',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      ...options.headers,
    },
    body: document.value,
  };
}
