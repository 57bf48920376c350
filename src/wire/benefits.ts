// The documented JSON of benefits: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).
import { customerWire } from './customers.ts';

/** What anyone who sees a benefit may see of it: no metadata, no properties. */
export const benefitPublicWire = 'id createdAt modifiedAt type description selectable deletable organizationId';
export const licenseKeysPropertiesWire = 'prefix expires { ttl timeframe } activations { limit enableCustomerAdmin } limitUsage';

export const benefitWire = `
  ${benefitPublicWire} metadata
  ... on BenefitCustom { properties { note } }
  ... on BenefitLicenseKeys { properties { ${licenseKeysPropertiesWire} } }
  ... on BenefitDownloadables { properties { files archived } }
  ... on BenefitMeterCredit { properties { units rollover meterId } }`;

export const benefitGrantWire = `
  id createdAt modifiedAt grantedAt isGranted revokedAt isRevoked subscriptionId orderId customerId benefitId properties
  customer { ${customerWire} }`;

export const BenefitWire = /* GraphQL */ `fragment BenefitWire on Benefit { ${benefitWire} }`;
export const BenefitGrantWire = /* GraphQL */ `fragment BenefitGrantWire on BenefitGrant { ${benefitGrantWire} }`;
