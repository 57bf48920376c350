import type { RestRoute } from '../../rest/routes.ts';
import { defineWireConstants } from '../../rest/wire.ts';
import { addressWire } from '../customers/rest.ts';
import { organizationWire } from '../organizations/rest.ts';
import { priceWire, productWire } from '../products/rest.ts';

// Discounts, subscriptions and custom fields are not modelled yet; checkouts carry them empty.
defineWireConstants('Checkout', { discount: null, attached_custom_fields: [], custom_field_data: {} });
defineWireConstants('CheckoutPublic', { discount: null, attached_custom_fields: [], custom_field_data: {} });
defineWireConstants('CheckoutPublicConfirmed', { discount: null, attached_custom_fields: [], custom_field_data: {} });

const publicFields = `
  id createdAt modifiedAt paymentProcessor status clientSecret url expiresAt successUrl embedOrigin amount discountAmount
  netAmount taxAmount totalAmount currency productId productPriceId discountId allowDiscountCodes requireBillingAddress
  isDiscountApplicable isFreeProductPrice isPaymentRequired isPaymentSetupRequired isPaymentFormRequired customerId
  isBusinessCustomer customerName customerEmail customerIpAddress customerBillingName
  customerBillingAddress { ${addressWire} }
  customerTaxId paymentProcessorMetadata
  billingAddressFields { country state city postalCode line1 line2 }
  products { ${productWire} } product { ${productWire} } productPrice { ${priceWire} }`;

const CheckoutWire = `fragment CheckoutWire on Checkout {
  ${publicFields} metadata customerMetadata externalCustomerId customerExternalId subscriptionId }`;
const organization = `organization { ${organizationWire} }`;
const CheckoutPublicWire = `fragment CheckoutPublicWire on CheckoutPublic { ${publicFields} ${organization} }`;
const CheckoutConfirmedWire = `fragment CheckoutConfirmedWire on CheckoutPublicConfirmed { ${publicFields} ${organization} customerSessionToken }`;

export const checkoutRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/checkouts/client/{client_secret}',
    operation: `query ($clientSecret: String!) { checkoutClient(clientSecret: $clientSecret) { ...CheckoutPublicWire } } ${CheckoutPublicWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/checkouts/client/{client_secret}',
    body: 'input',
    operation: `mutation ($clientSecret: String!, $input: CheckoutUpdatePublicInput!) {
      checkoutClientUpdate(clientSecret: $clientSecret, input: $input) { ...CheckoutPublicWire } } ${CheckoutPublicWire}`,
  },
  {
    method: 'POST',
    path: '/v1/checkouts/client/{client_secret}/confirm',
    body: 'input',
    operation: `mutation ($clientSecret: String!, $input: CheckoutConfirmInput!) {
      checkoutClientConfirm(clientSecret: $clientSecret, input: $input) { ...CheckoutConfirmedWire } } ${CheckoutConfirmedWire}`,
  },
  {
    method: 'GET',
    path: '/v1/checkouts/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $productId: [UUID!], $customerId: [UUID!], $status: [CheckoutStatus!],
        $query: String, $sorting: [CheckoutSortOrder!]) {
      core { checkouts(page: $page, limit: $limit, organizationId: $organizationId, productId: $productId, customerId: $customerId,
          status: $status, query: $query, sorting: $sorting) { items { ...CheckoutWire } pagination { totalCount maxPage } } }
    } ${CheckoutWire}`,
  },
  {
    method: 'POST',
    path: '/v1/checkouts/',
    body: 'input',
    status: 201,
    operation: `mutation ($input: CheckoutCreateInput!) { core { checkoutCreate(input: $input) { ...CheckoutWire } } } ${CheckoutWire}`,
  },
  {
    method: 'GET',
    path: '/v1/checkouts/{id}',
    operation: `query ($id: UUID!) { core { checkout(id: $id) { ...CheckoutWire } } } ${CheckoutWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/checkouts/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: CheckoutUpdateInput!) { core { checkoutUpdate(id: $id, input: $input) { ...CheckoutWire } } } ${CheckoutWire}`,
  },
];
