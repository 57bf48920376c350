// The `/v1/customer-portal/...` routes: table entries over the CustomerPortal root.
import type { RestRoute } from '../route.ts';
import { CustomerPortalCustomerWire, CustomerOrganizationWire, CustomerOrderWire, CustomerSubscriptionWire, CustomerBenefitGrantWire, CustomerLicenseKeyWire, CustomerLicenseKeyWithActivationsWire, CustomerPaymentMethodWire } from '../../wire/customer-portal.ts';

const portalCustomersRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/customer-portal/customers/me',
    operation: `query { customerPortal { customer { ...CustomerPortalCustomerWire } } } ${CustomerPortalCustomerWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/customer-portal/customers/me',
    body: 'input',
    operation: `mutation ($input: CustomerPortalCustomerUpdateInput!) {
      customerPortal { customerUpdate(input: $input) { ...CustomerPortalCustomerWire } } } ${CustomerPortalCustomerWire}`,
  },
  {
    method: 'POST',
    path: '/v1/customer-portal/customers/me/email/verify',
    body: 'input',
    operation: `mutation ($input: CustomerPortalEmailVerifyInput!) {
      customerPortal { customerEmailVerify(input: $input) { ...CustomerPortalCustomerWire } } } ${CustomerPortalCustomerWire}`,
  },
];

// The saved payment methods live at the processor; the customer is always the signed-in one (`me`).
const portalPaymentMethodsRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/customer-portal/customers/me/payment-methods',
    operation: `query ($page: Int, $limit: Int) {
      customerPortal { paymentMethods(page: $page, limit: $limit) { items { ...CustomerPaymentMethodWire } pagination { totalCount maxPage } } }
    } ${CustomerPaymentMethodWire}`,
  },
  {
    method: 'POST',
    path: '/v1/customer-portal/customers/me/payment-methods',
    body: 'input',
    status: 201,
    operation: `mutation ($input: CustomerPaymentMethodCreateInput!) {
      customerPortal { customerPaymentMethodCreate(input: $input) { ...CustomerPaymentMethodWire } } } ${CustomerPaymentMethodWire}`,
  },
  {
    method: 'DELETE',
    path: '/v1/customer-portal/customers/me/payment-methods/{id}',
    status: 204,
    operation: `mutation ($id: ID!) { customerPortal { customerPaymentMethodDelete(id: $id) } }`,
  },
];

const portalOrganizationsRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/customer-portal/organizations/{slug}',
    operation: `query ($slug: String!) { customerPortalOrganization(slug: $slug) { ...CustomerOrganizationWire } } ${CustomerOrganizationWire}`,
  },
];

const portalOrdersRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/customer-portal/orders/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $productId: [UUID!], $productBillingType: [ProductBillingType!],
        $subscriptionId: [UUID!], $query: String, $sorting: [CustomerOrderSortOrder!]) {
      customerPortal { orders(page: $page, limit: $limit, organizationId: $organizationId, productId: $productId,
          productBillingType: $productBillingType, subscriptionId: $subscriptionId, query: $query, sorting: $sorting) {
        items { ...CustomerOrderWire } pagination { totalCount maxPage } } }
    } ${CustomerOrderWire}`,
  },
  {
    method: 'GET',
    path: '/v1/customer-portal/orders/{id}',
    operation: `query ($id: UUID!) { customerPortal { order(id: $id) { ...CustomerOrderWire } } } ${CustomerOrderWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/customer-portal/orders/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: CustomerOrderUpdateInput!) {
      customerPortal { orderUpdate(id: $id, input: $input) { ...CustomerOrderWire } } } ${CustomerOrderWire}`,
  },
  {
    method: 'GET',
    path: '/v1/customer-portal/orders/{id}/payment-status',
    operation: `query ($id: UUID!) { customerPortal { orderPaymentStatus(id: $id) { status error } } }`,
  },
  {
    method: 'POST',
    path: '/v1/customer-portal/orders/{id}/confirm-payment',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: CustomerOrderPaymentConfirmInput!) {
      customerPortal { orderPaymentConfirm(id: $id, input: $input) { status clientSecret error } } }`,
  },
  // 202 as the client library expects, with the order now invoiced as its body.
  {
    method: 'POST',
    path: '/v1/customer-portal/orders/{id}/invoice',
    status: 202,
    operation: `mutation ($id: UUID!) { customerPortal { orderInvoiceGenerate(id: $id) { ...CustomerOrderWire } } } ${CustomerOrderWire}`,
  },
  {
    method: 'GET',
    path: '/v1/customer-portal/orders/{id}/invoice',
    operation: `query ($id: UUID!) { customerPortal { orderInvoice(id: $id) { url } } }`,
  },
];

const portalSubscriptionsRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/customer-portal/subscriptions/',
    operation: `query ($page: Int, $limit: Int, $productId: [UUID!], $active: Boolean, $query: String, $sorting: [CustomerSubscriptionSortOrder!]) {
      customerPortal { subscriptions(page: $page, limit: $limit, productId: $productId, active: $active, query: $query, sorting: $sorting) {
        items { ...CustomerSubscriptionWire } pagination { totalCount maxPage } } }
    } ${CustomerSubscriptionWire}`,
  },
  {
    method: 'GET',
    path: '/v1/customer-portal/subscriptions/{id}',
    operation: `query ($id: UUID!) { customerPortal { subscription(id: $id) { ...CustomerSubscriptionWire } } } ${CustomerSubscriptionWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/customer-portal/subscriptions/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: CustomerSubscriptionUpdateInput!) {
      customerPortal { subscriptionUpdate(id: $id, input: $input) { ...CustomerSubscriptionWire } } } ${CustomerSubscriptionWire}`,
  },
  {
    method: 'DELETE',
    path: '/v1/customer-portal/subscriptions/{id}',
    operation: `mutation ($id: UUID!) { customerPortal { subscriptionCancel(id: $id) { ...CustomerSubscriptionWire } } } ${CustomerSubscriptionWire}`,
  },
];

const portalBenefitGrantsRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/customer-portal/benefit-grants/',
    operation: `query ($page: Int, $limit: Int, $type: [BenefitType!], $benefitId: [UUID!], $organizationId: [UUID!], $checkoutId: [UUID!],
        $orderId: [UUID!], $subscriptionId: [UUID!], $sorting: [CustomerBenefitGrantSortOrder!]) {
      customerPortal { benefitGrants(page: $page, limit: $limit, type: $type, benefitId: $benefitId, organizationId: $organizationId,
          checkoutId: $checkoutId, orderId: $orderId, subscriptionId: $subscriptionId, sorting: $sorting) {
        items { ...CustomerBenefitGrantWire } pagination { totalCount maxPage } } }
    } ${CustomerBenefitGrantWire}`,
  },
  {
    method: 'GET',
    path: '/v1/customer-portal/benefit-grants/{id}',
    operation: `query ($id: UUID!) { customerPortal { benefitGrant(id: $id) { ...CustomerBenefitGrantWire } } } ${CustomerBenefitGrantWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/customer-portal/benefit-grants/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: CustomerBenefitGrantUpdateInput!) {
      customerPortal { benefitGrantUpdate(id: $id, input: $input) { ...CustomerBenefitGrantWire } } } ${CustomerBenefitGrantWire}`,
  },
];

const portalLicenseKeysRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/customer-portal/license-keys/',
    operation: `query ($page: Int, $limit: Int, $benefitId: [UUID!], $organizationId: [UUID!]) {
      customerPortal { licenseKeys(page: $page, limit: $limit, benefitId: $benefitId, organizationId: $organizationId) {
        items { ...CustomerLicenseKeyWire } pagination { totalCount maxPage } } }
    } ${CustomerLicenseKeyWire}`,
  },
  {
    method: 'GET',
    path: '/v1/customer-portal/license-keys/{id}',
    operation: `query ($id: UUID!) { customerPortal { licenseKey(id: $id) { ...CustomerLicenseKeyWithActivationsWire } } } ${CustomerLicenseKeyWithActivationsWire}`,
  },
];

export const customerPortalRoutes: RestRoute[] = [
  ...portalCustomersRoutes,
  ...portalPaymentMethodsRoutes,
  ...portalOrganizationsRoutes,
  ...portalOrdersRoutes,
  ...portalSubscriptionsRoutes,
  ...portalBenefitGrantsRoutes,
  ...portalLicenseKeysRoutes,
];
