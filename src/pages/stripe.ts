// Stripe.js on the hosted checkout pages, when Stripe takes the environment's payments: the card
// field is Stripe's Payment Element, and the bank's 3-D Secure check runs in Stripe's popup. Card
// details go from the buyer's browser to Stripe only; the form posts the ConfirmationToken Stripe
// made from them, in its `card` field, as it posts a test card token otherwise.
//
// Stripe requires Stripe.js to be loaded from its own origin, never bundled or served by Kassa. The
// origins admitted are those Stripe's integration security guide
// (https://docs.stripe.com/security/guide#content-security-policy) lists for Stripe.js, less
// https://maps.googleapis.com, which only the Address Element's autocomplete uses: the page asks
// for the billing address itself. The scripts below are the pages' only code; the policy allows
// them by hash, and they read what they need from the data- attributes of their element.
import type { PageScripts } from './html.ts';

export const stripeJs = 'https://js.stripe.com/v3/';

const origins = {
  script: ['https://js.stripe.com', 'https://*.js.stripe.com'],
  frame: ['https://js.stripe.com', 'https://*.js.stripe.com', 'https://hooks.stripe.com'],
  connect: ['https://api.stripe.com'],
};

/**
 * The checkout form's card field: mounts the Payment Element in `#payment-element`; on submit,
 * Stripe checks the fields (`elements.submit()`), makes a ConfirmationToken with the billing
 * details the form asked for, and the form posts its id as `card`. A pay-what-you-want amount
 * typed in the form is passed on to the element (in Stripe's unit, `data-amount-decimals`), so a
 * wallet shows what the buyer will pay. Stripe.js's errors are shown next to the field.
 */
const paymentElementScript = `(() => {
  const mount = document.getElementById('payment-element');
  const form = mount.closest('form');
  const problem = document.getElementById('payment-element-error');
  const say = (message) => {
    problem.textContent = message || '';
    problem.hidden = !message;
  };
  if (typeof Stripe !== 'function') {
    say('The card field could not load. Check your connection, then reload the page.');
    return;
  }
  const settings = mount.dataset;
  const stripe = Stripe(settings.publishableKey);
  // Kassa confirms a PaymentIntent (not a Stripe Subscription); a recurring price's first payment
  // saves the card for its renewals, and the token must say so too.
  const saving = settings.setupFutureUsage ? { setupFutureUsage: settings.setupFutureUsage } : {};
  const elements = stripe.elements({ mode: 'payment', amount: Number(settings.amount), currency: settings.currency, paymentMethodCreation: 'manual', ...saving });
  elements.create('payment').mount(mount);

  const typedAmount = form.elements.namedItem('amount');
  if (typedAmount) {
    typedAmount.addEventListener('input', () => {
      const amount = Math.round(Number(typedAmount.value.trim()) * 10 ** Number(settings.amountDecimals));
      if (Number.isSafeInteger(amount) && amount > 0) elements.update({ amount });
    });
  }

  const text = (name) => {
    const field = form.elements.namedItem(name);
    return field && field.value.trim() ? field.value.trim() : undefined;
  };
  const billingDetails = () => {
    const address = { line1: text('line1'), line2: text('line2'), city: text('city'), state: text('state'), postal_code: text('postalCode'), country: text('country') && text('country').toUpperCase() };
    const known = Object.fromEntries(Object.entries(address).filter(([, value]) => value !== undefined));
    const details = { email: text('email'), name: text('name'), address: Object.keys(known).length ? known : undefined };
    return Object.fromEntries(Object.entries(details).filter(([, value]) => value !== undefined));
  };

  const button = form.querySelector('button[type=submit]');
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    say('');
    button.disabled = true;
    try {
      const checked = await elements.submit();
      if (checked.error) return say(checked.error.message);
      const made = await stripe.createConfirmationToken({ elements, params: { payment_method_data: { billing_details: billingDetails() } } });
      if (made.error) return say(made.error.message);
      form.elements.namedItem('card').value = made.confirmationToken.id;
      form.submit();
    } catch {
      say('The card could not be checked. Please try again.');
    } finally {
      button.disabled = false;
    }
  });
})();`;

/**
 * The status page of a payment the buyer's bank wants confirmed (3-D Secure): Stripe's popup
 * opens at once; when it closes, the page loads again without it (`?authenticated`), and refreshes
 * itself until Stripe's webhook has settled the order.
 */
const nextActionScript = `(() => {
  const status = document.getElementById('next-action');
  const settings = status.dataset;
  const done = () => location.replace(settings.afterUrl);
  if (typeof Stripe !== 'function') {
    status.textContent = 'Your bank’s check could not load. Check your connection, then reload the page.';
    return;
  }
  Stripe(settings.publishableKey)
    .handleNextAction({ clientSecret: settings.clientSecret })
    .then((result) => {
      if (result.error) status.textContent = result.error.message;
      setTimeout(done, result.error ? 2000 : 0);
    }, done);
})();`;

/** The checkout form's Payment Element. */
export const paymentElementScripts: PageScripts = { external: [stripeJs], inline: [paymentElementScript], origins };

/** The bank's check on the status page. */
export const nextActionScripts: PageScripts = { external: [stripeJs], inline: [nextActionScript], origins };

/**
 * The customer portal's card fields: every `[data-stripe-element]` mounts a Payment Element, in
 * `setup` mode for "Add a card" (the card is saved through a SetupIntent) and in `payment` mode,
 * with the amount, for "Pay now" with a new card (saving it for renewals when the order's charge
 * does, as the checkout's element does). On submit of a form whose choice is a new card
 * (`payment_method` is `new`, or the form offers no saved method), Stripe checks the fields, makes
 * a ConfirmationToken, and the form posts its id as `card`; a saved method's form posts as it is.
 */
const portalCardScript = `(() => {
  const mounts = document.querySelectorAll('[data-stripe-element]');
  const problemOf = (mount) => document.getElementById(mount.id + '-error');
  const say = (mount, message) => {
    const problem = problemOf(mount);
    problem.textContent = message || '';
    problem.hidden = !message;
  };
  if (typeof Stripe !== 'function') {
    mounts.forEach((mount) => say(mount, 'The card field could not load. Check your connection, then reload the page.'));
    return;
  }
  let stripe = null;
  mounts.forEach((mount) => {
    const settings = mount.dataset;
    stripe = stripe || Stripe(settings.publishableKey);
    const options = settings.stripeElement === 'setup'
      ? { mode: 'setup', currency: settings.currency, paymentMethodCreation: 'manual' }
      : { mode: 'payment', amount: Number(settings.amount), currency: settings.currency, paymentMethodCreation: 'manual', ...(settings.setupFutureUsage ? { setupFutureUsage: settings.setupFutureUsage } : {}) };
    const elements = stripe.elements(options);
    elements.create('payment').mount(mount);
    const form = mount.closest('form');
    const button = form.querySelector('button[type=submit]');
    form.addEventListener('submit', async (event) => {
      const choice = form.elements.namedItem('payment_method');
      if (choice && choice.value !== 'new') return;
      event.preventDefault();
      say(mount, '');
      button.disabled = true;
      try {
        const checked = await elements.submit();
        if (checked.error) return say(mount, checked.error.message);
        const made = await stripe.createConfirmationToken({ elements });
        if (made.error) return say(mount, made.error.message);
        form.elements.namedItem('card').value = made.confirmationToken.id;
        form.submit();
      } catch {
        say(mount, 'The card could not be checked. Please try again.');
      } finally {
        button.disabled = false;
      }
    });
  });
})();`;

/**
 * The bank's check while a card is being saved (3-D Secure on the SetupIntent): Stripe's popup
 * opens at once; when the check is done, the page posts the same ConfirmationToken again (its
 * form), and the card is saved then (or the post says the check failed). When Stripe.js reports an
 * error (the window was closed), the page says so and offers the way back instead of posting.
 */
const setupNextActionScript = `(() => {
  const status = document.getElementById('setup-next-action');
  const form = document.getElementById('setup-again');
  const giveUp = (message) => {
    status.textContent = message;
    document.getElementById('setup-back').hidden = false;
  };
  if (typeof Stripe !== 'function') return giveUp('Your bank’s check could not load. Check your connection, then try again.');
  Stripe(status.dataset.publishableKey)
    .handleNextAction({ clientSecret: status.dataset.clientSecret })
    .then((result) => (result.error ? giveUp(result.error.message) : form.submit()), () => giveUp('Your bank’s check did not finish. Please try again.'));
})();`;

/** The portal page's card fields. */
export const portalCardScripts: PageScripts = { external: [stripeJs], inline: [portalCardScript], origins };

/** The bank's check while the portal saves a card. */
export const setupNextActionScripts: PageScripts = { external: [stripeJs], inline: [setupNextActionScript], origins };
