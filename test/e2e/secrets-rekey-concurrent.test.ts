// `kassa secrets rekey` beside a serving process: a secret stored again between the rekey's read
// and its write is kept, never overwritten with the re-encrypted old one.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { Db } from '../../src/db/client.ts';
import { rekeySecrets } from '../../src/webhooks/rekey.ts';
import { decryptSecret, encryptSecret, openSecret } from '../../src/webhooks/secrets.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const A = randomBytes(32).toString('hex');
const B = randomBytes(32).toString('hex');

const t = useTestServer({ env: { SECRETS_KEY: B, SECRETS_KEY_PREVIOUS: A }, organizations: { org: 'sandbox' } });
const environment = () => t.server.kassa.environments.sandbox.environment;

describe('kassa secrets rekey beside a server', () => {
  it('keeps a secret stored again while it runs, and re-encrypts the others under SECRETS_KEY', async () => {
    const { prisma } = environment();
    const underA = { config: loadConfig({ SECRETS_KEY: A }), prisma };
    const endpoint = async (secret: string) =>
      prisma.webhookEndpoint.create({
        data: { organizationId: t.org.organizationId, url: 'https://example.com/hooks', events: ['customer.created'], secretCiphertext: await encryptSecret(underA, secret), secretHint: '…1234' },
      });
    const raced = await endpoint('whsec_old');
    const calm = await endpoint('whsec_calm');

    // Between the rekey's read of `raced` and its write, its owner stores a new secret (PATCH).
    let patched = false;
    const racing = {
      secret: prisma.secret,
      signingKey: prisma.signingKey,
      webhookEndpoint: {
        findMany: (args: never) => prisma.webhookEndpoint.findMany(args),
        findUnique: (args: never) => prisma.webhookEndpoint.findUnique(args),
        updateMany: async (args: { where: { id: string } }) => {
          if (!patched && args.where.id === raced.id) {
            patched = true;
            await prisma.webhookEndpoint.update({ where: { id: raced.id }, data: { secretCiphertext: await encryptSecret(environment(), 'whsec_patched') } });
          }
          return prisma.webhookEndpoint.updateMany(args as never);
        },
      },
    } as unknown as Db;

    const result = await rekeySecrets({ config: environment().config, prisma: racing });
    expect(patched).toBe(true);
    expect(result.undecryptable).toEqual([]);
    // `calm` re-encrypted; `raced` found under SECRETS_KEY on the second look; the signing key made at start already was.
    expect(result).toMatchObject({ reencrypted: 1, current: 2 });

    const stored = async (id: string) => (await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id } })).secretCiphertext;
    const onlyB = { config: loadConfig({ SECRETS_KEY: B }), prisma };
    expect(await decryptSecret(onlyB, await stored(raced.id))).toBe('whsec_patched');
    expect(await openSecret(onlyB, await stored(calm.id))).toEqual({ secret: 'whsec_calm', current: true });
  });
});
