// A server that sends no email (EMAIL_TRANSPORT=none): what a person asks for by mail is refused
// with 503 before anything is written, and events plan no notices, so no send is left failing.
import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { Browser as FormBrowser, formFields } from '../helpers/oauth.ts';
import { buy, fixedProduct } from '../helpers/purchases.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';

const t = useTestServer({ env: { EMAIL_TRANSPORT: 'none', TEST_CARD_DELAY_MS: '0', JOB_POLL_INTERVAL_MS: '20' }, organizations: { shop: 'sandbox' } });
const prisma = () => t.server.kassa.environments.sandbox.environment.prisma;

it('signing up is refused with 503 EmailDeliveryFailed and writes no user', async () => {
  const email = `nomail-${randomUUID()}@example.com`;
  const response = await t.shop.publicGql('mutation ($email: String!, $password: String!) { signUp(email: $email, password: $password) { email } }', { email, password: 'a long enough passphrase' });
  expect(response.status).toBe(503);
  expect(response.body.errors?.[0].extensions).toMatchObject({ code: 'EMAIL_DELIVERY_FAILED' });
  expect(await prisma().user.count({ where: { email } })).toBe(0);
  expect(await prisma().emailToken.count({ where: { email } })).toBe(0);
});

it('the portal sign-in page says no link can be sent, and records nothing', async () => {
  const slug = (await t.shop.api('GET', `/organizations/${t.shop.organizationId}`)).body.slug;
  const browser = new FormBrowser(t.server.url);
  const page = `${t.server.url}/sandbox/portal/${slug}/sign-in`;
  const email = `nomail-${randomUUID()}@example.com`;
  const answer = await browser.post(page, { ...formFields((await browser.get(page)).text), email });
  expect(answer.status).toBe(503);
  expect(answer.text).toContain('EMAIL_TRANSPORT=none');
  expect(await prisma().emailToken.count({ where: { email } })).toBe(0);
});

it('a paid order plans no email: its email.event job completes and no email.send job exists', async () => {
  const product = await fixedProduct(t.shop, 'Quiet', 500);
  const order = await buy(t.shop, product.id, `quiet-${randomUUID()}@example.com`);
  const paid = await prisma().event.findFirstOrThrow({ where: { resourceId: order.id, type: 'order.paid' } });
  const job = await eventually(
    () => prisma().job.findUniqueOrThrow({ where: { uniqueKey: `email.event:${paid.id}` } }),
    (j) => j.completedAt !== null,
    'the email.event job to complete',
  );
  expect(job.lastError).toBeNull();
  expect(await prisma().job.count({ where: { kind: 'email.send' } })).toBe(0);
});
