// The documented JSON of license keys: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).
import { customerWire } from './customers.ts';

const licenseKeyWire = `
  id createdAt modifiedAt organizationId customerId customer { ${customerWire} } benefitId key displayKey status
  limitActivations usage limitUsage validations lastValidatedAt expiresAt`;
export const activationWire = 'id licenseKeyId label meta createdAt modifiedAt';

export const LicenseKeyWire = /* GraphQL */ `fragment LicenseKeyWire on LicenseKey { ${licenseKeyWire} }`;
export const LicenseKeyWithActivationsWire = /* GraphQL */ `fragment LicenseKeyWithActivationsWire on LicenseKey {
  ${licenseKeyWire} activations { ${activationWire} } }`;
export const ValidatedLicenseKeyWire = /* GraphQL */ `fragment ValidatedLicenseKeyWire on ValidatedLicenseKey {
  ${licenseKeyWire} activation { ${activationWire} } }`;
export const LicenseKeyActivationWire = /* GraphQL */ `fragment LicenseKeyActivationWire on LicenseKeyActivation {
  ${activationWire} licenseKey { ${licenseKeyWire} } }`;
