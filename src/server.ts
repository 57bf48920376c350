// Composes the HTTP service: for each environment (production at /v1, sandbox at /sandbox/v1) its
// own database, GraphQL endpoint and REST routes; plus /healthz and /readyz for operators.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { GraphQLError, type ExecutionResult } from 'graphql';
import { createYoga, maskError as yogaMaskError, type Plugin as YogaPlugin, type YogaServerInstance } from 'graphql-yoga';
import { type Config, type EnvironmentName, environmentNames } from './config.ts';
import type { Context, Environment } from './context.ts';
import { resolvePrincipal } from './auth/principals.ts';
import { bearerToken, requestFacts } from './http/request.ts';
import { createRouter, type Endpoint } from './http/router.ts';
import { openDatabase, type Database } from './db/client.ts';
import { migrate } from './db/migrate.ts';
import { KassaError } from './graphql/errors.ts';
import { useNulCharacterGuard } from './graphql/text.ts';
import { graphqlAnswerType, inOrderOfPreference, prefersHtml } from './graphql/media-types.ts';
import { useInputNestingLimit } from './graphql/nesting.ts';
import { useVariableDefaults } from './graphql/variable-defaults.ts';
import { inProcess } from './graphql/in-process.ts';
import { useCompiledQueries } from './graphql/compiled-queries.ts';
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
import { isProviderPath } from './oauth/routes.ts';
import { ensureSigningKey } from './oauth/signing-keys.ts';
import { reportLeakedTokens } from './integrations/secret-scanning.ts';
import { clientIpOf } from './http/client-ip.ts';
import { useRateLimits, type RateMeter } from './rate-limits/graphql.ts';
import { usePartialDataStatus } from './graphql/partial-data.ts';
import { RateLimiter, rateLimitHeaders, refusalBody, type Verdict } from './rate-limits/limiter.ts';
import { MemoryStore, RedisStore } from './rate-limits/store.ts';
import { schema } from './graphql/schema.ts';
import { createWireRenderer } from './wire/render.ts';
import { requestScope, type Logger } from './logger.ts';
import { compileRoutes, createRestHandler, restError, type RestHandler, type RestResponse } from './rest/adapter.ts';
import { restRoutes } from './rest/routes/index.ts';
import { withIdempotency } from './rest/idempotency.ts';
import { databaseIdempotencyStore } from './db/idempotency-store.ts';
import { openApiDocument, type OpenApiDocument } from './rest/openapi.ts';
import type { CompiledRoute } from './rest/route.ts';
import { ApiReference } from './rest/reference.ts';
import { TestPaymentProcessor } from './modules/payments/processor.ts';
import { createEmailTransport } from './email/transport.ts';
import { downloadInvoice } from './modules/invoices/service.ts';
import { attachmentDisposition, fileBytes, filePartTarget, storeFilePart } from './modules/files/service.ts';
import { JobRunner } from './jobs/runner.ts';
import { WebhookWorker } from './webhooks/worker.ts';
import { LiveEvents } from './events/live.ts';
import { StreamSlots, streamHolder, streamRefusal } from './events/stream-slots.ts';
import { isClientDisconnect } from './http/disconnects.ts';
import { maxBodyBytes, readBody, requestIdOf, requestTarget, singleHeader, type RequestTarget } from './http/incoming.ts';
import { send, sendGraphiql, sendGraphqlErrors } from './http/send.ts';
import { graphiqlAsset, graphiqlAssetPrefix, graphiqlPage } from './pages/graphiql.ts';
import { PrincipalCache, listenForPrincipalChanges } from './auth/principal-cache.ts';
import { backgroundWork } from './background.ts';

/** Which endpoint a request is for (http/router.ts). */
const route = createRouter({ isProviderPath, graphiqlAssetPrefix });

/** The OAuth provider's endpoints and the hosted pages, by method and path. */
const provider = createProvider([
  ...authorizeRoutes,
  ...tokenRoutes,
  ...revokeRoutes,
  ...introspectRoutes,
  ...registrationRoutes,
  ...userinfoRoutes,
  ...discoveryRoutes,
  ...signInPages,
  ...checkoutPages,
  ...portalPages,
]);

/** Event payloads of both environments, rendered from the served schema. */
const renderWire = createWireRenderer(schema);

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };

/** The license key endpoints anyone may call without a token, limited per client address. */
const licenseEndpoint = /^\/v1\/customer-portal\/license-keys\/(validate|activate|deactivate)$/;

export interface KassaOptions {
  /** The clock every request reads; tests move it. */
  clock?: () => Date;
  /** What `memory://` embedded databases start from (see `migratedMemoryImage` in db/client.ts). */
  memoryImage?: ArrayBuffer;
}

interface ServedEnvironment {
  environment: Environment;
  database: Database;
  jobs: JobRunner;
  /** Sends the environment's events to its webhook endpoints. */
  webhooks: WebhookWorker;
  yoga: YogaServerInstance<Context, object>;
  /** Documents GraphQL requests may name by hash: the trusted list and what clients registered here. */
  persisted: PersistedDocuments;
  rest: RestHandler;
  base: string;
  limiter: RateLimiter;
}

export interface Kassa {
  server: Server;
  url: string;
  environments: Record<EnvironmentName, ServedEnvironment>;
  close(): Promise<void>;
}

export async function openEnvironment(name: EnvironmentName, config: Config, logger: Logger, clock?: () => Date, memoryImage?: ArrayBuffer): Promise<{ environment: Environment; database: Database }> {
  const database = await openDatabase(config.databases[name], logger.child({ environment: name }), clock, memoryImage);
  const applied = await migrate(database.migrationTarget);
  if (applied.length) logger.info({ environment: name, migrations: applied }, 'applied migrations');
  const paymentProcessor = config.paymentProcessors[name] === 'test' ? new TestPaymentProcessor(config.testCardDelayMs) : null;
  const publicUrl = config.publicUrl ? `${config.publicUrl}${name === 'sandbox' ? '/sandbox' : ''}` : '';
  const databaseConfig = config.databases[name];
  // The embedded database is this process's alone; on PostgreSQL other processes may end tokens.
  const principals = new PrincipalCache(10_000, databaseConfig.kind === 'embedded');
  const stopListening = databaseConfig.kind === 'postgres' ? listenForPrincipalChanges(databaseConfig, principals, logger.child({ environment: name })) : async () => {};
  const close = database.close.bind(database);
  const live = new LiveEvents(name, config.redisUrl, logger);
  const email = createEmailTransport(config.email, logger.child({ environment: name }));
  const environment: Environment = { name, prisma: database.prisma, config, paymentProcessor, publicUrl, principals, live, email, wire: renderWire };
  await ensureSigningKey(environment, new Date());
  return {
    environment,
    database: {
      ...database,
      async close() {
        await live.close();
        await email.close();
        await stopListening();
        await close();
      },
    },
  };
}

/** The REST layer's OpenAPI document, without its server (rest/openapi.ts). */
export function restApiDocument(routes: CompiledRoute[] = compileRoutes(schema, restRoutes)): OpenApiDocument {
  return openApiDocument(schema, routes, { version, maxBodyBytes });
}

export async function startKassa(config: Config, logger: Logger, options: KassaOptions = {}): Promise<Kassa> {
  const clock = options.clock ?? (() => new Date());
  const routes = compileRoutes(schema, restRoutes);
  // Built before listening: a route or type the generator cannot describe stops the start.
  const reference = new ApiReference(restApiDocument(routes));
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
  const opened = await Promise.all(environmentNames.map((name) => openEnvironment(name, config, logger, clock, options.memoryImage)));
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
      plugins: [persisted.plugin, useInputNestingLimit(), useCompiledQueries(), useVariableDefaults(), useVariableLimits(), useRateLimits(config.graphqlLimits), useNulCharacterGuard(), useBearerChallenge(), useErrorCodes(), usePartialDataStatus()],
    });
    const background = { environment, prisma: environment.prisma, now: clock, logger: logger.child({ environment: name }) };
    const jobs = new JobRunner(background, { pollMs: config.jobPollIntervalMs, batchSize: 10, lockMs: 60_000 }, backgroundWork);
    const webhooks = new WebhookWorker(background, { pollMs: config.jobPollIntervalMs, dispatchBatch: 100, concurrency: 20 });
    // One in-process runner for the REST routes and the hosted pages.
    environment.graphql = inProcess(yoga.getEnveloped);
    const limiter = new RateLimiter(name, config.rateLimits, rateLimitStore, logger);
    environments[name] = { environment, database, jobs, webhooks, yoga, persisted, rest: withIdempotency(createRestHandler(routes, environment.graphql), databaseIdempotencyStore), base, limiter };
  }

  const streamSlots = new StreamSlots(config.liveStreams);
  let accepting = true;
  // A client that has not sent its whole request within requestTimeoutMs is answered 408 and cut
  // off, so slow senders cannot hold connections open; the check runs every second.
  const server = createServer({ requestTimeout: config.requestTimeoutMs, connectionsCheckingInterval: 1000 }, (req, res) => {
    const requestId = requestIdOf(req);
    res.setHeader('x-request-id', requestId);
    if (!accepting) res.setHeader('connection', 'close');
    const started = performance.now();
    const url = requestTarget(req.url ?? '/');
    const endpoint = route(req.method ?? 'GET', url.pathname);
    const environmentName = 'environment' in endpoint ? endpoint.environment : undefined;
    res.on('finish', () => {
      logger.info(
        { requestId, environment: environmentName, method: req.method, path: url.pathname, status: res.statusCode, ms: Math.round(performance.now() - started) },
        'request',
      );
    });
    let failed = false;
    res.on('close', () => {
      // Closed before it was finished, and not by a failure of ours: the client went away.
      if (!res.writableFinished && !failed) logger.debug({ requestId, environment: environmentName, method: req.method, path: url.pathname, ms: Math.round(performance.now() - started) }, 'client disconnected');
    });
    const clientIp = clientIpOf(req, config.trustedProxies);
    requestScope.run({ requestId, environment: environmentName ?? 'production' }, () => {
      handle(req, res, url, endpoint, requestId, clientIp).catch((error) => {
        // Logged as what it is when the response closes: nothing more can be sent to that client.
        if (isClientDisconnect(error, req, res)) return;
        failed = true;
        logger.error({ err: error, requestId }, 'unexpected error');
        if (!res.headersSent && !res.destroyed) send(res, restError(500, 'InternalServerError', `An unexpected error occurred. Quote request id ${requestId} when reporting it.`));
        else res.destroy();
      });
    });
  });

  /** Sets the RateLimit-* headers of the verdict; answers a refusal and returns false. */
  function admitted(res: ServerResponse, limiter: RateLimiter, verdict: Verdict): boolean {
    if (verdict.allowed) {
      for (const [name, value] of Object.entries(rateLimitHeaders(verdict.state))) res.setHeader(name, value);
      return true;
    }
    send(res, refusalBody(limiter, verdict));
    return false;
  }

  async function handle(req: IncomingMessage, res: ServerResponse, url: RequestTarget, endpoint: Endpoint, requestId: string, clientIp: string) {
    if (endpoint.kind === 'health') return send(res, { status: 200, body: { status: 'ok' } });
    if (endpoint.kind === 'readiness') return send(res, await readiness());
    // What the headers say, read once here and handed on: nothing below reads a header.
    const facts = requestFacts(req.headers);
    const method = req.method ?? 'GET';
    // Every request counts against its address first, before any work is done for it.
    const { limiter } = environments['environment' in endpoint ? endpoint.environment : 'production'];
    if (!admitted(res, limiter, await limiter.charge([limiter.ip(clientIp)], clock().getTime()))) return;
    if (endpoint.kind === 'nowhere') return send(res, restError(404, 'NotFound', `No endpoint at ${url.pathname}. The API lives under /v1 (production) and /sandbox/v1 (sandbox).`));
    const served = environments[endpoint.environment];
    switch (endpoint.kind) {
      case 'provider': {
        const request = { method, path: endpoint.path, query: url.searchParams, facts, requestId, clientIp, readBody: (limit: number) => readBody(req, limit) };
        const answer = await provider(served.environment, request, clock(), logger);
        res.writeHead(answer.status, answer.headers);
        res.end(method === 'HEAD' ? undefined : answer.body);
        return;
      }
      case 'secret-scanning': {
        const body = await readBody(req);
        if (body === null) return send(res, restError(413, 'PayloadTooLarge', `The request body exceeds ${maxBodyBytes} bytes.`));
        const header = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : undefined);
        const answer = await reportLeakedTokens(served.environment, { keyId: header('github-public-key-identifier'), signature: header('github-public-key-signature'), body, requestId }, clock());
        return send(res, answer);
      }
      case 'invoice-pdf': {
        const download = await downloadInvoice(served.environment, endpoint.invoiceId, url.searchParams, clock());
        if (download.status !== 200) return send(res, restError(download.status, download.status === 410 ? 'Expired' : 'NotFound', download.detail));
        res
          .writeHead(200, {
            'content-type': 'application/pdf',
            'content-length': download.pdf.length,
            'content-disposition': `inline; filename="invoice-${download.number}.pdf"`,
            'cache-control': 'private, no-store',
          })
          .end(download.pdf);
        return;
      }
      case 'file-part': {
        const part = await filePartTarget(served.environment, endpoint.fileId, endpoint.part, url.searchParams, clock());
        if ('status' in part) return send(res, restError(part.status, part.error, part.detail));
        const body = await readBody(req, part.length);
        if (body === null) return send(res, restError(413, 'PayloadTooLarge', `Part ${part.number} is ${part.length} bytes long; the request body is longer.`));
        const checksum = req.headers['x-checksum-sha256'];
        const stored = await storeFilePart(served.environment, part, body, typeof checksum === 'string' ? checksum : undefined);
        if ('status' in stored) return send(res, restError(stored.status, stored.error, stored.detail));
        return send(res, { status: 200, headers: { etag: stored.etag } });
      }
      case 'file-download': {
        const download = await fileBytes(served.environment, endpoint.fileId, url.searchParams, clock());
        if ('status' in download) return send(res, restError(download.status, download.error, download.detail));
        res.writeHead(200, {
          'content-type': download.file.mimeType,
          'content-length': download.file.size,
          'content-disposition': attachmentDisposition(download.file.name),
          'cache-control': 'private, no-store',
          'x-content-type-options': 'nosniff',
          'content-security-policy': "default-src 'none'; sandbox",
        });
        return pipeline(Readable.from(download.chunks), res);
      }
      case 'graphiql-asset': {
        const asset = await graphiqlAsset(endpoint.asset, singleHeader(req, 'accept-encoding'), singleHeader(req, 'if-none-match'));
        if (asset) return sendGraphiql(res, asset, method === 'HEAD');
        break;
      }
    }
    const path = endpoint.path;
    // The REST documentation needs no token: answered before credentials are read.
    const documentation = reference.serve({ method, path, ifNoneMatch: req.headers['if-none-match'] }, served.environment);
    if (documentation) {
      res.writeHead(documentation.status, documentation.headers).end(documentation.body);
      return;
    }
    const isGraphQL = endpoint.kind === 'graphql';
    if (isGraphQL && (method === 'GET' || method === 'HEAD') && prefersHtml(singleHeader(req, 'accept'))) {
      return sendGraphiql(res, await graphiqlPage(`Kassa GraphQL (${served.environment.name})`), method === 'HEAD');
    }
    if (isGraphQL && req.headers.accept !== undefined) {
      const preferred = inOrderOfPreference(req.headers.accept);
      // Every media range has weight 0: nothing the client accepts can be sent (RFC 9110 §15.5.7).
      if (preferred === null) return send(res, { status: 406 });
      req.headers.accept = preferred;
    }
    let context: Context;
    try {
      const principal = await resolvePrincipal(served.environment, bearerToken(facts), clock());
      context = { environment: served.environment, prisma: served.environment.prisma, principal, requestId, clientIp, now: clock };
    } catch (error) {
      if (!(error instanceof KassaError)) throw error;
      if (isGraphQL) return sendGraphqlErrors(res, error.status, [error], req.headers.accept);
      return send(res, restError(error.status, error.restError, error.message));
    }
    if (isGraphQL && req.method === 'POST') {
      // Yoga reads the body itself: its size is known up front, or the request is refused.
      const declared = req.headers['content-length'];
      if (declared === undefined) return send(res, restError(411, 'LengthRequired', 'Send the GraphQL request with a Content-Length header.'));
      if (Number(declared) > maxBodyBytes) return send(res, restError(413, 'PayloadTooLarge', `The request body exceeds ${maxBodyBytes} bytes.`));
    }
    if (isGraphQL && /text\/event-stream/i.test(req.headers.accept ?? '')) {
      // The only streams served: each holds a slot until its response closes, however it closes.
      const slot = streamSlots.take(streamHolder(served.environment.name, context.principal, clientIp));
      if (!slot.granted) return send(res, streamRefusal(slot));
      res.once('close', slot.release);
    }
    if (isGraphQL) {
      const meter: RateMeter = { limiter, clientIp, state: null, refused: false };
      return (served.yoga.requestListener as unknown as (req: IncomingMessage, res: ServerResponse, ctx: Context) => Promise<void>)(req, res, { ...context, rateLimit: meter });
    }
    const licenseCall = licenseEndpoint.test(path) && req.method === 'POST';
    if (!admitted(res, limiter, await limiter.charge([licenseCall ? limiter.license(clientIp) : null, limiter.principal(context.principal)], clock().getTime()))) return;
    const body = await readBody(req);
    if (body === null) return send(res, restError(413, 'PayloadTooLarge', `The request body exceeds ${maxBodyBytes} bytes.`));
    const idempotencyKey = req.headers['idempotency-key'];
    const response = await served.rest(
      { method: req.method ?? 'GET', path, query: url.searchParams, contentType: facts.mediaType, body, idempotencyKey: typeof idempotencyKey === 'string' ? idempotencyKey : undefined },
      context,
    );
    send(res, response);
  }

  async function readiness(): Promise<RestResponse> {
    if (!accepting) return { status: 503, body: { status: 'shutting_down' } };
    const checks = await Promise.all(
      environmentNames.map(async (name) => {
        try {
          await environments[name].environment.prisma.$queryRaw`SELECT 1`;
          return [name, 'ok'] as const;
        } catch {
          return [name, 'unavailable'] as const;
        }
      }),
    );
    const ready = checks.every(([, state]) => state === 'ok');
    return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'unavailable', databases: Object.fromEntries(checks) } };
  }

  // An idle connection is kept longer than clients and load balancers keep theirs (60 s is the
  // common proxy default), so the client is the side that closes it: a request sent on a connection
  // the server had just closed would fail with a reset.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = Math.min(66_000, config.requestTimeoutMs);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  for (const name of environmentNames) {
    environments[name].jobs.start();
    environments[name].webhooks.start();
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const listening = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`;
  for (const served of Object.values(environments)) served.environment.publicUrl ||= `${listening}${served.base}`;

  return {
    server,
    url: listening,
    environments,
    // Stops taking requests, lets the in-flight ones finish (up to the shutdown timeout), lets the
    // jobs and webhook deliveries in flight finish (a delivery is bounded by its timeout; one cut
    // short is retried once its claim lapses), then closes the databases.
    async close() {
      accepting = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Open event streams would hold their connections until the shutdown timeout: end them.
      await Promise.all(environmentNames.map((name) => environments[name].environment.live.endStreams()));
      server.closeIdleConnections();
      const timer = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
      await closed;
      clearTimeout(timer);
      await Promise.all(environmentNames.flatMap((name) => [environments[name].jobs.stop(), environments[name].webhooks.stop()]));
      for (const name of environmentNames) await environments[name].database.close();
      await rateLimitStore.close();
    },
  };
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
