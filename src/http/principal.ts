// The request context of a GraphQL or REST request: its environment and the principal behind its
// bearer token (auth/principals.ts).
import type { Context, Environment } from '../context.ts';
import { resolvePrincipal } from '../auth/principals.ts';
import type { Exchange } from './endpoints.ts';
import { bearerToken } from './request.ts';

/** Throws the KassaError of a token that names no principal, for the caller to answer in its own format. */
export async function requestContext(environment: Environment, exchange: Exchange, clock: () => Date): Promise<Context> {
  const principal = await resolvePrincipal(environment, bearerToken(exchange.facts), clock());
  return { environment, prisma: environment.prisma, principal, requestId: exchange.requestId, clientIp: exchange.clientIp, now: clock };
}
