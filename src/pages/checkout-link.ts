// What a visitor of a checkout link sees when the link opens no checkout: it does not exist or was
// deleted (404), or nothing it offers can be bought any more (410). A link that opens a checkout
// redirects to the checkout page (pages/checkout.ts) instead; http/handlers/checkout-link.ts decides.
import type { Environment } from '../context.ts';
import type { OAuthResponse } from '../oauth/http.ts';
import { html, page } from './html.ts';

export function checkoutLinkNotFoundPage(environment: Environment): OAuthResponse {
  return page(html`<h1>Link not found</h1><p>This checkout link does not exist or was removed by the seller. Ask the seller for a new one.</p>`, {
    title: 'Link not found',
    environment: environment.name,
    status: 404,
  });
}

export function checkoutLinkUnavailablePage(environment: Environment, detail: string): OAuthResponse {
  return page(html`<h1>No longer available</h1><p class="error" role="alert">${detail}</p><p>Nothing was charged. Ask the seller for a new link.</p>`, {
    title: 'No longer available',
    environment: environment.name,
    status: 410,
  });
}
