import type { RestRoute } from '../../rest/routes.ts';
import { customerWire } from '../customers/rest.ts';

/** What anyone who sees a benefit may see of it: no metadata, no properties. */
export const benefitPublicWire = 'id createdAt modifiedAt type description selectable deletable organizationId';
export const licenseKeysPropertiesWire = 'prefix expires { ttl timeframe } activations { limit enableCustomerAdmin } limitUsage';

export const benefitWire = `
  ${benefitPublicWire} metadata
  ... on BenefitCustom { properties { note } }
  ... on BenefitLicenseKeys { properties { ${licenseKeysPropertiesWire} } }
  ... on BenefitDownloadables { properties { files archived } }`;

export const benefitGrantWire = `
  id createdAt modifiedAt grantedAt isGranted revokedAt isRevoked subscriptionId orderId customerId benefitId properties
  customer { ${customerWire} }`;

const BenefitWire = /* GraphQL */ `fragment BenefitWire on Benefit { ${benefitWire} }`;
const BenefitGrantWire = /* GraphQL */ `fragment BenefitGrantWire on BenefitGrant { ${benefitGrantWire} }`;

export const benefitRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/benefits/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $type: [BenefitType!], $query: String, $metadata: JSONObject,
        $sorting: [BenefitSortOrder!]) {
      core { benefits(page: $page, limit: $limit, organizationId: $organizationId, type: $type, query: $query, metadata: $metadata, sorting: $sorting) {
        items { ...BenefitWire } pagination { totalCount maxPage } } }
    } ${BenefitWire}`,
  },
  {
    method: 'POST',
    path: '/v1/benefits/',
    body: 'input',
    status: 201,
    operation: `mutation ($input: BenefitCreateInput!) { core { benefitCreate(input: $input) { ...BenefitWire } } } ${BenefitWire}`,
  },
  {
    method: 'GET',
    path: '/v1/benefits/{id}/grants',
    operation: `query ($id: UUID!, $page: Int, $limit: Int, $isGranted: Boolean, $customerId: [UUID!]) {
      core { benefitGrants(benefitId: $id, page: $page, limit: $limit, isGranted: $isGranted, customerId: $customerId) {
        items { ...BenefitGrantWire } pagination { totalCount maxPage } } }
    } ${BenefitGrantWire}`,
  },
  {
    method: 'GET',
    path: '/v1/benefits/{id}',
    operation: `query ($id: UUID!) { core { benefit(id: $id) { ...BenefitWire } } } ${BenefitWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/benefits/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: BenefitUpdateInput!) { core { benefitUpdate(id: $id, input: $input) { ...BenefitWire } } } ${BenefitWire}`,
  },
  {
    method: 'DELETE',
    path: '/v1/benefits/{id}',
    status: 204,
    operation: `mutation ($id: UUID!) { core { benefitDelete(id: $id) } }`,
  },
];
