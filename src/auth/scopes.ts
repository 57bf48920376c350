// The scope catalogue. Every Core field declares the scope it needs (see the scope inventory test).
export const allScopes = [
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
  'orders:read',
  'orders:write',
  'refunds:read',
  'refunds:write',
  'subscriptions:read',
  'subscriptions:write',
  'benefits:read',
  'benefits:write',
  'license_keys:read',
  'license_keys:write',
  'files:read',
  'files:write',
  'webhooks:read',
  'webhooks:write',
] as const;

export type Scope = (typeof allScopes)[number];

export function isScope(value: string): value is Scope {
  return (allScopes as readonly string[]).includes(value);
}
