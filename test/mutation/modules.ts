// The modules under mutation testing: the code that guards money and identity. Each names the
// source files Stryker mutates and the test files that exercise them (all of the suite would take
// hours per module on two cores; these are the files that reach the module's branches).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface MutationModule {
  /** Source files mutated, relative to the project root. */
  mutate: string[];
  /** Test files run against the mutants. */
  tests: string[];
}

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));
const e2e = (...names: string[]) => names.map((name) => `test/e2e/${name}.test.ts`);
const unit = (...names: string[]) => names.map((name) => `test/unit/${name}.test.ts`);

const oauthTests = e2e('oauth-flow', 'oauth-clients', 'openid-client', 'openid-keys', 'oauth-browser', 'token-cache');
const authTests = [...e2e('auth', 'token-cache', 'personal-access-tokens', 'customer-sessions', 'portal-isolation', 'environments'), ...unit('tokens', 'principal-cache')];

/**
 * Part `part` of `parts` of a source file, as a Stryker line range (`file:first-last`): the file cut
 * at top-level declarations or class members (with the comments above them; a statement of a
 * top-level function body two spaces in can match too, which only moves a cut) into runs of about
 * equal length. A file too large for one half-hour run is measured in parts; the cuts move with the
 * code. `within`, a part itself (`file:first-last`), cuts that range instead of the whole file.
 */
export function filePart(file: string, part: number, parts: number, within?: string): string {
  const lines = readFileSync(join(projectRoot, file), 'utf8').split('\n');
  const range = within ? parsePattern(within).lines : [1, lines.length];
  if (!range || range[0] < 1 || range[1] > lines.length || range[0] > range[1]) throw new Error(`${within} is not a line range of ${file} (file:first-last)`);
  const [first, last] = range;
  // A top-level declaration, or a member of a top-level class or object (not a statement of a
  // function body, such as `  if (`).
  const declaration =
    /^(export\s+)?(default\s+)?(async\s+)?(function|const|let|class|interface|type|enum)\b|^ {2}(?!(if|for|while|switch|return|await|throw|catch|try|else|do|new|typeof|void|delete)\b)(private\s+|readonly\s+|static\s+|async\s+)*\w+\s*[(<]/;
  const starts: number[] = [];
  lines.forEach((line, index) => {
    if (!declaration.test(line)) return;
    let start = index;
    while (start > 0 && /^\s*(\/\/|\/\*\*|\*)/.test(lines[start - 1])) start--;
    if (start + 1 > first && start + 1 <= last) starts.push(start + 1);
  });
  const cuts = [first];
  for (let k = 1; k < parts; k++) {
    const target = first - 1 + (k * (last - first + 1)) / parts;
    const nearest = starts.filter((line) => line > cuts[cuts.length - 1]).reduce((best, line) => (Math.abs(line - target) < Math.abs(best - target) ? line : best), Infinity);
    if (!Number.isFinite(nearest)) throw new Error(`${file} has too few top-level declarations for ${parts} parts`);
    cuts.push(nearest);
  }
  cuts.push(last + 1);
  return `${file}:${cuts[part - 1]}-${cuts[part] - 1}`;
}

/** Modules `<name>-1` … `<name>-<parts>`: the parts of one file, each run against the same tests. */
function partsOf(name: string, file: string, parts: number, tests: string[]): Record<string, MutationModule> {
  return Object.fromEntries(Array.from({ length: parts }, (_, i) => [`${name}-${i + 1}`, { mutate: [filePart(file, i + 1, parts)], tests }]));
}

// A checkout link's visit creates a checkout that drops a discount no longer usable (checkout-links).
const checkoutsFile = 'src/modules/checkouts/service.ts';
// The checkout's rules over the API; the hosted page's browser tests (checkout-page, 80 of the 100
// seconds the files take) pass through most of the service besides.
const checkoutApiTests = e2e('purchase', 'checkout-rules', 'email-claims', 'checkout-links');
const checkoutTests = [...checkoutApiTests, ...e2e('checkout-page')];
const subscriptionTests = e2e('subscriptions', 'subscription-revocation', 'portal-subscriptions');
// A customer's change to a grant is answered by the service (portal-benefit-grant-update).
const benefitApiTests = e2e('benefits', 'portal-benefits', 'portal-benefit-grant-update');
const benefitTests = [...benefitApiTests, ...e2e('entitlements-attacks', 'subscription-revocation')];
const grantsFile = 'src/modules/benefits/grants.ts';
const grantTests = [...benefitApiTests, ...e2e('metered', 'events')];

export const mutationModules: Record<string, MutationModule> = {
  // src/oauth/ holds about 1,900 mutants, measured in parts of at most about 310, each within a run's
  // half hour. `npm run mutate -- oauth` runs them all.
  // The grants and the token endpoint (about 300 mutants, each covered by many of the OAuth tests)
  // took 48 minutes as one run: grants.ts in three parts, the token endpoint with the first.
  'oauth-grants-1': {
    mutate: [filePart('src/oauth/grants.ts', 1, 3), 'src/oauth/token.ts'],
    tests: [...oauthTests, ...unit('tokens')],
  },
  'oauth-grants-2': {
    mutate: [filePart('src/oauth/grants.ts', 2, 3)],
    tests: [...oauthTests, ...unit('tokens')],
  },
  'oauth-grants-3': {
    mutate: [filePart('src/oauth/grants.ts', 3, 3)],
    tests: [...oauthTests, ...unit('tokens')],
  },
  'oauth-tokens': {
    mutate: ['src/oauth/id-token.ts', 'src/oauth/revoke.ts', 'src/oauth/introspect.ts', 'src/oauth/userinfo.ts'],
    tests: [...oauthTests, ...unit('tokens')],
  },
  'oauth-authorize': {
    mutate: ['src/oauth/authorize.ts'],
    tests: oauthTests,
  },
  'oauth-requests': {
    mutate: ['src/oauth/authorization-request.ts'],
    tests: oauthTests,
  },
  'oauth-clients-1': {
    mutate: [filePart('src/oauth/clients.ts', 1, 2)],
    tests: [...oauthTests, ...e2e('secret-scanning')],
  },
  'oauth-clients-2': {
    mutate: [filePart('src/oauth/clients.ts', 2, 2)],
    tests: [...oauthTests, ...e2e('secret-scanning')],
  },
  'oauth-registration': {
    mutate: ['src/oauth/registration.ts'],
    tests: oauthTests,
  },
  'oauth-http': {
    mutate: ['src/oauth/errors.ts', 'src/oauth/http.ts', 'src/oauth/discovery.ts', 'src/oauth/routes.ts', 'src/oauth/provider.ts'],
    tests: [...oauthTests, ...unit('oauth-http')],
  },
  'oauth-keys': {
    mutate: ['src/oauth/signing-keys.ts', 'src/oauth/cli.ts'],
    tests: [...oauthTests, ...e2e('signing-keys-command', 'secrets-rekey')],
  },
  // src/auth/ holds about 840 mutants: principals, tokens and sessions are measured apart.
  // OAuth access tokens resolve here (oauth-flow), and a live event stream asks whether its token
  // still stands (live-events): without them a first run left 119 mutants uncovered.
  'auth-principals': {
    mutate: ['src/auth/principals.ts', 'src/auth/principal-cache.ts'],
    tests: [...authTests, ...e2e('oauth-flow', 'live-events')],
  },
  // Email tokens are also the links that verify a new user's address (sign-up); email-links holds
  // their limits and refusals to the second and the word, email-none a server that mails nothing.
  'auth-tokens': {
    mutate: ['src/auth/tokens.ts', 'src/auth/email-tokens.ts', 'src/auth/signed-links.ts', 'src/auth/passwords.ts'],
    tests: [...authTests, ...e2e('organizations', 'portal-sign-in', 'sign-up', 'email-links', 'email-none')],
  },
  // Password sign-in's throttle has its own file: it needs a client address per test. The portal's
  // pages take sessions and trade links through customer-sessions.ts (portal-sessions, over HTTP).
  // The signed-in pages' CSRF tokens are bound to their session (session-forms); a checkout's
  // session reaches its subscription's grants (checkout-sessions).
  'auth-sessions': {
    mutate: ['src/auth/sessions.ts', 'src/auth/customer-sessions.ts', 'src/auth/portal-sign-in.ts', 'src/auth/reach.ts', 'src/auth/scopes.ts'],
    tests: [...authTests, ...e2e('portal-sign-in', 'sign-in-throttle', 'portal-sessions', 'session-forms', 'checkout-sessions'), ...unit('scopes')],
  },
  refunds: {
    mutate: ['src/modules/refunds/service.ts'],
    tests: e2e('refunds', 'portal-orders', 'subscription-revocation'),
  },
  // The checkouts service: create's opening (checkouts-1); its stored fields, the list and a buyer's
  // changes in two (checkouts-2, -3); discounts, update and confirm in three (checkouts-4 … -6). Nearly
  // every test of these files makes a checkout, so each mutant of the last two thirds runs most of
  // them: as thirds of the file, the second took 41 minutes and the third was on course for an hour.
  // The last third changes a checkout's discount at update and confirm: discounts.test.ts holds those rules.
  'checkouts-1': { mutate: [filePart(checkoutsFile, 1, 3)], tests: checkoutTests },
  'checkouts-2': { mutate: [filePart(checkoutsFile, 1, 2, filePart(checkoutsFile, 2, 3))], tests: checkoutTests },
  // A buyer's changes and a checkout's discount are asserted field by field over the API
  // (checkout-rules, purchase, discounts); the browser tests only pass through them.
  'checkouts-3': { mutate: [filePart(checkoutsFile, 2, 2, filePart(checkoutsFile, 2, 3))], tests: checkoutApiTests },
  'checkouts-4': { mutate: [filePart(checkoutsFile, 1, 3, filePart(checkoutsFile, 3, 3))], tests: [...checkoutApiTests, ...e2e('discounts')] },
  'checkouts-5': { mutate: [filePart(checkoutsFile, 2, 3, filePart(checkoutsFile, 3, 3))], tests: [...checkoutTests, ...e2e('discounts')] },
  'checkouts-6': { mutate: [filePart(checkoutsFile, 3, 3, filePart(checkoutsFile, 3, 3))], tests: [...checkoutTests, ...e2e('discounts')] },
  ...partsOf('subscriptions', 'src/modules/subscriptions/service.ts', 4, subscriptionTests),
  orders: {
    mutate: ['src/modules/orders/service.ts'],
    tests: e2e('orders', 'purchase', 'portal-orders', 'invoices', 'refunds', 'custom-fields'),
  },
  // src/modules/payments/ holds about 1,250 mutants: the service, the charge job, the Stripe
  // processor and the portal's saved cards are measured apart. `npm run mutate -- payments` runs them.
  'payments-service': {
    mutate: ['src/modules/payments/service.ts'],
    tests: e2e('payments', 'portal-payments', 'portal-payments-stripe', 'purchase', 'checkout-retry', 'checkout-rules', 'subscriptions', 'subscription-revocation'),
  },
  // The charge job also saves the card for renewals, refunds a charge made after its subscription
  // ended, bills an ended subscription's last usage, grants a purchase's benefits and asks Stripe
  // about unsettled payments on the clock: a first run without those files left 42 uncovered.
  'payments-charge': {
    mutate: ['src/modules/payments/charge.ts'],
    tests: e2e('purchase', 'payments', 'checkout-retry', 'subscriptions', 'stripe', 'stripe-crash', 'stripe-subscriptions', 'subscription-revocation', 'metered', 'benefits'),
  },
  'payments-stripe-1': {
    mutate: [filePart('src/modules/payments/stripe.ts', 1, 2)],
    tests: e2e('stripe', 'stripe-attacks', 'stripe-crash', 'stripe-subscriptions', 'checkout-page-stripe', 'purchase'),
  },
  'payments-stripe-2': {
    mutate: [filePart('src/modules/payments/stripe.ts', 2, 2), 'src/modules/payments/processor.ts'],
    tests: e2e('stripe', 'stripe-attacks', 'stripe-crash', 'stripe-subscriptions', 'checkout-page-stripe', 'purchase'),
  },
  'payments-methods': {
    mutate: ['src/modules/payments/saved-methods.ts'],
    tests: e2e('portal-payment-methods', 'portal-page-stripe', 'portal-page-payments', 'payments'),
  },
  'license-keys': {
    mutate: ['src/modules/license-keys/service.ts'],
    tests: e2e('license-keys', 'portal-benefits'),
  },
  ...partsOf('benefits', 'src/modules/benefits/service.ts', 2, benefitTests),
  // Nearly every purchase in the benefit tests runs the grant sync, so each of its mutants runs most
  // of them: whole, the file was on course for well over the half hour. A meter_credit grant credits
  // a meter (metered), and every grant and revocation is a usage event of the customer (events).
  // The first part (what a purchase entitles to) runs with the revocation races too; the sync and
  // what a grant gives (the second and third) are asserted by the benefit, meter and event tests,
  // and the two slowest files (renewal races, 85 of the 150 seconds) only buy through them.
  'benefits-grants-1': { mutate: [filePart(grantsFile, 1, 3)], tests: [...benefitTests, ...e2e('metered', 'events')] },
  'benefits-grants-2': { mutate: [filePart(grantsFile, 2, 3)], tests: grantTests },
  'benefits-grants-3': { mutate: [filePart(grantsFile, 3, 3)], tests: grantTests },
};

/** Names that stand for several modules on the command line. */
export const moduleGroups: Record<string, string[]> = Object.fromEntries(
  ['oauth', 'auth', 'checkouts', 'subscriptions', 'payments', 'benefits'].map((group) => [
    group,
    Object.keys(mutationModules).filter((name) => name.startsWith(`${group}-`)),
  ]),
);
// A `mutate` pattern: a file, a file with a line range (`file:first-last`), or a folder followed by /**/*.ts.
export function parsePattern(pattern: string): { path: string; lines: [number, number] | null } {
  const [, path, first, last] = /^(.*?)(?::(\d+)-(\d+))?$/.exec(pattern)!;
  return { path, lines: first === undefined ? null : [Number(first), Number(last)] };
}

// The files a module's patterns name, sorted: a pattern is a file (with or without a line range) or a
// folder followed by /**/*.ts. A part of a file counts the whole file as its source.
export function moduleSources(module: MutationModule, root: string): string[] {
  const files = new Set<string>();
  for (const pattern of module.mutate) {
    if (!pattern.endsWith('/**/*.ts')) {
      files.add(parsePattern(pattern).path);
      continue;
    }
    const folder = pattern.slice(0, -'/**/*.ts'.length);
    for (const entry of readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })) {
      if (entry.endsWith('.ts')) files.add(`${folder}/${entry.split(sep).join('/')}`);
    }
  }
  return [...files].sort();
}

/** What a module's score was measured against: a SHA-256 over its source files' paths and contents. */
export function sourcesDigest(module: MutationModule, root: string): string {
  const hash = createHash('sha256');
  for (const file of moduleSources(module, root)) hash.update(`${file}\n`).update(readFileSync(join(root, file))).update('\n');
  return hash.digest('hex');
}

/** A module's recorded result, written by `npm run mutate` to test/mutation/scores/<module>.json. */
export interface MutationScore {
  module: string;
  /** Killed (and timed out) mutants over all mutants the tests reach or should reach, in percent. */
  score: number;
  counts: { killed: number; timeout: number; survived: number; noCoverage: number; ignored: number; errors: number };
  /** `sourcesDigest` of the sources measured. */
  sources: string;
  testedAt: string;
  /** Every mutant no test killed: `<file>:<line> <mutator>`, with what it changed. */
  survivors: { at: string; replacement: string }[];
}
