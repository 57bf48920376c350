// The documented JSON of checkouts: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).
import { addressWire } from './customers.ts';
import { organizationWire } from './organizations.ts';
import { priceWire, productWire } from './products.ts';
import { checkoutDiscountWire } from './discounts.ts';
import { attachedCustomFieldWire } from './custom-fields.ts';

const publicFields = `
  id createdAt modifiedAt paymentProcessor status clientSecret url expiresAt successUrl embedOrigin amount discountAmount
  netAmount taxAmount totalAmount currency productId productPriceId discountId allowDiscountCodes requireBillingAddress
  isDiscountApplicable isFreeProductPrice isPaymentRequired isPaymentSetupRequired isPaymentFormRequired customerId
  isBusinessCustomer customerName customerEmail customerIpAddress customerBillingName
  customerBillingAddress { ${addressWire} }
  customerTaxId paymentProcessorMetadata
  billingAddressFields { country state city postalCode line1 line2 }
  products { ${productWire} } product { ${productWire} } productPrice { ${priceWire} }
  discount { ${checkoutDiscountWire} }
  attachedCustomFields { ${attachedCustomFieldWire} } customFieldData`;

export const CheckoutWire = `fragment CheckoutWire on Checkout {
  ${publicFields} metadata customerMetadata externalCustomerId customerExternalId subscriptionId }`;
const organizationSelection = `organization { ${organizationWire} }`;
export const CheckoutPublicWire = `fragment CheckoutPublicWire on CheckoutPublic { ${publicFields} ${organizationSelection} }`;
export const CheckoutConfirmedWire = `fragment CheckoutConfirmedWire on CheckoutPublicConfirmed { ${publicFields} ${organizationSelection} customerSessionToken }`;
