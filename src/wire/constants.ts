// Wire fields that always carry the same value for objects of a GraphQL type: parts of a resource
// the wire format documents and Kassa does not model (yet). Every such field is listed here, by
// type; wireShape adds them to each object of the type it renders. Frozen, as every response
// shares them.
import { organizationProfileConstants } from './organizations.ts';

type Constants = Readonly<Record<string, unknown>>;

// Product media are not modelled; the portal's products carry none.
const portalProduct: Constants = { medias: [] };

const table: Record<string, Constants> = {
  Organization: organizationProfileConstants,
  // Media files are not modelled. Products embedded without their benefits (in orders) carry none.
  Product: { benefits: [], medias: [] },
  // Kassa has no sign-in through third-party accounts: a customer has no connected OAuth accounts.
  CustomerPortalCustomer: { oauth_accounts: {} },
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

// Fields the wire format leaves out rather than sending null, by type: a custom field's properties
// carry only the keys that were set.
const formProperties = ['formLabel', 'formHelpText', 'formPlaceholder'];
const omittedWhenNull: Record<string, readonly string[]> = {
  CustomFieldTextProperties: [...formProperties, 'textarea', 'minLength', 'maxLength'],
  CustomFieldNumberProperties: [...formProperties, 'ge', 'le'],
  CustomFieldDateProperties: [...formProperties, 'ge', 'le'],
  CustomFieldCheckboxProperties: formProperties,
  CustomFieldSelectProperties: formProperties,
};

/** Whether the wire leaves the field of objects of `typeName` out when it is null. */
export function omittedWhenNullOf(typeName: string, field: string): boolean {
  return omittedWhenNull[typeName]?.includes(field) ?? false;
}

/** The constant wire fields of objects of `typeName`, if it has any. */
export function wireConstantsOf(typeName: string): Constants | undefined {
  return table[typeName];
}

deepFreeze(table);
