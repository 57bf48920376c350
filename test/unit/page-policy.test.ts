import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { html, page } from '../../src/pages/html.ts';

const styleHash = /^'sha256-[A-Za-z0-9+/]+={0,2}'$/;

describe('the pages’ Content-Security-Policy', () => {
  it('a page that names no scripts runs none and admits no other origin', () => {
    const shown = page(html`<p>Hello</p>`, { title: 'Plain', environment: 'production', formTargets: ['https://shop.example'] });
    const policy = String(shown.headers!['content-security-policy']);
    const [defaults, style, ...rest] = policy.split('; ');
    expect(defaults).toBe("default-src 'none'");
    expect(style.replace('style-src ', '')).toMatch(styleHash);
    expect(rest).toEqual(["img-src 'self'", "form-action 'self' https://shop.example", "frame-ancestors 'none'", "base-uri 'none'"]);
    expect(String(shown.body)).not.toContain('<script');
  });

  it('a page that names scripts loads the external ones first, and allows its inline ones by hash, never by unsafe-inline', () => {
    const inline = "document.body.dataset.ran = 'yes';";
    const shown = page(html`<p>Pay</p>`, {
      title: 'Scripted',
      environment: 'sandbox',
      scripts: { external: ['https://js.example/v1/'], inline: [inline], origins: { script: ['https://js.example'], frame: ['https://frames.example'], connect: [] } },
    });
    const policy = String(shown.headers!['content-security-policy']);
    const hash = `'sha256-${createHash('sha256').update(inline).digest('base64')}'`;
    expect(policy.endsWith(`; base-uri 'none'; script-src ${hash} https://js.example; frame-src https://frames.example`)).toBe(true);
    expect(policy).not.toContain('unsafe');
    expect(policy).not.toContain('connect-src');
    expect(String(shown.body)).toContain(`</main>\n<script src="https://js.example/v1/"></script>\n<script>${inline}</script>\n</body>`);
  });
});
