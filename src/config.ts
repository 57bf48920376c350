// All configuration comes from the environment, is read here once and validated at start.
// Every variable is documented in docs/configuration.md.
import { createHash, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';
import path from 'node:path';
import { parse } from 'graphql';
import { tracingSettings, type TracingSettings } from './tracing/settings.ts';

export type EnvironmentName = 'production' | 'sandbox';
export const environmentNames: readonly EnvironmentName[] = ['production', 'sandbox'];

export interface StripeConfig {
  secretKey: string;
  publishableKey: string;
  /** The signing secret of the webhook endpoint Stripe sends this environment's events to. */
  webhookSecret: string;
  /** Where the Stripe client sends its requests, when not to Stripe itself (a proxy). */
  apiUrl: URL | null;
}

export type DatabaseConfig = { kind: 'embedded'; dataDir: string } | { kind: 'postgres'; url: string; poolSize: number };

export interface Config {
  host: string;
  port: number;
  logLevel: string;
  tokenPrefix: string;
  shutdownTimeoutMs: number;
  /** How long a client may take to send a whole request (headers and body). */
  requestTimeoutMs: number;
  databases: Record<EnvironmentName, DatabaseConfig>;
  /** The payment processor of each environment: Stripe, the built-in test processor, or none. */
  paymentProcessors: Record<EnvironmentName, 'stripe' | 'test' | 'none'>;
  /** Each environment's Stripe account, where its processor is Stripe. */
  stripe: Record<EnvironmentName, StripeConfig | null>;
  /** How long a payment the processor has not settled waits before Kassa asks the processor about it. */
  paymentReconcileAfterMs: number;
  /** How long the test processor's delayed-failure card takes to fail. */
  testCardDelayMs: number;
  jobPollIntervalMs: number;
  /** Jobs each environment's runner runs at once in this process. */
  jobConcurrency: number;
  /** The address clients reach Kassa at, for links Kassa hands out (checkout pages); the listening address when unset. */
  publicUrl: string | null;
  /** The key that encrypts stored secrets Kassa must read back (webhook signing secrets); kept in each environment's database when unset. */
  secretsKey: Buffer | null;
  /** Earlier secrets keys (SECRETS_KEY_PREVIOUS), newest first: tried in turn when `secretsKey` does not open a stored secret, never used to encrypt. */
  previousSecretsKeys: Buffer[];
  /** The algorithm of new ID token signing keys: RS256 (the OpenID Connect default) or ES256. */
  idTokenSigningAlgorithm: 'RS256' | 'ES256';
  /** Redis, when set, carries the live event stream (GraphQL `coreEvents`) between processes; in-process only otherwise. */
  redisUrl: string | null;
  rateLimits: RateLimitConfig;
  /** Open live event streams (GraphQL over SSE) allowed at once. */
  liveStreams: LiveStreamLimits;
  /** The public keys that sign leaked-token reports (GitHub's secret scanning); none: the endpoint is off. */
  secretScanningKeys: { keyIdentifier: string; pem: string }[];
  /** What one GraphQL operation may ask for; refused before execution above these. */
  graphqlLimits: { maxCost: number; maxDepth: number; maxAliases: number; maxTokens: number; maxFields: number };
  /** Documents a GraphQL request may name by their SHA-256 instead of sending their text. */
  persistedDocuments: PersistedDocumentsConfig;
  /** Addresses whose X-Forwarded-For is believed (a load balancer in front of Kassa); no one's by default. */
  trustedProxies: BlockList;
  /** How Kassa sends email (the codes that confirm a customer's new address). */
  email: EmailConfig;
  /** Who may read the Prometheus metrics (GET /metrics); neither set: nobody, it is a 404. */
  metrics: MetricsConfig;
  webhooks: {
    /** How long a receiver has to answer one delivery. */
    timeoutMs: number;
    /** Attempts per event before it is given up. */
    maxAttempts: number;
    /** The wait after the first failure; each further failure doubles it (with jitter). */
    retryBaseMs: number;
    /** An endpoint that has failed every delivery for this long is disabled. */
    disableAfterMs: number;
    /** Deliveries each environment's worker has in flight at once in this process. */
    concurrency: number;
  };
  /** Traces (OpenTelemetry, the standard OTEL_* variables): started before the modules load (tracing/start.ts); null: off. */
  tracing: TracingSettings | null;
}

export interface MetricsConfig {
  /** A listener of its own that serves only /metrics, without a token; null: none. */
  listener: { host: string; port: number } | null;
  /** The bearer token that reads /metrics on the main port; null: the main port does not serve it. */
  token: string | null;
}

export interface PersistedDocumentsConfig {
  /** Automatic persisted queries (clients register documents), each environment's store bounded so; null: off. */
  automatic: { maxDocuments: number; maxBytes: number } | null;
  /** The operator's trusted documents by lowercase hex SHA-256; empty without GRAPHQL_TRUSTED_DOCUMENTS. */
  trusted: ReadonlyMap<string, string>;
  /** Only trusted documents are run over HTTP (REST routes and the hosted pages run their own operations in-process). */
  trustedOnly: boolean;
}

export interface EmailConfig {
  transport: 'smtp' | 'log' | 'memory' | 'none';
  /** `smtp://` or `smtps://`, with credentials when the server wants them; set when transport is smtp. */
  smtpUrl: string | null;
  /** The From header: `address` or `Name <address>`. */
  from: string;
  /** How long the mail server has to connect, greet and answer each command. */
  timeoutMs: number;
}

export interface RateLimitConfig {
  enabled: boolean;
  /** Requests (a GraphQL operation is one) per minute per organization, customer, user or OAuth client. */
  perPrincipalPerMinute: number;
  /** Organizations that arranged a different per-minute budget. */
  organizationOverrides: ReadonlyMap<string, number>;
  perIpPerSecond: number;
  /** GraphQL operations per minute per client address sent without a token. */
  anonymousPerMinute: number;
  /** The GraphQL points bucket of each principal (and of each address without a token): what it holds at most. */
  pointsMaximum: number;
  /** Points the bucket gains back per second. */
  pointsRestorePerSecond: number;
  /** The unauthenticated license key validate, activate and deactivate endpoints, per client IP. */
  licensePerIpPerSecond: number;
  /** Visits to checkout links' public URLs (each creates a checkout), per client IP per minute. */
  checkoutLinkPerIpPerMinute: number;
  /** When the shared store (Redis) cannot be reached: admit the request (open) or refuse it (closed). */
  onStoreFailure: 'open' | 'closed';
}

export interface LiveStreamLimits {
  /** Per organization, user or customer (whatever token of theirs opened it). */
  perPrincipal: number;
  /** In this process, over both environments. */
  perProcess: number;
}

export class ConfigError extends Error {
  constructor(variable: string, problem: string) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || value < min || value > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

function oneOf(env: Env, name: string, fallback: string, allowed: readonly string[]): string {
  const raw = env[name] || fallback;
  if (!allowed.includes(raw)) throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${raw}")`);
  return raw;
}

function postgresUrl(env: Env, name: string): string {
  const raw = env[name]!;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, 'must be a postgres:// connection URL');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(name, `must be a postgres:// connection URL (got protocol "${url.protocol}")`);
  }
  return raw;
}

function publicUrl(env: Env): string | null {
  const raw = env.PUBLIC_URL;
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('PUBLIC_URL', `must be an absolute http(s) URL (got "${raw}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('PUBLIC_URL', `must be an absolute http(s) URL (got "${raw}")`);
  return raw.replace(/\/+$/, '');
}

export function loadConfig(env: Env = process.env): Config {
  const tokenPrefix = env.TOKEN_PREFIX || 'service';
  if (!/^[a-z][a-z0-9]{1,15}$/.test(tokenPrefix)) {
    throw new ConfigError('TOKEN_PREFIX', `must be 2 to 16 lowercase letters or digits, starting with a letter (got "${tokenPrefix}")`);
  }
  const poolSize = integer(env, 'DATABASE_POOL_SIZE', 10, 1, 1000);
  let databases: Config['databases'];
  if (env.DATABASE_URL || env.SANDBOX_DATABASE_URL) {
    if (!env.DATABASE_URL) throw new ConfigError('DATABASE_URL', 'must be set when SANDBOX_DATABASE_URL is set');
    if (!env.SANDBOX_DATABASE_URL) throw new ConfigError('SANDBOX_DATABASE_URL', 'must be set when DATABASE_URL is set: sandbox needs its own database');
    const production = postgresUrl(env, 'DATABASE_URL');
    const sandbox = postgresUrl(env, 'SANDBOX_DATABASE_URL');
    if (production === sandbox) throw new ConfigError('SANDBOX_DATABASE_URL', 'must name a different database than DATABASE_URL');
    databases = {
      production: { kind: 'postgres', url: production, poolSize },
      sandbox: { kind: 'postgres', url: sandbox, poolSize },
    };
  } else {
    // `memory://` keeps both environments in memory, for tests and throwaway runs.
    const dataDir = env.DATA_DIR || '.data';
    const dirOf = (name: EnvironmentName) => (dataDir.startsWith('memory://') ? 'memory://' : path.join(path.resolve(dataDir), name));
    databases = {
      production: { kind: 'embedded', dataDir: dirOf('production') },
      sandbox: { kind: 'embedded', dataDir: dirOf('sandbox') },
    };
  }
  return {
    host: env.HOST || '127.0.0.1',
    port: integer(env, 'PORT', 8000, 0, 65535),
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    tokenPrefix,
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 10_000, 0, 600_000),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 1000, 600_000),
    databases,
    ...paymentProcessors(env, databases),
    paymentReconcileAfterMs: integer(env, 'PAYMENT_RECONCILE_AFTER_SECONDS', 900, 1, 86_400) * 1000,
    testCardDelayMs: integer(env, 'TEST_CARD_DELAY_MS', 1500, 0, 60_000),
    jobPollIntervalMs: integer(env, 'JOB_POLL_INTERVAL_MS', 500, 10, 60_000),
    jobConcurrency: integer(env, 'JOB_CONCURRENCY', 10, 1, 1000),
    publicUrl: publicUrl(env),
    secretsKey: secretsKey(env),
    previousSecretsKeys: previousSecretsKeys(env),
    rateLimits: {
      enabled: oneOf(env, 'RATE_LIMITS', 'on', ['on', 'off']) === 'on',
      perPrincipalPerMinute: integer(env, 'RATE_LIMIT_PER_MINUTE', 300, 1, 1_000_000),
      organizationOverrides: organizationOverrides(env),
      perIpPerSecond: integer(env, 'RATE_LIMIT_IP_PER_SECOND', 100, 1, 1_000_000),
      anonymousPerMinute: integer(env, 'RATE_LIMIT_ANONYMOUS_PER_MINUTE', 300, 1, 1_000_000),
      pointsMaximum: integer(env, 'GRAPHQL_POINTS_MAXIMUM', 50_000, 1, 100_000_000),
      pointsRestorePerSecond: integer(env, 'GRAPHQL_POINTS_RESTORE_RATE', 5_000, 1, 100_000_000),
      licensePerIpPerSecond: integer(env, 'RATE_LIMIT_LICENSE_PER_SECOND', 3, 1, 1_000_000),
      checkoutLinkPerIpPerMinute: integer(env, 'RATE_LIMIT_CHECKOUT_LINK_PER_MINUTE', 30, 1, 1_000_000),
      onStoreFailure: oneOf(env, 'RATE_LIMIT_ON_STORE_FAILURE', 'open', ['open', 'closed']) as 'open' | 'closed',
    },
    liveStreams: liveStreamLimits(env),
    trustedProxies: trustedProxies(env),
    secretScanningKeys: secretScanningKeys(env),
    graphqlLimits: {
      maxCost: integer(env, 'GRAPHQL_MAX_COST', 25_000, 1, 100_000_000),
      maxDepth: integer(env, 'GRAPHQL_MAX_DEPTH', 12, 2, 100),
      maxAliases: integer(env, 'GRAPHQL_MAX_ALIASES', 30, 0, 10_000),
      maxTokens: integer(env, 'GRAPHQL_MAX_TOKENS', 2000, 100, 1_000_000),
      maxFields: integer(env, 'GRAPHQL_MAX_FIELDS', 1000, 10, 100_000),
    },
    persistedDocuments: persistedDocuments(env),
    idTokenSigningAlgorithm: oneOf(env, 'OIDC_SIGNING_ALGORITHM', 'RS256', ['RS256', 'ES256']) as 'RS256' | 'ES256',
    redisUrl: redisUrl(env),
    email: emailConfig(env, databases.production.kind),
    metrics: metricsConfig(env),
    webhooks: {
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
      maxAttempts: integer(env, 'WEBHOOK_MAX_ATTEMPTS', 10, 1, 50),
      // 8 minutes doubled 9 times: ten attempts over about three days.
      retryBaseMs: integer(env, 'WEBHOOK_RETRY_BASE_MS', 8 * 60_000, 1, 86_400_000),
      disableAfterMs: integer(env, 'WEBHOOK_DISABLE_AFTER_MS', 3 * 86_400_000, 1, 30 * 86_400_000),
      concurrency: integer(env, 'WEBHOOK_CONCURRENCY', 50, 1, 10_000),
    },
    tracing: tracingSettings(env, (variable, problem) => {
      throw new ConfigError(variable, problem);
    }),
  };
}

/**
 * `METRICS_PORT` (and `METRICS_HOST`, 127.0.0.1 by default) opens a listener that serves only the
 * metrics; `METRICS_TOKEN` lets the main port serve them to a request bearing it. The token is
 * compared whole, so a short one could be guessed: at least 16 characters.
 */
function metricsConfig(env: Env): MetricsConfig {
  const token = env.METRICS_TOKEN || null;
  if (token !== null && (token.length < 16 || !/^[\x21-\x7e]+$/.test(token))) {
    throw new ConfigError('METRICS_TOKEN', `must be at least 16 printable characters without spaces (got ${token.length} characters); e.g. \`openssl rand -hex 32\``);
  }
  const host = env.METRICS_HOST || '127.0.0.1';
  if (env.METRICS_HOST && !env.METRICS_PORT) throw new ConfigError('METRICS_HOST', 'needs METRICS_PORT: the port of the metrics listener');
  if (!env.METRICS_PORT) return { listener: null, token };
  const port = integer(env, 'METRICS_PORT', 0, 0, 65535);
  const main = integer(env, 'PORT', 8000, 0, 65535);
  if (port !== 0 && port === main) throw new ConfigError('METRICS_PORT', `must differ from PORT (${main}): the metrics listener is a port of its own`);
  return { listener: { host, port }, token };
}

function liveStreamLimits(env: Env): LiveStreamLimits {
  const perProcess = integer(env, 'LIVE_STREAMS_PER_PROCESS', 1000, 1, 1_000_000);
  const perPrincipal = integer(env, 'LIVE_STREAMS_PER_PRINCIPAL', 10, 1, 1_000_000);
  if (perPrincipal > perProcess) throw new ConfigError('LIVE_STREAMS_PER_PRINCIPAL', `must not exceed LIVE_STREAMS_PER_PROCESS (${perProcess}); got ${perPrincipal}`);
  return { perPrincipal, perProcess };
}

function redisUrl(env: Env): string | null {
  const raw = env.REDIS_URL;
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('REDIS_URL', 'must be a redis:// or rediss:// URL');
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new ConfigError('REDIS_URL', `must be a redis:// or rediss:// URL (got protocol "${url.protocol}")`);
  return raw;
}

const keyShape = 'must be 32 random bytes, as 64 hex digits or base64 (e.g. `openssl rand -hex 32`)';

/**
 * 32 bytes from 64 hex digits or base64 (standard or URL-safe alphabet, padding optional); null for
 * anything else. One parser for SECRETS_KEY and SECRETS_KEY_PREVIOUS, so a key accepted as the
 * current one is accepted as a previous one after a rotation.
 */
function parseKey(raw: string): Buffer | null {
  if (/^[0-9a-f]{64}$/i.test(raw)) return Buffer.from(raw, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(raw)) return null;
  const key = Buffer.from(raw, 'base64');
  return key.length === 32 ? key : null;
}

function secretsKey(env: Env): Buffer | null {
  const raw = env.SECRETS_KEY;
  if (!raw) return null;
  const key = parseKey(raw.trim());
  if (!key) throw new ConfigError('SECRETS_KEY', keyShape);
  return key;
}

/**
 * `SECRETS_KEY_PREVIOUS=<key>[,<key>…]`: keys that decrypt but never encrypt, during a rotation.
 * Refused without SECRETS_KEY (the database key is already tried then) and when one equals
 * SECRETS_KEY (a mistake: the rotation it describes has not happened).
 */
function previousSecretsKeys(env: Env): Buffer[] {
  const raw = env.SECRETS_KEY_PREVIOUS?.trim();
  if (!raw) return [];
  const current = secretsKey(env);
  if (!current) throw new ConfigError('SECRETS_KEY_PREVIOUS', 'needs SECRETS_KEY: the previous keys only decrypt, SECRETS_KEY encrypts');
  const keys: Buffer[] = [];
  raw.split(',').forEach((entry, index) => {
    const key = parseKey(entry.trim());
    if (!key) throw new ConfigError('SECRETS_KEY_PREVIOUS', `key ${index + 1} ${keyShape}; separate several with commas`);
    if (key.equals(current)) throw new ConfigError('SECRETS_KEY_PREVIOUS', `key ${index + 1} is SECRETS_KEY itself: list only earlier keys`);
    if (!keys.some((k) => k.equals(key))) keys.push(key);
  });
  return keys;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `RATE_LIMIT_ORGANIZATION_OVERRIDES=<organization id>=<per minute>,…` */
function organizationOverrides(env: Env): Map<string, number> {
  const overrides = new Map<string, number>();
  for (const entry of (env.RATE_LIMIT_ORGANIZATION_OVERRIDES ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const [id, perMinute] = entry.split('=').map((p) => p?.trim());
    if (!id || !uuidPattern.test(id.toLowerCase()) || !perMinute || !/^\d{1,9}$/.test(perMinute) || Number(perMinute) < 1) {
      throw new ConfigError('RATE_LIMIT_ORGANIZATION_OVERRIDES', `must be a comma-separated list of <organization id>=<requests per minute> (got "${entry}")`);
    }
    overrides.set(id.toLowerCase(), Number(perMinute));
  }
  return overrides;
}

/** `TRUSTED_PROXIES=10.0.0.1,10.1.0.0/16,::1`: addresses or CIDR ranges. */
function trustedProxies(env: Env): BlockList {
  const list = new BlockList();
  for (const entry of (env.TRUSTED_PROXIES ?? '').split(',').map((e) => e.trim()).filter(Boolean)) {
    const [address, prefix] = entry.split('/');
    const family = isIP(address);
    const maxPrefix = family === 4 ? 32 : 128;
    if (!family || (prefix !== undefined && (!/^\d{1,3}$/.test(prefix) || Number(prefix) > maxPrefix))) {
      throw new ConfigError('TRUSTED_PROXIES', `must be a comma-separated list of IP addresses or CIDR ranges (got "${entry}")`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}

/**
 * `SECRET_SCANNING_PUBLIC_KEYS`: GitHub's public key document (`{"public_keys":[{"key_identifier",
 * "key"}]}`) or just its array; each key an ECDSA P-256 public key in PEM.
 */
/**
 * Each environment's processor. Stripe is the default where its keys are set; otherwise sandbox
 * charges test cards, and production does too on the embedded database (a local setup), while
 * against a PostgreSQL server production needs PRODUCTION_PAYMENT_PROCESSOR=test explicitly.
 * Production takes live keys only and sandbox test keys only, so no test charge is ever taken
 * for real and no real card is charged in sandbox.
 */
function paymentProcessors(env: Env, databases: Record<EnvironmentName, DatabaseConfig>): Pick<Config, 'paymentProcessors' | 'stripe'> {
  const apiUrl = stripeApiUrl(env);
  const production = oneOf(env, 'PRODUCTION_PAYMENT_PROCESSOR', env.STRIPE_SECRET_KEY ? 'stripe' : databases.production.kind === 'embedded' ? 'test' : 'none', ['stripe', 'test', 'none']);
  const sandbox = oneOf(env, 'SANDBOX_PAYMENT_PROCESSOR', env.SANDBOX_STRIPE_SECRET_KEY ? 'stripe' : 'test', ['stripe', 'test']);
  return {
    paymentProcessors: { production, sandbox } as Config['paymentProcessors'],
    stripe: {
      production: production === 'stripe' ? stripeKeys(env, '', 'live', 'PRODUCTION_PAYMENT_PROCESSOR', apiUrl) : null,
      sandbox: sandbox === 'stripe' ? stripeKeys(env, 'SANDBOX_', 'test', 'SANDBOX_PAYMENT_PROCESSOR', apiUrl) : null,
    },
  };
}

function stripeKeys(env: Env, prefix: '' | 'SANDBOX_', mode: 'live' | 'test', selector: string, apiUrl: URL | null): StripeConfig {
  const environment = prefix ? 'sandbox' : 'production';
  const required = (name: string, pattern: RegExp, shape: string) => {
    const variable = `${prefix}${name}`;
    const value = env[variable];
    if (!value) throw new ConfigError(variable, `must be set when ${selector} is stripe`);
    if (!pattern.test(value)) throw new ConfigError(variable, `must be ${shape}`);
    return value;
  };
  const secretKey = required('STRIPE_SECRET_KEY', /^(sk|rk)_(live|test)_[0-9A-Za-z]+$/, 'a Stripe secret or restricted key (sk_live_…, sk_test_…, rk_live_…, rk_test_…)');
  const publishableKey = required('STRIPE_PUBLISHABLE_KEY', /^pk_(live|test)_[0-9A-Za-z]+$/, 'a Stripe publishable key (pk_live_… or pk_test_…)');
  const webhookSecret = required('STRIPE_WEBHOOK_SECRET', /^whsec_[0-9A-Za-z]+$/, "a Stripe webhook endpoint's signing secret (whsec_…)");
  for (const [variable, key] of [[`${prefix}STRIPE_SECRET_KEY`, secretKey], [`${prefix}STRIPE_PUBLISHABLE_KEY`, publishableKey]]) {
    if (!key.includes(`_${mode}_`)) {
      throw new ConfigError(variable, `must be a ${mode}-mode key: ${environment} ${mode === 'live' ? 'takes real payments, never test ones' : 'never charges real cards'} (got a ${mode === 'live' ? 'test' : 'live'}-mode key)`);
    }
  }
  return { secretKey, publishableKey, webhookSecret, apiUrl };
}

function stripeApiUrl(env: Env): URL | null {
  const raw = env.STRIPE_API_URL;
  if (!raw) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError('STRIPE_API_URL', `must be an absolute http(s) URL (got "${raw}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('STRIPE_API_URL', `must be an absolute http(s) URL (got "${raw}")`);
  if (url.pathname !== '/' || url.search || url.hash) throw new ConfigError('STRIPE_API_URL', `must be a bare origin such as https://stripe-proxy.internal:8443, without a path (got "${raw}")`);
  return url;
}

function secretScanningKeys(env: Env): { keyIdentifier: string; pem: string }[] {
  const raw = env.SECRET_SCANNING_PUBLIC_KEYS;
  if (!raw) return [];
  const invalid = (problem: string) => new ConfigError('SECRET_SCANNING_PUBLIC_KEYS', problem);
  let document: unknown;
  try {
    document = JSON.parse(raw);
  } catch {
    throw invalid('must be JSON: {"public_keys":[{"key_identifier":"…","key":"-----BEGIN PUBLIC KEY-----…"}]}');
  }
  const list = Array.isArray(document) ? document : (document as { public_keys?: unknown })?.public_keys;
  if (!Array.isArray(list) || list.length === 0) throw invalid('must list at least one key under "public_keys"');
  return list.map((entry, index) => {
    const { key_identifier: keyIdentifier, key } = (entry ?? {}) as { key_identifier?: unknown; key?: unknown };
    if (typeof keyIdentifier !== 'string' || !keyIdentifier || typeof key !== 'string') throw invalid(`key ${index} needs "key_identifier" and "key" strings`);
    let curve: string | undefined;
    try {
      curve = createPublicKey(key).asymmetricKeyDetails?.namedCurve;
    } catch {
      throw invalid(`key ${index} ("${keyIdentifier}") is not a PEM public key`);
    }
    if (curve !== 'prime256v1') throw invalid(`key ${index} ("${keyIdentifier}") must be an ECDSA P-256 key`);
    return { keyIdentifier, pem: key };
  });
}

/**
 * `GRAPHQL_APQ_MAX_DOCUMENTS` and `GRAPHQL_APQ_MAX_BYTES` bound each environment's store of
 * automatic persisted queries (0 documents: off). `GRAPHQL_TRUSTED_DOCUMENTS` names a JSON manifest
 * of trusted documents; `GRAPHQL_TRUSTED_DOCUMENTS_ONLY=true` refuses every other document, and
 * then no client may register one.
 */
function persistedDocuments(env: Env): PersistedDocumentsConfig {
  const trustedOnly = oneOf(env, 'GRAPHQL_TRUSTED_DOCUMENTS_ONLY', 'false', ['true', 'false']) === 'true';
  const file = env.GRAPHQL_TRUSTED_DOCUMENTS;
  if (trustedOnly && !file) throw new ConfigError('GRAPHQL_TRUSTED_DOCUMENTS_ONLY', 'needs GRAPHQL_TRUSTED_DOCUMENTS: the file listing the documents to accept');
  const trusted = file ? trustedDocuments(file) : new Map<string, string>();
  if (trustedOnly && trusted.size === 0) throw new ConfigError('GRAPHQL_TRUSTED_DOCUMENTS', `lists no document (${file}), and GRAPHQL_TRUSTED_DOCUMENTS_ONLY=true would refuse every GraphQL request`);
  const maxDocuments = integer(env, 'GRAPHQL_APQ_MAX_DOCUMENTS', 1000, 0, 1_000_000);
  const maxBytes = integer(env, 'GRAPHQL_APQ_MAX_BYTES', 16 * 1024 * 1024, 1024, 1024 * 1024 * 1024);
  return { automatic: maxDocuments === 0 || trustedOnly ? null : { maxDocuments, maxBytes }, trusted, trustedOnly };
}

/**
 * The manifest `{"<sha256 hex>": "<document>", …}` that Relay, GraphQL Code Generator's client
 * preset and others write, or Apollo's `{"format": "apollo-persisted-query-manifest", "operations":
 * [{"id", "body"}]}`. Every key must be the SHA-256 of its document, and every document must parse.
 */
function trustedDocuments(file: string): Map<string, string> {
  const invalid = (problem: string) => new ConfigError('GRAPHQL_TRUSTED_DOCUMENTS', problem);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw invalid(`names a file that cannot be read: ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  let manifest: unknown;
  try {
    manifest = JSON.parse(text);
  } catch (error) {
    throw invalid(`must be a JSON file {"<sha256 hex>": "<document>", …}: ${file} is not JSON (${(error as Error).message})`);
  }
  if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) throw invalid(`must be a JSON object {"<sha256 hex>": "<document>", …} (${file})`);
  const apollo = (manifest as { format?: unknown }).format === 'apollo-persisted-query-manifest';
  const operations = (manifest as { operations?: unknown }).operations;
  if (apollo && !Array.isArray(operations)) throw invalid(`is an Apollo manifest without an "operations" list (${file})`);
  const entries: [unknown, unknown][] = apollo ? (operations as unknown[]).map((o) => [(o as { id?: unknown })?.id, (o as { body?: unknown })?.body]) : Object.entries(manifest);
  const documents = new Map<string, string>();
  for (const [hash, document] of entries) {
    if (typeof hash !== 'string' || !/^[0-9a-f]{64}$/i.test(hash)) throw invalid(`has a key that is not a SHA-256 in hex (64 hexadecimal digits): "${String(hash).slice(0, 80)}" (${file})`);
    if (typeof document !== 'string') throw invalid(`maps ${hash} to something other than a document's text (${file})`);
    const actual = createHash('sha256').update(document).digest('hex');
    if (actual !== hash.toLowerCase()) throw invalid(`maps ${hash} to a document whose SHA-256 is ${actual} (${file})`);
    try {
      parse(document);
    } catch (error) {
      throw invalid(`maps ${hash} to a document that does not parse: ${(error as Error).message} (${file})`);
    }
    documents.set(hash.toLowerCase(), document);
  }
  return documents;
}

const emailAddress = /^[^\s@<>]+@[^\s@<>]+$/;

/**
 * `EMAIL_TRANSPORT` (`smtp`, `log`, `memory`, `none`; `log` on the embedded database, else `none`),
 * `SMTP_URL` and `EMAIL_FROM` (both needed by `smtp`), `SMTP_TIMEOUT_MS`.
 */
function emailConfig(env: Env, database: DatabaseConfig['kind']): EmailConfig {
  const transport = oneOf(env, 'EMAIL_TRANSPORT', database === 'embedded' ? 'log' : 'none', ['smtp', 'log', 'memory', 'none']) as EmailConfig['transport'];
  let smtpUrl: string | null = null;
  if (transport === 'smtp') {
    const raw = env.SMTP_URL;
    if (!raw) throw new ConfigError('SMTP_URL', 'must be set when EMAIL_TRANSPORT=smtp (e.g. smtp://user:password@mail.example.com:587)');
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new ConfigError('SMTP_URL', 'must be an smtp:// or smtps:// URL');
    }
    if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') throw new ConfigError('SMTP_URL', `must be an smtp:// or smtps:// URL (got protocol "${url.protocol}")`);
    if (!url.hostname) throw new ConfigError('SMTP_URL', 'must name the mail server\'s host');
    smtpUrl = raw;
  }
  const from = env.EMAIL_FROM?.trim() || (transport === 'smtp' ? '' : 'Kassa <no-reply@localhost>');
  if (!from) throw new ConfigError('EMAIL_FROM', 'must be set when EMAIL_TRANSPORT=smtp: the sender address, e.g. "Acme Billing <billing@acme.example>"');
  const address = /<([^<>]*)>\s*$/.exec(from)?.[1] ?? from;
  if (!emailAddress.test(address) || /[\r\n]/.test(from)) throw new ConfigError('EMAIL_FROM', `must be an email address or "Name <address>" (got "${from}")`);
  return { transport, smtpUrl, from, timeoutMs: integer(env, 'SMTP_TIMEOUT_MS', 10_000, 100, 120_000) };
}
