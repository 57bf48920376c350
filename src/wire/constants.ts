// Wire fields that always carry the same value for objects of a GraphQL type: parts of a resource
// the wire format documents and Kassa does not model (yet). Every such field is listed here, by
// type; wireShape adds them to each object of the type it renders. Frozen, as every response
// shares them.
import { organizationProfileConstants } from './organizations.ts';

type Constants = Readonly<Record<string, unknown>>;

// Custom fields are not modelled; checkouts carry them empty.
const checkout: Constants = { attached_custom_fields: [], custom_field_data: {} };
// Product media are not modelled; the portal's products carry none.
const portalProduct: Constants = { medias: [] };

const table: Record<string, Constants> = {
  Checkout: checkout,
  CheckoutPublic: checkout,
  CheckoutPublicConfirmed: checkout,
  // Custom fields are not modelled; orders carry them empty.
  Order: { custom_field_data: {} },
  Organization: organizationProfileConstants,
  // Media files and custom fields are not modelled. Products embedded without their benefits (in
  // orders) carry none.
  Product: { benefits: [], medias: [], attached_custom_fields: [] },
  // Custom fields are not modelled; subscriptions carry them empty.
  Subscription: { custom_field_data: {} },
  // Kassa has no sign-in through third-party accounts: a customer has no connected OAuth accounts.
  CustomerPortalCustomer: { oauth_accounts: {} },
  // Meters are not modelled.
  CustomerSubscription: { meters: [] },
  CustomerProduct: portalProduct,
  CustomerOrderProduct: portalProduct,
  CustomerSubscriptionProduct: portalProduct,
  // The portal's organization carries the profile fields Kassa does not keep, as the Core one does.
  CustomerSubscriptionOrganization: organizationProfileConstants,
};

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** The constant wire fields of objects of `typeName`, if it has any. */
export function wireConstantsOf(typeName: string): Constants | undefined {
  return table[typeName];
}

deepFreeze(table);
