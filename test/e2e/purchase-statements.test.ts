// The SQL statements one purchase sends, counted on the sandbox database with its background
// workers stopped, so that each step is counted alone: the checkout's creation, its confirmation,
// then the payment job that charges it and marks the order paid. Nested reads are joined in one
// statement each (prisma/schema.prisma, relationJoins), so rendering a checkout or an order, for a
// response or an event, is one or two statements, not one per relation. The bounds are the counts
// measured (12, 31 and 27 on PostgreSQL; 54, 83 and 59 before the joins) with a little room: a
// read that goes back to one statement per relation crosses them.
import { beforeAll, expect, it } from 'vitest';
import { useTestServer } from '../helpers/use-test-server.ts';
import { fixedProduct } from '../helpers/purchases.ts';
import { expectStatus } from '../helpers/responses.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { shop: 'sandbox' } });
let productId: string;

const sandbox = () => t.server.kassa.environments.sandbox;

async function statementsOf<T>(run: () => Promise<T>): Promise<{ result: T; statements: number }> {
  const before = sandbox().database.statements();
  const result = await run();
  return { result, statements: sandbox().database.statements() - before };
}

beforeAll(async () => {
  productId = (await fixedProduct(t.shop, 'Counted guide', 1200)).id;
  await Promise.all([sandbox().jobs.stop(), sandbox().webhooks.stop()]);
});

it('a purchase with a test card: the checkout made, confirmed, charged and paid in about seventy statements (about two hundred when each relation was a statement)', async () => {
  const create = await statementsOf(async () => expectStatus(await t.shop.api('POST', '/checkouts/', { products: [productId] }), 201));
  const confirm = await statementsOf(() =>
    t.shop.buyer.checkouts.clientConfirm({ clientSecret: create.result.client_secret, checkoutConfirmStripe: { customerEmail: 'counted@example.com', confirmationTokenId: 'tok_visa' } }),
  );
  const charge = await statementsOf(() => sandbox().jobs.runDue());
  const order = expectStatus(await t.shop.api('GET', `/orders/?checkout_id=${create.result.id}`), 200).items[0];
  expect(order).toMatchObject({ status: 'paid', paid: true });
  expect({ create: create.statements, confirm: confirm.statements, charge: charge.statements }).toEqual({
    create: expect.toSatisfy((n: number) => n <= 15, 'at most 15'),
    confirm: expect.toSatisfy((n: number) => n <= 36, 'at most 36'),
    charge: expect.toSatisfy((n: number) => n <= 32, 'at most 32'),
  });
});
