// The request context: built once per request, the same for GraphQL and REST. Services read it;
// nothing below http/ reads HTTP headers. Principals come from credentials in auth/principals.ts.
import type { RateMeter } from './rate-limits/graphql.ts';
import type { RunOperation } from './graphql/in-process.ts';
import type { Config, EnvironmentName } from './config.ts';
import type { Db } from './db/client.ts';
import type { LiveEvents } from './events/live.ts';
import type { EmailTransport } from './email/transport.ts';
import type { PaymentProcessor } from './modules/payments/processor.ts';
import type { WireRenderer } from './wire/render.ts';
import type { PrincipalCache } from './auth/principal-cache.ts';
import type { EnvironmentMetrics } from './observability/metrics.ts';
import { type Scope, allScopes } from './auth/scopes.ts';

export interface Environment {
  name: EnvironmentName;
  prisma: Db;
  config: Config;
  /** Charges payments; null where no processor is configured (checkouts that need payment are refused). */
  paymentProcessor: PaymentProcessor | null;
  /** Where this environment is reached from outside, e.g. `https://pay.example.com/sandbox`. */
  publicUrl: string;
  /** Principals of tokens already resolved (see principal-cache.ts for why it is exact). */
  principals: PrincipalCache;
  /** The live stream of the environment's committed events (GraphQL `coreEvents`). */
  live: LiveEvents;
  /** Sends the environment's email (EMAIL_TRANSPORT). */
  email: EmailTransport;
  /** Renders a resource's documented JSON by name (wire/render.ts), for event payloads. */
  wire: WireRenderer;
  /** Counts what the environment's subsystems do, for the operators' metrics (observability/metrics.ts). */
  metrics: EnvironmentMetrics;
  /** Runs a GraphQL operation in-process (the hosted pages are clients of the schema); set once the schema is served. */
  graphql?: RunOperation;
}

/**
 * How a Core principal proved itself: an organization access token, a user's sign-in session, a
 * personal access token, or an OAuth access token a client obtained for the user.
 */
export type Credential = 'oat' | 'session' | 'pat' | 'oauth';

export type Principal =
  | { kind: 'anonymous' }
  /** An organization access token, or an OAuth token scoped to one organization (`userId`: who granted it). */
  | { kind: 'organization'; organizationId: string; credential: 'oat' | 'oauth'; tokenId: string; clientId: string | null; userId: string | null; scopes: ReadonlySet<Scope> }
  /** A user, for every organization they belong to: signed in, or through a personal or user-scoped OAuth token. */
  | { kind: 'user'; userId: string; credential: 'session' | 'pat' | 'oauth'; tokenId: string; clientId: string | null; organizationIds: string[]; scopes: ReadonlySet<Scope> }
  /** `checkoutId`: a session handed to a checkout's buyer, which reaches only what that checkout bought. */
  | { kind: 'customer'; customerId: string; organizationId: string; sessionId: string; checkoutId: string | null; scopes: ReadonlySet<Scope> }
  /** Kassa itself acting for an organization (rendering event payloads, background jobs); never from a token. */
  | { kind: 'system'; organizationId: string; scopes: ReadonlySet<Scope> };

export interface Context {
  environment: Environment;
  prisma: Db;
  principal: Principal;
  requestId: string;
  clientIp: string;
  now(): Date;
  /** Set for a GraphQL request over HTTP: its operation is charged by cost (REST is charged per request). */
  rateLimit?: RateMeter;
  /**
   * Set by REST: input values its wire format names that GraphQL does not offer, by input path
   * (`input.recurringInterval`). The operation saw a stand-in; see graphql/wire-values.ts.
   */
  wireOnlyValues?: ReadonlyMap<string, string>;
}

/** The context Kassa acts in on its own, for one organization: background jobs, event rendering. */
export function systemContext(environment: Environment, prisma: Db, organizationId: string, now: () => Date, requestId: string): Context {
  return { environment, prisma, principal: { kind: 'system', organizationId, scopes: new Set(allScopes) }, requestId, clientIp: '', now };
}
