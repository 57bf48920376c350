// The conditions over usage events (aliased `e`) that lists and quantities share, each a SQL
// fragment whose values are bound parameters.
import type { Context } from '../../context.ts';
import { Prisma } from '../../generated/prisma/client.ts';

const sqlFalse = Prisma.sql`FALSE`;

/** `column IN (values)`, each value a bound parameter cast to `cast`; no values match nothing. */
export function inList(column: Prisma.Sql, values: readonly string[], cast: 'uuid' | 'text'): Prisma.Sql {
  if (!values.length) return sqlFalse;
  const type = Prisma.raw(cast);
  return Prisma.sql`${column} IN (${Prisma.join(values.map((value) => Prisma.sql`${value}::${type}`))})`;
}

/** Metadata `{key: value or [values]}` as conditions over `e`: every key must equal one of its values, "1" standing also for 1 and "true" for true. */
export function metadataSql(filter: Record<string, unknown> | null | undefined): Prisma.Sql[] {
  if (!filter) return [];
  return Object.entries(filter).map(([key, raw]) => {
    const candidates = ([] as unknown[]).concat(raw).flatMap((value) => {
      if (typeof value !== 'string') return [value];
      const out: unknown[] = [value];
      if (value.trim() !== '' && Number.isFinite(Number(value))) out.push(Number(value));
      if (value === 'true' || value === 'false') out.push(value === 'true');
      return out;
    });
    if (!candidates.length) return sqlFalse;
    return Prisma.sql`(e.metadata -> ${key}::text) IN (${Prisma.join(candidates.map((value) => Prisma.sql`${JSON.stringify(value)}::jsonb`))})`;
  });
}

/** Customers named by id or by external id, as one condition over `e`: events recorded with either. */
export async function customerSql(ctx: Context, organizationIds: string[], customerIds: string[] | null | undefined, externalIds: string[] | null | undefined): Promise<Prisma.Sql | null> {
  if (!customerIds?.length && !externalIds?.length) return null;
  const customers = await ctx.prisma.customer.findMany({
    where: { organizationId: { in: organizationIds }, OR: [{ id: { in: customerIds ?? [] } }, { externalId: { in: externalIds ?? [] } }] },
    select: { id: true, externalId: true },
  });
  const ids = customers.map((c) => c.id);
  const external = [...new Set([...(externalIds ?? []), ...customers.flatMap((c) => (c.externalId ? [c.externalId] : []))])];
  const arms = [...(ids.length ? [inList(Prisma.sql`e.customer_id`, ids, 'uuid')] : []), ...(external.length ? [inList(Prisma.sql`e.external_customer_id`, external, 'text')] : [])];
  return arms.length ? Prisma.join(arms, ' OR ', '(', ')') : sqlFalse;
}

