// First-run setup of an environment: a user, an organization they own, and an organization access
// token with every scope. The password and token exist in plaintext only in the result.
import { randomBytes } from 'node:crypto';
import type { Config, EnvironmentName } from './config.ts';
import { openDatabase, type Db } from './db/client.ts';
import { migrate } from './db/migrate.ts';
import { resourceScopes } from './auth/scopes.ts';
import { generatePassword } from './auth/passwords.ts';
import { createUser } from './modules/users/service.ts';
import { createOrganization, issueAccessToken } from './modules/organizations/service.ts';

export interface BootstrapResult {
  user_email: string;
  user_password: string;
  organization_id: string;
  organization_access_token: string;
}

export async function bootstrap(
  config: Config,
  environment: EnvironmentName,
  options: BootstrapOptions = {},
): Promise<BootstrapResult> {
  const database = await openDatabase(config.databases[environment]);
  try {
    await migrate(database.migrationTarget);
    return await bootstrapEnvironment(database.prisma, config, options);
  } finally {
    await database.close();
  }
}

export interface BootstrapOptions {
  email?: string;
  password?: string;
  organizationName?: string;
}

export async function bootstrapEnvironment(prisma: Db, config: Config, options: BootstrapOptions = {}): Promise<BootstrapResult> {
  const password = options.password ?? generatePassword();
  const email = options.email ?? `owner-${randomBytes(4).toString('hex')}@example.com`;
  const user = await createUser(prisma, { email, password });
  const organization = await createOrganization(prisma, { name: options.organizationName ?? 'My Organization', ownerId: user.id });
  const { token } = await issueAccessToken(prisma, config, organization.id, { comment: 'Created by kassa bootstrap', scopes: [...resourceScopes] }, new Date());
  return { user_email: user.email, user_password: password, organization_id: organization.id, organization_access_token: token };
}
