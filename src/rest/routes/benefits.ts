import type { RestRoute } from '../route.ts';
import { wireResources } from '../../wire/resources.ts';
import { BenefitWire, BenefitGrantWire } from '../../wire/benefits.ts';

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
    operation: wireResources.benefit,
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
