// Row timestamps from the environment's clock: the one every request context (`context.now`) and
// job reads, which tests move. Every create through Prisma stamps `createdAt` and `modifiedAt`,
// and every update stamps `modifiedAt`, on the row written and on the rows its nested writes
// create or update, unless the write names the value itself. The schema declares no @updatedAt
// and no query relies on the database's now() for these columns, so no row carries the wall clock
// of the process or the database server where the environment's clock says otherwise.
import { getDatamodel } from '../generated/prisma/pothos-types.ts';
import type { PrismaClient } from '../generated/prisma/client.ts';

interface Stamped {
  createdAt: boolean;
  modifiedAt: boolean;
  /** Relation field name → the related model. */
  relations: Map<string, string>;
}

const models = new Map<string, Stamped>(
  Object.entries(getDatamodel().datamodel.models).map(([name, model]) => {
    const fields = model.fields as readonly { name: string; kind: string; type: string }[];
    const has = (field: string) => fields.some((f) => f.name === field && f.type === 'DateTime');
    const relations = new Map(fields.filter((f) => f.kind === 'object').map((f) => [f.name, f.type]));
    return [name, { createdAt: has('createdAt'), modifiedAt: has('modifiedAt'), relations }];
  }),
);

type Data = Record<string, unknown>;

const each = (value: unknown, visit: (item: Data) => void) => {
  for (const item of Array.isArray(value) ? value : [value]) if (item && typeof item === 'object') visit(item as Data);
};

function stampCreate(model: string, data: unknown, now: Date): void {
  const stamped = models.get(model);
  if (!stamped) return;
  each(data, (row) => {
    if (stamped.createdAt && row.createdAt === undefined) row.createdAt = now;
    if (stamped.modifiedAt && row.modifiedAt === undefined) row.modifiedAt = now;
    stampNested(stamped, row, now);
  });
}

function stampUpdate(model: string, data: unknown, now: Date): void {
  const stamped = models.get(model);
  if (!stamped) return;
  each(data, (row) => {
    if (stamped.modifiedAt && row.modifiedAt === undefined) row.modifiedAt = now;
    stampNested(stamped, row, now);
  });
}

/** Nested writes under a row's relation fields: `create`, `createMany`, `connectOrCreate`, `update`, `updateMany`, `upsert`. */
function stampNested(stamped: Stamped, row: Data, now: Date): void {
  for (const [field, related] of stamped.relations) {
    const write = row[field];
    if (!write || typeof write !== 'object') continue;
    const ops = write as Data;
    stampCreate(related, ops.create, now);
    each(ops.createMany, (many) => stampCreate(related, many.data, now));
    each(ops.connectOrCreate, (item) => stampCreate(related, item.create, now));
    // A to-many update is `{ where, data }`; a to-one update is the data itself, or `{ where?, data }`.
    each(ops.update, (item) => stampUpdate(related, 'data' in item && Object.keys(item).every((key) => key === 'data' || key === 'where') ? item.data : item, now));
    each(ops.updateMany, (item) => stampUpdate(related, item.data, now));
    each(ops.upsert, (item) => {
      stampCreate(related, item.create, now);
      stampUpdate(related, item.update, now);
    });
  }
}

/** The client, writing its row timestamps from `clock`. */
export function withClock(prisma: PrismaClient, clock: () => Date): PrismaClient {
  const created = ({ model, args, query }: { model: string; args: { data?: unknown }; query: (args: never) => Promise<unknown> }) => {
    stampCreate(model, args.data, clock());
    return query(args as never);
  };
  const updated = ({ model, args, query }: { model: string; args: { data?: unknown }; query: (args: never) => Promise<unknown> }) => {
    stampUpdate(model, args.data, clock());
    return query(args as never);
  };
  const extended = prisma.$extends({
    name: 'clock',
    query: {
      $allModels: {
        create: created,
        createMany: created,
        createManyAndReturn: created,
        update: updated,
        updateMany: updated,
        updateManyAndReturn: updated,
        upsert({ model, args, query }) {
          const now = clock();
          stampCreate(model, args.create, now);
          stampUpdate(model, args.update, now);
          return query(args);
        },
      },
    },
  });
  // Query extensions change what is written, not the client's types.
  return extended as unknown as PrismaClient;
}
