// Downloadable files, uploaded as the official client library does it: create with one part,
// PUT the bytes to the part's signed URL, complete with the part's ETag.
import { createHash } from 'node:crypto';
import { expect } from 'vitest';
import type { Org } from './organizations.ts';

export const sha256Base64 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('base64');

/** Creates, uploads in one part, and completes a downloadable file of the organization. */
export async function uploadFile(org: Org, bytes: Buffer, name: string) {
  const file = await org.polar.files.create({
    service: 'downloadable',
    organizationId: org.organizationId,
    name,
    mimeType: 'application/pdf',
    size: bytes.length,
    checksumSha256Base64: sha256Base64(bytes),
    upload: { parts: [{ number: 1, chunkStart: 0, chunkEnd: bytes.length, checksumSha256Base64: sha256Base64(bytes) }] },
  });
  const [part] = file.upload.parts;
  const put = await fetch(part.url, { method: 'PUT', headers: part.headers ?? {}, body: new Uint8Array(bytes) });
  expect(put.status).toBe(200);
  await org.polar.files.uploaded({
    id: file.id,
    fileUploadCompleted: { id: file.upload.id, path: file.upload.path, parts: [{ number: 1, checksumEtag: put.headers.get('etag')!, checksumSha256Base64: part.checksumSha256Base64 ?? null }] },
  });
  return file;
}
