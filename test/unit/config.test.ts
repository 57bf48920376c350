import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** A manifest file holding `content` (JSON unless a string is given). */
function manifest(content: unknown): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'kassa-config-')), 'documents.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('configuration', () => {
  it('defaults to port 8000 on the embedded databases, one directory per environment', () => {
    const config = loadConfig({});
    expect(config.port).toBe(8000);
    expect(config.tokenPrefix).toBe('service');
    expect(config.databases.production).toMatchObject({ kind: 'embedded' });
    expect(config.databases.production).not.toEqual(config.databases.sandbox);
  });

  it('uses PostgreSQL when both database URLs are set', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://a@h/prod', SANDBOX_DATABASE_URL: 'postgres://a@h/sandbox', DATABASE_POOL_SIZE: '7' });
    expect(config.databases.production).toEqual({ kind: 'postgres', url: 'postgres://a@h/prod', poolSize: 7 });
    expect(config.databases.sandbox).toEqual({ kind: 'postgres', url: 'postgres://a@h/sandbox', poolSize: 7 });
  });

  it('takes a Redis URL for the live event stream, none by default', () => {
    expect(loadConfig({}).redisUrl).toBeNull();
    expect(loadConfig({ REDIS_URL: 'redis://:secret@127.0.0.1:6379/0' }).redisUrl).toBe('redis://:secret@127.0.0.1:6379/0');
  });

  it('limits requests by default, trusts no proxy, and reads overrides and trusted ranges', () => {
    const defaults = loadConfig({});
    expect(defaults.rateLimits).toMatchObject({ enabled: true, perPrincipalPerMinute: 300, perIpPerSecond: 100, licensePerIpPerSecond: 3, anonymousPerMinute: 300, pointsMaximum: 50_000, pointsRestorePerSecond: 5_000, onStoreFailure: 'open' });
    expect(defaults.trustedProxies.check('127.0.0.1', 'ipv4')).toBe(false);
    expect(defaults.graphqlLimits).toEqual({ maxCost: 25_000, maxDepth: 12, maxAliases: 30, maxTokens: 2000, maxFields: 1000 });
    const id = '3d9a7e51-0c2b-4f6a-8e1d-5b4c3a2f1e0d';
    const config = loadConfig({ RATE_LIMIT_ORGANIZATION_OVERRIDES: `${id.toUpperCase()}=1200`, TRUSTED_PROXIES: '10.0.0.0/8, ::1' });
    expect(config.rateLimits.organizationOverrides.get(id)).toBe(1200);
    expect(config.trustedProxies.check('10.20.30.40', 'ipv4')).toBe(true);
    expect(config.trustedProxies.check('11.0.0.1', 'ipv4')).toBe(false);
    expect(config.trustedProxies.check('::1', 'ipv6')).toBe(true);
  });

  it.each([
    [{ RATE_LIMITS: 'maybe' }, 'RATE_LIMITS must be one of on, off'],
    [{ RATE_LIMIT_PER_MINUTE: '0' }, 'RATE_LIMIT_PER_MINUTE must be a whole number from 1'],
    [{ RATE_LIMIT_ORGANIZATION_OVERRIDES: 'acme=100' }, 'RATE_LIMIT_ORGANIZATION_OVERRIDES must be a comma-separated list of <organization id>=<requests per minute> (got "acme=100")'],
    [{ RATE_LIMIT_ON_STORE_FAILURE: 'retry' }, 'RATE_LIMIT_ON_STORE_FAILURE must be one of open, closed'],
    [{ GRAPHQL_POINTS_MAXIMUM: '0' }, 'GRAPHQL_POINTS_MAXIMUM must be a whole number from 1'],
    [{ GRAPHQL_POINTS_RESTORE_RATE: '2.5' }, 'GRAPHQL_POINTS_RESTORE_RATE must be a whole number from 1'],
    [{ TRUSTED_PROXIES: '10.0.0.0/33' }, 'TRUSTED_PROXIES must be a comma-separated list of IP addresses or CIDR ranges (got "10.0.0.0/33")'],
    [{ TRUSTED_PROXIES: 'proxy.internal' }, 'TRUSTED_PROXIES must be a comma-separated list'],
    [{ GRAPHQL_MAX_DEPTH: '1' }, 'GRAPHQL_MAX_DEPTH must be a whole number from 2'],
    [{ GRAPHQL_MAX_FIELDS: 'many' }, 'GRAPHQL_MAX_FIELDS must be a whole number from 10 to 100000 (got "many")'],
    [{ REQUEST_TIMEOUT_MS: '10' }, 'REQUEST_TIMEOUT_MS must be a whole number from 1000'],
    [{ OIDC_SIGNING_ALGORITHM: 'HS256' }, 'OIDC_SIGNING_ALGORITHM must be one of RS256, ES256'],
    [{ SECRET_SCANNING_PUBLIC_KEYS: 'not json' }, 'SECRET_SCANNING_PUBLIC_KEYS must be JSON'],
    [{ SECRET_SCANNING_PUBLIC_KEYS: '{"public_keys":[]}' }, 'SECRET_SCANNING_PUBLIC_KEYS must list at least one key'],
    [{ SECRET_SCANNING_PUBLIC_KEYS: '[{"key_identifier":"a","key":"nope"}]' }, 'SECRET_SCANNING_PUBLIC_KEYS key 0 ("a") is not a PEM public key'],
    [{ PORT: 'abc' }, 'PORT must be a whole number from 0 to 65535 (got "abc")'],
    [{ PORT: '70000' }, 'PORT must be a whole number'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of'],
    [{ TOKEN_PREFIX: 'Bad_Prefix' }, 'TOKEN_PREFIX must be 2 to 16 lowercase letters or digits'],
    [{ DATABASE_URL: 'postgres://a@h/prod' }, 'SANDBOX_DATABASE_URL must be set when DATABASE_URL is set'],
    [{ SANDBOX_DATABASE_URL: 'postgres://a@h/s' }, 'DATABASE_URL must be set when SANDBOX_DATABASE_URL is set'],
    [{ DATABASE_URL: 'postgres://a@h/x', SANDBOX_DATABASE_URL: 'postgres://a@h/x' }, 'SANDBOX_DATABASE_URL must name a different database'],
    [{ DATABASE_URL: 'mysql://a@h/x', SANDBOX_DATABASE_URL: 'postgres://a@h/y' }, 'DATABASE_URL must be a postgres:// connection URL'],
    [{ DATABASE_POOL_SIZE: '0' }, 'DATABASE_POOL_SIZE must be a whole number from 1'],
    [{ SHUTDOWN_TIMEOUT_MS: '-1' }, 'SHUTDOWN_TIMEOUT_MS must be a whole number'],
    [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL must be a redis:// or rediss:// URL'],
    [{ REDIS_URL: 'http://localhost:6379' }, 'REDIS_URL must be a redis:// or rediss:// URL (got protocol "http:")'],
  ])('refuses %o naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('serves no metrics by default; METRICS_PORT opens a listener on METRICS_HOST (127.0.0.1), METRICS_TOKEN the main port', () => {
    expect(loadConfig({}).metrics).toEqual({ listener: null, token: null });
    expect(loadConfig({ METRICS_PORT: '9464' }).metrics).toEqual({ listener: { host: '127.0.0.1', port: 9464 }, token: null });
    expect(loadConfig({ METRICS_PORT: '9464', METRICS_HOST: '0.0.0.0', METRICS_TOKEN: 'a'.repeat(16) }).metrics).toEqual({ listener: { host: '0.0.0.0', port: 9464 }, token: 'a'.repeat(16) });
  });

  it('refuses a metrics port out of range or the main one, a short or spaced token, and a host without a port, naming the variable', () => {
    for (const port of ['65536', '-1', 'abc', '94.64']) expect(() => loadConfig({ METRICS_PORT: port }), port).toThrow(/^Invalid configuration: METRICS_PORT must be a whole number from 0 to 65535/);
    expect(() => loadConfig({ PORT: '9000', METRICS_PORT: '9000' })).toThrow(/^Invalid configuration: METRICS_PORT must differ from PORT/);
    expect(() => loadConfig({ METRICS_PORT: '8000' })).toThrow(/METRICS_PORT must differ from PORT \(8000\)/);
    for (const token of ['a'.repeat(15), 'has a space in it ok', 'tab\tseparated-token-here']) {
      expect(() => loadConfig({ METRICS_TOKEN: token }), token).toThrow(/^Invalid configuration: METRICS_TOKEN must be at least 16 printable characters/);
    }
    expect(() => loadConfig({ METRICS_HOST: '0.0.0.0' })).toThrow(/^Invalid configuration: METRICS_HOST needs METRICS_PORT/);
  });

  it('caps open live event streams at 10 per principal and 1000 per process by default, and refuses caps that cannot hold', () => {
    expect(loadConfig({}).liveStreams).toEqual({ perPrincipal: 10, perProcess: 1000 });
    expect(loadConfig({ LIVE_STREAMS_PER_PRINCIPAL: '3', LIVE_STREAMS_PER_PROCESS: '50' }).liveStreams).toEqual({ perPrincipal: 3, perProcess: 50 });
    expect(() => loadConfig({ LIVE_STREAMS_PER_PRINCIPAL: '0' })).toThrow('LIVE_STREAMS_PER_PRINCIPAL must be a whole number from 1 to 1000000 (got "0")');
    expect(() => loadConfig({ LIVE_STREAMS_PER_PROCESS: 'many' })).toThrow('LIVE_STREAMS_PER_PROCESS must be a whole number from 1');
    expect(() => loadConfig({ LIVE_STREAMS_PER_PRINCIPAL: '20', LIVE_STREAMS_PER_PROCESS: '5' })).toThrow('LIVE_STREAMS_PER_PRINCIPAL must not exceed LIVE_STREAMS_PER_PROCESS (5); got 20');
  });

  describe('payment processors', () => {
    const live = { STRIPE_SECRET_KEY: 'sk_live_abc123', STRIPE_PUBLISHABLE_KEY: 'pk_live_abc123', STRIPE_WEBHOOK_SECRET: 'whsec_abc123' };
    const test = { SANDBOX_STRIPE_SECRET_KEY: 'sk_test_abc123', SANDBOX_STRIPE_PUBLISHABLE_KEY: 'pk_test_abc123', SANDBOX_STRIPE_WEBHOOK_SECRET: 'whsec_def456' };
    const refusal = (env: Record<string, string>) => {
      try {
        loadConfig(env);
      } catch (error) {
        return (error as Error).message;
      }
      throw new Error('the configuration was accepted');
    };

    it('charges test cards by default, with no Stripe account, and reconciles after 15 minutes', () => {
      const config = loadConfig({});
      expect(config.paymentProcessors).toEqual({ production: 'test', sandbox: 'test' });
      expect(config.stripe).toEqual({ production: null, sandbox: null });
      expect(config.paymentReconcileAfterMs).toBe(900_000);
      expect(loadConfig({ DATABASE_URL: 'postgres://a@h/p', SANDBOX_DATABASE_URL: 'postgres://a@h/s' }).paymentProcessors.production).toBe('none');
    });

    it('uses Stripe where its keys are set: live keys in production, test keys in sandbox, and STRIPE_API_URL for both', () => {
      const config = loadConfig({ ...live, ...test, STRIPE_API_URL: 'http://127.0.0.1:12111' });
      expect(config.paymentProcessors).toEqual({ production: 'stripe', sandbox: 'stripe' });
      expect(config.stripe.production).toEqual({ secretKey: 'sk_live_abc123', publishableKey: 'pk_live_abc123', webhookSecret: 'whsec_abc123', apiUrl: new URL('http://127.0.0.1:12111') });
      expect(config.stripe.sandbox).toMatchObject({ secretKey: 'sk_test_abc123', publishableKey: 'pk_test_abc123', webhookSecret: 'whsec_def456' });
      // A restricted key is a secret key too.
      expect(loadConfig({ ...live, STRIPE_SECRET_KEY: 'rk_live_abc123' }).stripe.production?.secretKey).toBe('rk_live_abc123');
      // Keys set, but the test processor asked for explicitly.
      expect(loadConfig({ ...test, SANDBOX_PAYMENT_PROCESSOR: 'test' }).stripe.sandbox).toBeNull();
    });

    it('refuses a test key in production and a live key in sandbox, naming the variable', () => {
      expect(refusal({ ...live, STRIPE_SECRET_KEY: 'sk_test_abc123' })).toMatch(/^Invalid configuration: STRIPE_SECRET_KEY .*live-mode key.*got a test-mode key/);
      expect(refusal({ ...live, STRIPE_PUBLISHABLE_KEY: 'pk_test_abc123' })).toMatch(/^Invalid configuration: STRIPE_PUBLISHABLE_KEY .*live-mode/);
      expect(refusal({ ...test, SANDBOX_STRIPE_SECRET_KEY: 'sk_live_abc123' })).toMatch(/^Invalid configuration: SANDBOX_STRIPE_SECRET_KEY .*test-mode key.*never charges real cards/);
      expect(refusal({ ...test, SANDBOX_STRIPE_PUBLISHABLE_KEY: 'pk_live_abc123' })).toMatch(/^Invalid configuration: SANDBOX_STRIPE_PUBLISHABLE_KEY /);
    });

    it('refuses missing and malformed keys, and a processor it does not know', () => {
      expect(refusal({ PRODUCTION_PAYMENT_PROCESSOR: 'stripe' })).toMatch(/^Invalid configuration: STRIPE_SECRET_KEY must be set when PRODUCTION_PAYMENT_PROCESSOR is stripe/);
      expect(refusal({ ...live, STRIPE_WEBHOOK_SECRET: '' })).toMatch(/^Invalid configuration: STRIPE_WEBHOOK_SECRET must be set/);
      expect(refusal({ ...live, STRIPE_WEBHOOK_SECRET: 'secret' })).toMatch(/^Invalid configuration: STRIPE_WEBHOOK_SECRET must be .*whsec_/);
      expect(refusal({ ...live, STRIPE_SECRET_KEY: 'pk_live_abc123' })).toMatch(/^Invalid configuration: STRIPE_SECRET_KEY must be a Stripe secret or restricted key/);
      expect(refusal({ SANDBOX_PAYMENT_PROCESSOR: 'stripe', SANDBOX_STRIPE_SECRET_KEY: 'sk_test_abc123' })).toMatch(/^Invalid configuration: SANDBOX_STRIPE_PUBLISHABLE_KEY must be set/);
      expect(refusal({ PRODUCTION_PAYMENT_PROCESSOR: 'paypal' })).toMatch(/^Invalid configuration: PRODUCTION_PAYMENT_PROCESSOR must be one of stripe, test, none/);
      expect(refusal({ SANDBOX_PAYMENT_PROCESSOR: 'none' })).toMatch(/^Invalid configuration: SANDBOX_PAYMENT_PROCESSOR must be one of stripe, test/);
      expect(refusal({ ...live, STRIPE_API_URL: 'ftp://stripe' })).toMatch(/^Invalid configuration: STRIPE_API_URL must be an absolute http/);
      expect(refusal({ ...live, STRIPE_API_URL: 'https://proxy.internal/v1' })).toMatch(/^Invalid configuration: STRIPE_API_URL must be a bare origin/);
      expect(refusal({ PAYMENT_RECONCILE_AFTER_SECONDS: '0' })).toMatch(/^Invalid configuration: PAYMENT_RECONCILE_AFTER_SECONDS /);
    });
  });

  describe('persisted documents', () => {
    const document = 'query Products { core { products { pagination { totalCount } } } }';

    it('keeps up to 1000 automatic persisted queries and 16 MiB per environment by default, with no trusted documents', () => {
      expect(loadConfig({}).persistedDocuments).toEqual({ automatic: { maxDocuments: 1000, maxBytes: 16 * 1024 * 1024 }, trusted: new Map(), trustedOnly: false });
      expect(loadConfig({ GRAPHQL_APQ_MAX_DOCUMENTS: '0' }).persistedDocuments.automatic).toBeNull();
      expect(loadConfig({ GRAPHQL_APQ_MAX_DOCUMENTS: '5', GRAPHQL_APQ_MAX_BYTES: '4096' }).persistedDocuments.automatic).toEqual({ maxDocuments: 5, maxBytes: 4096 });
    });

    it('reads a manifest of hashes and documents, in upper or lower case hex, and Apollo\'s manifest format', () => {
      const trusted = loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: manifest({ [sha256(document).toUpperCase()]: document }) }).persistedDocuments;
      expect(trusted.trusted).toEqual(new Map([[sha256(document), document]]));
      expect(trusted.trustedOnly).toBe(false);
      const apollo = manifest({ format: 'apollo-persisted-query-manifest', version: 1, operations: [{ id: sha256(document), name: 'Products', type: 'query', body: document }] });
      const only = loadConfig({ GRAPHQL_TRUSTED_DOCUMENTS: apollo, GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'true' }).persistedDocuments;
      expect(only).toEqual({ automatic: null, trusted: new Map([[sha256(document), document]]), trustedOnly: true });
    });

    it.each([
      [() => ({ GRAPHQL_TRUSTED_DOCUMENTS: '/nonexistent/documents.json' }), 'GRAPHQL_TRUSTED_DOCUMENTS names a file that cannot be read: /nonexistent/documents.json (ENOENT)'],
      [() => ({ GRAPHQL_TRUSTED_DOCUMENTS: manifest('{"abc": ') }), 'GRAPHQL_TRUSTED_DOCUMENTS must be a JSON file {"<sha256 hex>": "<document>", …}'],
      [() => ({ GRAPHQL_TRUSTED_DOCUMENTS: manifest([document]) }), 'GRAPHQL_TRUSTED_DOCUMENTS must be a JSON object'],
      [() => ({ GRAPHQL_TRUSTED_DOCUMENTS: manifest({ products: document }) }), 'GRAPHQL_TRUSTED_DOCUMENTS has a key that is not a SHA-256 in hex (64 hexadecimal digits): "products"'],
      [() => ({ GRAPHQL_TRUSTED_DOCUMENTS: manifest({ [sha256(document)]: { body: document } }) }), `GRAPHQL_TRUSTED_DOCUMENTS maps ${sha256(document)} to something other than a document's text`],
      [() => ({ GRAPHQL_TRUSTED_DOCUMENTS: manifest({ [sha256('{ __typename }')]: document }) }), `GRAPHQL_TRUSTED_DOCUMENTS maps ${sha256('{ __typename }')} to a document whose SHA-256 is ${sha256(document)}`],
      [() => ({ GRAPHQL_TRUSTED_DOCUMENTS: manifest({ [sha256('{ core {')]: '{ core {' }) }), `GRAPHQL_TRUSTED_DOCUMENTS maps ${sha256('{ core {')} to a document that does not parse: Syntax Error`],
      [() => ({ GRAPHQL_TRUSTED_DOCUMENTS: manifest({ format: 'apollo-persisted-query-manifest', version: 1 }) }), 'GRAPHQL_TRUSTED_DOCUMENTS is an Apollo manifest without an "operations" list'],
      [() => ({ GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'true' }), 'GRAPHQL_TRUSTED_DOCUMENTS_ONLY needs GRAPHQL_TRUSTED_DOCUMENTS'],
      [() => ({ GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'yes' }), 'GRAPHQL_TRUSTED_DOCUMENTS_ONLY must be one of true, false'],
      [() => ({ GRAPHQL_TRUSTED_DOCUMENTS: manifest({}), GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'true' }), 'GRAPHQL_TRUSTED_DOCUMENTS lists no document'],
      [() => ({ GRAPHQL_APQ_MAX_DOCUMENTS: '-1' }), 'GRAPHQL_APQ_MAX_DOCUMENTS must be a whole number from 0'],
      [() => ({ GRAPHQL_APQ_MAX_BYTES: '10' }), 'GRAPHQL_APQ_MAX_BYTES must be a whole number from 1024'],
    ])('refuses a bad trusted documents setting, naming the variable (%#)', (env, message) => {
      expect(() => loadConfig(env())).toThrow(`Invalid configuration: ${message}`);
    });
  });
});
