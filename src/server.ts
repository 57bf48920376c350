// Composes the HTTP service: for each environment (production at /v1, sandbox at /sandbox/v1) its
// own database, GraphQL endpoint and REST routes, its jobs and webhook worker; the router and the
// handler of each kind of endpoint (http/); then listens.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { GraphQLError, type ExecutionResult } from 'graphql';
import { createYoga, maskError as yogaMaskError, type Plugin as YogaPlugin } from 'graphql-yoga';
import { type Config, type EnvironmentName, environmentNames } from './config.ts';
import type { Context, Environment } from './context.ts';
import { createRouter } from './http/router.ts';
import { answerEndpoints, type EdgeEnvironment } from './http/endpoints.ts';
import { requestListener } from './http/listener.ts';
import { maxBodyBytes } from './http/incoming.ts';
import { answerApi } from './http/handlers/api.ts';
import { answerFileDownload, answerFilePart } from './http/handlers/files.ts';
import { answerGraphiqlAsset } from './http/handlers/graphiql-asset.ts';
import { answerGraphql } from './http/handlers/graphql.ts';
import { answerInvoicePdf } from './http/handlers/invoice-pdf.ts';
import { answerCheckoutLink } from './http/handlers/checkout-link.ts';
import { answerNowhere } from './http/handlers/nowhere.ts';
import { answerHealth, answerReadiness } from './http/handlers/probes.ts';
import { answerMetrics, metricsListener } from './http/handlers/metrics.ts';
import { routeLabels } from './http/route-labels.ts';
import { answerProvider } from './http/handlers/provider.ts';
import { answerSecretScanning } from './http/handlers/secret-scanning.ts';
import { answerStripeWebhook } from './http/handlers/stripe-webhook.ts';
import { openDatabase, type Database } from './db/client.ts';
import { migrate } from './db/migrate.ts';
import { useNulCharacterGuard } from './graphql/text.ts';
import { graphqlAnswerType } from './graphql/media-types.ts';
import { useInputNestingLimit } from './graphql/nesting.ts';
import { useVariableDefaults } from './graphql/variable-defaults.ts';
import { inProcess } from './graphql/in-process.ts';
import { useCompiledQueries } from './graphql/compiled-queries.ts';
import { useOperationMetrics } from './graphql/operation-metrics.ts';
import { refusedVariable, useVariableLimits } from './graphql/variable-limits.ts';
import { DocumentCache } from './graphql/document-cache.ts';
import { checkTrustedDocuments, persistedDocuments, type PersistedDocuments } from './graphql/persisted-documents.ts';
import { createProvider } from './oauth/provider.ts';
import { authorizeRoutes } from './oauth/authorize.ts';
import { discoveryRoutes } from './oauth/discovery.ts';
import { introspectRoutes } from './oauth/introspect.ts';
import { registrationRoutes } from './oauth/registration.ts';
import { revokeRoutes } from './oauth/revoke.ts';
import { tokenRoutes } from './oauth/token.ts';
import { userinfoRoutes } from './oauth/userinfo.ts';
import { checkoutPages } from './pages/checkout.ts';
import { portalPages } from './pages/portal.ts';
import { signInPages } from './pages/sign-in.ts';
import { signUpPages } from './pages/sign-up.ts';
import { isProviderPath } from './oauth/routes.ts';
import { activeSigningKey, ensureSigningKey } from './oauth/signing-keys.ts';
import { useRateLimits } from './rate-limits/graphql.ts';
import { usePartialDataStatus } from './graphql/partial-data.ts';
import { RateLimiter } from './rate-limits/limiter.ts';
import { MemoryStore, RedisStore } from './rate-limits/store.ts';
import { schema } from './graphql/schema.ts';
import { createWireRenderer } from './wire/render.ts';
import { requestScope, type Logger } from './logger.ts';
import { compileRoutes, createRestHandler } from './rest/adapter.ts';
import { restRoutes } from './rest/routes/index.ts';
import { withIdempotency } from './rest/idempotency.ts';
import { databaseIdempotencyStore } from './db/idempotency-store.ts';
import { openApiDocument, type OpenApiDocument } from './rest/openapi.ts';
import type { CompiledRoute } from './rest/route.ts';
import { ApiReference, documentPath, pagePath } from './rest/reference.ts';
import { TestPaymentProcessor, type PaymentProcessor } from './modules/payments/processor.ts';
import { StripePaymentProcessor, stripeClient } from './modules/payments/stripe.ts';
import { createEmailTransport } from './email/transport.ts';
import { JobRunner } from './jobs/runner.ts';
import { WebhookWorker } from './webhooks/worker.ts';
import { LiveEvents } from './events/live.ts';
import { StreamSlots } from './events/stream-slots.ts';
import { graphiqlAssetPrefix } from './pages/graphiql.ts';
import { PrincipalCache, listenForPrincipalChanges } from './auth/principal-cache.ts';
import { backgroundWork } from './background.ts';
import { Metrics } from './observability/metrics.ts';
import { readBacklog } from './observability/backlog.ts';
import { serveControlSocket } from './backup/control.ts';

/** Which endpoint a request is for (http/router.ts). */
const route = createRouter({ isProviderPath, graphiqlAssetPrefix });

/** The OAuth provider's endpoints and the hosted pages, by method and path. */
const providerRoutes = [
  ...authorizeRoutes,
  ...tokenRoutes,
  ...revokeRoutes,
  ...introspectRoutes,
  ...registrationRoutes,
  ...userinfoRoutes,
  ...discoveryRoutes,
  ...signInPages,
  ...signUpPages,
  ...checkoutPages,
  ...portalPages,
];
const provider = createProvider(providerRoutes);

/** Event payloads of both environments, rendered from the served schema. */
const renderWire = createWireRenderer(schema);

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

export interface KassaOptions {
  /** The clock every request reads; tests move it. */
  clock?: () => Date;
  /** What `memory://` embedded databases start from (see `migratedMemoryImage` in db/client.ts). */
  memoryImage?: ArrayBuffer;
}

/** An environment as served: what its endpoints use (http/endpoints.ts), and what runs beside them. */
interface ServedEnvironment extends EdgeEnvironment {
  database: Database;
  jobs: JobRunner;
  /** Sends the environment's events to its webhook endpoints. */
  webhooks: WebhookWorker;
  /** Documents GraphQL requests may name by hash: the trusted list and what clients registered here. */
  persisted: PersistedDocuments;
  base: string;
}

export interface Kassa {
  server: Server;
  url: string;
  /** Where the metrics listener (METRICS_PORT) answers, e.g. `http://127.0.0.1:9464`; null without one. */
  metricsUrl: string | null;
  environments: Record<EnvironmentName, ServedEnvironment>;
  close(): Promise<void>;
}

export async function openEnvironment(name: EnvironmentName, config: Config, logger: Logger, metrics: Metrics, clock: () => Date = () => new Date(), memoryImage?: ArrayBuffer): Promise<{ environment: Environment; database: Database }> {
  const database = await openDatabase(config.databases[name], logger.child({ environment: name }), clock, memoryImage);
  const applied = await migrate(database.migrationTarget);
  if (applied.length) logger.info({ environment: name, migrations: applied }, 'applied migrations');
  const paymentProcessor = await processorFor(name, config);
  const publicUrl = config.publicUrl ? `${config.publicUrl}${name === 'sandbox' ? '/sandbox' : ''}` : '';
  const databaseConfig = config.databases[name];
  // The embedded database is this process's alone; on PostgreSQL other processes may end tokens.
  const principals = new PrincipalCache(10_000, databaseConfig.kind === 'embedded');
  const stopListening = databaseConfig.kind === 'postgres' ? listenForPrincipalChanges(database.notifications, principals) : () => {};
  const close = database.close.bind(database);
  const live = new LiveEvents(name, config.redisUrl, logger);
  const email = createEmailTransport(config.email, logger.child({ environment: name }));
  const recorders = metrics.environment(name, { backlog: () => readBacklog(database.prisma, clock()), connections: database.connections, now: clock });
  const environment: Environment = { name, prisma: database.prisma, config, paymentProcessor, publicUrl, principals, live, email, wire: renderWire, metrics: recorders };
  await ensureSigningKey(environment, new Date());
  // Said at start, not first at the first sign-in: no configured key opens the private signing key.
  await activeSigningKey(environment).catch((error: Error) =>
    logger.error({ environment: name, err: error }, 'the ID token signing key cannot be decrypted: ID tokens cannot be issued until SECRETS_KEY_PREVIOUS lists the key it was stored under (or `kassa signing-keys rotate` replaces it)'),
  );
  return {
    environment,
    database: {
      ...database,
      async close() {
        await live.close();
        await email.close();
        stopListening();
        await close();
      },
    },
  };
}

/** The environment's payment processor, as configured (config.ts checks Stripe's keys). */
async function processorFor(name: EnvironmentName, config: Config): Promise<PaymentProcessor | null> {
  const stripe = config.stripe[name];
  if (config.paymentProcessors[name] === 'stripe' && stripe) return new StripePaymentProcessor(await stripeClient(stripe), stripe);
  return config.paymentProcessors[name] === 'test' ? new TestPaymentProcessor(config.testCardDelayMs) : null;
}

let compiledRest: { routes: CompiledRoute[]; document: OpenApiDocument } | undefined;

/**
 * The REST routes compiled against the schema, and their OpenAPI document: both depend only on the
 * code, so a process that starts several servers (the tests) builds them once. Neither is changed
 * after it is built.
 */
function compiledRestApi() {
  if (!compiledRest) {
    const routes = compileRoutes(schema, restRoutes);
    compiledRest = { routes, document: openApiDocument(schema, routes, { version, maxBodyBytes }) };
  }
  return compiledRest;
}

/** The REST layer's OpenAPI document, without its server (rest/openapi.ts). */
export function restApiDocument(): OpenApiDocument {
  return compiledRestApi().document;
}

export async function startKassa(config: Config, logger: Logger, options: KassaOptions = {}): Promise<Kassa> {
  const clock = options.clock ?? (() => new Date());
  // Built before listening: a route or type the generator cannot describe stops the start.
  const { routes, document } = compiledRestApi();
  const reference = new ApiReference(document);
  const maskError = (error: unknown, message: string) => {
    const masked = yogaMaskError(error, message, false);
    if (masked === error) return masked;
    logger.error({ err: innermost(error) }, 'unexpected error');
    const requestId = requestScope.getStore()?.requestId;
    return new GraphQLError(masked.message, { ...(masked as GraphQLError), extensions: { ...(masked as GraphQLError).extensions, requestId } });
  };

  // Before anything is opened: a trusted document the schema refuses stops the start.
  checkTrustedDocuments(schema, config.persistedDocuments.trusted);
  const environments = {} as Record<EnvironmentName, ServedEnvironment>;
  // One store for both environments; their keys differ, so they never share a budget.
  const rateLimitStore = config.redisUrl ? new RedisStore(config.redisUrl, logger) : new MemoryStore();
  const metrics = new Metrics({ onSourceFailure: (environment, error) => logger.warn({ err: error, environment }, 'the metrics could not read the backlog') });
  const opened = await Promise.all(environmentNames.map((name) => openEnvironment(name, config, logger, metrics, clock, options.memoryImage)));
  const { trusted, trustedOnly } = config.persistedDocuments;
  if (trusted.size) logger.info({ documents: trusted.size, only: trustedOnly }, 'trusted GraphQL documents loaded');
  for (const { environment, database } of opened) {
    const name = environment.name;
    const base = name === 'production' ? '' : '/sandbox';
    // Each environment registers its own automatic persisted queries.
    const persisted = persistedDocuments(config.persistedDocuments);
    const yoga = createYoga<Context>({
      schema,
      graphqlEndpoint: `${base}/v1/graphql`,
      landingPage: false,
      // GraphiQL is served before yoga, from this origin (src/pages/graphiql.ts).
      graphiql: false,
      maskedErrors: { maskError },
      // Parsed documents and parse errors, by text: at most 1,000 of each and 16 MB of text.
      parserAndValidationCache: { documentCache: new DocumentCache(1000, 16 * 1024 * 1024), errorCache: new DocumentCache(1000, 16 * 1024 * 1024) },
      logging: yogaLogger(logger),
      plugins: [persisted.plugin, useInputNestingLimit(), useCompiledQueries(), useVariableDefaults(), useVariableLimits(), useRateLimits(config.graphqlLimits), useNulCharacterGuard(), useBearerChallenge(), useErrorCodes(), usePartialDataStatus(), useOperationMetrics()],
    });
    const background = { environment, prisma: environment.prisma, now: clock, logger: logger.child({ environment: name }) };
    const { notifications } = database;
    const jobs = new JobRunner(background, { pollMs: config.jobPollIntervalMs, batchSize: config.jobConcurrency, concurrency: config.jobConcurrency, lockMs: 60_000, notifications }, backgroundWork);
    const webhooks = new WebhookWorker(background, { pollMs: config.jobPollIntervalMs, dispatchBatch: 500, concurrency: config.webhooks.concurrency, notifications });
    // One in-process runner for the REST routes and the hosted pages.
    environment.graphql = inProcess(yoga.getEnveloped);
    const limiter = new RateLimiter(name, config.rateLimits, rateLimitStore, logger, environment.metrics);
    environments[name] = { environment, database, jobs, webhooks, yoga, persisted, rest: withIdempotency(createRestHandler(routes, environment.graphql), databaseIdempotencyStore), base, limiter };
  }

  let accepting = true;
  // The route each request is counted under in the metrics: its template, never its path.
  const routeOf = routeLabels({
    provider: providerRoutes,
    api: [...routes, { method: 'GET', path: documentPath }, { method: 'GET', path: pagePath }, { method: 'GET', path: `${pagePath}/{asset}` }],
    graphiqlAssetPrefix,
  });
  const api = answerApi({ environments, clock, reference });
  // Each kind of endpoint the router names (http/router.ts), and its handler (http/handlers/).
  const answer = answerEndpoints(
    {
      health: answerHealth,
      readiness: answerReadiness({ environments, accepting: () => accepting }),
      metrics: answerMetrics({ metrics, token: config.metrics.token }),
      nowhere: answerNowhere,
      provider: answerProvider({ environments, provider, clock, logger }),
      'secret-scanning': answerSecretScanning({ environments, clock }),
      'stripe-webhook': answerStripeWebhook({ environments, clock, logger }),
      'invoice-pdf': answerInvoicePdf({ environments, clock }),
      'checkout-link': answerCheckoutLink({ environments, clock }),
      'file-part': answerFilePart({ environments, clock }),
      'file-download': answerFileDownload({ environments, clock }),
      'graphiql-asset': answerGraphiqlAsset({ otherwise: api }),
      graphql: answerGraphql({ environments, clock, streamSlots: new StreamSlots(config.liveStreams) }),
      api,
    },
    { environments, clock },
  );
  // A client that has not sent its whole request within requestTimeoutMs is answered 408 and cut
  // off, so slow senders cannot hold connections open; the check runs every second.
  const server = createServer(
    { requestTimeout: config.requestTimeoutMs, connectionsCheckingInterval: 1000 },
    requestListener({
      route,
      answer,
      logger,
      trustedProxies: config.trustedProxies,
      accepting: () => accepting,
      answered: ({ method, endpoint, status, seconds, streamed }) =>
        metrics.httpRequest(method, routeOf(method, endpoint), status, 'environment' in endpoint ? endpoint.environment : 'none', streamed ? null : seconds),
    }),
  );

  // An idle connection is kept longer than clients and load balancers keep theirs (60 s is the
  // common proxy default), so the client is the side that closes it: a request sent on a connection
  // the server had just closed would fail with a reset.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = Math.min(66_000, config.requestTimeoutMs);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const metricsServer = config.metrics.listener ? createServer(metricsListener(metrics, logger)) : null;
  if (metricsServer && config.metrics.listener) {
    const { host: metricsHost, port: metricsPort } = config.metrics.listener;
    await new Promise<void>((resolve, reject) => {
      metricsServer.once('error', reject);
      metricsServer.listen(metricsPort, metricsHost, () => resolve());
    }).catch(async (error) => {
      await new Promise((resolve) => server.close(resolve));
      throw error;
    });
  }
  for (const name of environmentNames) {
    // The embedded database is this process's alone: claims left in it are a killed process's.
    if (config.databases[name].kind === 'embedded') {
      const released = await environments[name].jobs.releaseClaims();
      if (released) logger.warn({ environment: name, jobs: released }, 'released jobs a previous process left claimed');
    }
    environments[name].jobs.start();
    environments[name].webhooks.start();
  }
  // On the embedded database, `kassa backup` reads this process's databases through its control socket.
  const production = config.databases.production;
  const stopControlSocket =
    production.kind === 'embedded' && !production.dataDir.startsWith('memory://')
      ? await serveControlSocket(path.dirname(production.dataDir), { production: environments.production.database, sandbox: environments.sandbox.database }, logger).catch((error) => {
          logger.warn({ err: error }, 'the control socket could not be opened: `kassa backup` cannot read this server while it runs');
          return async () => {};
        })
      : async () => {};
  const listening = urlOf(server.address() as AddressInfo);
  for (const served of Object.values(environments)) served.environment.publicUrl ||= `${listening}${served.base}`;

  return {
    server,
    url: listening,
    metricsUrl: metricsServer ? urlOf(metricsServer.address() as AddressInfo) : null,
    environments,
    // Stops taking requests, lets the in-flight ones finish (up to the shutdown timeout), lets the
    // jobs in flight finish within the same timeout (one still running then is handed back to the
    // other processes) and the webhook deliveries in flight (a delivery is bounded by its timeout;
    // one cut short is retried once its claim lapses), then closes the databases.
    async close() {
      // One grace period for the whole shutdown: requests and jobs in flight share it.
      const graceEnds = Date.now() + config.shutdownTimeoutMs;
      accepting = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const metricsClosed = metricsServer ? new Promise<void>((resolve) => metricsServer.close(() => resolve())) : Promise.resolve();
      metricsServer?.closeAllConnections();
      // Open event streams would hold their connections until the shutdown timeout: end them.
      await Promise.all(environmentNames.map((name) => environments[name].environment.live.endStreams()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
      await closed;
      await metricsClosed;
      clearTimeout(timer);
      await Promise.all(environmentNames.flatMap((name) => [environments[name].jobs.stop(graceEnds - Date.now()), environments[name].webhooks.stop()]));
      await stopControlSocket();
      for (const name of environmentNames) await environments[name].database.close();
      await rateLimitStore.close();
    },
  };
}

/** The URL a listener is reached at; one listening on every address is reached on 127.0.0.1. */
function urlOf(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`;
}

/** Every 401 names the scheme that would be accepted (RFC 7235). */
function useBearerChallenge(): YogaPlugin {
  return {
    onResponse({ response }) {
      if (response.status === 401) response.headers.set('www-authenticate', 'Bearer');
    },
  };
}

/**
 * Every GraphQL error carries `extensions.code`: variable values the operation's types refuse get
 * BAD_USER_INPUT with their issue (graphql-js reports them without a code), and a body of a media type GraphQL is
 * not read from gets the error body, not yoga's empty 415. `variables` or `extensions` that are not
 * JSON, in a GET's query string or a form body, are the client's mistake (400 BAD_REQUEST), where
 * yoga's parsers let the SyntaxError through as an unexpected error (500).
 *
 * Statuses as GraphQL over HTTP sets them: a request without a document is no GraphQL-over-HTTP
 * request, 400 whatever the media type (yoga answers 200 under application/json); an operation that
 * cannot be determined is a request error like a validation error, 400 under
 * application/graphql-response+json and 200 under application/json (yoga answers 400 under both).
 */
function useErrorCodes(): YogaPlugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) return;
      setRequestParser(async (request) => {
        try {
          return await requestParser(request);
        } catch (error) {
          if (!(error instanceof SyntaxError)) throw error;
          const message = 'The "variables" or "extensions" parameter is not valid JSON: send each as a JSON object, URL-encoded.';
          throw new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
        }
      });
    },
    onParams({ params }) {
      // After the persisted documents plugin, which sets the text a hash names.
      if (params.query !== undefined && params.query !== null) return;
      const message = 'Send the GraphQL document as the "query" parameter, or a persisted query\'s hash as "extensions.persistedQuery".';
      throw new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });
    },
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result) return;
      const { errors } = result as ExecutionResult;
      const unresolved = (e: GraphQLError) => e.extensions?.code === 'OPERATION_RESOLUTION_FAILURE';
      if (!errors?.some(unresolved)) return;
      setResult({ ...result, errors: errors.map((e) => (unresolved(e) ? withExtensions(e, { http: { status: 400, spec: true } }) : e)) });
    },
    onExecute() {
      return {
        onExecuteDone({ result, setResult }) {
          // Refused variables fail the operation before any field runs, so they have no path; a
          // resolver's unexpected error has one, and is left to masking.
          const refusedVariables = (e: GraphQLError) => e.extensions?.code === undefined && e.path === undefined;
          if (Symbol.asyncIterator in result || !result.errors?.some(refusedVariables)) return;
          const errors = result.errors.map((e) => (refusedVariables(e) ? refusedVariable(e) : e));
          setResult({ ...result, errors });
        },
      };
    },
    onResponse({ request, response, setResponse, fetchAPI }) {
      if (response.status !== 415 || response.body !== null) return;
      const message = 'Send the GraphQL request as JSON with "Content-Type: application/json".';
      const headers = { 'content-type': graphqlAnswerType(request.headers.get('accept') ?? undefined) };
      setResponse(new fetchAPI.Response(JSON.stringify({ errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] }), { status: 415, headers }));
    },
  };
}

function withExtensions(error: GraphQLError, extensions: Record<string, unknown>): GraphQLError {
  const { nodes, source, positions, path, originalError } = error;
  return new GraphQLError(error.message, { nodes, source, positions, path, originalError, extensions: { ...error.extensions, ...extensions } });
}

function innermost(error: unknown): unknown {
  let current = error;
  while (current instanceof GraphQLError && current.originalError) current = current.originalError;
  return current;
}

function yogaLogger(logger: Logger) {
  const forward = (level: 'debug' | 'info' | 'warn' | 'error') => (...args: unknown[]) => {
    const [first, ...rest] = args;
    if (first instanceof Error) logger[level]({ err: first }, rest.map(String).join(' ') || first.message);
    else logger[level](args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' '));
  };
  return { debug: forward('debug'), info: forward('info'), warn: forward('warn'), error: forward('error') };
}
