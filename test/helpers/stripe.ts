// A test server whose two environments charge through Stripe, pointed by STRIPE_API_URL at the
// Stripe API double (test/stripe-double), with both environments' webhook endpoints registered at
// the double; and what the Stripe tests do as the buyer or read back.
//
//   const s = useStripeServer({ shop: 'sandbox', live: 'production' });
//   await s.confirm(s.t.shop, checkout.clientSecret, await s.confirmationToken('sandbox', 'pm_card_visa'));
//
// A file that sets up its own server with only the sandbox on Stripe uses `useSandboxStripe` before
// `useTestServer`:
//
//   const { keys, env, double } = useSandboxStripe('portalcards1', { TEST_CARD_DELAY_MS: '0' });
//   const t = useTestServer({ env, organizations: { shop: 'sandbox' } });
//   it('…', async () => { await double().stripe(keys.secret).customers.list(); });
import type Stripe from 'stripe';
import { afterAll, beforeAll } from 'vitest';
import type { EnvironmentName } from '../../src/config.ts';
import { startStripeDouble, type StripeDouble } from '../stripe-double/index.ts';
import type { Org } from './organizations.ts';
import { useTestServer, type TestServerHandle } from './use-test-server.ts';
import { eventually } from './waiting.ts';

export const stripeKeys = {
  production: { secret: 'sk_live_kassa1', publishable: 'pk_live_kassa1', webhook: 'whsec_production1' },
  sandbox: { secret: 'sk_test_kassa1', publishable: 'pk_test_kassa1', webhook: 'whsec_sandbox1' },
} as const;

/**
 * Starts the Stripe API double before the server (register it before `useTestServer`: hooks run in
 * the order registered), points `env` at it (STRIPE_API_URL, filled in once it listens), and closes
 * it after the file. The double is read through the returned function, in hooks and tests.
 */
export function useStripeDouble(env: Record<string, string>): () => StripeDouble {
  let double: StripeDouble | undefined;
  beforeAll(async () => {
    double = await startStripeDouble();
    env.STRIPE_API_URL = double.url;
  });
  afterAll(() => double?.close());
  return () => {
    if (!double) throw new Error('useStripeDouble: the double starts in beforeAll; read it in a hook or a test');
    return double;
  };
}

/** The sandbox charging through the Stripe API double with keys named after the file, over `extra` settings; production keeps its own processor. */
export function useSandboxStripe(name: string, extra: Record<string, string> = {}) {
  const keys = { secret: `sk_test_${name}`, publishable: `pk_test_${name}`, webhook: `whsec_${name}` };
  const env: Record<string, string> = {
    SANDBOX_STRIPE_SECRET_KEY: keys.secret,
    SANDBOX_STRIPE_PUBLISHABLE_KEY: keys.publishable,
    SANDBOX_STRIPE_WEBHOOK_SECRET: keys.webhook,
    ...extra,
  };
  return { keys, env, double: useStripeDouble(env) };
}

export function useStripeServer<const Name extends string>(organizations: Record<Name, EnvironmentName>) {
  const env: Record<string, string> = {
    STRIPE_SECRET_KEY: stripeKeys.production.secret,
    STRIPE_PUBLISHABLE_KEY: stripeKeys.production.publishable,
    STRIPE_WEBHOOK_SECRET: stripeKeys.production.webhook,
    SANDBOX_STRIPE_SECRET_KEY: stripeKeys.sandbox.secret,
    SANDBOX_STRIPE_PUBLISHABLE_KEY: stripeKeys.sandbox.publishable,
    SANDBOX_STRIPE_WEBHOOK_SECRET: stripeKeys.sandbox.webhook,
    PAYMENT_RECONCILE_AFTER_SECONDS: '1',
  };
  const stripe = useStripeDouble(env);
  const t: TestServerHandle<Name> = useTestServer({ env, organizations });
  const webhookUrl = (environment: EnvironmentName) => `${t.server.base(environment)}/integrations/stripe/webhook`;
  beforeAll(() => {
    for (const environment of ['production', 'sandbox'] as const) stripe().webhooks.addTarget({ url: webhookUrl(environment), secret: stripeKeys[environment].webhook });
  });
  const prisma = (environment: EnvironmentName) => t.server.kassa.environments[environment].environment.prisma;

  return {
    t,
    get double() {
      return stripe();
    },
    webhookUrl,
    prisma,
    /** What Stripe.js does on the buyer's page: a ConfirmationToken for a card, in the environment's mode. */
    async confirmationToken(environment: EnvironmentName, card: string): Promise<string> {
      if (environment === 'production') return stripe().confirmationToken(card, { livemode: true }).id;
      return (await stripe().stripe(stripeKeys.sandbox.secret).testHelpers.confirmationTokens.create({ payment_method: card })).id;
    },
    confirm(org: Org, clientSecret: string, token: string, email = 'buyer@example.com') {
      return org.publicApi('POST', `/checkouts/client/${clientSecret}/confirm`, { customer_email: email, confirmation_token_id: token });
    },
    checkoutWhen(org: Org, id: string, done: (c: { status: string; payment_processor_metadata: Record<string, string> }) => boolean, what: string) {
      return eventually(async () => (await org.api('GET', `/checkouts/${id}`)).body, done, what);
    },
    paymentsOf(environment: EnvironmentName, checkoutId: string) {
      return prisma(environment).payment.findMany({ where: { order: { checkoutId } }, orderBy: { createdAt: 'asc' } });
    },
    /** The PaymentIntents Stripe made for a Kassa payment. */
    intentsFor(paymentId: string) {
      return stripe()
        .objects<Stripe.PaymentIntent>('payment_intent')
        .filter((pi) => pi.metadata?.kassa_payment_id === paymentId);
    },
  };
}
