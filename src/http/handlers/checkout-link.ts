// A checkout link's public URL: each visit (GET, no token) opens a new checkout from the link and
// is sent to its page with a 303. Visits are counted per client address before any work, as each
// one writes a checkout; the rules are the checkout link service's (modules/checkout-links).
import { openCheckoutLink, type CheckoutLinkVisit } from '../../modules/checkout-links/service.ts';
import { checkoutLinkNotFoundPage, checkoutLinkUnavailablePage } from '../../pages/checkout-link.ts';
import type { EdgeEnvironments, EndpointHandler } from '../endpoints.ts';
import { admitted } from '../endpoints.ts';

/** Metadata a link's URL may carry, added to each checkout's: a reference and the campaign's UTM tags. */
const metadataParameters = ['reference_id', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term'];

/** What the query string fills in ahead: each value at most 500 characters, anything longer left out. */
function visitOf(query: URLSearchParams, clientIp: string, requestId: string): CheckoutLinkVisit {
  const value = (name: string) => {
    const given = query.get(name)?.trim();
    return given && given.length <= 500 ? given : null;
  };
  const metadata = Object.fromEntries(metadataParameters.flatMap((name) => (value(name) ? [[name, value(name)!]] : [])));
  return { customerEmail: value('customer_email'), customerName: value('customer_name'), discountCode: value('discount_code'), metadata, clientIp, requestId };
}

export function answerCheckoutLink(deps: { environments: EdgeEnvironments; clock: () => Date }): EndpointHandler<'checkout-link'> {
  return async ({ res, endpoint, url, clientIp, requestId }) => {
    const { environment, limiter } = deps.environments[endpoint.environment];
    if (!admitted(res, limiter, await limiter.charge([limiter.checkoutLink(clientIp)], deps.clock().getTime()))) return;
    const opening = await openCheckoutLink(environment, endpoint.clientSecret, visitOf(url.searchParams, clientIp, requestId), deps.clock());
    if (opening.outcome === 'opened') {
      // Each visit is a new checkout: the redirect must never be cached.
      res.writeHead(303, { location: opening.url, 'cache-control': 'no-store' }).end();
      return;
    }
    const answer = opening.outcome === 'not-found' ? checkoutLinkNotFoundPage(environment) : checkoutLinkUnavailablePage(environment, opening.detail);
    res.writeHead(answer.status, answer.headers).end(answer.body);
  };
}
