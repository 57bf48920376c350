// `kassa signing-keys rotate|list`: the operator's hand on the ID token signing keys. Rotation makes
// a new key sign from now on; the old one stays in the JWKS until the ID tokens it signed expire.
import { parseArgs } from 'node:util';
import { environmentNames, loadConfig, type EnvironmentName } from '../config.ts';
import { openDatabase } from '../db/client.ts';
import { migrate } from '../db/migrate.ts';
import { rotateSigningKey } from './signing-keys.ts';

export const signingKeysUsage = `  signing-keys rotate [--environment production|sandbox]
                                 Sign ID tokens with a new key of OIDC_SIGNING_ALGORITHM; the old
                                 key stays published until the ID tokens it signed have expired.
  signing-keys list [--environment production|sandbox] [--json]
                                 List the signing keys and which one signs.`;

class UsageError extends Error {}

export async function runSigningKeysCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  try {
    if (sub === 'rotate') return await rotate(rest);
    if (sub === 'list') return await list(rest);
    throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'name a subcommand: rotate or list');
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`kassa signing-keys: ${(error as Error).message}\n\nUsage:\n${signingKeysUsage}\n`);
      return 2;
    }
    throw error;
  }
}

function environmentOf(raw: string): EnvironmentName {
  if (!environmentNames.includes(raw as EnvironmentName)) throw new UsageError(`--environment must be production or sandbox (got "${raw}")`);
  return raw as EnvironmentName;
}

async function withKeys<T>(name: EnvironmentName, work: (store: Parameters<typeof rotateSigningKey>[0]) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const database = await openDatabase(config.databases[name]);
  try {
    await migrate(database.migrationTarget);
    return await work({ name, config, prisma: database.prisma });
  } finally {
    await database.close();
  }
}

async function rotate(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, strict: true, options: { environment: { type: 'string', default: 'production' } } });
  const name = environmentOf(values.environment);
  const algorithm = loadConfig().idTokenSigningAlgorithm;
  const rotated = await withKeys(name, (store) => rotateSigningKey(store, new Date(), algorithm));
  process.stdout.write(`${name}: ID tokens are now signed with key ${rotated.kid} (${algorithm}); retired ${rotated.retired.join(', ') || 'no key'}, published until the tokens it signed expire.\n`);
  return 0;
}

async function list(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, strict: true, options: { environment: { type: 'string', default: 'production' }, json: { type: 'boolean', default: false } } });
  const name = environmentOf(values.environment);
  const rows = await withKeys(name, (store) => store.prisma.signingKey.findMany({ orderBy: { createdAt: 'desc' }, select: { id: true, algorithm: true, createdAt: true, retiredAt: true, expiresAt: true } }));
  const keys = rows.map((k) => ({
    kid: k.id,
    algorithm: k.algorithm,
    signing: k.retiredAt === null,
    created_at: k.createdAt.toISOString(),
    retired_at: k.retiredAt?.toISOString() ?? null,
    published_until: k.expiresAt?.toISOString() ?? null,
  }));
  if (values.json) process.stdout.write(`${JSON.stringify(keys)}\n`);
  else if (keys.length === 0) process.stdout.write(`${name}: no signing key yet; the first start of the server makes one.\n`);
  else for (const k of keys) process.stdout.write(`${k.kid}  ${k.algorithm}  ${k.signing ? 'signing' : `retired ${k.retired_at}, published until ${k.published_until}`}\n`);
  return 0;
}
