// `kassa signing-keys`, run in this process on a data directory of its own: every line it prints,
// every usage error and its exit status. (`cli.test.ts` runs the same command as a separate process.)
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { openDatabase } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { runSigningKeysCommand, signingKeysUsage } from '../../src/oauth/cli.ts';
import { activeSigningKey } from '../../src/oauth/signing-keys.ts';

// Each command opens and migrates an embedded database.
vi.setConfig({ testTimeout: 120_000 });

let dataDir: string;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'kassa-signing-keys-'));
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await rm(dataDir, { recursive: true, force: true });
});

function stubEnv(env: Record<string, string>) {
  vi.stubEnv('DATA_DIR', dataDir);
  vi.stubEnv('DATABASE_URL', env.DATABASE_URL ?? '');
  vi.stubEnv('SANDBOX_DATABASE_URL', env.SANDBOX_DATABASE_URL ?? '');
  vi.stubEnv('OIDC_SIGNING_ALGORITHM', env.OIDC_SIGNING_ALGORITHM ?? 'RS256');
}

/** The embedded databases' lock files left in the data directory: none once a command has ended. */
async function locksLeft() {
  return (await readdir(dataDir, { recursive: true })).filter((name) => name.endsWith('kassa.lock'));
}

/** Runs the command with DATA_DIR on the test's directory and the given variables; returns what it wrote. */
async function run(args: string[], env: Record<string, string> = {}) {
  stubEnv(env);
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((stdout += String(chunk)), true));
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((stderr += String(chunk)), true));
  try {
    const code = await runSigningKeysCommand(args);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

const usage = (message: string) => `kassa signing-keys: ${message}\n\nUsage:\n${signingKeysUsage}\n`;
const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('kassa signing-keys', () => {
  it('refuses a missing or unknown subcommand, an unknown environment and an unknown option with usage and status 2', async () => {
    expect(await run([])).toEqual({ code: 2, stdout: '', stderr: usage('name a subcommand: rotate or list') });
    expect(await run(['spin'])).toEqual({ code: 2, stdout: '', stderr: usage('unknown subcommand "spin"') });
    expect(await run(['rotate', '--environment', 'staging'])).toEqual({ code: 2, stdout: '', stderr: usage('--environment must be production or sandbox (got "staging")') });
    expect(await run(['list', '--environment', 'live'])).toEqual({ code: 2, stdout: '', stderr: usage('--environment must be production or sandbox (got "live")') });
    for (const [args, option] of [[['list', '--all'], '--all'], [['rotate', '--force'], '--force']] as const) {
      const unknownOption = await run([...args]);
      expect(unknownOption.code).toBe(2);
      expect(unknownOption.stdout).toBe('');
      expect(unknownOption.stderr).toMatch(new RegExp(`^kassa signing-keys: Unknown option '${option}'`));
      expect(unknownOption.stderr.endsWith(`\n\nUsage:\n${signingKeysUsage}\n`)).toBe(true);
    }
    const noValue = await run(['rotate', '--environment']);
    expect([noValue.code, noValue.stdout]).toEqual([2, '']);
    expect(noValue.stderr).toMatch(/^kassa signing-keys: Option '--environment <value>' argument missing/);
    // A failure that is not a usage error is not dressed up as one, even when it has an error code.
    await expect(run(['rotate'], { OIDC_SIGNING_ALGORITHM: 'HS256' })).rejects.toThrow(/OIDC_SIGNING_ALGORITHM/);
    const unreachable = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/kassa', SANDBOX_DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/kassa_sandbox' };
    await expect(run(['list'], unreachable)).rejects.toMatchObject({ code: expect.any(String) });
    expect(await locksLeft()).toEqual([]);
  });

  it('lists no key, then rotates and lists each environment by itself, in text and JSON', async () => {
    expect(await run(['list'])).toEqual({ code: 0, stdout: 'production: no signing key yet; the first start of the server makes one.\n', stderr: '' });
    expect(await run(['list', '--environment', 'sandbox', '--json'])).toEqual({ code: 0, stdout: '[]\n', stderr: '' });

    const first = await run(['rotate']);
    expect(first.code).toBe(0);
    const firstKid = /^production: ID tokens are now signed with key (\S+) \(RS256\); retired no key, published until the tokens it signed expire\.\n$/.exec(first.stdout)?.[1];
    expect(firstKid).toBeDefined();

    const second = await run(['rotate', '--environment', 'production'], { OIDC_SIGNING_ALGORITHM: 'ES256' });
    const secondKid = new RegExp(`^production: ID tokens are now signed with key (\\S+) \\(ES256\\); retired ${firstKid}, published until the tokens it signed expire\\.\\n$`).exec(second.stdout)?.[1];
    expect(secondKid).toBeDefined();
    expect(secondKid).not.toBe(firstKid);

    const listed = JSON.parse((await run(['list', '--json'])).stdout);
    expect(listed).toEqual([
      { kid: secondKid, algorithm: 'ES256', signing: true, created_at: expect.stringMatching(iso), retired_at: null, published_until: null },
      { kid: firstKid, algorithm: 'RS256', signing: false, created_at: expect.stringMatching(iso), retired_at: expect.stringMatching(iso), published_until: expect.stringMatching(iso) },
    ]);
    // Published for an ID token's lifetime (an hour) plus five minutes of leeway after retirement.
    expect(Date.parse(listed[1].published_until) - Date.parse(listed[1].retired_at)).toBe(3_900_000);
    expect(Date.parse(listed[0].created_at)).toBeGreaterThanOrEqual(Date.parse(listed[1].created_at));

    expect(await run(['list'])).toEqual({
      code: 0,
      stdout: `${secondKid}  ES256  signing\n${firstKid}  RS256  retired ${listed[1].retired_at}, published until ${listed[1].published_until}\n`,
      stderr: '',
    });
    // The sandbox's keys are its own.
    expect(await run(['list', '--environment', 'sandbox'])).toEqual({ code: 0, stdout: 'sandbox: no signing key yet; the first start of the server makes one.\n', stderr: '' });

    // A third rotation retires the second key too; the two retired ones stay listed while published.
    const third = await run(['rotate'], { OIDC_SIGNING_ALGORITHM: 'RS256' });
    expect(third.stdout).toContain(`retired ${secondKid}, published`);
    const afterThird = JSON.parse((await run(['list', '--json'])).stdout);
    expect(afterThird.map((k: { kid: string; signing: boolean }) => [k.kid, k.signing])).toEqual([
      [expect.any(String), true],
      [secondKid, false],
      [firstKid, false],
    ]);
    // A key retired before keeps its retirement and publication times.
    expect(afterThird[2]).toEqual(listed[1]);
    // Every command closed its databases.
    expect(await locksLeft()).toEqual([]);
  });

  it('the signing key is decrypted once per environment; an environment without a key says so', async () => {
    stubEnv({});
    const config = loadConfig();
    const database = await openDatabase(config.databases.sandbox);
    try {
      await migrate(database.migrationTarget);
      const store = { name: 'sandbox' as const, config, prisma: database.prisma };
      await expect(activeSigningKey(store)).rejects.toThrow('The sandbox environment has no ID token signing key: it is made at start-up.');
    } finally {
      await database.close();
    }
    expect((await run(['rotate', '--environment', 'sandbox'])).code).toBe(0);
    const reopened = await openDatabase(config.databases.sandbox);
    try {
      const store = { name: 'sandbox' as const, config, prisma: reopened.prisma };
      const first = await activeSigningKey(store);
      const second = await activeSigningKey(store);
      expect(second.kid).toBe(first.kid);
      expect(second.privateKey).toBe(first.privateKey);
      expect(first.algorithm).toBe('RS256');
    } finally {
      await reopened.close();
    }
  });
});
