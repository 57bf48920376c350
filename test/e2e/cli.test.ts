// The `kassa` command as an operator runs it: a separate process, a data directory on disk.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { kassaBin, serveProcess } from '../helpers/processes.ts';

// Every step here starts a separate Node process that opens two embedded databases.
vi.setConfig({ testTimeout: 60_000 });

const bin = kassaBin;
let dataDir: string;

function run(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { env: { ...process.env, DATA_DIR: dataDir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `kassa serve` on the test's data directory. */
function serve() {
  return serveProcess({ DATA_DIR: dataDir });
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'kassa-cli-'));
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

describe('kassa', () => {
  let credentials: { user_email: string; user_password: string; organization_id: string; organization_access_token: string };

  it('bootstrap --json prints one JSON object and nothing else on stdout', async () => {
    const result = await run(['bootstrap', '--environment', 'sandbox', '--json']);
    expect(result.code).toBe(0);
    credentials = JSON.parse(result.stdout);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    expect(Object.keys(credentials).sort()).toEqual(['organization_access_token', 'organization_id', 'user_email', 'user_password']);
    expect(credentials.organization_access_token).toMatch(/^service_oat_[0-9A-Za-z]{36}$/);
  });

  it('migrate reports both environments up to date after bootstrap created them', async () => {
    const result = await run(['migrate']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('sandbox: up to date');
    expect(result.stdout).toMatch(/production: (applied|up to date)/);
  });

  it('refuses a bad configuration with a message naming the variable', async () => {
    const result = await run(['serve'], { PORT: 'eighty' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration: PORT must be a whole number');
  });

  it('refuses to serve with a trusted documents file that does not exist, naming the variable', async () => {
    const result = await run(['serve'], { GRAPHQL_TRUSTED_DOCUMENTS: '/nonexistent/persisted-documents.json', GRAPHQL_TRUSTED_DOCUMENTS_ONLY: 'true' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration: GRAPHQL_TRUSTED_DOCUMENTS names a file that cannot be read');
  });

  it('refuses an unknown command with the usage', async () => {
    const result = await run(['frobnicate']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Usage: kassa');
  });

  it('signing-keys rotate makes a new key of OIDC_SIGNING_ALGORITHM sign and keeps the old one published; list shows both', async () => {
    // Bootstrap wrote no key: the first start, or the first rotation, makes one.
    expect(JSON.parse((await run(['signing-keys', 'list', '--environment', 'sandbox', '--json'])).stdout)).toEqual([]);
    expect((await run(['signing-keys', 'rotate', '--environment', 'sandbox'])).stdout).toContain('retired no key');
    const [first] = JSON.parse((await run(['signing-keys', 'list', '--environment', 'sandbox', '--json'])).stdout);
    expect(first).toMatchObject({ algorithm: 'RS256', signing: true, retired_at: null });

    const rotated = await run(['signing-keys', 'rotate', '--environment', 'sandbox'], { OIDC_SIGNING_ALGORITHM: 'ES256' });
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toContain(`retired ${first.kid}`);
    const after = JSON.parse((await run(['signing-keys', 'list', '--environment', 'sandbox', '--json'], { OIDC_SIGNING_ALGORITHM: 'ES256' })).stdout);
    expect(after).toHaveLength(2);
    expect(after[0]).toMatchObject({ algorithm: 'ES256', signing: true });
    expect(after[1]).toMatchObject({ kid: first.kid, signing: false, published_until: expect.any(String) });

    const refused = await run(['signing-keys', 'rotate'], { OIDC_SIGNING_ALGORITHM: 'HS256' });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('OIDC_SIGNING_ALGORITHM must be one of RS256, ES256');
  }, 120_000); // six processes of the command, each loading Kassa: minutes on a loaded machine

  it('serves the bootstrapped data, refuses to share its database, and finishes in-flight requests on SIGTERM', async () => {
    const server = await serve();
    const auth = { authorization: `Bearer ${credentials.organization_access_token}` };
    const listed = await fetch(`${server.url}/sandbox/v1/products/`, { headers: auth });
    expect(listed.status).toBe(200);

    const second = await run(['bootstrap', '--environment', 'sandbox', '--json']);
    expect(second.code).toBe(1);
    expect(second.stdout).toBe('');
    expect(second.stderr).toContain('in use by another Kassa process');

    // A request whose body is still arriving when the signal comes must still be answered.
    const body = JSON.stringify({ name: 'In flight', recurring_interval: null, prices: [{ amount_type: 'free' }] });
    const response = new Promise<{ status: number }>((resolve, reject) => {
      const req = request(
        `${server.url}/sandbox/v1/products/`,
        { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode! }));
        },
      );
      req.on('error', reject);
      req.write(body.slice(0, 10));
      setTimeout(() => {
        server.child.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(10)), 300);
      }, 100);
    });
    expect((await response).status).toBe(201);
    expect(await server.exited).toBe(0);
    expect(server.output()).toContain('shutting down');

    // After a clean stop the directory is free again, and what was written is still there.
    const again = await serve();
    const products = await (await fetch(`${again.url}/sandbox/v1/products/`, { headers: auth })).json();
    expect(products.items.map((p: { name: string }) => p.name)).toContain('In flight');
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
  }, 120_000);
});
