import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restClient, startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.close());

describe('a fresh server', () => {
  it('creates and reads back a product over REST', async () => {
    const { token } = await server.bootstrap();
    const api = restClient(server.base(), token);
    const created = await api('POST', '/products/', { name: 'Starter', recurring_interval: null, prices: [{ amount_type: 'fixed', price_amount: 900 }] });
    expect(created.status).toBe(201);
    const fetched = await api('GET', `/products/${created.body.id}`);
    expect(fetched.body).toEqual(created.body);
  });
});
