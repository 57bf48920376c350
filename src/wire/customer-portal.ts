// The documented JSON of the Customer Portal's resources: what a signed-in customer sees of
// themselves, their orders, subscriptions, benefit grants, license keys and saved payment methods,
// and of the catalogue.
import { benefitPublicWire, licenseKeysPropertiesWire } from './benefits.ts';
import { addressWire, customerWire } from './customers.ts';
import { activationWire } from './license-keys.ts';
import { orderItemWire } from './orders.ts';
import { organizationWire } from './organizations.ts';
import { priceWire, productPublicFieldsWire } from './products.ts';
import { subscriptionPublicFieldsWire } from './subscriptions.ts';

/** The REST shape of the signed-in customer, wherever the portal shows them. */
const customerPortalCustomerWire = `id createdAt modifiedAt email emailVerified name billingName billingAddress { ${addressWire} } taxId`;

export const CustomerPortalCustomerWire = /* GraphQL */ `fragment CustomerPortalCustomerWire on CustomerPortalCustomer { ${customerPortalCustomerWire} }`;

/** The REST shape of a portal product, in an organization's catalogue. */
const customerProductWire = `${productPublicFieldsWire} prices { ${priceWire} } benefits { ${benefitPublicWire} }`;
/** The REST shape of a portal product with its organization, in an order or a subscription. */
const customerProductWithOrganizationWire = `${customerProductWire} organization { ${organizationWire} }`;

export const CustomerOrganizationWire = /* GraphQL */ `
  fragment CustomerOrganizationWire on CustomerOrganization {
    organization { ${organizationWire} }
    products { ${customerProductWire} }
  }`;

export const CustomerOrderWire = /* GraphQL */ `
  fragment CustomerOrderWire on CustomerOrder {
    id createdAt modifiedAt status paid subtotalAmount discountAmount netAmount taxAmount totalAmount refundedAmount
    refundedTaxAmount currency billingReason billingName billingAddress { ${addressWire} } isInvoiceGenerated
    customerId productId subscriptionId checkoutId userId nextPaymentAttemptAt discountId
    product { ${customerProductWithOrganizationWire} }
    subscription { ${subscriptionPublicFieldsWire} discountId }
    items { ${orderItemWire} }
  }`;

export const CustomerSubscriptionWire = /* GraphQL */ `
  fragment CustomerSubscriptionWire on CustomerSubscription {
    ${subscriptionPublicFieldsWire} discountId
    product { ${customerProductWithOrganizationWire} }
    prices { ${priceWire} }
    meters { id createdAt modifiedAt consumedUnits creditedUnits amount meterId meter { id createdAt modifiedAt name } }
  }`;

export const CustomerBenefitGrantWire = /* GraphQL */ `
  fragment CustomerBenefitGrantWire on CustomerBenefitGrant {
    id createdAt modifiedAt grantedAt revokedAt customerId benefitId subscriptionId orderId isGranted isRevoked properties
    customer { ${customerPortalCustomerWire} }
    benefit {
      ${benefitPublicWire} metadata
      organization { ${organizationWire} }
      ... on BenefitCustomSubscriber { properties { note } }
      ... on BenefitLicenseKeysSubscriber { properties { ${licenseKeysPropertiesWire} } }
      ... on BenefitDownloadablesSubscriber { properties { activeFiles } }
      ... on BenefitMeterCreditSubscriber { properties { units rollover meterId } }
    }
  }`;

const customerLicenseKeyWire = `
  id createdAt modifiedAt organizationId customerId benefitId key displayKey status
  limitActivations usage limitUsage validations lastValidatedAt expiresAt
  customer { ${customerWire} }`;

export const CustomerLicenseKeyWire = /* GraphQL */ `fragment CustomerLicenseKeyWire on CustomerLicenseKey { ${customerLicenseKeyWire} }`;
export const CustomerLicenseKeyWithActivationsWire = /* GraphQL */ `fragment CustomerLicenseKeyWithActivationsWire on CustomerLicenseKey {
  ${customerLicenseKeyWire} activations { ${activationWire} } }`;

/** A saved payment method: a card with what it shows of itself, or another kind by its type alone. */
export const CustomerPaymentMethodWire = /* GraphQL */ `
  fragment CustomerPaymentMethodWire on CustomerPaymentMethod {
    id createdAt modifiedAt processor customerId type
    ... on PaymentMethodCard { methodMetadata { brand last4 expMonth expYear wallet } }
  }`;
