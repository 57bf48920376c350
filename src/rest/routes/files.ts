import type { RestRoute } from '../route.ts';
import { FileWire, FileUploadWire, DownloadableWire } from '../../wire/files.ts';

export const fileRoutes: RestRoute[] = [
  {
    method: 'GET',
    path: '/v1/files/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $ids: [UUID!]) {
      core { files(page: $page, limit: $limit, organizationId: $organizationId, id: $ids) { items { ...FileWire } pagination { totalCount maxPage } } }
    } ${FileWire}`,
  },
  {
    method: 'POST',
    path: '/v1/files/',
    body: 'input',
    status: 201,
    operation: `mutation ($input: FileCreateInput!) { core { fileCreate(input: $input) { ...FileUploadWire } } } ${FileUploadWire}`,
  },
  {
    method: 'POST',
    path: '/v1/files/{id}/uploaded',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: FileUploadCompletedInput!) { core { fileUploadComplete(id: $id, input: $input) { ...FileWire } } } ${FileWire}`,
  },
  {
    method: 'PATCH',
    path: '/v1/files/{id}',
    body: 'input',
    operation: `mutation ($id: UUID!, $input: FileUpdateInput!) { core { fileUpdate(id: $id, input: $input) { ...FileWire } } } ${FileWire}`,
  },
  {
    method: 'DELETE',
    path: '/v1/files/{id}',
    status: 204,
    operation: `mutation ($id: UUID!) { core { fileDelete(id: $id) } }`,
  },
  {
    method: 'GET',
    path: '/v1/customer-portal/downloadables/',
    operation: `query ($page: Int, $limit: Int, $organizationId: [UUID!], $benefitId: [UUID!]) {
      customerPortal { downloadables(page: $page, limit: $limit, organizationId: $organizationId, benefitId: $benefitId) {
        items { ...DownloadableWire } pagination { totalCount maxPage } } }
    } ${DownloadableWire}`,
  },
];
