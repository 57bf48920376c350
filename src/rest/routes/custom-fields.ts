import type { RestRoute } from '../route.ts';
import { CustomFieldWire } from '../../wire/custom-fields.ts';

export const customFieldRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/custom-fields/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $query: String, $type: [CustomFieldType!], $sorting: [CustomFieldSortOrder!]) {
      core { customFields(page: $page, limit: $limit, organizationId: $organizationId, query: $query, typeFilter: $type, sorting: $sorting) {
        items { ...CustomFieldWire } pagination { totalCount maxPage } } }
    } ${CustomFieldWire}`,
  },
  {
    method: 'POST',
    path: '/v1/custom-fields/',
    body: 'input',
    status: 201,
    operation: `mutation ($input: CustomFieldCreateInput!) { core { customFieldCreate(input: $input) { ...CustomFieldWire } } } ${CustomFieldWire}`,
  },
  {
    method: 'GET',
    path: '/v1/custom-fields/{id}',
    operation: `query ($id: UUID!) { core { customField(id: $id) { ...CustomFieldWire } } } ${CustomFieldWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/custom-fields/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: CustomFieldUpdateInput!) { core { customFieldUpdate(id: $id, input: $input) { ...CustomFieldWire } } } ${CustomFieldWire}`,
  },
  {
    method: 'DELETE',
    path: '/v1/custom-fields/{id}',
    status: 204,
    operation: `mutation ($id: UUID!) { core { customFieldDelete(id: $id) } }`,
  },
];
