// The signed-in customer's saved payment methods (the Customer Portal's "payment methods"). They
// live at the payment processor, on its record of the customer (`Customer.processorCustomerId`),
// never in Kassa's database: listing asks the processor, adding confirms a SetupIntent there,
// removing detaches the method there.
//
// - Only the customer's own methods: the processor's record is the one stored on the customer the
//   token signed in, and a method of any other record is answered as one that does not exist.
// - A processor that keeps no saved methods (the built-in test processor) lists none and refuses
//   to add one. A processor that cannot be reached changes nothing here: 503.
// - A new default method is the one every live subscription of the customer renews with from
//   then on; a past-due one is charged again with it at once.
// - The method a live subscription renews with cannot be removed (PaymentMethodInUseByActiveSubscription).
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import { reach } from '../../auth/reach.ts';
import { KassaError, RequestValidationError, ResourceNotFoundError, ValidationIssues } from '../../graphql/errors.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { renewLiveSubscriptionsWith, subscriptionsRenewingWith } from '../subscriptions/service.ts';
import type { SavedPaymentMethod } from './processor.ts';

/** A saved method as the portal shows it: with the customer it is saved on. */
export interface CustomerPaymentMethod extends SavedPaymentMethod {
  customerId: string;
}

export interface CustomerPaymentMethodCreateInput {
  confirmationTokenId: string;
  setDefault: boolean;
  returnUrl: string;
}

export const paymentError = (detail: string) => new KassaError(detail, 'PAYMENT_ERROR', 400, 'PaymentError');

export const paymentProcessorUnavailable = () =>
  new KassaError(
    'The payment processor could not be reached, or failed to answer: nothing was changed. Try again in a moment.',
    'PAYMENT_PROCESSOR_UNAVAILABLE',
    503,
    'PaymentProcessorUnavailable',
  );

/** 3-D Secure during setup: the customer's page finishes it with Stripe.js, then sends the same token again. */
export const paymentMethodRequiresAction = (clientSecret: string) =>
  new KassaError(
    "The card's bank asks the customer to authenticate (3-D Secure). Finish it on the customer's page with Stripe.js handleNextAction({ clientSecret: client_secret }), then send the same confirmation_token_id again: the method is saved then.",
    'PAYMENT_METHOD_REQUIRES_ACTION',
    402,
    'PaymentMethodRequiresAction',
    { clientSecret },
    { client_secret: clientSecret },
  );

export const paymentMethodInUse = () =>
  new KassaError(
    'A subscription renews with this payment method: add another one with set_default true first (it replaces this one on the subscriptions), then remove this one.',
    'PAYMENT_METHOD_IN_USE_BY_ACTIVE_SUBSCRIPTION',
    400,
    'PaymentMethodInUseByActiveSubscription',
  );

const paymentMethodNotFound = () => new ResourceNotFoundError('Payment method not found.');

/** Why the processor refused to save the method, for the customer. */
function declineMessage(reason: string): string {
  switch (reason) {
    case 'resource_missing':
      return 'Unknown confirmation token: make a new one with Stripe.js.';
    case 'setup_intent_authentication_failure':
      return 'The card was not saved: the customer did not pass the bank’s authentication. Try again, or use another card.';
    case 'setup_intent_unexpected_state':
      return 'This confirmation token was used already: make a new one with Stripe.js.';
    default:
      return `The card was declined (${reason}): nothing was saved. Use another card.`;
  }
}

async function signedInCustomer(ctx: Context) {
  const customer = await ctx.prisma.customer.findFirst({ where: reach(ctx).customer });
  if (!customer) throw new ResourceNotFoundError('Customer not found.');
  return customer;
}

/**
 * A call to the processor. Whatever it throws (unreachable, rate-limited, failing) is answered 503:
 * a refusal it can explain (a declined card) comes back as a result, not as an error.
 */
async function atProcessor<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch {
    throw paymentProcessorUnavailable();
  }
}

/** The processor's record of the customer, kept once the processor has made it. */
async function rememberProcessorCustomer(db: Db, customer: { id: string; processorCustomerId: string | null }, processorCustomerId: string) {
  if (customer.processorCustomerId === processorCustomerId) return;
  await db.customer.update({ where: { id: customer.id }, data: { processorCustomerId } });
}

export async function listCustomerPaymentMethods(ctx: Context, args: PageArgs) {
  const window = pageWindow(args);
  const customer = await signedInCustomer(ctx);
  const saved = ctx.environment.paymentProcessor?.savedMethods;
  const processorCustomerId = customer.processorCustomerId;
  const methods = saved && processorCustomerId ? await atProcessor(() => saved.list(processorCustomerId)) : [];
  const page = methods.slice(window.skip, window.skip + window.take).map((method) => ({ ...method, customerId: customer.id }));
  return toPage<CustomerPaymentMethod>(page, methods.length, args);
}

function checkReturnUrl(issues: ValidationIssues, returnUrl: string) {
  let url: URL | null = null;
  try {
    url = new URL(returnUrl);
  } catch {
    url = null;
  }
  if (!url || !['https:', 'http:'].includes(url.protocol)) issues.add(['input', 'returnUrl'], 'Input should be an absolute http or https URL', 'url_parsing');
}

/**
 * Saves the card of a ConfirmationToken on the signed-in customer, at the processor. With
 * setDefault, it becomes the customer's default and the method their live subscriptions renew
 * with (past-due ones are charged again at once).
 */
export async function addCustomerPaymentMethod(ctx: Context, input: CustomerPaymentMethodCreateInput): Promise<CustomerPaymentMethod> {
  const processor = ctx.environment.paymentProcessor;
  const saved = processor?.savedMethods;
  if (!processor || !saved) {
    throw paymentError(
      `This environment's payment processor (${processor?.name ?? 'none'}) keeps no saved payment methods: a card is given at each checkout. Saved methods need Stripe (see docs/stripe.md).`,
    );
  }
  const issues = new ValidationIssues();
  checkReturnUrl(issues, input.returnUrl);
  issues.throwIfAny();
  const customer = await signedInCustomer(ctx);
  const tokenProblem = processor.checkPaymentMethod ? await processor.checkPaymentMethod(input.confirmationTokenId, { setupFor: customer.id }) : null;
  if (tokenProblem) throw RequestValidationError.at(['input', 'confirmationTokenId'], tokenProblem);

  const result = await atProcessor(() =>
    saved.add({ id: customer.id, email: customer.email, name: customer.name, processorCustomerId: customer.processorCustomerId }, input.confirmationTokenId, {
      setDefault: input.setDefault,
      returnUrl: input.returnUrl,
    }),
  );
  // The processor's record of the customer is kept whatever became of the method: it was made either way.
  await ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    await rememberProcessorCustomer(db, customer, result.processorCustomerId);
    if (result.status === 'succeeded' && input.setDefault) await renewLiveSubscriptionsWith(ctx, db, result.paymentMethod.id);
  });
  if (result.status === 'requires_action') throw paymentMethodRequiresAction(result.clientSecret);
  if (result.status === 'failed') throw paymentError(declineMessage(result.declineReason));
  return { ...result.paymentMethod, customerId: customer.id };
}

/** Detaches one of the signed-in customer's methods at the processor. Another customer's is not found. */
export async function deleteCustomerPaymentMethod(ctx: Context, id: string): Promise<true> {
  const customer = await signedInCustomer(ctx);
  const saved = ctx.environment.paymentProcessor?.savedMethods;
  const processorCustomerId = customer.processorCustomerId;
  // Processor ids are word characters; anything else names no method.
  if (!saved || !processorCustomerId || !/^\w{1,255}$/.test(id)) throw paymentMethodNotFound();
  if ((await subscriptionsRenewingWith(ctx, id)).length) throw paymentMethodInUse();
  if (!(await atProcessor(() => saved.remove(processorCustomerId, id)))) throw paymentMethodNotFound();
  return true;
}

/**
 * Makes one of the signed-in customer's saved methods their default at the processor, and the one
 * their live subscriptions renew with from now on (past-due ones are charged again at once).
 * Another customer's method is not found, and nothing changes.
 */
export async function setDefaultCustomerPaymentMethod(ctx: Context, id: string): Promise<CustomerPaymentMethod> {
  const customer = await signedInCustomer(ctx);
  const saved = ctx.environment.paymentProcessor?.savedMethods;
  const processorCustomerId = customer.processorCustomerId;
  // Processor ids are word characters; anything else names no method.
  if (!saved || !processorCustomerId || !/^\w{1,255}$/.test(id)) throw paymentMethodNotFound();
  const method = await atProcessor(() => saved.setDefault(processorCustomerId, id));
  if (!method) throw paymentMethodNotFound();
  await ctx.prisma.$transaction(async (tx) => renewLiveSubscriptionsWith(ctx, tx as Db, method.id));
  return { ...method, customerId: customer.id };
}
