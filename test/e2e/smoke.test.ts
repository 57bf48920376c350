import { describe, expect, it } from 'vitest';
import { restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const t = useTestServer();

describe('a fresh server', () => {
  it('creates and reads back a product over REST', async () => {
    const { token } = await t.server.bootstrap();
    const api = restClient(t.server.base(), token);
    const created = await api('POST', '/products/', { name: 'Starter', recurring_interval: null, prices: [{ amount_type: 'fixed', price_amount: 900 }] });
    expect(created.status).toBe(201);
    const fetched = await api('GET', `/products/${created.body.id}`);
    expect(fetched.body).toEqual(created.body);
  });

  it('records when an organization token was last used, to the minute', async () => {
    const { token, organizationId } = await t.server.bootstrap();
    const { prisma } = t.server.kassa.environments.production.environment;
    const tokenRow = () => prisma.organizationAccessToken.findFirstOrThrow({ where: { organizationId } });
    expect((await tokenRow()).lastUsedAt).toBeNull();
    const api = restClient(t.server.base(), token);
    await api('GET', '/products/');
    const first = (await tokenRow()).lastUsedAt!;
    expect(first).toBeInstanceOf(Date);
    await api('GET', '/products/');
    expect((await tokenRow()).lastUsedAt).toEqual(first);
    t.server.clock.now = new Date(Date.now() + 120_000);
    try {
      await api('GET', '/products/');
      expect((await tokenRow()).lastUsedAt!.getTime()).toBeGreaterThan(first.getTime());
    } finally {
      t.server.clock.now = null;
    }
  });

  it('points a request missing the trailing slash at the documented path', async () => {
    const response = await restClient(t.server.base())('GET', '/products');
    expect(response.status).toBe(404);
    expect(response.body.detail).toContain('Did you mean /v1/products/ ?');
  });
});
