// The `kassa` command: serve, migrate, bootstrap, personal access tokens, ID token signing keys,
// re-encrypting stored secrets, and writing the next migration.
import { parseArgs } from 'node:util';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import pg from 'pg';
import { ConfigError, environmentNames, loadConfig, type DatabaseConfig, type EnvironmentName } from './config.ts';
import { DatabaseLockedError, dataDirOwner, openDatabase } from './db/client.ts';
import { checkPending, describeVerdicts } from './db/migration-safety.ts';
import { databaseState, type DatabaseState } from './db/state.ts';
import { askServer, type StatusAnswer } from './backup/control.ts';
import { migrationsDir, pendingSchemaChange } from './db/schema-engine.ts';
import { migrate, readMigrationFiles } from './db/migrate.ts';
import { createLogger } from './logger.ts';
import { patUsage, runPersonalAccessTokenCommand } from './modules/personal-access-tokens/cli.ts';
import { runSigningKeysCommand, signingKeysUsage } from './oauth/cli.ts';
import { runSecretsCommand, secretsUsage } from './webhooks/cli.ts';
import { backupUsage, runBackupCommand, runRestoreCommand } from './backup/cli.ts';
import { stopTracing } from './tracing/start.ts';

const usage = `Usage: kassa <command> [options]

Commands:
  serve                          Start the API server (both environments). The default.
  migrate                        Apply pending database migrations to both environments.
  migrate --check                Print each pending migration and whether it is safe to apply while
                                 the running version serves; exit 2 when one is not.
  bootstrap [--environment production|sandbox] [--json] [--email EMAIL] [--organization NAME]
                                 Create a user, an organization and an all-scopes organization
                                 access token. With --json, print them as one JSON object.
${patUsage}
${signingKeysUsage}
${secretsUsage}
${backupUsage}
  migration create <name>        Write the next migration from the changes to prisma/schema.prisma.
  schema [--write]               Print the GraphQL schema (the contract in schema.graphql). With
                                 --write, write it to schema.graphql, refusing a breaking change
                                 that schema-changes.json does not declare.
  openapi [--environment production|sandbox]
                                 Print the REST API's OpenAPI 3.1 document, as the environment
                                 serves it at /v1/openapi.json (its server: PUBLIC_URL, else HOST:PORT).

Configuration comes from environment variables; see docs/configuration.md.`;

async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${usage}\n`);
    return 0;
  }
  switch (command) {
    case 'serve':
      return serve();
    case 'migrate':
      return rest[0] === '--check' ? checkMigrations() : migrateAll();
    case 'bootstrap':
      return runBootstrap(rest);
    case 'pat':
      return runPersonalAccessTokenCommand(rest);
    case 'signing-keys':
      return runSigningKeysCommand(rest);
    case 'secrets':
      return runSecretsCommand(rest);
    case 'backup':
      return runBackupCommand(rest);
    case 'restore':
      return runRestoreCommand(rest);
    case 'migration':
      return createMigration(rest);
    case 'schema':
      return printSchema(rest);
    case 'openapi':
      return printOpenApi(rest);
    default:
      process.stderr.write(`Unknown command "${command}".\n\n${usage}\n`);
      return 2;
  }
}

async function printSchema(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { write: { type: 'boolean', default: false } } });
  const printed = (await import('./graphql/schema.ts')).printContract();
  if (!values.write) {
    process.stdout.write(printed);
    return 0;
  }
  const root = new URL('../', import.meta.url);
  const file = new URL('schema.graphql', root);
  const committed = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (committed !== null) {
    const { describeUndeclared, readDeclarations, undeclaredBreakingChanges } = await import('./graphql/breaking-changes.ts');
    const undeclared = await undeclaredBreakingChanges(committed, printed, await readDeclarations(root));
    if (undeclared.length > 0) {
      process.stderr.write(`${describeUndeclared(undeclared)}\n\nschema.graphql was not written.\n`);
      return 1;
    }
  }
  await writeFile(file, printed);
  process.stdout.write(committed === printed ? 'schema.graphql is up to date.\n' : 'Wrote schema.graphql.\n');
  return 0;
}

async function serve(): Promise<number> {
  const config = loadConfig();
  const logger = createLogger(config.logLevel);
  const { startKassa } = await import('./server.ts');
  const kassa = await startKassa(config, logger);
  logger.info({ url: kassa.url, production: `${kassa.url}/v1`, sandbox: `${kassa.url}/sandbox/v1` }, 'Kassa is listening');
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'shutting down: finishing in-flight requests');
      process.once(signal, () => process.exit(1));
      kassa.close().then(resolve, (error) => {
        logger.error({ err: error }, 'shutdown failed');
        resolve();
      });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await stopTracing().catch((error) => logger.error({ err: error }, 'exporting the last spans failed'));
  logger.info('stopped');
  return 0;
}

async function migrateAll(): Promise<number> {
  const config = loadConfig();
  for (const name of environmentNames) {
    const database = await openDatabase(config.databases[name]);
    try {
      const applied = await migrate(database.migrationTarget);
      process.stdout.write(`${name}: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date'}\n`);
    } finally {
      await database.close();
    }
  }
  return 0;
}

/**
 * Each environment's pending migrations, judged against its database as it is now (a running
 * embedded server is asked through its control socket). Exits 0 when every one is safe, 2 otherwise.
 */
async function checkMigrations(): Promise<number> {
  const config = loadConfig();
  const migrations = await readMigrationFiles();
  let unsafe = false;
  for (const name of environmentNames) {
    const state = await stateOf(config.databases[name], name).catch((error: Error) => error);
    if (state instanceof Error) {
      process.stderr.write(`kassa migrate --check: the ${name} database cannot be read: ${state.message}\n`);
      return 1;
    }
    const verdicts = checkPending(migrations, state);
    unsafe ||= verdicts.some((verdict) => verdict.findings.length > 0);
    process.stdout.write(describeVerdicts(name, verdicts));
  }
  return unsafe ? 2 : 0;
}

async function stateOf(database: DatabaseConfig, name: EnvironmentName): Promise<DatabaseState> {
  if (database.kind === 'postgres') {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      return await databaseState(async (sql) => (await client.query(sql)).rows);
    } finally {
      await client.end();
    }
  }
  if (database.dataDir.startsWith('memory://')) return { migrations: [], tableBytes: {} };
  // A database not made yet has nothing the migrations could break.
  if (!(await stat(path.join(database.dataDir, 'PG_VERSION')).catch(() => null))) return { migrations: [], tableBytes: {} };
  if (await dataDirOwner(database.dataDir)) {
    const { answer } = await askServer(path.dirname(database.dataDir), 'status');
    const status = answer as StatusAnswer;
    if (!status.ok) throw new Error(status.error);
    return status.environments[name];
  }
  const opened = await openDatabase(database);
  try {
    return await databaseState((sql) => opened.migrationTarget.query(sql));
  } finally {
    await opened.close();
  }
}

async function printOpenApi(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { environment: { type: 'string', default: 'production' } } });
  const environment = values.environment as EnvironmentName;
  if (!environmentNames.includes(environment)) {
    process.stderr.write(`--environment must be production or sandbox (got "${values.environment}").\n`);
    return 2;
  }
  const config = loadConfig();
  const [{ restApiDocument }, { forServer }] = await Promise.all([import('./server.ts'), import('./rest/openapi.ts')]);
  // The base URL the server would take: PUBLIC_URL, else the address it listens on.
  const base = `${config.publicUrl || `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${config.port}`}${environment === 'sandbox' ? '/sandbox' : ''}`;
  process.stdout.write(`${JSON.stringify(forServer(restApiDocument(), base, environment), null, 2)}\n`);
  return 0;
}

async function runBootstrap(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      environment: { type: 'string', default: 'production' },
      json: { type: 'boolean', default: false },
      email: { type: 'string' },
      organization: { type: 'string' },
    },
  });
  if (!environmentNames.includes(values.environment as EnvironmentName)) {
    process.stderr.write(`--environment must be production or sandbox (got "${values.environment}").\n`);
    return 2;
  }
  const config = loadConfig();
  const { bootstrap } = await import('./bootstrap.ts');
  const result = await bootstrap(config, values.environment as EnvironmentName, { email: values.email, organizationName: values.organization });
  if (values.json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } else {
    process.stdout.write(
      [
        `Bootstrapped the ${values.environment} environment.`,
        `  user:                      ${result.user_email}`,
        `  password:                  ${result.user_password}`,
        `  organization id:           ${result.organization_id}`,
        `  organization access token: ${result.organization_access_token}`,
        'The password and token are shown only now.',
        '',
      ].join('\n'),
    );
  }
  return 0;
}

async function createMigration(args: string[]): Promise<number> {
  const [sub, rawName] = args;
  if (sub !== 'create' || !rawName) {
    process.stderr.write('Usage: kassa migration create <name>\n');
    return 2;
  }
  const name = rawName.toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');
  // The migrations are replayed into a throwaway in-memory database and compared with the schema.
  const sql = await pendingSchemaChange(new PrismaPGlite(new PGlite()));
  if (!sql) {
    process.stdout.write('prisma/schema.prisma and the migrations agree: nothing to write.\n');
    return 0;
  }
  const stamp = new Date().toISOString().replace(/\D/g, '').slice(0, 14);
  const dir = path.join(migrationsDir, `${stamp}_${name}`);
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, 'migration.sql'), sql);
  process.stdout.write(`Wrote ${path.relative(process.cwd(), dir)}/migration.sql\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  // Exits once stdout has taken everything written to it: a pipe takes it in 64 KB turns, and
  // exiting earlier would cut the output of `kassa schema | …` short.
  (code) => process.stdout.write('', () => process.exit(code)),
  (error) => {
    if (error instanceof ConfigError || error instanceof DatabaseLockedError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`kassa: ${(error as Error)?.stack ?? error}\n`);
    process.exit(1);
  },
);
