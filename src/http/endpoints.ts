// Answering a request: each kind of endpoint the router names (http/router.ts) has one handler,
// and the table of handlers is complete by its type, so a kind without a handler does not compile.
// server.ts builds the table from the handlers in http/handlers/, each given only what it uses.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { YogaServerInstance } from 'graphql-yoga';
import type { EnvironmentName } from '../config.ts';
import type { Context, Environment } from '../context.ts';
import { rateLimitHeaders, refusalBody, type RateLimiter, type Verdict } from '../rate-limits/limiter.ts';
import type { RestHandler } from '../rest/adapter.ts';
import type { RequestTarget } from './incoming.ts';
import { requestFacts, type RequestFacts } from './request.ts';
import type { Endpoint } from './router.ts';
import { send } from './send.ts';

export type EndpointKind = Endpoint['kind'];
export type EndpointOf<K extends EndpointKind> = Extract<Endpoint, { kind: K }>;

/** One request on its way to an answer. */
export interface Exchange<E extends Endpoint = Endpoint> {
  req: IncomingMessage;
  res: ServerResponse;
  endpoint: E;
  url: RequestTarget;
  requestId: string;
  clientIp: string;
  /** What the headers say, read once here and handed on: nothing below reads a header. */
  facts: RequestFacts;
}

export type EndpointHandler<K extends EndpointKind> = (exchange: Exchange<EndpointOf<K>>) => Promise<void>;

/** A handler for every kind of endpoint. */
export type EndpointHandlers = { [K in EndpointKind]: EndpointHandler<K> };

/** What the edge uses of a served environment. */
export interface EdgeEnvironment {
  environment: Environment;
  yoga: YogaServerInstance<Context, object>;
  rest: RestHandler;
  limiter: RateLimiter;
}

export type EdgeEnvironments = Record<EnvironmentName, EdgeEnvironment>;

/** Operators' probes are answered before the address is charged: polling them is never refused. */
const probes: ReadonlySet<EndpointKind> = new Set(['health', 'readiness']);

/** Answers each request with its endpoint's handler, once the request's address is admitted. */
export function answerEndpoints(handlers: EndpointHandlers, edge: { environments: EdgeEnvironments; clock: () => Date }): (exchange: Omit<Exchange, 'facts'>) => Promise<void> {
  return async (exchange) => {
    const { endpoint, res } = exchange;
    const handler = handlers[endpoint.kind] as (exchange: Exchange) => Promise<void>;
    const facts = requestFacts(exchange.req.headers);
    if (!probes.has(endpoint.kind)) {
      // Every request counts against its address first, before any work is done for it.
      const { limiter } = edge.environments['environment' in endpoint ? endpoint.environment : 'production'];
      if (!admitted(res, limiter, await limiter.charge([limiter.ip(exchange.clientIp)], edge.clock().getTime()))) return;
    }
    return handler({ ...exchange, facts });
  };
}

/** Sets the RateLimit-* headers of the verdict; answers a refusal and returns false. */
export function admitted(res: ServerResponse, limiter: RateLimiter, verdict: Verdict): boolean {
  if (verdict.allowed) {
    for (const [name, value] of Object.entries(rateLimitHeaders(verdict.state))) res.setHeader(name, value);
    return true;
  }
  send(res, refusalBody(limiter, verdict));
  return false;
}
