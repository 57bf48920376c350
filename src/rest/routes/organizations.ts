import type { RestRoute } from '../route.ts';
import { wireResources } from '../../wire/resources.ts';
import { OrganizationWire } from '../../wire/organizations.ts';

export const organizationRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/organizations/',
    operation: `query ($page: Int, $limit: Int, $slug: String, $sorting: [OrganizationSortOrder!]) {
      core { organizations(page: $page, limit: $limit, slug: $slug, sorting: $sorting) {
        items { ...OrganizationWire } pagination { totalCount maxPage } } }
    } ${OrganizationWire}`,
  },
  {
    method: 'POST',
    path: '/v1/organizations/',
    body: 'input',
    status: 201,
    operation: `mutation ($input: OrganizationCreateInput!) { core { organizationCreate(input: $input) { ...OrganizationWire } } } ${OrganizationWire}`,
  },
  {
    method: 'GET',
    path: '/v1/organizations/{id}',
    operation: wireResources.organization,
  },
  {
    method: 'PATCH',
    path: '/v1/organizations/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: OrganizationUpdateInput!) { core { organizationUpdate(id: $id, input: $input) { ...OrganizationWire } } } ${OrganizationWire}`,
  },
];
