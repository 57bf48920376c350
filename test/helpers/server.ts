// Starts a real Kassa server on 127.0.0.1 for end-to-end tests: embedded in-memory databases by
// default, or two fresh databases on a PostgreSQL server with KASSA_TEST_DATABASE=postgres
// (dropped again when the server closes).
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import pg from 'pg';
import { loadConfig, type Config, type EnvironmentName } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { startKassa, type Kassa } from '../../src/server.ts';
import { bootstrapEnvironment, type BootstrapOptions } from '../../src/bootstrap.ts';
import { migratedMemoryImage } from '../../src/db/client.ts';
import { readMigrationFiles } from '../../src/db/migrate.ts';

/**
 * A token, code or secret of any kind Kassa issues, whatever the prefix, or a checkout's client
 * secret (client ids, `_ci_`, are public); or a Stripe secret Kassa is configured with: a secret or
 * restricted API key, or a webhook signing secret (publishable keys are public).
 */
const secretInLog = /[a-z][a-z0-9]{1,15}_((oat|us|pat|cst|whs|at|rt|ac|cs|rat)_[0-9A-Za-z]{36}|c_[A-Za-z0-9_-]{32})|\b(sk|rk)_(live|test)_[0-9A-Za-z]+|\bwhsec_[0-9A-Za-z]+/;

export const postgresAdminUrl = process.env.KASSA_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const usePostgres = process.env.KASSA_TEST_DATABASE === 'postgres';

export interface TestServer {
  kassa: Kassa;
  url: string;
  config: Config;
  /** Everything the server logged, one JSON line each. */
  logs: string[];
  /** The API base of an environment: `${url}/v1` or `${url}/sandbox/v1`. */
  base(environment?: EnvironmentName): string;
  /** A user, an organization and an all-scopes organization token, made through the services. */
  bootstrap(environment?: EnvironmentName, options?: BootstrapOptions): Promise<{ userEmail: string; userPassword: string; organizationId: string; token: string }>;
  clock: { now: Date | null };
  close(): Promise<void>;
}

export async function createPostgresDatabases(): Promise<{ env: Record<string, string>; drop: () => Promise<void> }> {
  const suffix = randomBytes(4).toString('hex');
  const names = [`kassa_test_${suffix}_production`, `kassa_test_${suffix}_sandbox`];
  const admin = new pg.Client({ connectionString: postgresAdminUrl });
  await admin.connect();
  for (const name of names) await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = (name: string) => {
    const u = new URL(postgresAdminUrl);
    u.pathname = `/${name}`;
    return u.toString();
  };
  return {
    env: { DATABASE_URL: url(names[0]), SANDBOX_DATABASE_URL: url(names[1]), DATABASE_POOL_SIZE: '5' },
    async drop() {
      const client = new pg.Client({ connectionString: postgresAdminUrl });
      await client.connect();
      for (const name of names) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

let memoryImage: Promise<ArrayBuffer> | undefined;

/**
 * A migrated embedded database to start every in-memory one from: creating a cluster takes
 * seconds, loading an image a fraction of one. Kept on disk, named by the PGlite version and the
 * migrations, so each test process makes it at most once and a changed migration makes a new one.
 */
export function testMemoryImage(): Promise<ArrayBuffer> {
  memoryImage ??= (async () => {
    const pglitePackage = new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url);
    const pgliteVersion = (JSON.parse(await readFile(pglitePackage, 'utf8')) as { version: string }).version;
    // The image's recipe (migratedMemoryImage) counts too: `templates-dropped` since it leaves them out.
    const digest = createHash('sha256').update(`${pgliteVersion}\ntemplates-dropped\n`);
    for (const migration of await readMigrationFiles()) digest.update(`${migration.name}:${migration.checksum}\n`);
    const folder = new URL('../../node_modules/.cache/kassa/', import.meta.url);
    const name = `memory-image-${digest.digest('hex').slice(0, 16)}.tar`;
    const file = new URL(name, folder);
    const cached = await readFile(file).catch(() => null);
    if (cached) return cached.buffer.slice(cached.byteOffset, cached.byteOffset + cached.byteLength);
    const image = await migratedMemoryImage();
    await mkdir(folder, { recursive: true });
    // Written aside and renamed, so a process reading it never sees half an image.
    const partial = new URL(`${name}.${process.pid}.${randomBytes(4).toString('hex')}`, folder);
    await writeFile(partial, new Uint8Array(image));
    await rename(partial, file);
    return image;
  })();
  return memoryImage;
}

export async function startTestServer(env: Record<string, string> = {}): Promise<TestServer> {
  const databases = usePostgres ? await createPostgresDatabases() : { env: { DATA_DIR: 'memory://' }, drop: async () => {} };
  // Every test talks from 127.0.0.1: the per-address limits are off unless a test turns them on.
  const config = loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', RATE_LIMITS: 'off', ...databases.env, ...env });
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const clock = { now: null as Date | null };
  const kassa = await startKassa(config, createLogger(config.logLevel, sink), {
    clock: () => clock.now ?? new Date(),
    memoryImage: usePostgres ? undefined : await testMemoryImage(),
  });
  return {
    kassa,
    url: kassa.url,
    config,
    logs,
    clock,
    base: (environment = 'production') => `${kassa.url}${environment === 'sandbox' ? '/sandbox' : ''}/v1`,
    async bootstrap(environment = 'production', options = {}) {
      const result = await bootstrapEnvironment(kassa.environments[environment].environment.prisma, config, options);
      return { userEmail: result.user_email, userPassword: result.user_password, organizationId: result.organization_id, token: result.organization_access_token };
    },
    async close() {
      await kassa.close();
      await databases.drop();
      // Every end-to-end test doubles as a check that no secret Kassa issued reached the log.
      const leaked = logs.filter((line) => secretInLog.test(line));
      if (leaked.length) throw new Error(`The server logged ${leaked.length} line(s) holding a token or secret, first: ${leaked[0].slice(0, 500)}`);
    },
  };
}

/** A REST client of `restClient`, and what it answers. */
export type Api = ReturnType<typeof restClient>;
export type RestResponse = Awaited<ReturnType<Api>>;
/** A GraphQL client of `graphqlClient`, and what it answers. */
export type Gql = ReturnType<typeof graphqlClient>;
export type GqlResponse = Awaited<ReturnType<Gql>>;

/** A small JSON client for the REST surface. */
export function restClient(base: string, token?: string) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    let json: any = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {
      json = text;
    }
    return { status: response.status, body: json, headers: response.headers };
  };
}

/** A GraphQL client: returns the whole response body, the HTTP status and the response headers. */
export function graphqlClient(base: string, token?: string) {
  return async (query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
    const response = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as { data?: any; errors?: any[] } };
  };
}

/** Runs the due jobs until two rounds in a row find none: a job may schedule another. */
export async function settleJobs(jobs: { runDue(): Promise<number> }): Promise<void> {
  for (let idle = 0; idle < 2; ) idle = (await jobs.runDue()) === 0 ? idle + 1 : 0;
}

/**
 * Fixes the server's clock `hours` hours from the real time (a window of its own, past what other
 * tests wrote) and answers a function that moves it to that start plus some seconds.
 */
export function clockFrom(server: TestServer, hours: number): (seconds: number) => void {
  const start = Date.now() + hours * 3600_000;
  server.clock.now = new Date(start);
  return (seconds) => {
    server.clock.now = new Date(start + seconds * 1000);
  };
}

/**
 * Makes rows one minute apart on the server's clock (set back to real time after) until their ids
 * sort neither in the order they were made nor in its reverse, so a list's order cannot come out
 * right by the id tie-breaker alone. `make` creates the row number `index` and answers its id;
 * answers the ids in the order made (at least three).
 */
export async function madeOutOfIdOrder(server: TestServer, make: (index: number) => Promise<string>): Promise<string[]> {
  const made: string[] = [];
  const inIdOrder = (ids: string[]) => ids.every((id, i) => i === 0 || id < ids[i - 1]) || ids.every((id, i) => i === 0 || id > ids[i - 1]);
  const start = Date.now();
  try {
    while (made.length < 3 || inIdOrder(made)) {
      server.clock.now = new Date(start + made.length * 60_000);
      made.push(await make(made.length));
    }
  } finally {
    server.clock.now = null;
  }
  return made;
}
