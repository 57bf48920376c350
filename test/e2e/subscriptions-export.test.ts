// GET /v1/subscriptions/export: the organization's subscriptions as a CSV file, streamed page by
// page (chunked, no length), with cells a spreadsheet would run as formulas neutralised and
// quotes, commas and line breaks quoted. Refusals (no token, a token without subscriptions:read,
// a malformed filter) are the JSON errors of every other route, answered before any CSV is sent.
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { tokenWithScopes } from '../helpers/organizations.ts';
import { buy, fixedProduct } from '../helpers/purchases.ts';
import { expectErrorBody, expectValidationError } from '../helpers/responses.ts';
import { restClient } from '../helpers/server.ts';
import { rejectionOf } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { org: 'sandbox', other: 'sandbox' } });

const hostileName = '=HYPERLINK("http://evil.example","click"), then\nmore';
const header = 'Email,Created At,Active,Product,Price,Currency,Interval';

/** Parses RFC 4180 CSV (quoted cells may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (cell += '"'), i++;
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(cell), (cell = '');
    else if (c === '\r' && text[i + 1] === '\n') {
      row.push(cell), rows.push(row), (row = []), (cell = ''), i++;
    } else cell += c;
  }
  expect(cell === '' && row.length === 0, 'the file ends with a complete row').toBe(true);
  return rows;
}

async function exportCsv(token: string, query = '') {
  const response = await fetch(`${t.server.base('sandbox')}/subscriptions/export${query}`, { headers: { authorization: `Bearer ${token}` } });
  return { response, text: await response.text() };
}

describe('GET /v1/subscriptions/export', () => {
  beforeAll(async () => {
    const plan = await fixedProduct(t.org, hostileName, 1500, 'month');
    await buy(t.org, plan.id, 'ada@example.com', 'Ada');
    const otherPlan = await fixedProduct(t.other, 'Not yours', 900, 'month');
    await buy(t.other, otherPlan.id, 'eve@example.com', 'Eve');
  });

  it('streams the organization’s subscriptions as CSV, with hostile cells neutralised and quoted', async () => {
    const { response, text } = await exportCsv(t.org.token);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(response.headers.get('content-disposition')).toBe('attachment; filename="kassa-subscriptions.csv"');
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    expect(response.headers.get('content-length')).toBeNull();
    expect(text.split('\r\n')[0]).toBe(header);
    expect(text).toContain(`"'=HYPERLINK(""http://evil.example"",""click""), then\nmore"`);
    const rows = parseCsv(text);
    expect(rows).toEqual([header.split(','), ['ada@example.com', expect.stringMatching(/^\d{4}-\d\d-\d\dT/), 'true', `'${hostileName}`, '15.00', 'usd', 'month']]);
  });

  it('pages through hundreds of subscriptions with a cursor, each exactly once', async () => {
    // Hundreds of purchases through the API would take minutes: copies of the bought subscription,
    // each with its own amount, stand in for them.
    const prisma = t.server.kassa.environments.sandbox.environment.prisma;
    const bought = await prisma.subscription.findFirstOrThrow({ where: { organizationId: t.org.organizationId } });
    const { id: _id, metadata: _metadata, customFieldData: _customFieldData, ...copy } = bought;
    const extra = 250;
    await prisma.subscription.createMany({ data: Array.from({ length: extra }, (_, i) => ({ ...copy, amount: 10_000 + i, status: i % 2 ? 'active' : 'canceled' })) });

    const { response, text } = await exportCsv(t.org.token);
    expect(response.status).toBe(200);
    expect(response.headers.get('transfer-encoding')).toBe('chunked');
    const rows = parseCsv(text).slice(1);
    expect(rows).toHaveLength(extra + 1);
    const prices = rows.map((r) => r[4]);
    expect(new Set(prices).size).toBe(extra + 1);
    for (let i = 0; i < extra; i++) expect(prices).toContain(((10_000 + i) / 100).toFixed(2));
    expect(rows.filter((r) => r[2] === 'false')).toHaveLength(extra / 2);
    expect(rows.every((r) => r[0] === 'ada@example.com')).toBe(true);
  });

  it('holds only the organization’s own subscriptions, whatever organization_id says', async () => {
    const own = parseCsv((await exportCsv(t.other.token)).text);
    expect(own.slice(1).map((r) => [r[0], r[3]])).toEqual([['eve@example.com', 'Not yours']]);
    const { response, text } = await exportCsv(t.other.token, `?organization_id=${t.org.organizationId}`);
    expect(response.status).toBe(200);
    expect(parseCsv(text).slice(1)).toEqual([]);
  });

  it('refuses without a token, with a token lacking subscriptions:read, and with a malformed filter, as JSON', async () => {
    const api = restClient(t.server.base('sandbox'));
    expectErrorBody(await api('GET', '/subscriptions/export'), 401, 'Unauthorized');
    const productsOnly = await tokenWithScopes(t.server, t.org, ['products:read']);
    expectErrorBody(await restClient(t.server.base('sandbox'), productsOnly)('GET', '/subscriptions/export'), 403, 'NotPermitted');
    expectValidationError(await t.org.api('GET', '/subscriptions/export?organization_id=not-a-uuid'), ['query', 'organization_id', 0]);
    const readOnly = await tokenWithScopes(t.server, t.org, ['subscriptions:read']);
    expect((await exportCsv(readOnly)).response.status).toBe(200);
  });

  it('is not taken for a subscription id', async () => {
    expect((await t.org.api('GET', '/subscriptions/export')).status).toBe(200);
    expectValidationError(await t.org.api('GET', '/subscriptions/exports'), ['path', 'id']);
  });

  it('reaches the official client, whose generated code expects JSON: the CSV comes back on its error', async () => {
    // The client library declares this operation's answer as JSON while the service sends CSV, so
    // it reports the 200 as an unexpected content type, carrying the file.
    const error = await rejectionOf(t.org.polar.subscriptions.export({ organizationId: t.org.organizationId }));
    expect(error).toBeInstanceOf(SDKError);
    expect((error as SDKError).statusCode).toBe(200);
    expect((error as SDKError).contentType).toBe('text/csv; charset=utf-8');
    expect((error as SDKError).body.split('\r\n')[0]).toBe(header);
  });
});
