// Stripe sends the events of an environment's Stripe account here (integrations/stripe-webhook.ts
// checks the signature over the raw body and applies each event once).
import { receiveStripeWebhook } from '../../integrations/stripe-webhook.ts';
import type { Logger } from '../../logger.ts';
import { restError } from '../../rest/adapter.ts';
import type { EdgeEnvironments, EndpointHandler } from '../endpoints.ts';
import { maxBodyBytes, readBody, singleHeader } from '../incoming.ts';
import { send } from '../send.ts';

export function answerStripeWebhook(deps: { environments: EdgeEnvironments; clock: () => Date; logger: Logger }): EndpointHandler<'stripe-webhook'> {
  return async ({ req, res, endpoint, requestId }) => {
    const body = await readBody(req);
    if (body === null) return send(res, restError(413, 'PayloadTooLarge', `The request body exceeds ${maxBodyBytes} bytes.`));
    const delivery = { body, signature: singleHeader(req, 'stripe-signature'), requestId };
    send(res, await receiveStripeWebhook(deps.environments[endpoint.environment].environment, delivery, deps.clock, deps.logger));
  };
}
