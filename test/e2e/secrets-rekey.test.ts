// Rotating SECRETS_KEY as an operator does it, on the embedded database (the server stopped between
// steps): key A, then B with A in SECRETS_KEY_PREVIOUS, `kassa secrets rekey`, then B alone. Webhook
// deliveries stay signed with the endpoint's secret and ID tokens keep being issued throughout; A
// alone after the rekey, or a wrong previous key, opens nothing.
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnvironmentName } from '../../src/config.ts';
import { kassaBin, serveProcess, type ServeProcess } from '../helpers/processes.ts';
import { codeFlowTokens, registerClient, userSessionToken } from '../helpers/oauth.ts';
import type { TestServer } from '../helpers/server.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';

const A = randomBytes(32).toString('hex');
const B = randomBytes(32).toString('hex');
const C = randomBytes(32).toString('base64');
const redirectUri = 'http://127.0.0.1:9/callback';

let dataDir: string;
let receiver: Receiver;
type Credentials = { user_email: string; user_password: string; organization_id: string; organization_access_token: string };
const credentials = {} as Record<EnvironmentName, Credentials>;
let endpointId: string;

function run(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [kassaBin, ...args], { env: { ...process.env, DATA_DIR: dataDir, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs `steps` against `kassa serve` with `env`, then stops it cleanly (the embedded database allows one process). */
async function serving<T>(env: Record<string, string>, steps: (server: ServeProcess) => Promise<T>): Promise<T> {
  const server = await serveProcess({ DATA_DIR: dataDir, ...env });
  try {
    return await steps(server);
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
  }
}

const base = (server: ServeProcess, environment: EnvironmentName) => `${server.url}${environment === 'sandbox' ? '/sandbox' : ''}`;
const asTestServer = (server: ServeProcess) => ({ url: server.url, base: (environment: EnvironmentName) => `${base(server, environment)}/v1` }) as unknown as TestServer;

/** A customer created in sandbox, and the webhook delivery it causes, as the receiver verified it. */
async function delivery(server: ServeProcess) {
  const before = receiver.receipts.length;
  const response = await fetch(`${base(server, 'sandbox')}/v1/customers/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${credentials.sandbox.organization_access_token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: `rekey-${randomBytes(4).toString('hex')}@example.com` }),
  });
  expect(response.status).toBe(201);
  const deadline = Date.now() + 30_000;
  while (receiver.receipts.length === before && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return receiver.receipts[before];
}

/** An ID token through the provider's real pages and token endpoint, in production. */
async function idToken(server: ServeProcess) {
  const user = { email: credentials.production.user_email, password: credentials.production.user_password };
  const testServer = asTestServer(server);
  const client = await registerClient(testServer, 'production', await userSessionToken(testServer, 'production', user.email, user.password), {
    redirect_uris: [redirectUri],
    scope: 'openid profile email',
  });
  return codeFlowTokens(testServer, 'production', client, { scope: 'openid email', user, organizationId: credentials.production.organization_id, redirectUri, params: { nonce: 'n' } });
}

async function expectWorking(server: ServeProcess) {
  const receipt = await delivery(server);
  expect(receipt?.refused).toBeNull();
  expect(receipt.event.type).toBe('customer.created');
  const tokens = await idToken(server);
  expect(tokens.status).toBe(200);
  expect(tokens.body.id_token).toEqual(expect.any(String));
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'kassa-rekey-'));
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('SECRETS_KEY rotation', () => {
  it('keeps deliveries signed and ID tokens issued from key A, through A and B together and the rekey, to B alone', async () => {
    for (const environment of ['production', 'sandbox'] as const) {
      const result = await run(['bootstrap', '--environment', environment, '--json'], { SECRETS_KEY: A });
      expect(result.code).toBe(0);
      credentials[environment] = JSON.parse(result.stdout);
    }
    await serving({ SECRETS_KEY: A }, async (server) => {
      const created = await fetch(`${base(server, 'sandbox')}/v1/webhooks/endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${credentials.sandbox.organization_access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url, format: 'raw', events: ['customer.created'] }),
      });
      expect(created.status).toBe(201);
      const body = await created.json();
      receiver.secret = body.secret;
      endpointId = body.id;
      await expectWorking(server);
    });

    await serving({ SECRETS_KEY: B, SECRETS_KEY_PREVIOUS: A }, async (server) => {
      expect(server.output()).not.toContain('cannot be decrypted');
      await expectWorking(server);
    });

    const rekeyed = await run(['secrets', 'rekey'], { SECRETS_KEY: B, SECRETS_KEY_PREVIOUS: A });
    expect(rekeyed.stderr).toBe('');
    expect(rekeyed.code).toBe(0);
    // Production: its signing key. Sandbox: its signing key and the endpoint's secret.
    expect(rekeyed.stdout).toBe('production: 1 re-encrypted, 0 already current, 0 cannot be decrypted\nsandbox: 2 re-encrypted, 0 already current, 0 cannot be decrypted\n');
    const again = await run(['secrets', 'rekey', '--environment', 'sandbox'], { SECRETS_KEY: B, SECRETS_KEY_PREVIOUS: A });
    expect(again.stdout).toBe('sandbox: 0 re-encrypted, 2 already current, 0 cannot be decrypted\n');
    expect(again.code).toBe(0);

    await serving({ SECRETS_KEY: B }, async (server) => {
      expect(server.output()).not.toContain('cannot be decrypted');
      await expectWorking(server);
    });
  }, 300_000);

  it('with only the old key after the rekey: says so at start, issues no ID token and sends nothing unsigned', async () => {
    await serving({ SECRETS_KEY: A }, async (server) => {
      expect(server.output()).toContain('the ID token signing key cannot be decrypted');
      const before = receiver.receipts.length;
      const response = await fetch(`${base(server, 'sandbox')}/v1/customers/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${credentials.sandbox.organization_access_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'old-key@example.com' }),
      });
      expect(response.status).toBe(201);
      const deadline = Date.now() + 30_000;
      while (!server.output().includes('webhook attempt failed') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(server.output()).toContain('webhook attempt failed');
      expect(receiver.receipts.length).toBe(before);
      const tokens = await idToken(server);
      expect(tokens.status).not.toBe(200);
      expect(tokens.body.id_token).toBeUndefined();
    });
  }, 120_000);

  it('a wrong previous key decrypts nothing: rekey lists every row by id, exits 1 and changes none', async () => {
    const kid = async (environment: EnvironmentName) => JSON.parse((await run(['signing-keys', 'list', '--environment', environment, '--json'], { SECRETS_KEY: B })).stdout)[0].kid as string;
    const [productionKid, sandboxKid] = [await kid('production'), await kid('sandbox')];
    const refused = await run(['secrets', 'rekey'], { SECRETS_KEY: C, SECRETS_KEY_PREVIOUS: A });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('production: 0 re-encrypted, 0 already current, 1 cannot be decrypted\n');
    expect(refused.stdout).toContain(`  cannot be decrypted: signing key ${productionKid}\n`);
    expect(refused.stdout).toContain('sandbox: 0 re-encrypted, 0 already current, 2 cannot be decrypted\n');
    expect(refused.stdout).toContain(`  cannot be decrypted: webhook endpoint ${endpointId}\n`);
    expect(refused.stdout).toContain(`  cannot be decrypted: signing key ${sandboxKid}\n`);
    expect(refused.stderr).toContain('SECRETS_KEY_PREVIOUS');
    // Nothing was rewritten: B still opens everything, as the current key.
    const unchanged = await run(['secrets', 'rekey'], { SECRETS_KEY: B });
    expect(unchanged.code).toBe(0);
    expect(unchanged.stdout).toBe('production: 0 re-encrypted, 1 already current, 0 cannot be decrypted\nsandbox: 0 re-encrypted, 2 already current, 0 cannot be decrypted\n');
  }, 120_000);

  it('refuses a malformed SECRETS_KEY_PREVIOUS at start, naming the variable', async () => {
    const result = await run(['secrets', 'rekey'], { SECRETS_KEY: B, SECRETS_KEY_PREVIOUS: 'abc' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Invalid configuration: SECRETS_KEY_PREVIOUS key 1 must be 32 random bytes');
  });
});
