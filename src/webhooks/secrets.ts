// Webhook signing secrets. Kassa must read a secret back to sign each delivery, so it is stored
// encrypted with AES-256-GCM under the environment's secrets key: SECRETS_KEY when configured
// (the key then never touches the database), else a random key kept in the environment's own
// database. Only the last characters (`hint`) are ever shown after the secret is first given out.
// Rotation: encryption always uses the current key; decryption tries the current key, then each of
// SECRETS_KEY_PREVIOUS, then (with SECRETS_KEY set) the database key used before SECRETS_KEY was.
// A key opens a secret only when the GCM tag verifies, so a wrong key never yields garbage.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Environment } from '../context.ts';
import { linkKey } from '../auth/signed-links.ts';
import { generateToken } from '../auth/tokens.ts';

/** What encryption needs of an environment: its configuration and its database. */
export type SecretStore = Pick<Environment, 'config' | 'prisma'>;

const databaseKeyName = 'secrets-key';

async function secretsKey(environment: SecretStore): Promise<Buffer> {
  return environment.config.secretsKey ?? linkKey(environment.prisma, databaseKeyName);
}

/** The keys tried after the current one, in order; read only when the current key fails. */
async function *olderKeys(environment: SecretStore): AsyncGenerator<Buffer> {
  yield* environment.config.previousSecretsKeys;
  if (environment.config.secretsKey) {
    // Never made here: it exists only if the environment ran before SECRETS_KEY was set.
    const row = await environment.prisma.secret.findUnique({ where: { name: databaseKeyName } });
    if (row) yield Buffer.from(row.value);
  }
}

/** Thrown when no configured key opens a stored secret (a wrong or missing key, or tampered data). */
export class UndecryptableSecretError extends Error {
  constructor() {
    super('A stored secret cannot be decrypted with SECRETS_KEY nor any of SECRETS_KEY_PREVIOUS (was SECRETS_KEY changed without listing the old key in SECRETS_KEY_PREVIOUS?)');
    this.name = 'UndecryptableSecretError';
  }
}

/** A new signing secret: `<prefix>_whs_` and random base62, like every Kassa token. */
export function newWebhookSecret(environment: Environment): string {
  return generateToken(environment.config.tokenPrefix, 'whs');
}

/** What identifies a secret to its owner without revealing it. */
export function secretHint(secret: string): string {
  return `…${secret.slice(-4)}`;
}

/** `iv (12 bytes) | tag (16 bytes) | ciphertext`. */
export async function encryptSecret(environment: SecretStore, secret: string): Promise<Uint8Array<ArrayBuffer>> {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await secretsKey(environment), iv);
  const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return new Uint8Array(Buffer.concat([iv, cipher.getAuthTag(), ciphertext]));
}

/** The plaintext when `key` verifies the tag; null otherwise (wrong key, tampered or truncated data). */
function openWith(key: Buffer, bytes: Buffer): string | null {
  if (bytes.length < 28) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** The secret and whether it is under the current key; null when no key opens it. */
export async function openSecret(environment: SecretStore, stored: Uint8Array): Promise<{ secret: string; current: boolean } | null> {
  const bytes = Buffer.from(stored);
  const secret = openWith(await secretsKey(environment), bytes);
  if (secret !== null) return { secret, current: true };
  for await (const key of olderKeys(environment)) {
    const older = openWith(key, bytes);
    if (older !== null) return { secret: older, current: false };
  }
  return null;
}

export async function decryptSecret(environment: SecretStore, stored: Uint8Array): Promise<string> {
  const opened = await openSecret(environment, stored);
  if (!opened) throw new UndecryptableSecretError();
  return opened.secret;
}
