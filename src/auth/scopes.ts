// The scope catalogue, one list for every kind of token. Every Core field declares the scope it
// needs (see the scope inventory test). The identity scopes say what an OAuth client learns about
// the user (OpenID Connect claims, `core.me`); the resource scopes gate the Core API.
export const identityScopes = ['openid', 'profile', 'email', 'user:read'] as const;

export const resourceScopes = [
  'organizations:read',
  'organizations:write',
  'organization_access_tokens:read',
  'organization_access_tokens:write',
  'products:read',
  'products:write',
  'customers:read',
  'customers:write',
  'customer_sessions:write',
  'checkouts:read',
  'checkouts:write',
  'checkout_links:read',
  'checkout_links:write',
  'orders:read',
  'orders:write',
  'refunds:read',
  'refunds:write',
  'payments:read',
  'discounts:read',
  'discounts:write',
  'custom_fields:read',
  'custom_fields:write',
  'subscriptions:read',
  'subscriptions:write',
  'benefits:read',
  'benefits:write',
  'license_keys:read',
  'license_keys:write',
  'files:read',
  'files:write',
  'events:read',
  'events:write',
  'meters:read',
  'meters:write',
  'customer_meters:read',
  'webhooks:read',
  'webhooks:write',
  'metrics:read',
] as const;

export const allScopes = [...identityScopes, ...resourceScopes] as const;

export type Scope = (typeof allScopes)[number];
export type ResourceScope = (typeof resourceScopes)[number];

export function isScope(value: string): value is Scope {
  return (allScopes as readonly string[]).includes(value);
}

export function isResourceScope(value: string): value is ResourceScope {
  return (resourceScopes as readonly string[]).includes(value);
}

/** What each scope lets a client do, in words, for the consent page. */
export const scopeDescriptions: Record<Scope, string> = {
  openid: 'Confirm who you are',
  profile: 'See your name',
  email: 'See your email address',
  'user:read': 'Read your user account',
  'organizations:read': 'Read your organizations',
  'organizations:write': 'Create and change organizations',
  'organization_access_tokens:read': 'Read organization access tokens',
  'organization_access_tokens:write': 'Create and revoke organization access tokens',
  'products:read': 'Read products and prices',
  'products:write': 'Create and change products and prices',
  'customers:read': 'Read customers',
  'customers:write': 'Create, change and delete customers',
  'customer_sessions:write': 'Sign customers in to the customer portal',
  'checkouts:read': 'Read checkouts',
  'checkouts:write': 'Create and change checkouts',
  'checkout_links:read': 'Read checkout links',
  'checkout_links:write': 'Create, change and delete checkout links',
  'orders:read': 'Read orders, their invoices and their disputes',
  'orders:write': 'Change orders and generate invoices',
  'refunds:read': 'Read refunds',
  'refunds:write': 'Refund orders',
  'payments:read': 'Read payments: each attempt to charge an order',
  'discounts:read': 'Read discounts',
  'discounts:write': 'Create, change and delete discounts',
  'custom_fields:read': 'Read custom fields',
  'custom_fields:write': 'Create, change and delete custom fields',
  'subscriptions:read': 'Read subscriptions',
  'subscriptions:write': 'Change and cancel subscriptions',
  'benefits:read': 'Read benefits and their grants',
  'benefits:write': 'Create, change and delete benefits',
  'license_keys:read': 'Read license keys',
  'license_keys:write': 'Change license keys',
  'events:read': 'Read usage events',
  'events:write': 'Ingest usage events',
  'meters:read': 'Read meters and their quantities',
  'meters:write': 'Create, change and archive meters',
  'customer_meters:read': "Read customers' meters: consumption, credits and balance",
  'files:read': 'Read files',
  'files:write': 'Upload and delete files',
  'webhooks:read': 'Read webhook endpoints and deliveries',
  'webhooks:write': 'Create and change webhook endpoints',
  'metrics:read': 'Read metrics: orders, revenue, subscriptions and checkouts over time',
};
