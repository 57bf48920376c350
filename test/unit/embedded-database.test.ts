import { PGlite } from '@electric-sql/pglite';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmbeddedDatabase } from '../../src/db/embedded.ts';

// The embedded database on its worker thread must answer exactly as PGlite on the calling thread
// would: the Prisma adapter and the migration runner cannot tell them apart.
describe('the embedded database on its own thread', () => {
  let threaded: EmbeddedDatabase;
  let local: PGlite;
  const schema = `
    create table items (id int primary key, name text not null unique, price numeric(10, 2), at timestamptz,
      day date, doc jsonb, big int8, raw bytea, tags text[], flag boolean);
    insert into items values (1, 'one', 12.5, '2026-11-25T10:00:00.123Z', '2026-11-25', '{"a": [1, true, null]}',
      9007199254740993, '\\xdeadbeef', '{x,y}', true), (2, 'two', null, null, null, null, null, null, null, null);`;

  beforeAll(async () => {
    threaded = await EmbeddedDatabase.open('memory://');
    local = await PGlite.create('memory://');
    await threaded.exec(schema);
    await local.exec(schema);
  });
  afterAll(async () => {
    await threaded.close();
    await local.close();
  });

  const adapters = async () => ({
    threaded: await new PrismaPGlite(threaded.asPGlite()).connect(),
    local: await new PrismaPGlite(local).connect(),
  });
  const select = { sql: 'select * from items order by id', args: [], argTypes: [] };

  it('gives the Prisma adapter the same rows, column types and parsed values as PGlite in the same thread', async () => {
    const { threaded: onThread, local: inProcess } = await adapters();
    const [fromThread, fromLocal] = await Promise.all([onThread.queryRaw(select), inProcess.queryRaw(select)]);
    expect(fromThread).toEqual(fromLocal);
    // The adapter's own parsers ran on the text the thread left for them (PostgreSQL itself writes
    // '2026-11-25 10:00:00.123+00'); PGlite parsed the rest (bytea, arrays, booleans).
    expect(fromThread.rows[0]).toEqual([1, 'one', '12.50', '2026-11-25T10:00:00.123+00:00', '2026-11-25', '{"a": [1, true, null]}', '9007199254740993', new Uint8Array([0xde, 0xad, 0xbe, 0xef]), ['x', 'y'], true]);
  });

  it('returns object rows with PGlite’s own parsing when the caller brings no parsers', async () => {
    const [fromThread, fromLocal] = await Promise.all([threaded.query('select * from items where id = $1', [1]), local.query('select * from items where id = $1', [1])]);
    expect(fromThread.rows).toEqual(fromLocal.rows);
    expect(fromThread.fields).toEqual(fromLocal.fields);
    expect((fromThread.rows[0] as { at: Date }).at).toBeInstanceOf(Date);
  });

  it('reports a constraint violation as the PostgreSQL error it is, which Prisma maps to a unique violation', async () => {
    const error = await threaded.query("insert into items (id, name) values (3, 'one')").catch((e: unknown) => e);
    expect(error).toMatchObject({ code: '23505', severity: 'ERROR', constraint: 'items_name_key', detail: 'Key (name)=(one) already exists.' });
    const { threaded: onThread } = await adapters();
    const mapped = await onThread.executeRaw({ sql: "insert into items (id, name) values (3, 'one')", args: [], argTypes: [] }).catch((e: unknown) => e);
    expect(mapped).toMatchObject({ name: 'DriverAdapterError', cause: { kind: 'UniqueConstraintViolation', constraint: { fields: ['name'] }, originalCode: '23505' } });
    expect((await threaded.query('select count(*)::int as n from items')).rows).toEqual([{ n: 2 }]);
  });

  it('commits a transaction whose work resolves', async () => {
    const result = await threaded.transaction(async (tx) => {
      await tx.query("insert into items (id, name) values (10, 'ten')");
      return (await tx.query<{ n: number }>('select count(*)::int as n from items where id = 10')).rows[0].n;
    });
    expect(result).toBe(1);
    expect((await threaded.query('select count(*)::int as n from items where id = 10')).rows).toEqual([{ n: 1 }]);
  });

  it('keeps a statement sent meanwhile out of an open transaction: it runs after, and sees its rollback', async () => {
    let outside: Promise<unknown> | undefined;
    await expect(
      threaded.transaction(async (tx) => {
        await tx.query("insert into items (id, name) values (13, 'thirteen')");
        // Run inside the transaction, it would see the row; run after the rollback, it cannot.
        outside = threaded.query('select count(*)::int as n from items where id = 13').then((r) => r.rows);
        await tx.query('select 1');
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    await expect(outside).resolves.toEqual([{ n: 0 }]);
  });

  it('rolls back a transaction whose work throws, and gives the caller that error', async () => {
    const failure = new Error('the work failed');
    await expect(
      threaded.transaction(async (tx) => {
        await tx.query("insert into items (id, name) values (11, 'eleven')");
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect((await threaded.query('select count(*)::int as n from items where id = 11')).rows).toEqual([{ n: 0 }]);
  });

  it('rolls back when the work rolls back itself, even without waiting for it as the Prisma adapter does', async () => {
    await threaded.transaction(async (tx) => {
      await tx.query("insert into items (id, name) values (12, 'twelve')");
      void tx.rollback();
    });
    expect((await threaded.query('select count(*)::int as n from items where id = 12')).rows).toEqual([{ n: 0 }]);
    await expect(threaded.query('select 1 as one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
  });

  it('keeps the event loop free while a statement runs: a timer set after a slow statement fires first', async () => {
    const order: string[] = [];
    const slow = threaded.query('select pg_sleep(0.5)').then(() => order.push('statement'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    order.push('timer');
    await slow;
    expect(order).toEqual(['timer', 'statement']);
  });
});

describe('closing the embedded database', () => {
  it('lets the statements already sent finish, then refuses new ones with a clear error', async () => {
    const database = await EmbeddedDatabase.open('memory://');
    const running = database.query('select pg_sleep(0.2), 42 as answer');
    const closing = database.close();
    await expect(database.query('select 1')).rejects.toThrow('The embedded database is closing.');
    await expect(running).resolves.toMatchObject({ rows: [{ answer: 42 }] });
    await closing;
    expect(database.closed).toBe(true);
    await expect(database.query('select 1')).rejects.toThrow(/closed|closing/);
  });

  it('reports a thread that stops without being closed, once, and fails every call after it', async () => {
    const failures: Error[] = [];
    const database = await EmbeddedDatabase.open('memory://', (error) => failures.push(error));
    await expect(database.query('select 1 as one')).resolves.toMatchObject({ rows: [{ one: 1 }] });
    // As if the thread died: what a crash of PGlite inside it would look like from here.
    await (database as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
    await expect.poll(() => failures.length).toBe(1);
    expect(failures[0].message).toMatch(/embedded database thread stopped/);
    expect(database.closed).toBe(true);
    await expect(database.query('select 1')).rejects.toThrow(/embedded database thread stopped/);
    await database.close();
    expect(failures).toHaveLength(1);
  });

  it('refuses to open where no database can be: a file stands where the directory should', async () => {
    const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(`${tmpdir()}/kassa-embedded-`);
    try {
      // A file where the data directory should be.
      await writeFile(`${dir}/not-a-directory`, 'x');
      await expect(EmbeddedDatabase.open(`${dir}/not-a-directory`)).rejects.toThrow();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps the data of a directory for the next open', async () => {
    const { mkdtemp, rm } = await import('node:fs/promises');
    const { tmpdir } = await import('node:os');
    const dir = await mkdtemp(`${tmpdir()}/kassa-embedded-`);
    try {
      const first = await EmbeddedDatabase.open(dir);
      await first.exec("create table kept (v text); insert into kept values ('still here')");
      await first.close();
      const second = await EmbeddedDatabase.open(dir);
      expect((await second.query('select v from kept')).rows).toEqual([{ v: 'still here' }]);
      await second.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
