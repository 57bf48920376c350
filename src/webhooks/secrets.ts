// Webhook signing secrets. Kassa must read a secret back to sign each delivery, so it is stored
// encrypted with AES-256-GCM under the environment's secrets key: SECRETS_KEY when configured
// (the key then never touches the database), else a random key kept in the environment's own
// database. Only the last characters (`hint`) are ever shown after the secret is first given out.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Environment } from '../context.ts';
import { linkKey } from '../auth/signed-links.ts';
import { generateToken } from '../auth/tokens.ts';

/** What encryption needs of an environment: its configuration and its database. */
export type SecretStore = Pick<Environment, 'config' | 'prisma'>;

async function secretsKey(environment: SecretStore): Promise<Buffer> {
  return environment.config.secretsKey ?? linkKey(environment.prisma, 'secrets-key');
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

export async function decryptSecret(environment: SecretStore, stored: Uint8Array): Promise<string> {
  const bytes = Buffer.from(stored);
  const decipher = createDecipheriv('aes-256-gcm', await secretsKey(environment), bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}
