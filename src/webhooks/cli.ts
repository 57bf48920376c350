// `kassa secrets rekey`: re-encrypts the stored secrets (webhook signing secrets, private ID token
// signing keys) under SECRETS_KEY, once every process reads the old key from SECRETS_KEY_PREVIOUS.
import { parseArgs } from 'node:util';
import { environmentNames, loadConfig, type EnvironmentName } from '../config.ts';
import { openDatabase } from '../db/client.ts';
import { rekeySecrets } from './rekey.ts';

export const secretsUsage = `  secrets rekey [--environment production|sandbox]
                                 Re-encrypt every stored secret under SECRETS_KEY (both
                                 environments by default); exit 1 listing the rows no key opens.`;

class UsageError extends Error {}

export async function runSecretsCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  try {
    if (sub === 'rekey') return await rekey(rest);
    throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'name a subcommand: rekey');
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`kassa secrets: ${(error as Error).message}\n\nUsage:\n${secretsUsage}\n`);
      return 2;
    }
    throw error;
  }
}

async function rekey(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, strict: true, options: { environment: { type: 'string' } } });
  if (values.environment !== undefined && !environmentNames.includes(values.environment as EnvironmentName)) {
    throw new UsageError(`--environment must be production or sandbox (got "${values.environment}")`);
  }
  const names = values.environment ? [values.environment as EnvironmentName] : environmentNames;
  const config = loadConfig();
  let failed = false;
  for (const name of names) {
    const database = await openDatabase(config.databases[name]);
    try {
      const result = await rekeySecrets({ config, prisma: database.prisma });
      process.stdout.write(`${name}: ${result.reencrypted} re-encrypted, ${result.current} already current, ${result.undecryptable.length} cannot be decrypted\n`);
      for (const row of result.undecryptable) process.stdout.write(`  cannot be decrypted: ${row.kind} ${row.id}\n`);
      if (result.undecryptable.length) failed = true;
    } finally {
      await database.close();
    }
  }
  if (failed) process.stderr.write('kassa secrets: some secrets open with no configured key: list the key they were stored under in SECRETS_KEY_PREVIOUS and run again, or reset them.\n');
  return failed ? 1 : 0;
}
