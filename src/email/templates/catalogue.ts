// The words of every email, by locale. English is complete and is what any other locale falls back
// to, message by message. `{name}` is replaced by the parameter of that name, as plain text: the
// HTML part escapes the whole sentence afterwards, so no parameter can add markup.

export const english = {
  'greeting.named': 'Hello {name},',
  'greeting.anonymous': 'Hello,',
  'footer.sent_by': 'This email was sent by {organization} through Kassa.',
  'footer.kassa': 'This email was sent by Kassa.',
  'lines.subtotal': 'Subtotal',
  'lines.discount': 'Discount',
  'lines.discount_named': 'Discount ({name})',
  'lines.tax': 'Tax',
  'lines.total': 'Total',

  'order_receipt.subject': 'Your receipt from {organization}',
  'order_receipt.intro': 'Thank you for your order. Your payment of {total} to {organization} went through.',
  'order_receipt.order': 'Order {reference} of {date}.',
  'order_receipt.portal': 'Your orders and invoices are in your customer portal. Sign in there with this email address.',
  'order_receipt.portal_link': 'Open your customer portal',

  'subscription_renewed.subject': 'Your {product} subscription at {organization} was renewed',
  'subscription_renewed.intro': 'Your subscription to {product} was renewed and {total} was charged.',
  'subscription_renewed.next': 'The next renewal is on {date}.',

  'subscription_canceled.subject': 'Your {product} subscription at {organization} will end',
  'subscription_canceled.intro': 'Your subscription to {product} was canceled. You keep access until {date}, and you will not be charged again.',
  'subscription_canceled.resume': 'Changed your mind? You can resume it from your customer portal until then.',

  'subscription_revoked.subject': 'Your {product} subscription at {organization} has ended',
  'subscription_revoked.intro': 'Your subscription to {product} has ended, and the access it gave has ended with it.',
  'subscription_revoked.again': 'You can subscribe again at any time.',

  'payment_failed.subject': 'Your payment to {organization} failed',
  'payment_failed.intro': 'We could not charge {amount} for your subscription to {product}.',
  'payment_failed.retry': 'We will try again on {date}. To avoid losing access, update your payment method before then.',
  'payment_failed.last': 'Update your payment method to keep your subscription.',
  'payment_failed.fix_link': 'Update your payment method',

  'portal_sign_in.subject': 'Sign in to your customer portal at {organization}',
  'portal_sign_in.intro': 'Use the link below to sign in to your customer portal at {organization}.',
  'portal_sign_in.link': 'Sign in to the customer portal',
  'portal_sign_in.expiry': 'The link works once and expires in {minutes} minutes. If you did not ask for it, ignore this email.',

  'verify_email.subject': 'Confirm your email address for Kassa',
  'verify_email.intro': 'Welcome to Kassa. Confirm that this is your email address to finish signing up.',
  'verify_email.link': 'Confirm my email address',
  'verify_email.expiry': 'The link works once and expires in {hours} hours. If you did not sign up, ignore this email: no account is usable without it.',

  'account_exists.subject': 'You already have a Kassa account',
  'account_exists.intro': 'Someone tried to sign up for Kassa with this email address, but you already have an account.',
  'account_exists.sign_in': 'If it was you, sign in instead.',
  'account_exists.sign_in_link': 'Sign in to Kassa',
  'account_exists.ignore': 'If it was not you, ignore this email. Nothing has changed.',

  'email_code.subject': '{code} is your code to confirm your email for {organization}',
  'email_code.intro': 'Someone asked to use this address for their customer account at {organization}.',
  'email_code.code': 'If it was you, enter this code to confirm it: {code}',
  'email_code.expiry': 'The code expires in {minutes} minutes and works once. If it was not you, ignore this email: nothing changes without the code.',

  'email_taken.subject': 'Someone asked to use your email at {organization}',
  'email_taken.intro': 'Someone asked to use this address for another customer account at {organization}.',
  'email_taken.explain': 'This address already belongs to a customer account there, so it cannot be added to another one and nothing has changed.',
  'email_taken.advice': 'If it was you, sign in to the account that has this address instead. If it was not you, ignore this email.',

  'merchant_new_order.subject': 'New order: {product} for {total}',
  'merchant_new_order.intro': '{customer} paid {total} for {product} at {organization}.',
  'merchant_new_subscription.subject': 'New subscription: {product}',
  'merchant_new_subscription.intro': '{customer} subscribed to {product} at {organization}: {amount} every {interval}.',
  'merchant.settings': 'You receive this because you are a member of {organization}. Its notification settings turn these emails off.',
} as const;

export type MessageKey = keyof typeof english;
export type Catalogue = Partial<Record<MessageKey, string>>;

const german: Catalogue = {
  'greeting.named': 'Hallo {name},',
  'greeting.anonymous': 'Hallo,',
  'footer.sent_by': 'Diese E-Mail wurde von {organization} über Kassa versandt.',
  'lines.subtotal': 'Zwischensumme',
  'lines.discount': 'Rabatt',
  'lines.discount_named': 'Rabatt ({name})',
  'lines.tax': 'Steuer',
  'lines.total': 'Gesamt',
  'order_receipt.subject': 'Ihre Quittung von {organization}',
  'order_receipt.intro': 'Vielen Dank für Ihre Bestellung. Ihre Zahlung von {total} an {organization} ist eingegangen.',
  'order_receipt.order': 'Bestellung {reference} vom {date}.',
  'order_receipt.portal': 'Ihre Bestellungen und Rechnungen finden Sie in Ihrem Kundenportal. Melden Sie sich dort mit dieser E-Mail-Adresse an.',
  'order_receipt.portal_link': 'Kundenportal öffnen',
  'portal_sign_in.subject': 'Anmeldung im Kundenportal von {organization}',
  'portal_sign_in.intro': 'Mit dem folgenden Link melden Sie sich im Kundenportal von {organization} an.',
  'portal_sign_in.link': 'Im Kundenportal anmelden',
  'portal_sign_in.expiry': 'Der Link funktioniert einmal und läuft in {minutes} Minuten ab. Wenn Sie ihn nicht angefordert haben, ignorieren Sie diese E-Mail.',
  'payment_failed.subject': 'Ihre Zahlung an {organization} ist fehlgeschlagen',
  'payment_failed.intro': 'Wir konnten {amount} für Ihr Abonnement von {product} nicht abbuchen.',
  'payment_failed.retry': 'Wir versuchen es am {date} erneut. Aktualisieren Sie bis dahin Ihre Zahlungsmethode, um den Zugang zu behalten.',
  'payment_failed.last': 'Aktualisieren Sie Ihre Zahlungsmethode, um Ihr Abonnement zu behalten.',
  'payment_failed.fix_link': 'Zahlungsmethode aktualisieren',
};

const french: Catalogue = {
  'greeting.named': 'Bonjour {name},',
  'greeting.anonymous': 'Bonjour,',
  'footer.sent_by': 'Cet e-mail vous a été envoyé par {organization} via Kassa.',
  'lines.subtotal': 'Sous-total',
  'lines.discount': 'Remise',
  'lines.discount_named': 'Remise ({name})',
  'lines.tax': 'Taxes',
  'lines.total': 'Total',
  'order_receipt.subject': 'Votre reçu de {organization}',
  'order_receipt.intro': 'Merci pour votre commande. Votre paiement de {total} à {organization} a bien été reçu.',
  'order_receipt.order': 'Commande {reference} du {date}.',
  'order_receipt.portal': 'Vos commandes et factures sont dans votre espace client. Connectez-vous-y avec cette adresse e-mail.',
  'order_receipt.portal_link': 'Ouvrir votre espace client',
  'portal_sign_in.subject': 'Connexion à votre espace client chez {organization}',
  'portal_sign_in.intro': 'Utilisez le lien ci-dessous pour vous connecter à votre espace client chez {organization}.',
  'portal_sign_in.link': "Se connecter à l'espace client",
  'portal_sign_in.expiry': "Le lien fonctionne une fois et expire dans {minutes} minutes. Si vous ne l'avez pas demandé, ignorez cet e-mail.",
};

/** The locales with a catalogue, and the `Intl` locale money and dates are written in for each. */
export const catalogues: Readonly<Record<string, { messages: Catalogue; intl: string }>> = {
  en: { messages: english, intl: 'en-US' },
  de: { messages: german, intl: 'de-DE' },
  fr: { messages: french, intl: 'fr-FR' },
};

export type Locale = 'en' | 'de' | 'fr';

/** The supported locale closest to `requested` ("de-AT" is "de"); English for anything else. */
export function resolveLocale(requested: unknown): Locale {
  if (typeof requested !== 'string') return 'en';
  const language = requested.trim().toLowerCase().split(/[-_]/)[0];
  return Object.hasOwn(catalogues, language) ? (language as Locale) : 'en';
}

/** The message `key` in `locale` (English when the locale lacks it), its `{name}`s replaced. */
export function translate(locale: Locale, key: MessageKey, params: Record<string, string | number> = {}): string {
  const template = catalogues[locale].messages[key] ?? english[key];
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
}
