import type { RestRoute } from '../route.ts';
import { LicenseKeyWire, LicenseKeyWithActivationsWire, ValidatedLicenseKeyWire, LicenseKeyActivationWire } from '../../wire/license-keys.ts';

// The check endpoints come before /v1/license-keys/{id}, whose pattern their paths match too.
export const licenseKeyRoutes: RestRoute[] = [
  {
    method: 'POST',
    path: '/v1/license-keys/validate',
    body: 'input',
    operation: `mutation ($input: LicenseKeyValidateInput!) { core { licenseKeyValidate(input: $input) { ...ValidatedLicenseKeyWire } } } ${ValidatedLicenseKeyWire}`,
  },
  {
    method: 'POST',
    path: '/v1/license-keys/activate',
    body: 'input',
    operation: `mutation ($input: LicenseKeyActivateInput!) { core { licenseKeyActivate(input: $input) { ...LicenseKeyActivationWire } } } ${LicenseKeyActivationWire}`,
  },
  {
    method: 'POST',
    path: '/v1/license-keys/deactivate',
    body: 'input',
    status: 204,
    operation: `mutation ($input: LicenseKeyDeactivateInput!) { core { licenseKeyDeactivate(input: $input) } }`,
  },
  {
    method: 'GET',
    path: '/v1/license-keys/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $benefitId: [UUID!]) {
      core { licenseKeys(page: $page, limit: $limit, organizationId: $organizationId, benefitId: $benefitId) {
        items { ...LicenseKeyWire } pagination { totalCount maxPage } } }
    } ${LicenseKeyWire}`,
  },
  {
    method: 'GET',
    path: '/v1/license-keys/{id}',
    operation: `query ($id: UUID!) { core { licenseKey(id: $id) { ...LicenseKeyWithActivationsWire } } } ${LicenseKeyWithActivationsWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/license-keys/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: LicenseKeyUpdateInput!) { core { licenseKeyUpdate(id: $id, input: $input) { ...LicenseKeyWire } } } ${LicenseKeyWire}`,
  },
  {
    method: 'GET',
    path: '/v1/license-keys/{id}/activations/{activation_id}',
    operation: `query ($id: UUID!, $activationId: UUID!) {
      core { licenseKeyActivation(id: $id, activationId: $activationId) { ...LicenseKeyActivationWire } } } ${LicenseKeyActivationWire}`,
  },
  // The customer's software, without a token: the organization is named in the body.
  {
    method: 'POST',
    path: '/v1/customer-portal/license-keys/validate',
    body: 'input',
    operation: `mutation ($input: LicenseKeyValidateInput!) { licenseKeyValidate(input: $input) { ...ValidatedLicenseKeyWire } } ${ValidatedLicenseKeyWire}`,
  },
  {
    method: 'POST',
    path: '/v1/customer-portal/license-keys/activate',
    body: 'input',
    operation: `mutation ($input: LicenseKeyActivateInput!) { licenseKeyActivate(input: $input) { ...LicenseKeyActivationWire } } ${LicenseKeyActivationWire}`,
  },
  {
    method: 'POST',
    path: '/v1/customer-portal/license-keys/deactivate',
    body: 'input',
    status: 204,
    operation: `mutation ($input: LicenseKeyDeactivateInput!) { licenseKeyDeactivate(input: $input) }`,
  },
];
