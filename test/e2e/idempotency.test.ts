// The Idempotency-Key header on POST: a retry with the same key and the same request gets the
// first answer back and causes nothing new; the same key with another request is refused; keys of
// different callers never meet; other methods ignore the header.
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { RestResponse } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, type Org } from '../helpers/organizations.ts';

const t = useTestServer();

const prisma = () => t.server.kassa.environments.production.environment.prisma;

let keyCounter = 0;
/** A key no other test uses. */
const freshKey = () => `idem-${Date.now()}-${++keyCounter}`;

const freeProduct = (name: string) => ({ name, recurring_interval: null, prices: [{ amount_type: 'free' }] });

function postWithKey(org: Org, path: string, body: unknown, key: string) {
  return org.api('POST', path, body, { 'idempotency-key': key });
}

async function customerTotal(org: Org): Promise<number> {
  const response = await org.api('GET', '/customers/?limit=100');
  expect(response.status).toBe(200);
  return response.body.pagination.total_count;
}

async function productTotal(org: Org): Promise<number> {
  const response = await org.api('GET', '/products/?limit=100');
  expect(response.status).toBe(200);
  return response.body.pagination.total_count;
}

async function createdEvents(org: Org) {
  return prisma().event.findMany({ where: { organizationId: org.organizationId, type: 'customer.created' }, orderBy: { sequence: 'asc' } });
}

const replayed = (response: RestResponse) => response.headers.get('idempotent-replayed');

function expectKeyRefused(response: RestResponse) {
  expect(response.status, JSON.stringify(response.body)).toBe(422);
  expect(response.body).toEqual({ detail: [{ loc: ['header', 'idempotency-key'], msg: expect.any(String), type: expect.any(String) }] });
}

describe('a retry with the same Idempotency-Key and body', () => {
  it('gets the same 201 and body back, marked idempotent-replayed, and only one customer exists', async () => {
    const org = await newOrganization(t.server);
    const key = freshKey();
    const body = { email: 'once@example.com', name: 'Once', metadata: { attempt: 1 } };
    const first = await postWithKey(org, '/customers/', body, key);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(replayed(first)).toBeNull();
    const second = await postWithKey(org, '/customers/', body, key);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(replayed(second)).toBe('true');
    expect(second.headers.get('content-type')).toMatch(/^application\/json/);
    const third = await postWithKey(org, '/customers/', body, key);
    expect(third.status).toBe(201);
    expect(third.body).toEqual(first.body);
    expect(replayed(third)).toBe('true');

    expect(await customerTotal(org)).toBe(1);
    const events = await createdEvents(org);
    expect(events.map((e) => e.resourceId)).toEqual([first.body.id]);
  });

  it('gets the same product back for POST /v1/products/, and only one product exists', async () => {
    const org = await newOrganization(t.server);
    const key = freshKey();
    const first = await postWithKey(org, '/products/', freeProduct('Idempotent product'), key);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const second = await postWithKey(org, '/products/', freeProduct('Idempotent product'), key);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(replayed(second)).toBe('true');
    expect(await productTotal(org)).toBe(1);
  });

  it('keeps replaying the first answer after the customer it created was deleted, creating nothing new', async () => {
    const org = await newOrganization(t.server);
    const key = freshKey();
    const body = { email: 'short-lived@example.com' };
    const first = await postWithKey(org, '/customers/', body, key);
    expect(first.status).toBe(201);
    expect((await org.api('DELETE', `/customers/${first.body.id}`)).status).toBe(204);
    const retry = await postWithKey(org, '/customers/', body, key);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
    expect(replayed(retry)).toBe('true');
    expect(await customerTotal(org)).toBe(0);
    expect(await createdEvents(org)).toHaveLength(1);
  });

  it('gets the 422 of a first request that failed validation back, creating nothing', async () => {
    const org = await newOrganization(t.server);
    const key = freshKey();
    const body = { email: 'not-an-email' };
    const first = await postWithKey(org, '/customers/', body, key);
    expect(first.status).toBe(422);
    expect(first.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'email'] })]);
    const retry = await postWithKey(org, '/customers/', body, key);
    expect(retry.status).toBe(422);
    expect(retry.body).toEqual(first.body);
    expect(replayed(retry)).toBe('true');
    expect(await customerTotal(org)).toBe(0);
    expect(await createdEvents(org)).toEqual([]);
  });

  it('gets the 422 of a first request that hit a duplicate email back', async () => {
    const org = await newOrganization(t.server);
    expect((await org.api('POST', '/customers/', { email: 'holder@example.com' })).status).toBe(201);
    const key = freshKey();
    const first = await postWithKey(org, '/customers/', { email: 'HOLDER@example.com' }, key);
    expect(first.status).toBe(422);
    expect(first.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'email'] })]);
    const retry = await postWithKey(org, '/customers/', { email: 'HOLDER@example.com' }, key);
    expect(retry.status).toBe(422);
    expect(retry.body).toEqual(first.body);
    expect(replayed(retry)).toBe('true');
    expect(await customerTotal(org)).toBe(1);
  });
});

describe('the same Idempotency-Key with another request', () => {
  it('is refused with 422 at header.idempotency-key when the body differs, creating nothing', async () => {
    const org = await newOrganization(t.server);
    const key = freshKey();
    const first = await postWithKey(org, '/customers/', { email: 'original@example.com' }, key);
    expect(first.status).toBe(201);
    const other = await postWithKey(org, '/customers/', { email: 'different@example.com' }, key);
    expectKeyRefused(other);
    expect(replayed(other)).toBeNull();
    expect(await customerTotal(org)).toBe(1);
    expect((await createdEvents(org)).map((e) => e.resourceId)).toEqual([first.body.id]);
    // The key still answers its own request.
    const retry = await postWithKey(org, '/customers/', { email: 'original@example.com' }, key);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(first.body);
  });

  it('is refused with 422 when sent to another endpoint', async () => {
    const org = await newOrganization(t.server);
    const key = freshKey();
    expect((await postWithKey(org, '/customers/', { email: 'first-endpoint@example.com' }, key)).status).toBe(201);
    expectKeyRefused(await postWithKey(org, '/products/', freeProduct('Other endpoint'), key));
    expect(await productTotal(org)).toBe(0);
  });
});

describe('the same Idempotency-Key with the same JSON written differently', () => {
  it('replays the first answer for keys in another order, other spacing, escapes and number forms, creating one customer', async () => {
    const org = await newOrganization(t.server);
    const key = freshKey();
    const first = await postWithKey(org, '/customers/', '{"email":"reordered@example.com","name":"Reordered","metadata":{"attempt":1,"tier":"gold"}}', key);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    for (const same of [
      '{"name":"Reordered","metadata":{"tier":"gold","attempt":1},"email":"reordered@example.com"}',
      '{ "metadata": { "tier": "gold", "attempt": 1.0 },\n  "email": "reordered@example.com", "name": "Reordered" }',
      '{"email":"reordered@example.com","name":"\\u0052eordered","metadata":{"attempt":1e0,"tier":"gold"}}',
    ]) {
      const retry = await postWithKey(org, '/customers/', same, key);
      expect(retry.status, same).toBe(201);
      expect(retry.body).toEqual(first.body);
      expect(replayed(retry)).toBe('true');
    }
    expect(await customerTotal(org)).toBe(1);
    expect(await createdEvents(org)).toHaveLength(1);
  });

  it('still refuses JSON that differs in a value or in array order, and other bodies that differ in any byte', async () => {
    const org = await newOrganization(t.server);
    const key = freshKey();
    // An unknown field makes the first answer a 422, which the key keeps like any other.
    const first = await postWithKey(org, '/customers/', '{"email":"arrays@example.com","tags":["a","b"],"metadata":{"n":1}}', key);
    expect(first.status).toBe(422);
    expect(replayed(await postWithKey(org, '/customers/', '{"metadata":{"n":1.0},"tags":["a","b"],"email":"arrays@example.com"}', key))).toBe('true');
    expectKeyRefused(await postWithKey(org, '/customers/', '{"email":"arrays@example.com","tags":["b","a"],"metadata":{"n":1}}', key));
    expectKeyRefused(await postWithKey(org, '/customers/', '{"email":"arrays@example.com","tags":["a","b"],"metadata":{"n":"1"}}', key));
    expectKeyRefused(await postWithKey(org, '/customers/', '{"email":"arrays@example.com","tags":["a","b"],"metadata":{"n":1},"name":null}', key));

    const textKey = freshKey();
    const text = (body: string) => org.api('POST', '/customers/', body, { 'idempotency-key': textKey, 'content-type': 'text/plain' });
    const unsupported = await text('email=text@example.com');
    expect(unsupported.status).toBe(415);
    const again = await text('email=text@example.com');
    expect(again.status).toBe(415);
    expect(replayed(again)).toBe('true');
    expectKeyRefused(await text('email=text@example.com '));
    expect(await customerTotal(org)).toBe(0);
  });
});

describe('Idempotency-Keys of different callers', () => {
  it('are independent: the same key and body from another organization creates its own customer', async () => {
    const a = await newOrganization(t.server);
    const b = await newOrganization(t.server);
    const key = freshKey();
    const body = { email: 'shared-key@example.com', name: 'Shared' };
    const fromA = await postWithKey(a, '/customers/', body, key);
    const fromB = await postWithKey(b, '/customers/', body, key);
    expect(fromA.status).toBe(201);
    expect(fromB.status, JSON.stringify(fromB.body)).toBe(201);
    expect(replayed(fromB)).toBeNull();
    expect(fromB.body.id).not.toBe(fromA.body.id);
    expect(fromA.body.organization_id).toBe(a.organizationId);
    expect(fromB.body.organization_id).toBe(b.organizationId);
    expect(await customerTotal(a)).toBe(1);
    expect(await customerTotal(b)).toBe(1);
    expect((await createdEvents(b)).map((e) => e.resourceId)).toEqual([fromB.body.id]);
  });

  it('are independent even when the bodies differ', async () => {
    const a = await newOrganization(t.server);
    const b = await newOrganization(t.server);
    const key = freshKey();
    expect((await postWithKey(a, '/products/', freeProduct('From A'), key)).status).toBe(201);
    const fromB = await postWithKey(b, '/products/', freeProduct('From B'), key);
    expect(fromB.status, JSON.stringify(fromB.body)).toBe(201);
    expect(fromB.body.name).toBe('From B');
  });
});

describe('concurrent requests with the same Idempotency-Key', () => {
  /**
   * Each answer to a race as one of: the original 201, a replay of it, a 409 IdempotencyKeyInUse,
   * or a description of anything else.
   */
  function labelAnswers(responses: RestResponse[]) {
    const originals = responses.filter((r) => r.status === 201 && replayed(r) === null);
    const original = originals[0]?.body;
    const labels = responses.map((r) => {
      if (r.status === 201 && isDeepStrictEqual(r.body, original)) return replayed(r) === 'true' ? 'replay' : 'original';
      if (r.status === 409 && r.headers.get('content-type')?.startsWith('application/json') && Object.keys(r.body).sort().join() === 'detail,error') {
        return r.body.error === 'IdempotencyKeyInUse' && typeof r.body.detail === 'string' && r.body.detail.length > 0 ? 'in-use' : `409 ${JSON.stringify(r.body)}`;
      }
      return `${r.status} ${replayed(r)} ${JSON.stringify(r.body)}`;
    });
    return { original, labels };
  }

  it('create exactly one customer; every answer is the 201, a 409 IdempotencyKeyInUse or a replay of the 201', async () => {
    const org = await newOrganization(t.server);
    const key = freshKey();
    const body = { email: 'concurrent@example.com', external_id: 'concurrent-1' };
    const responses = await Promise.all([1, 2, 3, 4, 5].map(() => postWithKey(org, '/customers/', body, key)));
    const { original, labels } = labelAnswers(responses);

    expect(labels.filter((l) => l === 'original'), JSON.stringify(labels)).toHaveLength(1);
    expect(new Set(labels.filter((l) => l !== 'original'))).toSatisfy(
      (rest: Set<string>) => [...rest].every((l) => l === 'replay' || l === 'in-use'),
      `only replays and 409s besides the original, got ${JSON.stringify(labels)}`,
    );
    expect(await customerTotal(org)).toBe(1);
    expect((await createdEvents(org)).map((e) => e.resourceId)).toEqual([original.id]);

    // Once the first has finished, a retry is a replay.
    const retry = await postWithKey(org, '/customers/', body, key);
    expect(retry.status).toBe(201);
    expect(retry.body).toEqual(original);
    expect(replayed(retry)).toBe('true');
  });

  it('create exactly one product; every answer is the 201, a 409 IdempotencyKeyInUse or a replay of the 201', async () => {
    const org = await newOrganization(t.server);
    const key = freshKey();
    const responses = await Promise.all([1, 2, 3, 4, 5].map(() => postWithKey(org, '/products/', freeProduct('Concurrent product'), key)));
    const { original, labels } = labelAnswers(responses);
    expect(labels.filter((l) => l === 'original'), JSON.stringify(labels)).toHaveLength(1);
    expect(new Set(labels.filter((l) => l !== 'original'))).toSatisfy(
      (rest: Set<string>) => [...rest].every((l) => l === 'replay' || l === 'in-use'),
      `only replays and 409s besides the original, got ${JSON.stringify(labels)}`,
    );
    expect(await productTotal(org)).toBe(1);
    expect((await org.api('GET', `/products/${original.id}`)).body).toEqual(original);
  });
});

describe('the Idempotency-Key value', () => {
  it('is refused with 422 at header.idempotency-key when longer than 255 characters, creating nothing', async () => {
    const org = await newOrganization(t.server);
    expectKeyRefused(await postWithKey(org, '/customers/', { email: 'long-key@example.com' }, 'k'.repeat(256)));
    expect(await customerTotal(org)).toBe(0);
    expect(await createdEvents(org)).toEqual([]);
  });

  it('is accepted at exactly 255 characters', async () => {
    const org = await newOrganization(t.server);
    const key = `${freshKey()}-`.padEnd(255, 'k');
    const first = await postWithKey(org, '/customers/', { email: 'max-key@example.com' }, key);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const retry = await postWithKey(org, '/customers/', { email: 'max-key@example.com' }, key);
    expect(retry.body).toEqual(first.body);
    expect(replayed(retry)).toBe('true');
  });

  it('is refused with 422 when it holds a space', async () => {
    const org = await newOrganization(t.server);
    expectKeyRefused(await postWithKey(org, '/products/', freeProduct('Spaced key'), 'has a space'));
    expect(await productTotal(org)).toBe(0);
  });
});

describe('requests the Idempotency-Key does not apply to', () => {
  it('POST without the header runs every time: two identical product POSTs create two products', async () => {
    const org = await newOrganization(t.server);
    const first = await org.api('POST', '/products/', freeProduct('Twice'));
    const second = await org.api('POST', '/products/', freeProduct('Twice'));
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(first.body.id);
    expect(replayed(first)).toBeNull();
    expect(replayed(second)).toBeNull();
    expect(await productTotal(org)).toBe(2);
  });

  it('POST without the header runs every time: an identical customer POST meets the duplicate email', async () => {
    const org = await newOrganization(t.server);
    expect((await org.api('POST', '/customers/', { email: 'no-key@example.com' })).status).toBe(201);
    const second = await org.api('POST', '/customers/', { email: 'no-key@example.com' });
    expect(second.status).toBe(422);
    expect(second.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'email'] })]);
    expect(replayed(second)).toBeNull();
  });

  it('GET ignores the header and answers the current state every time, even with a key no POST would accept', async () => {
    const org = await newOrganization(t.server);
    const key = freshKey();
    const before = await org.api('GET', '/customers/', undefined, { 'idempotency-key': key });
    expect(before.status).toBe(200);
    expect(before.body.pagination.total_count).toBe(0);
    expect((await org.api('POST', '/customers/', { email: 'between-gets@example.com' })).status).toBe(201);
    const after = await org.api('GET', '/customers/', undefined, { 'idempotency-key': key });
    expect(after.status).toBe(200);
    expect(after.body.pagination.total_count).toBe(1);
    expect(replayed(after)).toBeNull();
    const oversized = await org.api('GET', '/customers/', undefined, { 'idempotency-key': 'k'.repeat(300) });
    expect(oversized.status).toBe(200);
    // The key is still free for a POST.
    const post = await postWithKey(org, '/products/', freeProduct('After GETs'), key);
    expect(post.status).toBe(201);
    expect(replayed(post)).toBeNull();
  });
});

describe('an answer quoting text the database cannot hold', () => {
  it('is answered as it is, and a retry with the same key is refused again', async () => {
    const org = await newOrganization(t.server);
    const key = freshKey();
    // The refusal quotes the id, NUL and all: PostgreSQL's jsonb cannot store it.
    const body = { customer_id: 'not-a-uuid\u0000' };
    for (const attempt of [1, 2]) {
      const response = await postWithKey(org, '/customer-sessions/', body, key);
      expect(response.status, `attempt ${attempt}: ${JSON.stringify(response.body)}`).toBe(422);
      expect(response.body.detail).toContainEqual({ loc: ['body', 'customer_id'], msg: 'Text must not contain the NUL character (\\u0000).', type: 'string_nul' });
      expect(response.headers.get('idempotent-replayed')).toBeNull();
    }
    const lone = await postWithKey(org, '/customer-sessions/', { customer_id: 'not-a-uuid\ud800' }, freshKey());
    expect(lone.status).toBe(422);
  });
});
