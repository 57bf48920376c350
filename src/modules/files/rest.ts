import type { RestRoute } from '../../rest/routes.ts';

// The bytes themselves travel outside this table: parts are PUT to, and files downloaded from,
// the signed links these routes hand out (served in server.ts).
const fileWire = `
  id organizationId name path mimeType size storageVersion checksumEtag checksumSha256Base64 checksumSha256Hex
  lastModifiedAt version service isUploaded createdAt sizeReadable`;

const FileWire = /* GraphQL */ `fragment FileWire on File { ${fileWire} }`;
const FileUploadWire = /* GraphQL */ `fragment FileUploadWire on FileUpload {
  ${fileWire} upload { id path parts { number chunkStart chunkEnd checksumSha256Base64 url expiresAt headers } } }`;
const DownloadableWire = /* GraphQL */ `fragment DownloadableWire on Downloadable {
  id benefitId file { ${fileWire} download { url headers expiresAt } } }`;

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
