import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decimalColumns, decimalsAsText } from '../../src/db/client.ts';

describe('decimals in relations read as JSON', () => {
  it('are built from their column as text, and nothing else in the statement changes', () => {
    const sql = `SELECT JSONB_BUILD_OBJECT('meterId', "t7"."meter_id", 'unitAmount', "t7"."unit_amount", 'capAmount', "t7"."cap_amount") FROM x WHERE "t7"."unit_amount" > 0`;
    expect(decimalsAsText(sql)).toBe(
      `SELECT JSONB_BUILD_OBJECT('meterId', "t7"."meter_id", 'unitAmount', "t7"."unit_amount"::text, 'capAmount', "t7"."cap_amount") FROM x WHERE "t7"."unit_amount" > 0`,
    );
  });

  it('leave a statement without JSON as it is', () => {
    const sql = `SELECT "t0"."unit_amount" AS "unitAmount" FROM "public"."product_prices" AS "t0"`;
    expect(decimalsAsText(sql)).toBe(sql);
  });

  it('cover every Decimal field of the schema', () => {
    const schema = readFileSync(new URL('../../prisma/schema.prisma', import.meta.url), 'utf8');
    const fields = [...schema.matchAll(/^\s+(\w+)\s+Decimal\??\s.*@map\("(\w+)"\)/gm)].map(([, field, column]) => [field, column]);
    expect(fields.length).toBeGreaterThan(0);
    expect(decimalColumns).toEqual(fields);
  });
});
