// /v1/graphql: GraphiQL's page for a browser, else the GraphQL endpoint, answered by the
// environment's yoga with the request's context.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from '../../context.ts';
import { StreamSlots, streamHolder, streamRefusal } from '../../events/stream-slots.ts';
import { KassaError } from '../../graphql/errors.ts';
import { inOrderOfPreference, prefersHtml } from '../../graphql/media-types.ts';
import { graphiqlPage } from '../../pages/graphiql.ts';
import type { RateMeter } from '../../rate-limits/graphql.ts';
import { restError } from '../../rest/adapter.ts';
import type { EdgeEnvironments, EndpointHandler } from '../endpoints.ts';
import { maxBodyBytes, singleHeader } from '../incoming.ts';
import { requestContext } from '../principal.ts';
import { send, sendGraphiql, sendGraphqlErrors } from '../send.ts';

export function answerGraphql(deps: { environments: EdgeEnvironments; clock: () => Date; streamSlots: StreamSlots }): EndpointHandler<'graphql'> {
  return async (exchange) => {
    const { req, res, endpoint, clientIp } = exchange;
    const served = deps.environments[endpoint.environment];
    const method = req.method ?? 'GET';
    if ((method === 'GET' || method === 'HEAD') && prefersHtml(singleHeader(req, 'accept'))) {
      return sendGraphiql(res, await graphiqlPage(`Kassa GraphQL (${served.environment.name})`), method === 'HEAD');
    }
    if (req.headers.accept !== undefined) {
      const preferred = inOrderOfPreference(req.headers.accept);
      // Every media range has weight 0: nothing the client accepts can be sent (RFC 9110 §15.5.7).
      if (preferred === null) return send(res, { status: 406 });
      // Yoga reads no weights: it answers in the first type listed that it supports.
      req.headers.accept = preferred;
    }
    let context: Context;
    try {
      context = await requestContext(served.environment, exchange, deps.clock);
    } catch (error) {
      if (!(error instanceof KassaError)) throw error;
      return sendGraphqlErrors(res, error.status, [error], req.headers.accept);
    }
    if (req.method === 'POST') {
      // Yoga reads the body itself: its size is known up front, or the request is refused.
      const declared = req.headers['content-length'];
      if (declared === undefined) return send(res, restError(411, 'LengthRequired', 'Send the GraphQL request with a Content-Length header.'));
      if (Number(declared) > maxBodyBytes) return send(res, restError(413, 'PayloadTooLarge', `The request body exceeds ${maxBodyBytes} bytes.`));
    }
    if (/text\/event-stream/i.test(req.headers.accept ?? '')) {
      // The only streams served: each holds a slot until its response closes, however it closes.
      const slot = deps.streamSlots.take(streamHolder(served.environment.name, context.principal, clientIp));
      if (!slot.granted) return send(res, streamRefusal(slot));
      res.once('close', slot.release);
    }
    const meter: RateMeter = { limiter: served.limiter, clientIp, state: null, refused: false };
    const listener = served.yoga.requestListener as unknown as (req: IncomingMessage, res: ServerResponse, ctx: Context) => Promise<void>;
    return listener(req, res, { ...context, rateLimit: meter });
  };
}
