// The modules under mutation testing: the code that guards money and identity. Each names the
// source files Stryker mutates and the test files that exercise them (all of the suite would take
// hours per module on two cores; these are the files that reach the module's branches).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, sep } from 'node:path';

export interface MutationModule {
  /** Source files mutated, relative to the project root. */
  mutate: string[];
  /** Test files run against the mutants. */
  tests: string[];
}

const e2e = (...names: string[]) => names.map((name) => `test/e2e/${name}.test.ts`);
const unit = (...names: string[]) => names.map((name) => `test/unit/${name}.test.ts`);

const oauthTests = e2e('oauth-flow', 'oauth-clients', 'openid-client', 'openid-keys', 'oauth-browser', 'token-cache');

export const mutationModules: Record<string, MutationModule> = {
  // src/oauth/ holds about 1,900 mutants: measured in four parts, each within a run's half hour.
  // `npm run mutate -- oauth` runs the four.
  'oauth-grants': {
    mutate: ['src/oauth/grants.ts', 'src/oauth/token.ts', 'src/oauth/id-token.ts', 'src/oauth/revoke.ts', 'src/oauth/introspect.ts', 'src/oauth/userinfo.ts'],
    tests: [...oauthTests, ...unit('tokens')],
  },
  'oauth-authorize': {
    mutate: ['src/oauth/authorize.ts', 'src/oauth/authorization-request.ts'],
    tests: oauthTests,
  },
  'oauth-clients': {
    mutate: ['src/oauth/clients.ts', 'src/oauth/registration.ts'],
    tests: [...oauthTests, ...e2e('secret-scanning')],
  },
  'oauth-http': {
    mutate: ['src/oauth/errors.ts', 'src/oauth/http.ts', 'src/oauth/discovery.ts', 'src/oauth/signing-keys.ts', 'src/oauth/cli.ts', 'src/oauth/routes.ts', 'src/oauth/provider.ts'],
    tests: [...oauthTests, ...e2e('cli')],
  },
  auth: {
    mutate: ['src/auth/**/*.ts'],
    tests: [...e2e('auth', 'token-cache', 'personal-access-tokens', 'customer-sessions', 'portal-isolation', 'environments'), ...unit('tokens', 'principal-cache')],
  },
  refunds: {
    mutate: ['src/modules/refunds/service.ts'],
    tests: e2e('refunds', 'portal-orders', 'subscription-revocation'),
  },
  checkouts: {
    mutate: ['src/modules/checkouts/service.ts'],
    tests: e2e('purchase', 'checkout-rules', 'checkout-page', 'email-claims'),
  },
  subscriptions: {
    mutate: ['src/modules/subscriptions/service.ts'],
    tests: e2e('subscriptions', 'subscription-revocation', 'portal-subscriptions'),
  },
  orders: {
    mutate: ['src/modules/orders/service.ts'],
    tests: e2e('orders', 'purchase', 'portal-orders', 'invoices', 'refunds', 'custom-fields'),
  },
  // src/modules/payments/ holds about 1,250 mutants: the service, the charge job, the Stripe
  // processor and the portal's saved cards are measured apart, each within a run's half hour.
  // `npm run mutate -- payments` runs the four.
  'payments-service': {
    mutate: ['src/modules/payments/service.ts'],
    tests: e2e('payments', 'portal-payments', 'purchase', 'checkout-retry', 'checkout-rules', 'subscriptions', 'subscription-revocation'),
  },
  'payments-charge': {
    mutate: ['src/modules/payments/charge.ts'],
    tests: e2e('purchase', 'payments', 'checkout-retry', 'subscriptions', 'stripe', 'stripe-crash'),
  },
  'payments-stripe': {
    mutate: ['src/modules/payments/stripe.ts', 'src/modules/payments/processor.ts'],
    tests: e2e('stripe', 'stripe-attacks', 'stripe-crash', 'stripe-subscriptions', 'checkout-page-stripe', 'purchase'),
  },
  'payments-methods': {
    mutate: ['src/modules/payments/saved-methods.ts'],
    tests: e2e('portal-payment-methods', 'portal-page-stripe', 'portal-page-payments'),
  },
  'license-keys': {
    mutate: ['src/modules/license-keys/service.ts'],
    tests: e2e('license-keys', 'portal-benefits'),
  },
  benefits: {
    mutate: ['src/modules/benefits/service.ts', 'src/modules/benefits/grants.ts'],
    tests: e2e('benefits', 'portal-benefits', 'entitlements-attacks', 'subscription-revocation'),
  },
};

/** Names that stand for several modules on the command line. */
export const moduleGroups: Record<string, string[]> = {
  oauth: Object.keys(mutationModules).filter((name) => name.startsWith('oauth-')),
  payments: Object.keys(mutationModules).filter((name) => name.startsWith('payments-')),
};

// The files a module's patterns name, sorted: a pattern is a file or a folder followed by /**/*.ts.
export function moduleSources(module: MutationModule, root: string): string[] {
  const files = new Set<string>();
  for (const pattern of module.mutate) {
    if (!pattern.endsWith('/**/*.ts')) {
      files.add(pattern);
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
