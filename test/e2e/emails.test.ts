// The emails events cause, read from the memory transport: a receipt when an order is paid, a
// renewal notice, a failed-payment notice per declined attempt, the cancellation and end notices,
// and the members' new order and new subscription notices as the organization's settings say.
// Each goes out once per cause, after the change commits, and a failed send is retried.
import { randomUUID } from 'node:crypto';
import type { Subscription } from '@polar-sh/sdk/models/components/subscription.js';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EmailMessage, MemoryTransport } from '../../src/email/transport.ts';
import { enqueueJob } from '../../src/jobs/runner.ts';
import { renewalRetryDelaysMs } from '../../src/modules/subscriptions/service.ts';
import { newOrganization, type Org } from '../helpers/organizations.ts';
import { createAndConfirmCheckout, fixedProduct } from '../helpers/purchases.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { settleJobs } from '../helpers/server.ts';

const start = new Date('2027-01-10T10:00:00.000Z');
const t = useTestServer({ env: { EMAIL_TRANSPORT: 'memory', TEST_CARD_DELAY_MS: '0' }, stopSandboxJobs: true, clock: start });

const environment = () => t.server.kassa.environments.sandbox;
const prisma = () => environment().environment.prisma;
const mailbox = () => environment().environment.email as MemoryTransport;
const mailTo = (to: string) => mailbox().sent.filter((m) => m.to === to);

/** Runs every due job (and those they cause) until nothing is left at the current time. */
async function settle() {
  await settleJobs(environment().jobs);
}

async function at(time: Date) {
  t.server.clock.now = time;
  await settle();
}

const address = (name: string) => `${name}-${randomUUID()}@example.com`;
const subjects = (mails: EmailMessage[]) => mails.map((m) => m.subject);

async function subscribe(org: Org, productId: string, email: string): Promise<Subscription> {
  await createAndConfirmCheckout(org, productId, email, { customerName: 'Ada Buyer' });
  await settle();
  const found = (await org.polar.subscriptions.list({ productId })).result.items.find((s) => s.customer.email === email);
  if (!found) throw new Error(`no subscription for ${email}`);
  return found;
}

describe('a one-time purchase', () => {
  let org: Org;
  let slug: string;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    slug = (await org.api('GET', `/organizations/${org.organizationId}`)).body.slug;
  });

  it('mails the buyer a receipt with its lines and total and a link to the portal, and the owner a new-order notice; once each', async () => {
    const product = await fixedProduct(org, 'Field <b>guide</b>', 1999);
    const buyer = address('buyer');
    await createAndConfirmCheckout(org, product.id, buyer, { customerName: 'Ada Buyer' });
    await settle();
    const [receipt, ...more] = mailTo(buyer);
    expect(more).toEqual([]);
    expect(receipt.subject).toBe(`Your receipt from ${(await org.api('GET', `/organizations/${org.organizationId}`)).body.name}`);
    expect(receipt.text).toContain('Hello Ada Buyer,');
    expect(receipt.text).toContain('Field <b>guide</b>');
    expect(receipt.text).toMatch(/Total\s+\$19\.99/);
    expect(receipt.text).toContain(`/sandbox/portal/${slug}/sign-in`);
    // The merchant's product name is text in the HTML part, never markup.
    expect(receipt.html).toContain('Field &lt;b&gt;guide&lt;/b&gt;');
    expect(receipt.html).not.toContain('<b>guide');
    expect(subjects(mailTo(org.userEmail))).toEqual(['New order: Field <b>guide</b> for $19.99']);

    // A second fan-out of the same event (a retry, a duplicate job) sends nothing more.
    const paid = await prisma().event.findFirstOrThrow({ where: { organizationId: org.organizationId, type: 'order.paid' } });
    await enqueueJob(prisma(), 'email.event', { eventId: paid.id }, t.server.clock.now!);
    await settle();
    expect(mailTo(buyer)).toHaveLength(1);
    expect(mailTo(org.userEmail)).toHaveLength(1);
  });

  it("a buyer whose metadata says locale de gets the receipt in German, with the amount written the German way", async () => {
    const product = await fixedProduct(org, 'Handbuch', 1999);
    const buyer = address('kunde');
    expect((await org.api('POST', '/customers/', { email: buyer, name: 'Erika', metadata: { locale: 'de-DE' } })).status).toBe(201);
    await createAndConfirmCheckout(org, product.id, buyer);
    await settle();
    const [receipt] = mailTo(buyer);
    expect(receipt.subject).toMatch(/^Ihre Quittung von /);
    expect(receipt.text).toContain('Hallo Erika,');
    expect(receipt.text).toContain('19,99');
    expect(receipt.html).toContain('<html lang="de">');
  });

  it('an organization whose settings turn new_order off sends its members no notice; the buyer still gets the receipt', async () => {
    const quiet = await newOrganization(t.server, 'sandbox');
    const updated = await quiet.api('PATCH', `/organizations/${quiet.organizationId}`, { notification_settings: { new_order: false, new_subscription: true } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    const product = await fixedProduct(quiet, 'Sticker', 300);
    const buyer = address('quiet');
    await createAndConfirmCheckout(quiet, product.id, buyer);
    await settle();
    expect(mailTo(buyer)).toHaveLength(1);
    expect(mailTo(quiet.userEmail)).toEqual([]);
  });

  it('a send that fails is retried by the job runner, not lost, and not sent twice', async () => {
    const product = await fixedProduct(org, 'Poster', 500);
    const buyer = address('retry');
    const transport = mailbox();
    const send = transport.send.bind(transport);
    let refusals = 0;
    transport.send = async (message) => {
      if (message.to === buyer && refusals++ === 0) throw new Error('mail server unavailable');
      return send(message);
    };
    try {
      await createAndConfirmCheckout(org, product.id, buyer);
      await settle();
      expect(mailTo(buyer)).toEqual([]);
      const failed = await prisma().job.findFirstOrThrow({ where: { kind: 'email.send', completedAt: null, lastError: { not: null } } });
      expect(failed.lastError).toBe('mail server unavailable');
      await at(new Date(t.server.clock.now!.getTime() + 60_000));
      expect(subjects(mailTo(buyer))).toEqual([expect.stringMatching(/^Your receipt from /)]);
      await at(new Date(t.server.clock.now!.getTime() + 3600_000));
      expect(mailTo(buyer)).toHaveLength(1);
    } finally {
      transport.send = send;
      t.server.clock.now = start;
    }
  });
});

describe('a subscription', () => {
  it('mails a renewal notice, one failed-payment notice per declined attempt with the retry date, the cancellation and the end', async () => {
    t.server.clock.now = start;
    const org = await newOrganization(t.server, 'sandbox');
    const plan = await fixedProduct(org, 'Pro plan', 900, 'month');
    const buyer = address('subscriber');
    const subscription = await subscribe(org, plan.id, buyer);
    expect(subjects(mailTo(buyer))).toEqual([expect.stringMatching(/^Your receipt from /)]);
    // The members hear of the subscription, not of its first order.
    expect(subjects(mailTo(org.userEmail))).toEqual(['New subscription: Pro plan']);

    // The renewal: a notice with the amount and the next renewal date, not a second receipt.
    await at(new Date(subscription.currentPeriodEnd!.getTime() + 60_000));
    const renewed = mailTo(buyer).at(-1)!;
    expect(renewed.subject).toMatch(/^Your Pro plan subscription at .* was renewed$/);
    expect(renewed.text).toContain('$9.00 was charged');
    expect(renewed.text).toContain('The next renewal is on March 10, 2027.');
    // A renewal is no new order, and becoming active again no new subscription, for the members.
    expect(subjects(mailTo(org.userEmail))).toEqual(['New subscription: Pro plan']);

    // A declined renewal: the notice links to the portal and says when the card is tried again.
    const { body } = await org.gql(`mutation ($id: UUID!) { core { subscriptionPaymentMethodUpdate(id: $id, paymentMethod: "tok_chargeDeclined") { id } } }`, { id: subscription.id });
    expect(body.errors).toBeUndefined();
    const due = new Date('2027-03-10T10:01:00.000Z');
    await at(due);
    const failed = mailTo(buyer).at(-1)!;
    expect(failed.subject).toMatch(/^Your payment to .* failed$/);
    expect(failed.text).toContain('We could not charge $9.00 for your subscription to Pro plan.');
    expect(failed.text).toContain(`We will try again on ${new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone: 'UTC' }).format(new Date(due.getTime() + renewalRetryDelaysMs[0]))}`);
    expect(failed.text).toMatch(/Update your payment method: \S+\/sandbox\/portal\/[\w-]+\/sign-in\?next=payment-methods/);
    const failures = () => mailTo(buyer).filter((m) => m.subject.startsWith('Your payment to'));
    await settle();
    expect(failures()).toHaveLength(1);
    // The retry is declined too: one more notice, for that attempt.
    await at(new Date(due.getTime() + renewalRetryDelaysMs[0] + 60_000));
    expect(failures()).toHaveLength(2);

    // A new card pays the renewal: the renewal notice, and no more failure notices.
    await org.gql(`mutation ($id: UUID!) { core { subscriptionPaymentMethodUpdate(id: $id, paymentMethod: "tok_visa") { id } } }`, { id: subscription.id });
    await settle();
    expect(mailTo(buyer).at(-1)!.subject).toMatch(/was renewed$/);
    expect(failures()).toHaveLength(2);

    // Canceled at period end: the notice says until when; then revoked: the end.
    await org.polar.subscriptions.update({ id: subscription.id, subscriptionUpdate: { cancelAtPeriodEnd: true } });
    await settle();
    const canceled = mailTo(buyer).at(-1)!;
    expect(canceled.subject).toMatch(/^Your Pro plan subscription at .* will end$/);
    expect(canceled.text).toContain('You keep access until');
    await org.polar.subscriptions.revoke({ id: subscription.id });
    await settle();
    expect(mailTo(buyer).at(-1)!.subject).toMatch(/^Your Pro plan subscription at .* has ended$/);
    expect(mailTo(buyer).filter((m) => m.subject.endsWith('will end'))).toHaveLength(1);
  });
});

describe('an organization whose settings turn new_subscription off', () => {
  it('sends its members no new-subscription notice, while the subscriber gets the receipt and a one-time order is still told', async () => {
    t.server.clock.now = start;
    const quiet = await newOrganization(t.server, 'sandbox');
    const updated = await quiet.api('PATCH', `/organizations/${quiet.organizationId}`, { notification_settings: { new_order: true, new_subscription: false } });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.notification_settings).toEqual({ new_order: true, new_subscription: false });
    const plan = await fixedProduct(quiet, 'Quiet plan', 900, 'month');
    const subscriber = address('quiet-subscriber');
    const subscription = await subscribe(quiet, plan.id, subscriber);
    expect(subscription.status).toBe('active');
    // The subscription did become active: the event the notice would come from is there.
    expect(await prisma().event.count({ where: { organizationId: quiet.organizationId, type: 'subscription.active' } })).toBe(1);
    expect(subjects(mailTo(subscriber))).toEqual([`Your receipt from ${(await quiet.api('GET', `/organizations/${quiet.organizationId}`)).body.name}`]);
    expect(mailTo(quiet.userEmail)).toEqual([]);

    const sticker = await fixedProduct(quiet, 'Quiet sticker', 300);
    await createAndConfirmCheckout(quiet, sticker.id, address('quiet-buyer'));
    await settle();
    expect(subjects(mailTo(quiet.userEmail))).toEqual(['New order: Quiet sticker for $3.00']);
  });
});
