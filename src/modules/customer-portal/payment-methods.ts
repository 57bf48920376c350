// The signed-in customer's saved payment methods: list, add (set as default: the method their
// subscriptions renew with, past-due ones charged again at once), remove. They are kept at the
// payment processor (modules/payments/saved-methods.ts). Only a session the organization issued
// reaches them: a checkout's session is for what that checkout bought, not for the customer's cards.
import { builder } from '../../graphql/builder.ts';
import { raises } from '../../graphql/errors.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CustomerPortalMutation, CustomerPortalQuery } from '../../graphql/roots.ts';
import { PaymentProcessor } from '../checkouts/schema.ts';
import {
  addCustomerPaymentMethod,
  deleteCustomerPaymentMethod,
  listCustomerPaymentMethods,
  paymentError,
  paymentMethodInUse,
  paymentMethodRequiresAction,
  paymentProcessorUnavailable,
  setDefaultCustomerPaymentMethod,
  type CustomerPaymentMethod as Method,
} from '../payments/saved-methods.ts';

export const CustomerPaymentMethod = builder.interfaceRef<Method>('CustomerPaymentMethod').implement({
  description: "A payment method saved on the signed-in customer at the payment processor; renewals of the customer's subscriptions are charged to one.",
  fields: (t) => ({
    id: t.exposeID('id', { description: "The processor's id of the method (a Stripe PaymentMethod, pm_…)." }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the method was saved at the processor.' }),
    modifiedAt: t.field({ type: 'DateTime', nullable: true, description: 'Always null: a saved method does not change, it is replaced.', resolve: () => null }),
    processor: t.field({ type: PaymentProcessor, description: 'The processor that keeps the method (only Stripe keeps saved methods).', resolve: () => 'stripe' as const }),
    customerId: t.field({ type: 'UUID', description: 'The customer the method is saved on.', resolve: (method) => method.customerId }),
    type: t.exposeString('type', { description: 'The kind of method, as the processor names it: card, sepa_debit, link, …' }),
    isDefault: t.exposeBoolean('isDefault', { description: "Whether it is the customer's default method at the processor." }),
  }),
  resolveType: (method) => (method.card ? 'PaymentMethodCard' : 'PaymentMethodGeneric'),
});

const PaymentMethodCardMetadata = builder.objectRef<NonNullable<Method['card']>>('PaymentMethodCardMetadata').implement({
  description: 'What the card shows of itself: never its number.',
  fields: (t) => ({
    brand: t.exposeString('brand', { description: 'The card brand: visa, mastercard, amex, …' }),
    last4: t.exposeString('last4', { description: 'The last four digits of the card number.' }),
    expMonth: t.exposeInt('expMonth', { description: 'The month the card expires, 1 to 12.' }),
    expYear: t.exposeInt('expYear', { description: 'The year the card expires, four digits.' }),
    wallet: t.exposeString('wallet', { nullable: true, description: 'The wallet the card was given through (apple_pay, google_pay, …); null for a card typed in.' }),
  }),
});

builder.objectRef<Method>('PaymentMethodCard').implement({
  description: 'A saved card.',
  interfaces: [CustomerPaymentMethod],
  fields: (t) => ({
    methodMetadata: t.field({ type: PaymentMethodCardMetadata, description: 'The brand, last digits and expiry of the card.', resolve: (method) => method.card! }),
  }),
});

builder.objectRef<Method>('PaymentMethodGeneric').implement({
  description: 'A saved method other than a card (a bank debit, a wallet account).',
  interfaces: [CustomerPaymentMethod],
});

const CustomerPaymentMethodList = listType('CustomerPaymentMethod', CustomerPaymentMethod);

const CustomerPaymentMethodCreateInput = builder.inputType('CustomerPaymentMethodCreateInput', {
  description: "A card the customer's page collected with Stripe.js, to save on the customer.",
  fields: (t) => ({
    confirmationTokenId: t.string({ required: true, description: 'A Stripe ConfirmationToken (ctoken_…) made by Stripe.js on the customer’s page.' }),
    setDefault: t.boolean({
      required: true,
      description: "true: the customer's default method, and the one their live subscriptions renew with from now on (a past-due one is charged again at once).",
    }),
    returnUrl: t.string({ required: true, description: 'Where the bank sends the customer back after an authentication that needs a redirect: an absolute http(s) URL.' }),
  }),
});

const fullSession = { fullCustomerSession: true } as const;
const unavailable = { error: paymentProcessorUnavailable(), when: 'The payment processor could not be reached or failed; nothing changed.' };

builder.objectField(CustomerPortalQuery, 'paymentMethods', (t) =>
  t.field({
    type: CustomerPaymentMethodList,
    description:
      "The signed-in customer's saved payment methods, newest first, as the processor keeps them. None where the environment's processor keeps no saved methods (the test processor). Needs a session the organization issued, not a checkout's.",
    authScopes: fullSession,
    args: pageArgs(t.arg),
    extensions: raises(unavailable),
    resolve: (_root, args, ctx) => listCustomerPaymentMethods(ctx, args),
  }),
);

builder.objectFields(CustomerPortalMutation, (t) => ({
  customerPaymentMethodCreate: t.field({
    type: CustomerPaymentMethod,
    description:
      "Saves the card of a ConfirmationToken on the signed-in customer, through a SetupIntent at the processor. With setDefault, their live subscriptions renew with it, and a past-due one is charged again at once. BAD_USER_INPUT for a token that is unknown, used or expired.",
    authScopes: fullSession,
    args: { input: t.arg({ type: CustomerPaymentMethodCreateInput, required: true, description: 'The token and what to do with the card.' }) },
    extensions: raises(
      { error: paymentMethodRequiresAction(''), when: 'The bank asks the customer to authenticate: finish it with Stripe.js and the client_secret, then send the same token again.' },
      { error: paymentError(''), when: "The card was declined, or the environment's processor keeps no saved methods (the test processor); nothing was saved." },
      unavailable,
    ),
    resolve: (_root, { input }, ctx) => addCustomerPaymentMethod(ctx, input),
  }),
  customerPaymentMethodDelete: t.boolean({
    description: "Removes one of the signed-in customer's saved methods at the processor and returns true. RESOURCE_NOT_FOUND for any method that is not theirs.",
    authScopes: fullSession,
    args: { id: t.arg.id({ required: true, description: "The method's id." }) },
    extensions: raises({ error: paymentMethodInUse(), when: 'A live subscription renews with the method; nothing changed.' }, unavailable),
    resolve: (_root, { id }, ctx) => deleteCustomerPaymentMethod(ctx, String(id)),
  }),
  customerDefaultPaymentMethodUpdate: t.field({
    type: CustomerPaymentMethod,
    description:
      "Makes one of the signed-in customer's saved methods their default: the one their live subscriptions renew with from now on (a past-due one is charged again at once). RESOURCE_NOT_FOUND for any method that is not theirs.",
    authScopes: fullSession,
    args: { id: t.arg.id({ required: true, description: "The method's id." }) },
    extensions: raises(unavailable),
    resolve: (_root, { id }, ctx) => setDefaultCustomerPaymentMethod(ctx, String(id)),
  }),
}));
