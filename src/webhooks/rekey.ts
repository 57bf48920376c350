// Re-encrypts every stored secret under the current secrets key, the step of a SECRETS_KEY rotation
// that lets the old key go (docs/operators.md, "SECRETS_KEY"). Runs beside serving processes: each
// row is rewritten alone, and only if its ciphertext is still the one that was read (a compare and
// set), so a secret reset meanwhile is never overwritten with the old value.
import type { Db } from '../db/client.ts';
import { encryptSecret, openSecret, type SecretStore } from './secrets.ts';

export type SecretKind = 'webhook endpoint' | 'signing key';

export interface RekeyResult {
  reencrypted: number;
  current: number;
  /** Rows no configured key opens: left as they are. */
  undecryptable: { kind: SecretKind; id: string }[];
}

interface Table {
  kind: SecretKind;
  /** Up to `take` rows with an id after `after`, in id order. */
  page(prisma: Db, after: string | null, take: number): Promise<{ id: string; ciphertext: Uint8Array }[]>;
  read(prisma: Db, id: string): Promise<Uint8Array | null>;
  /** Whether the row still held `from` and now holds `to`. */
  swap(prisma: Db, id: string, from: Uint8Array, to: Uint8Array): Promise<boolean>;
}

const tables: Table[] = [
  {
    kind: 'webhook endpoint',
    page: async (prisma, after, take) =>
      (await prisma.webhookEndpoint.findMany({ where: after ? { id: { gt: after } } : {}, orderBy: { id: 'asc' }, take, select: { id: true, secretCiphertext: true } })).map((row) => ({ id: row.id, ciphertext: row.secretCiphertext })),
    read: async (prisma, id) => (await prisma.webhookEndpoint.findUnique({ where: { id }, select: { secretCiphertext: true } }))?.secretCiphertext ?? null,
    swap: async (prisma, id, from, to) => (await prisma.webhookEndpoint.updateMany({ where: { id, secretCiphertext: { equals: new Uint8Array(from) } }, data: { secretCiphertext: new Uint8Array(to) } })).count === 1,
  },
  {
    kind: 'signing key',
    page: async (prisma, after, take) =>
      (await prisma.signingKey.findMany({ where: after ? { id: { gt: after } } : {}, orderBy: { id: 'asc' }, take, select: { id: true, privateJwk: true } })).map((row) => ({ id: row.id, ciphertext: row.privateJwk })),
    read: async (prisma, id) => (await prisma.signingKey.findUnique({ where: { id }, select: { privateJwk: true } }))?.privateJwk ?? null,
    swap: async (prisma, id, from, to) => (await prisma.signingKey.updateMany({ where: { id, privateJwk: { equals: new Uint8Array(from) } }, data: { privateJwk: new Uint8Array(to) } })).count === 1,
  },
];

const pageSize = 200;

export async function rekeySecrets(store: SecretStore): Promise<RekeyResult> {
  const result: RekeyResult = { reencrypted: 0, current: 0, undecryptable: [] };
  for (const table of tables) {
    let after: string | null = null;
    for (;;) {
      const rows = await table.page(store.prisma, after, pageSize);
      if (rows.length === 0) break;
      for (const row of rows) await rekeyRow(store, table, row.id, row.ciphertext, result);
      after = rows[rows.length - 1].id;
    }
  }
  return result;
}

async function rekeyRow(store: SecretStore, table: Table, id: string, read: Uint8Array, result: RekeyResult): Promise<void> {
  let ciphertext: Uint8Array | null = read;
  // A lost compare and set means someone wrote the row meanwhile: judge what they wrote.
  while (ciphertext) {
    const opened = await openSecret(store, ciphertext);
    if (!opened) {
      result.undecryptable.push({ kind: table.kind, id });
      return;
    }
    if (opened.current) {
      result.current += 1;
      return;
    }
    if (await table.swap(store.prisma, id, ciphertext, await encryptSecret(store, opened.secret))) {
      result.reencrypted += 1;
      return;
    }
    ciphertext = await table.read(store.prisma, id);
  }
}
