// Documents and variables an attacker sends to make GraphQL work for them: a few hundred bytes whose
// fragments expand exponentially, fields repeated until validation gives up, lists of a thousand
// invalid ids. Each is refused before the work it asks for, and the server keeps answering.
import { beforeAll, describe, expect, test } from 'vitest';
import { graphqlClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { expectValidationError } from '../helpers/responses.ts';

const t = useTestServer({ organizations: { org: 'production' } });

beforeAll(async () => {
  await t.org.api('POST', '/products/', { name: 'Guide', prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }] });
});

/** Fragments each spreading the previous one twice: `levels` levels expand to 2^levels copies of the bottom one. */
function fragmentBomb(levels: number, root: string, type: string, salt = ''): string {
  let document = `query Bomb${salt} { ${root.replace('…', `...F${levels}`)} }\nfragment F0 on ${type} { id name }\n`;
  for (let i = 1; i <= levels; i++) document += `fragment F${i} on ${type} { ...F${i - 1} ...F${i - 1} }\n`;
  return document;
}

/** Times a request in milliseconds, with its answer. */
async function timed<T>(send: () => Promise<T>): Promise<{ ms: number; answer: T }> {
  const started = performance.now();
  const answer = await send();
  return { ms: performance.now() - started, answer };
}

describe('documents whose fragments expand exponentially', () => {
  test('are refused with QUERY_TOO_COMPLEX without a token, at any depth, before validation or compiling', async () => {
    for (const levels of [12, 30, 100]) {
      const document = fragmentBomb(levels, 'customerPortalOrganization(slug: "nobody") { products { … } }', 'CustomerProduct');
      const { status, body } = await t.org.publicGql(document);
      expect(status, JSON.stringify(body)).toBe(400);
      expect(body.data).toBeUndefined();
      expect(body.errors).toHaveLength(1);
      expect(body.errors![0].extensions.code).toBe('QUERY_TOO_COMPLEX');
      expect(body.errors![0].message).toMatch(/fields once its fragments are expanded, above the limit of 1000/);
    }
  });

  test('are refused with a token too, and a refused document stays refused', async () => {
    const document = fragmentBomb(30, 'core { products { items { … } } }', 'Product');
    for (let attempt = 0; attempt < 2; attempt++) {
      const { status, body } = await t.org.gql(document);
      expect(status).toBe(400);
      expect(body.errors![0].extensions.code).toBe('QUERY_TOO_COMPLEX');
      expect(body.errors![0].message).toContain('selects 2147483651 fields');
    }
  });

  test('a document just under the field limit still runs', async () => {
    // 2^8 copies of `id name` plus the three fields above them: 515 fields.
    const { status, body } = await t.org.gql(fragmentBomb(8, 'core { products { items { … } } }', 'Product'));
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.data.core.products.items).toEqual([{ id: expect.any(String), name: 'Guide' }]);
  });

  test('are refused in under 50 ms each while /healthz keeps answering', async () => {
    let polling = true;
    const healthLatencies: number[] = [];
    const poll = (async () => {
      while (polling) {
        const { ms, answer } = await timed(() => fetch(`${t.server.url}/healthz`));
        expect(answer.status).toBe(200);
        healthLatencies.push(ms);
      }
    })();
    const requestIds: string[] = [];
    // A new document each time, so no cache answers for the parser or the validator.
    for (let i = 0; i < 20; i++) {
      const document = fragmentBomb(22 + (i % 10), 'customerPortalOrganization(slug: "nobody") { products { … } }', 'CustomerProduct', String(i));
      const requestId = `fragment-bomb-${i}-${Date.now()}`;
      const response = await fetch(`${t.server.base()}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify({ query: document }),
      });
      expect(response.status).toBe(400);
      expect((await response.json()).errors[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
      requestIds.push(requestId);
    }
    polling = false;
    await poll;
    // The time the server took for each, from its request log: receipt to the last byte sent.
    const served = requestIds.map((id) => {
      const line = t.server.logs.map((l) => JSON.parse(l)).find((l) => l.requestId === id && l.msg === 'request');
      expect(line, id).toBeDefined();
      return line.ms as number;
    });
    served.sort((a, b) => a - b);
    // The median, so one pause of a busy test machine does not decide it; unrefused, one took seconds.
    expect(served[served.length >> 1]).toBeLessThan(50);
    expect(healthLatencies.length).toBeGreaterThan(0);
    expect(Math.max(...healthLatencies)).toBeLessThan(1000);
  });
});

describe('documents validation cannot afford', () => {
  test('one field repeated until validation spends its budget is QUERY_TOO_COMPLEX, not a bare "Validation aborted."', async () => {
    const ids = Array.from({ length: 990 }, () => 'id').join(' ');
    const { status, body } = await t.org.gql(`{ core { products { items { ${ids} } } } }`);
    expect(status).toBe(400);
    expect(body.errors).toHaveLength(1);
    expect(body.errors![0].extensions.code).toBe('QUERY_TOO_COMPLEX');
    expect(body.errors![0].message).toMatch(/^Validating the document took more work than allowed/);
  });
});

describe('compiled operations', () => {
  test('a document of two operations runs the one named, whichever ran first', async () => {
    const document = 'query Name { core { products { items { name } } } } query Identity { core { products { items { id } } } }';
    const send = (operationName: string) =>
      fetch(`${t.server.base()}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${t.org.token}` },
        body: JSON.stringify({ query: document, operationName }),
      }).then((r) => r.json());
    expect((await send('Name')).data.core.products.items).toEqual([{ name: 'Guide' }]);
    expect((await send('Identity')).data.core.products.items).toEqual([{ id: expect.any(String) }]);
    expect((await send('Name')).data.core.products.items).toEqual([{ name: 'Guide' }]);
  });
});

describe('variables', () => {
  const query = 'query($ids: [UUID!]) { core { benefits(id: $ids) { items { id } } } }';

  test('a thousand invalid ids answer the first twenty errors, not a thousand', async () => {
    const { ms, answer } = await timed(() => t.org.gql(query, { ids: Array.from({ length: 1000 }, (_, i) => `not-an-id-${i}`) }));
    const { body } = answer;
    expect(body.data).toBeUndefined();
    expect(body.errors!.length).toBeGreaterThan(1);
    expect(body.errors!.length).toBeLessThanOrEqual(21);
    expect(body.errors![0].message).toContain('not-an-id-0');
    expect(ms).toBeLessThan(5000);
  });

  test('a list of more than 1000 items is refused, valid or not, saying where', async () => {
    const ids = Array.from({ length: 1001 }, () => '3d9a7e51-0c2b-4f6a-8e1d-5b4c3a2f1e0d');
    const { body } = await t.org.gql(query, { ids });
    expect(body.errors).toHaveLength(1);
    expect(body.errors![0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['ids'], type: 'too_long' }] });
    expect(body.errors![0].message).toContain('at most 1000 items; this one holds 1001');
    const atLimit = await t.org.gql(query, { ids: ids.slice(1) });
    expect(atLimit.body.errors, JSON.stringify(atLimit.body.errors)).toBeUndefined();
  });

  test('over REST, a body list of a thousand invalid ids answers at most twenty issues, and one over the limit is too_long', async () => {
    const invalid = await t.org.api('POST', '/checkouts/', { products: Array.from({ length: 1000 }, (_, i) => `not-an-id-${i}`) });
    expectValidationError(invalid, ['body', 'products', 0]);
    expect(invalid.body.detail.length).toBeLessThanOrEqual(20);

    const overlong = await t.org.api('POST', '/checkouts/', { products: Array.from({ length: 1001 }, () => '3d9a7e51-0c2b-4f6a-8e1d-5b4c3a2f1e0d') });
    expectValidationError(overlong, ['body', 'products'], 'too_long');
    const checkouts = await t.org.api('GET', '/checkouts/');
    expect(checkouts.body.items).toEqual([]);
  });

  test('the public surface answers the same bounds without a token', async () => {
    const anonymous = graphqlClient(t.server.base());
    const { body } = await anonymous('query($ids: [UUID!]) { customerPortalOrganization(slug: "nobody") { products { id } } core { benefits(id: $ids) { items { id } } } }', {
      ids: Array.from({ length: 5000 }, (_, i) => `x${i}`),
    });
    expect(body.errors).toHaveLength(1);
    expect(body.errors![0].extensions.issues[0].type).toBe('too_long');
  });
});
