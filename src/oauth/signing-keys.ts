// The keys that sign ID tokens, one set per environment. A key is made the first time an
// environment starts and kept in its database, the private half encrypted under the environment's
// secrets key. Rotation retires the current key and makes a new one in one transaction.
// Invariants: exactly one key signs at a time (the newest unretired one); a retired key stays in
// the JWKS until every ID token it signed has expired, so no token a client holds stops verifying.
import { exportJWK, generateKeyPair, importJWK, calculateJwkThumbprint, type JWK } from 'jose';
import type { Environment } from '../context.ts';
import type { Db } from '../db/client.ts';
import { decryptSecret, encryptSecret, type SecretStore } from '../webhooks/secrets.ts';

/** What the keys need of an environment; the `kassa signing-keys` command has no server around it. */
type KeyStore = SecretStore & Pick<Environment, 'name'>;

export type SigningAlgorithm = 'RS256' | 'ES256';

/** How long an ID token is valid. A retired key is published this long, plus the leeway, after it stops signing. */
export const idTokenLifetimeSeconds = 3600;
/** Clock skew a relying party may allow when it checks `exp`. */
const verificationLeewaySeconds = 300;

export interface ActiveSigningKey {
  kid: string;
  algorithm: SigningAlgorithm;
  privateKey: CryptoKey;
}

/** Private keys already decrypted and imported, by environment and kid: a key's material never changes. */
const imported = new WeakMap<KeyStore, Map<string, CryptoKey>>();

/** One transaction at a time may add or retire keys, so two processes starting together make one key, not two. */
async function lockKeys(tx: Db): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext('kassa.signing_keys'))`;
}

async function newKey(environment: KeyStore, algorithm: SigningAlgorithm) {
  // jose makes RSA keys of 2048 bits unless told otherwise.
  const pair = await generateKeyPair(algorithm, { extractable: true });
  const publicJwk = await exportJWK(pair.publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(pair.privateKey);
  return {
    id: kid,
    algorithm,
    publicJwk: { ...publicJwk, kid, alg: algorithm, use: 'sig' } as object,
    privateJwk: await encryptSecret(environment, JSON.stringify(privateJwk)),
  };
}

/**
 * Makes sure a key of the configured algorithm signs: on the first start, or after the operator
 * changed OIDC_SIGNING_ALGORITHM (the key of the other algorithm is then retired with overlap).
 */
export async function ensureSigningKey(environment: KeyStore, now: Date): Promise<void> {
  const algorithm = environment.config.idTokenSigningAlgorithm;
  const current = await environment.prisma.signingKey.findFirst({ where: { retiredAt: null }, orderBy: { createdAt: 'desc' } });
  if (current?.algorithm === algorithm) return;
  await rotateSigningKey(environment, now, algorithm, { onlyIfNot: algorithm });
}

/**
 * Retires every signing key and makes a new one of `algorithm`. With `onlyIfNot`, nothing happens
 * when, under the lock, a key of that algorithm already signs (another process made it first).
 */
export async function rotateSigningKey(environment: KeyStore, now: Date, algorithm: SigningAlgorithm, options: { onlyIfNot?: SigningAlgorithm } = {}): Promise<{ kid: string; retired: string[] }> {
  const key = await newKey(environment, algorithm);
  return environment.prisma.$transaction(async (tx) => {
    await lockKeys(tx as Db);
    const active = await tx.signingKey.findMany({ where: { retiredAt: null }, orderBy: { createdAt: 'desc' } });
    if (options.onlyIfNot && active[0]?.algorithm === options.onlyIfNot) return { kid: active[0].id, retired: [] };
    const publishedUntil = new Date(now.getTime() + (idTokenLifetimeSeconds + verificationLeewaySeconds) * 1000);
    await tx.signingKey.updateMany({ where: { id: { in: active.map((k) => k.id) } }, data: { retiredAt: now, expiresAt: publishedUntil } });
    await tx.signingKey.deleteMany({ where: { expiresAt: { lte: now } } });
    // createdAt from the clock the caller uses, so "newest" is the key made last even on a test clock.
    await tx.signingKey.create({ data: { ...key, createdAt: now } });
    return { kid: key.id, retired: active.map((k) => k.id) };
  });
}

/** The key that signs now. */
export async function activeSigningKey(environment: KeyStore): Promise<ActiveSigningKey> {
  const row = await environment.prisma.signingKey.findFirst({ where: { retiredAt: null }, orderBy: { createdAt: 'desc' } });
  if (!row) throw new Error(`The ${environment.name} environment has no ID token signing key: it is made at start-up.`);
  let keys = imported.get(environment);
  if (!keys) imported.set(environment, (keys = new Map()));
  let privateKey = keys.get(row.id);
  if (!privateKey) {
    const jwk = JSON.parse(await decryptSecret(environment, row.privateJwk)) as JWK;
    privateKey = (await importJWK(jwk, row.algorithm)) as CryptoKey;
    keys.set(row.id, privateKey);
  }
  return { kid: row.id, algorithm: row.algorithm as SigningAlgorithm, privateKey };
}

/** The public keys a relying party may meet in an ID token now: the signing key and retired keys still in overlap. */
export async function publishedKeys(prisma: Db, now: Date): Promise<JWK[]> {
  const rows = await prisma.signingKey.findMany({
    where: { OR: [{ retiredAt: null }, { expiresAt: { gt: now } }] },
    orderBy: { createdAt: 'desc' },
  });
  return rows.map((row) => row.publicJwk as JWK);
}
