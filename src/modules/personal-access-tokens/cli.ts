// `kassa pat create|list|revoke`: a user manages their personal access tokens from a shell. The user
// proves who they are with their password (KASSA_PASSWORD, or the first line of stdin); a wrong
// password changes nothing.
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { environmentNames, loadConfig, type Config, type EnvironmentName } from '../../config.ts';
import { openDatabase, type Db } from '../../db/client.ts';
import { migrate } from '../../db/migrate.ts';
import { RequestValidationError, ResourceNotFoundError } from '../../graphql/errors.ts';
import { checkCredentials } from '../../auth/sessions.ts';
import { issuePersonalAccessToken, listUserTokens, revokeUserToken } from './service.ts';

export const patUsage = `  pat create --email EMAIL --scopes SCOPE,SCOPE [--comment TEXT] [--expires-in-days N]
             [--environment production|sandbox] [--json]
                                 Create a personal access token; the token is printed once.
                                 Without --expires-in-days it works until revoked.
  pat list --email EMAIL [--environment production|sandbox] [--json]
                                 List the user's live personal access tokens.
  pat revoke --email EMAIL --id ID [--environment production|sandbox]
                                 Revoke one of the user's personal access tokens.
                                 The pat commands read the user's password from KASSA_PASSWORD,
                                 or else from the first line of stdin.`;

const maxExpiryDays = 3650;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The service names fields as GraphQL does; the command line names its flags. */
const flagOfField: Record<string, string> = { comment: '--comment', scopes: '--scopes', expiresAt: '--expires-in-days' };

/** A mistake on the command line: printed with the usage hint, exit code 2. */
class UsageError extends Error {}
/** A refusal after the arguments were understood (wrong password, unknown token): exit code 1. */
class Refused extends Error {}

interface Common {
  email: string;
  environment: EnvironmentName;
  json: boolean;
}

export async function runPersonalAccessTokenCommand(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  try {
    switch (sub) {
      case 'create':
        return await create(rest);
      case 'list':
        return await list(rest);
      case 'revoke':
        return await revoke(rest);
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'name a subcommand: create, list or revoke');
    }
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`kassa pat: ${(error as Error).message}\n\nUsage:\n${patUsage}\n`);
      return 2;
    }
    if (error instanceof Refused) {
      process.stderr.write(`kassa pat: ${error.message}\n`);
      return 1;
    }
    if (error instanceof RequestValidationError) {
      for (const issue of error.issues) process.stderr.write(`kassa pat: ${flagOfField[String(issue.loc.at(-1))] ?? issue.loc.join('.')}: ${issue.msg}\n`);
      return 2;
    }
    throw error;
  }
}

const commonOptions = {
  email: { type: 'string' },
  environment: { type: 'string', default: 'production' },
  json: { type: 'boolean', default: false },
} as const;

function common(values: { email?: string; environment: string; json: boolean }): Common {
  if (!values.email) throw new UsageError('--email is required');
  if (!environmentNames.includes(values.environment as EnvironmentName)) {
    throw new UsageError(`--environment must be production or sandbox (got "${values.environment}")`);
  }
  return { email: values.email, environment: values.environment as EnvironmentName, json: values.json };
}

async function create(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    strict: true,
    options: { ...commonOptions, scopes: { type: 'string' }, comment: { type: 'string', default: 'Created with kassa pat create' }, 'expires-in-days': { type: 'string' } },
  });
  const options = common(values);
  if (!values.scopes) throw new UsageError('--scopes is required, e.g. --scopes products:read,orders:read');
  const scopes = values.scopes.split(',').map((s) => s.trim()).filter(Boolean);
  const expiresInDays = values['expires-in-days'] === undefined ? null : days(values['expires-in-days']);
  const created = await asUser(options, async (prisma, config, userId) => {
    const now = new Date();
    const expiresAt = expiresInDays === null ? null : new Date(now.getTime() + expiresInDays * 24 * 3600 * 1000);
    return issuePersonalAccessToken(prisma, config, userId, { comment: values.comment, scopes, expiresAt }, now);
  });
  const { record, token } = created;
  if (options.json) {
    process.stdout.write(`${JSON.stringify({ id: record.id, token, scopes: record.scopes, expires_at: record.expiresAt?.toISOString() ?? null })}\n`);
    return 0;
  }
  process.stdout.write(
    [
      `Created a personal access token for ${options.email} in the ${options.environment} environment.`,
      `  id:      ${record.id}`,
      `  token:   ${token}`,
      `  scopes:  ${record.scopes.join(', ')}`,
      `  expires: ${record.expiresAt?.toISOString() ?? 'never (it works until revoked with kassa pat revoke)'}`,
      'The token is shown only now.',
      '',
    ].join('\n'),
  );
  return 0;
}

async function list(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, strict: true, options: commonOptions });
  const options = common(values);
  const tokens = await asUser(options, async (prisma, _config, userId) => {
    const all = [];
    for (let page = 1; ; page++) {
      const { items, pagination } = await listUserTokens(prisma, userId, { page, limit: 100 });
      all.push(...items);
      if (page >= pagination.maxPage) return all;
    }
  });
  if (options.json) {
    const rows = tokens.map((t) => ({
      id: t.id,
      comment: t.comment,
      scopes: t.scopes,
      expires_at: t.expiresAt?.toISOString() ?? null,
      last_used_at: t.lastUsedAt?.toISOString() ?? null,
      created_at: t.createdAt.toISOString(),
    }));
    process.stdout.write(`${JSON.stringify(rows)}\n`);
    return 0;
  }
  if (tokens.length === 0) {
    process.stdout.write(`${options.email} has no live personal access tokens in the ${options.environment} environment.\n`);
    return 0;
  }
  for (const t of tokens) {
    process.stdout.write(
      `${t.id}  ${t.comment}\n  scopes: ${t.scopes.join(', ')}\n  created: ${t.createdAt.toISOString()}  expires: ${t.expiresAt?.toISOString() ?? 'never'}  last used: ${t.lastUsedAt?.toISOString() ?? 'never'}\n`,
    );
  }
  return 0;
}

async function revoke(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, strict: true, options: { ...commonOptions, id: { type: 'string' } } });
  const options = common(values);
  const id = values.id;
  if (!id || !uuidPattern.test(id)) throw new UsageError('--id must be the token\'s id (a UUID, as `kassa pat list` shows it)');
  try {
    await asUser(options, (prisma, _config, userId) => revokeUserToken(prisma, userId, id.toLowerCase(), new Date()));
  } catch (error) {
    if (error instanceof ResourceNotFoundError) throw new Refused(`${options.email} has no live personal access token ${id} in the ${options.environment} environment.`);
    throw error;
  }
  process.stdout.write(`Revoked personal access token ${id}: its next request gets 401.\n`);
  return 0;
}

function days(raw: string): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > maxExpiryDays) throw new UsageError(`--expires-in-days must be a whole number from 1 to ${maxExpiryDays} (got "${raw}")`);
  return value;
}

/**
 * Reads the password, opens the environment's database as `kassa bootstrap` does, and runs `work`
 * as the user only when the password is theirs.
 */
async function asUser<T>(options: Common, work: (prisma: Db, config: Config, userId: string) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const password = await readPassword();
  if (!password) throw new Refused('no password given: set KASSA_PASSWORD or write the password as the first line of stdin.');
  const database = await openDatabase(config.databases[options.environment]);
  try {
    await migrate(database.migrationTarget);
    const user = await checkCredentials(database.prisma, options.email, password);
    if (!user) throw new Refused(`unknown email or wrong password for ${options.email} in the ${options.environment} environment; nothing was changed.`);
    return await work(database.prisma, config, user.id);
  } finally {
    await database.close();
  }
}

async function readPassword(): Promise<string | null> {
  const fromEnvironment = process.env.KASSA_PASSWORD;
  if (fromEnvironment !== undefined) return fromEnvironment;
  if (process.stdin.isTTY) return readHiddenLine(process.stdin);
  const lines = createInterface({ input: process.stdin, terminal: false });
  for await (const line of lines) {
    lines.close();
    return line;
  }
  return null;
}

/** A password typed at a terminal is not echoed. */
function readHiddenLine(input: NodeJS.ReadStream): Promise<string | null> {
  process.stderr.write('Password: ');
  return new Promise((resolve) => {
    let line = '';
    const finish = (value: string | null) => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      process.stderr.write('\n');
      resolve(value);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return finish(line);
        if (ch === '\u0003') return finish(null);
        line = ch === '\u007f' || ch === '\b' ? line.slice(0, -1) : line + ch;
      }
    };
    input.setRawMode(true);
    input.setEncoding('utf8');
    input.on('data', onData);
    input.resume();
  });
}
