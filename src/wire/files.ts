// The documented JSON of files: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).

// The bytes themselves travel outside this table: parts are PUT to, and files downloaded from,
// the signed links these routes hand out (served in server.ts).
const fileWire = `
  id organizationId name path mimeType size storageVersion checksumEtag checksumSha256Base64 checksumSha256Hex
  lastModifiedAt version service isUploaded createdAt sizeReadable`;

export const FileWire = /* GraphQL */ `fragment FileWire on File { ${fileWire} }`;
export const FileUploadWire = /* GraphQL */ `fragment FileUploadWire on FileUpload {
  ${fileWire} upload { id path parts { number chunkStart chunkEnd checksumSha256Base64 url expiresAt headers } } }`;
export const DownloadableWire = /* GraphQL */ `fragment DownloadableWire on Downloadable {
  id benefitId file { ${fileWire} download { url headers expiresAt } } }`;
