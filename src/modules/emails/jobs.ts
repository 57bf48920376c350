// The emails Kassa sends on its own: to a customer when an order is paid, a subscription renews,
// is canceled or ends, or a renewal payment fails; to an organization's members on a new order or
// subscription (its notification settings); and the one-time links of auth/email-tokens.ts.
//
// Invariants:
// - Nothing is sent in the transaction of the change. The outbox records the event with a job
//   (`email.event`, events/outbox.ts), so an email exists exactly when its change committed.
// - `email.event` decides which emails an event calls for and enqueues one `email.send` job each,
//   under a key naming the email's cause (`email:<event id>:<template>`, or the subscription and
//   the failed attempt): a retried or repeated fan-out enqueues nothing twice.
// - `email.send` sends one message; a refused or failed send is retried by the job runner with
//   backoff, and given up (kept with its error) after the last attempt.
// - With EMAIL_TRANSPORT=none no notice is planned at all; what a person asks for by mail (sign-up,
//   portal sign-in) is refused up front instead (auth/email-tokens.ts checkEmailConfigured).
// - Each email is rendered from the event's own payload (what a GET returned when it happened),
//   in the customer's locale (`metadata.locale`), through email/templates/.
import type { Db } from '../../db/client.ts';
import type { EmailMessage } from '../../email/transport.ts';
import { renderEmail, type OrderSummary } from '../../email/templates/index.ts';
import { emailTokenOf } from '../../auth/email-tokens.ts';
import { enqueueJob, job, type JobContext } from '../../jobs/runner.ts';

/** An email to send: the rendered message, or the one-time link of an email token (rendered when sent, so no job holds the link). */
export type EmailSendPayload = { message: EmailMessage } | { tokenId: string };

interface WireCustomer {
  email: string;
  name: string | null;
  metadata: Record<string, unknown> | null;
  deleted_at: string | null;
}

interface WireOrder {
  id: string;
  created_at: string;
  billing_reason: string;
  subtotal_amount: number;
  discount_amount: number;
  tax_amount: number;
  total_amount: number;
  currency: string;
  subscription_id: string | null;
  customer: WireCustomer;
  product: { name: string };
  items: { label: string; amount: number }[];
  discount: { name: string } | null;
}

interface WireSubscription {
  id: string;
  status: string;
  amount: number;
  currency: string;
  recurring_interval: string;
  cancel_at_period_end: boolean;
  current_period_end: string | null;
  ends_at: string | null;
  customer: WireCustomer;
  product: { name: string };
}

interface Planned {
  key: string;
  message: EmailMessage;
}

const localeOf = (customer: WireCustomer) => (typeof customer.metadata?.locale === 'string' ? customer.metadata.locale : null);

function orderSummary(order: WireOrder): OrderSummary {
  return {
    reference: order.id,
    createdAt: new Date(order.created_at),
    productName: order.product.name,
    currency: order.currency,
    items: order.items.map((item) => ({ label: item.label, amount: item.amount })),
    subtotalAmount: order.subtotal_amount,
    discountAmount: order.discount_amount,
    discountName: order.discount?.name ?? null,
    taxAmount: order.tax_amount,
    totalAmount: order.total_amount,
  };
}

/** The organization's name, slug, notification settings and members' addresses. */
async function organizationOf(db: Db, organizationId: string) {
  const organization = await db.organization.findUniqueOrThrow({
    where: { id: organizationId },
    select: { name: true, slug: true, notificationSettings: true, members: { select: { user: { select: { id: true, email: true } } } } },
  });
  const settings = (organization.notificationSettings ?? {}) as { new_order?: boolean; new_subscription?: boolean };
  return { ...organization, settings, members: organization.members.map((m) => m.user) };
}

type Organization = Awaited<ReturnType<typeof organizationOf>>;

/** Where a customer signs in to the organization's portal (by email, on the page itself). */
const portalUrl = (ctx: JobContext, organization: Organization) => `${ctx.environment.publicUrl}/portal/${encodeURIComponent(organization.slug)}/sign-in`;

async function orderPaidEmails(ctx: JobContext, eventId: string, order: WireOrder, organization: Organization): Promise<Planned[]> {
  const planned: Planned[] = [];
  const customer = order.customer;
  if (!customer.deleted_at) {
    const summary = orderSummary(order);
    if (order.billing_reason === 'subscription_cycle' && order.subscription_id) {
      const subscription = await ctx.prisma.subscription.findUnique({ where: { id: order.subscription_id }, select: { currentPeriodEnd: true, status: true } });
      const nextRenewal = subscription && subscription.status === 'active' ? subscription.currentPeriodEnd : null;
      const message = renderEmail('subscription_renewed', customer.email, { organization: organization.name, customerName: customer.name, order: summary, nextRenewal, portalUrl: portalUrl(ctx, organization) }, localeOf(customer));
      planned.push({ key: `email:${eventId}:subscription_renewed`, message });
    } else {
      const message = renderEmail('order_receipt', customer.email, { organization: organization.name, customerName: customer.name, order: summary, portalUrl: portalUrl(ctx, organization) }, localeOf(customer));
      planned.push({ key: `email:${eventId}:order_receipt`, message });
    }
  }
  // A subscription's orders are told as the new subscription (subscription.active); renewals not at all.
  if (organization.settings.new_order !== false && order.billing_reason === 'purchase') {
    for (const member of organization.members) {
      const message = renderEmail('merchant_new_order', member.email, { organization: organization.name, customer: customer.email, product: order.product.name, total: { amount: order.total_amount, currency: order.currency } });
      planned.push({ key: `email:${eventId}:merchant_new_order:${member.id}`, message });
    }
  }
  return planned;
}

async function subscriptionEmails(ctx: JobContext, eventId: string, type: string, subscription: WireSubscription, organization: Organization): Promise<Planned[]> {
  const { customer } = subscription;
  const common = { organization: organization.name, customerName: customer.name, product: subscription.product.name, portalUrl: portalUrl(ctx, organization) };
  const toCustomer = !customer.deleted_at;
  switch (type) {
    case 'subscription.canceled': {
      // An immediate end is told by subscription.revoked, recorded with it.
      const endsAt = subscription.ends_at ?? subscription.current_period_end;
      if (!toCustomer || !subscription.cancel_at_period_end || !endsAt) return [];
      return [{ key: `email:${eventId}:subscription_canceled`, message: renderEmail('subscription_canceled', customer.email, { ...common, endsAt: new Date(endsAt) }, localeOf(customer)) }];
    }
    case 'subscription.revoked':
      return toCustomer ? [{ key: `email:${eventId}:subscription_revoked`, message: renderEmail('subscription_revoked', customer.email, common, localeOf(customer)) }] : [];
    case 'subscription.updated':
      return toCustomer && subscription.status === 'past_due' ? paymentFailedEmail(ctx, subscription, organization) : [];
    case 'subscription.active': {
      if (organization.settings.new_subscription === false) return [];
      // Once per subscription: becoming active again after a failed payment is no new subscription.
      return organization.members.map((member) => ({
        key: `email:new_subscription:${subscription.id}:${member.id}`,
        message: renderEmail('merchant_new_subscription', member.email, {
          organization: organization.name,
          customer: customer.email,
          product: subscription.product.name,
          amount: { amount: subscription.amount, currency: subscription.currency },
          interval: subscription.recurring_interval,
        }),
      }));
    }
    default:
      return [];
  }
}

/**
 * A declined renewal: once per failed attempt (a subscription stays past due through other
 * updates, which tell nothing new), with the amount due and when it is tried again.
 */
async function paymentFailedEmail(ctx: JobContext, wire: WireSubscription, organization: Organization): Promise<Planned[]> {
  const subscription = await ctx.prisma.subscription.findUnique({ where: { id: wire.id }, select: { status: true, failedAttempts: true, retryAt: true } });
  if (subscription?.status !== 'past_due' || subscription.failedAttempts === 0) return [];
  const unpaid = await ctx.prisma.order.findFirst({ where: { subscriptionId: wire.id, paid: false }, orderBy: { createdAt: 'desc' }, select: { totalAmount: true, currency: true } });
  const amount = unpaid ? { amount: unpaid.totalAmount, currency: unpaid.currency } : { amount: wire.amount, currency: wire.currency };
  const message = renderEmail(
    'payment_failed',
    wire.customer.email,
    { organization: organization.name, customerName: wire.customer.name, product: wire.product.name, amount, nextAttemptAt: subscription.retryAt, fixUrl: `${portalUrl(ctx, organization)}?next=payment-methods` },
    localeOf(wire.customer),
  );
  return [{ key: `email:payment_failed:${wire.id}:${subscription.failedAttempts}`, message }];
}

async function planEmails(ctx: JobContext, event: { id: string; type: string; organizationId: string; data: unknown }): Promise<Planned[]> {
  const organization = await organizationOf(ctx.prisma, event.organizationId);
  if (event.type === 'order.paid') return orderPaidEmails(ctx, event.id, event.data as WireOrder, organization);
  if (event.type.startsWith('subscription.')) return subscriptionEmails(ctx, event.id, event.type, event.data as WireSubscription, organization);
  return [];
}

/** Fans an event out into one `email.send` job per email it calls for; see the invariants above. */
export const emailEventJob = job<{ eventId: string }>('email.event', async ({ eventId }, ctx) => {
  // A server configured to send no email (EMAIL_TRANSPORT=none) sends no notices either.
  if (ctx.environment.email.kind === 'none') return;
  const event = await ctx.prisma.event.findUnique({ where: { id: eventId }, select: { id: true, type: true, organizationId: true, data: true } });
  if (!event) return;
  for (const { key, message } of await planEmails(ctx, event)) {
    await enqueueJob(ctx.prisma, 'email.send', { message } satisfies EmailSendPayload, ctx.now(), key);
  }
});

/** The message of an email token's link, or null when the link can no longer be used (nothing to send). */
async function tokenMessage(ctx: JobContext, tokenId: string): Promise<EmailMessage | null> {
  const row = await ctx.prisma.emailToken.findUnique({
    where: { id: tokenId },
    include: { customer: { select: { email: true, metadata: true, organization: { select: { name: true, slug: true } } } } },
  });
  if (!row || row.usedAt || row.expiresAt <= ctx.now()) return null;
  const token = encodeURIComponent(await emailTokenOf(ctx.prisma, row.id));
  const base = ctx.environment.publicUrl;
  const minutes = Math.round((row.expiresAt.getTime() - row.createdAt.getTime()) / 60_000);
  switch (row.purpose) {
    case 'verify_email':
      return renderEmail('verify_email', row.email, { url: `${base}/oauth2/verify-email?token=${token}`, hours: Math.round(minutes / 60) });
    case 'account_exists':
      return renderEmail('account_exists', row.email, { signInUrl: `${base}/oauth2/login` });
    case 'portal_sign_in': {
      if (!row.customer) return null;
      const { organization } = row.customer;
      const url = `${base}/portal/${encodeURIComponent(organization.slug)}/sign-in?token=${token}`;
      const locale = (row.customer.metadata as Record<string, unknown> | null)?.locale;
      return renderEmail('portal_sign_in', row.customer.email, { organization: organization.name, url, minutes }, typeof locale === 'string' ? locale : null);
    }
    default:
      return null;
  }
}

/** Sends one email; a failure is thrown, so the runner retries it. */
export const emailSendJob = job<EmailSendPayload>(
  'email.send',
  async (payload, ctx) => {
    const message = 'message' in payload ? payload.message : await tokenMessage(ctx, payload.tokenId);
    if (message) await ctx.environment.email.send(message);
  },
  { maxAttempts: 8, backoffMs: (attempt) => Math.min(15 * 60_000, 5000 * 2 ** attempt) },
);
