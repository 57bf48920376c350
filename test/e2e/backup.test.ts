// `kassa backup` and `kassa restore` as an operator runs them, in processes of their own: a backup
// taken while the server serves restores into fresh databases holding every row it held then (and
// nothing written after), and bad input is refused with a clear message, exit code 1 and nothing
// written. On the embedded database the running server is read through its control socket; on
// PostgreSQL pg_dump and pg_restore do the work.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, open, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { environmentNames, type EnvironmentName } from '../../src/config.ts';
import { kassaBin } from '../helpers/processes.ts';
import { fixedProduct, createAndConfirmCheckout, paidOrderOf } from '../helpers/purchases.ts';
import { newOrganization } from '../helpers/organizations.ts';
import { postgresAdminUrl, restClient, startTestServer, testMemoryImage, usePostgres, type TestServer } from '../helpers/server.ts';
import { expectStatus } from '../helpers/responses.ts';

// Each test starts servers on databases on disk and several `kassa` processes.
vi.setConfig({ testTimeout: 240_000 });

let work: string;
beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'kassa-backup-'));
});
afterAll(() => rm(work, { recursive: true, force: true }));

function kassa(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [kassaBin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** What each environment holds after `populate`: the token that reads it, and the rows to find again. */
type Holdings = Record<EnvironmentName, { token: string; paths: string[] }>;

/** Products, a customer and a paid order in each environment. */
async function populate(server: TestServer): Promise<Holdings> {
  const holdings = {} as Holdings;
  for (const environment of environmentNames) {
    const org = await newOrganization(server, environment);
    const product = await fixedProduct(org, `Ebook ${environment}`);
    await fixedProduct(org, `Course ${environment}`, 4999);
    const customer = expectStatus(await org.api('POST', '/customers/', { email: `ada-${environment}@example.com`, name: 'Ada' }), 201);
    const checkout = await createAndConfirmCheckout(org, product.id, `buyer-${environment}@example.com`);
    const order = await paidOrderOf(org, checkout.id);
    holdings[environment] = { token: org.token, paths: [`/products/${product.id}`, `/customers/${customer.id}`, `/orders/${order.id}`, '/products/?limit=100'] };
  }
  return holdings;
}

/** Every table's row count, per environment. */
async function rowCounts(server: TestServer): Promise<Record<EnvironmentName, Record<string, number>>> {
  const counts = {} as Record<EnvironmentName, Record<string, number>>;
  for (const environment of environmentNames) {
    const prisma = server.kassa.environments[environment].environment.prisma;
    const tables = await prisma.$queryRawUnsafe<{ name: string }[]>(`SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`);
    counts[environment] = {};
    for (const { name } of tables) counts[environment][name] = Number((await prisma.$queryRawUnsafe<{ n: bigint }[]>(`SELECT count(*) AS n FROM "${name}"`))[0].n);
  }
  return counts;
}

/** The REST bodies of the rows to find again. */
async function bodies(server: TestServer, holdings: Holdings) {
  const read = {} as Record<EnvironmentName, unknown[]>;
  for (const environment of environmentNames) {
    const api = restClient(server.base(environment), holdings[environment].token);
    read[environment] = await Promise.all(holdings[environment].paths.map(async (p) => expectStatus(await api('GET', p), 200)));
  }
  return read;
}

/** Stops the background work, so the rows stay as they are while they are counted and backed up. */
async function quiesce(server: TestServer) {
  for (const environment of environmentNames) {
    await server.kassa.environments[environment].jobs.stop();
    await server.kassa.environments[environment].webhooks.stop();
  }
}

/** Makes requests until `until` settles; returns their statuses. */
async function serveMeanwhile(server: TestServer, holdings: Holdings, until: Promise<unknown>): Promise<number[]> {
  const statuses: number[] = [];
  let done = false;
  void until.finally(() => (done = true));
  const api = restClient(server.base('production'), holdings.production.token);
  while (!done) statuses.push((await api('GET', '/products/?limit=100')).status);
  return statuses;
}

/** Writes `bytes` over a file's content at `offset`. */
async function overwrite(file: string, offset: number, bytes: Buffer) {
  const handle = await open(file, 'r+');
  await handle.write(bytes, 0, bytes.length, offset);
  await handle.close();
}

const exists = (p: string) => stat(p).then(() => true, () => false);

describe.skipIf(usePostgres)('on the embedded database', () => {
  const afterRestore = { JOB_POLL_INTERVAL_MS: '60000' };

  it('a backup taken while the server serves restores into a fresh DATA_DIR with every row, and nothing written after it', async () => {
    const dataDir = path.join(work, 'data');
    // Both data directories start migrated, from the image the in-memory test databases start from.
    const image = await testMemoryImage();
    await mkdir(dataDir);
    for (const environment of environmentNames) await (await PGlite.create(path.join(dataDir, environment), { loadDataDir: new Blob([image]) })).close();
    const server = await startTestServer({ DATA_DIR: dataDir, TEST_CARD_DELAY_MS: '0' });
    let holdings: Holdings;
    let counts: Awaited<ReturnType<typeof rowCounts>>;
    let read: Awaited<ReturnType<typeof bodies>>;
    const backups = path.join(work, 'backups');
    await mkdir(backups);
    try {
      holdings = await populate(server);
      await quiesce(server);
      counts = await rowCounts(server);
      read = await bodies(server, holdings);
      const backup = kassa(['backup', backups], { DATA_DIR: dataDir });
      // The running server answers `migrate --check` through the same control socket.
      const check = kassa(['migrate', '--check'], { DATA_DIR: dataDir });
      const statuses = await serveMeanwhile(server, holdings, Promise.all([backup, check]));
      const result = await backup;
      expect(await check).toMatchObject({ code: 0, stdout: 'production: up to date\nsandbox: up to date\n' });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Wrote .*kassa-backup-\d{8}T\d{6}Z\.tar \(embedded: production \d+ bytes, \d+ migrations; sandbox/);
      expect(statuses.length).toBeGreaterThan(0);
      expect(new Set(statuses)).toEqual(new Set([200]));
      // Written after the backup: not in it.
      const late = restClient(server.base('production'), holdings.production.token);
      expectStatus(await late('POST', '/products/', { name: 'After the backup', prices: [{ amount_type: 'free' }] }), 201);
    } finally {
      await server.close();
    }
    const [file] = await readdir(backups);

    const restoredDir = path.join(work, 'restored');
    const restore = await kassa(['restore', path.join(backups, file)], { DATA_DIR: restoredDir });
    expect(restore.stderr).toBe('');
    expect(restore.code).toBe(0);
    expect(restore.stdout).toContain('Restored the backup of');
    expect((await readdir(restoredDir)).sort()).toEqual(['production', 'sandbox']);

    const restored = await startTestServer({ DATA_DIR: restoredDir, ...afterRestore });
    try {
      expect(await rowCounts(restored)).toEqual(counts);
      expect(await bodies(restored, holdings)).toEqual(read);
    } finally {
      await restored.close();
    }

  });

  it('refuses bad input with a clear message and exit code 1, writing nothing', async () => {
    const backups = path.join(work, 'backups');
    const [file] = await readdir(backups);
    const original = path.join(backups, file);
    const copy = async (name: string) => {
      const target = path.join(work, name);
      await copyFile(original, target);
      return target;
    };
    // The manifest's text starts after the archive's first header; its part follows its padding.
    const badManifest = await copy('bad-manifest.tar');
    await overwrite(badManifest, 512, Buffer.from('{"format": kassa'));
    const badChecksum = await copy('bad-checksum.tar');
    const manifestSize = await readHeaderSize(badChecksum, 0);
    const productionData = 512 + Math.ceil(manifestSize / 512) * 512 + 512;
    await overwrite(badChecksum, productionData + 4096, randomBytes(16));

    const fresh = () => path.join(work, `fresh-${randomBytes(4).toString('hex')}`);
    const cases = [
      { args: ['backup', path.join(work, 'missing', 'dir', 'b.tar')], env: { DATA_DIR: path.join(work, 'data') }, message: `The directory ${path.join(work, 'missing', 'dir')} does not exist` },
      { args: ['restore', badManifest], env: { DATA_DIR: fresh() }, message: 'is not valid JSON: the backup is damaged' },
      { args: ['restore', badChecksum], env: { DATA_DIR: fresh() }, message: 'The production database in' },
      { args: ['restore', original], env: { DATA_DIR: path.join(work, 'restored') }, message: 'is not empty: restore into a new DATA_DIR, or pass --force' },
    ];
    const results = await Promise.all(cases.map((c) => kassa(c.args, c.env)));
    for (const [i, result] of results.entries()) {
      expect(result.stderr).toContain(cases[i].message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.code).toBe(1);
    }
    for (const c of cases.slice(1, 3)) expect(await exists(c.env.DATA_DIR)).toBe(false);
    // The restored DATA_DIR it refused is as the first test left it.
    expect((await readdir(path.join(work, 'restored'))).sort()).toEqual(['production', 'sandbox']);
    expect(results[2].stderr).toContain('does not match its checksum in the manifest');
    expect(await exists(path.join(work, 'missing'))).toBe(false);
  });
});

/** The size field of the tar header at `offset`, in decimal. */
async function readHeaderSize(file: string, offset: number): Promise<number> {
  const handle = await open(file, 'r');
  const h = Buffer.alloc(512);
  await handle.read(h, 0, 512, offset);
  await handle.close();
  return parseInt(h.toString('ascii', 124, 136), 8);
}

describe.runIf(usePostgres)('on PostgreSQL', () => {
  const created: string[] = [];
  afterAll(async () => {
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    for (const name of created) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });

  async function emptyDatabases(): Promise<Record<string, string>> {
    const suffix = randomBytes(4).toString('hex');
    const names = [`kassa_restore_${suffix}_production`, `kassa_restore_${suffix}_sandbox`];
    const admin = new pg.Client({ connectionString: postgresAdminUrl });
    await admin.connect();
    for (const name of names) {
      await admin.query(`CREATE DATABASE ${name}`);
      created.push(name);
    }
    await admin.end();
    const url = (name: string) => Object.assign(new URL(postgresAdminUrl), { pathname: `/${name}` }).toString();
    return { DATABASE_URL: url(names[0]), SANDBOX_DATABASE_URL: url(names[1]) };
  }

  it('pg_dump while the server serves, pg_restore into empty databases: every row is there', async () => {
    const server = await startTestServer({ PRODUCTION_PAYMENT_PROCESSOR: 'test', TEST_CARD_DELAY_MS: '0' });
    const source = { DATABASE_URL: (server.config.databases.production as { url: string }).url, SANDBOX_DATABASE_URL: (server.config.databases.sandbox as { url: string }).url };
    const file = path.join(work, 'postgres.tar');
    let holdings: Holdings;
    let counts: Awaited<ReturnType<typeof rowCounts>>;
    let read: Awaited<ReturnType<typeof bodies>>;
    try {
      holdings = await populate(server);
      await quiesce(server);
      counts = await rowCounts(server);
      read = await bodies(server, holdings);
      const backup = kassa(['backup', file], source);
      const statuses = await serveMeanwhile(server, holdings, backup);
      const result = await backup;
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('(postgres: production');
      expect(new Set(statuses)).toEqual(new Set([200]));

      // Into databases that are not empty (the server's own): refused, nothing changed.
      const refused = await kassa(['restore', file], source);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('The production database (DATABASE_URL) is not empty');
    } finally {
      await server.close();
    }

    const target = await emptyDatabases();
    const restore = await kassa(['restore', file], target);
    expect(restore.stderr).toBe('');
    expect(restore.code).toBe(0);
    const restored = await startTestServer({ ...target, JOB_POLL_INTERVAL_MS: '60000' });
    try {
      expect(await rowCounts(restored)).toEqual(counts);
      expect(await bodies(restored, holdings)).toEqual(read);
    } finally {
      await restored.close();
    }
  });
});
