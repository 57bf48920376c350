// Files end to end: an organization uploads a file in parts through the official client
// (@polar-sh/sdk) and the signed part links it hands out, completes the upload, and the file is
// served through signed download links that expire. Customers see the files of the downloadables
// benefits granted to them, and nothing of anyone else's. In sandbox, where purchases use test cards.
import { createHash } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import type { FileUpload } from '@polar-sh/sdk/models/components/fileupload.js';
import type { S3FileCreatePart } from '@polar-sh/sdk/models/components/s3filecreatepart.js';
import type { S3FileUploadCompletedPart } from '@polar-sh/sdk/models/components/s3fileuploadcompletedpart.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { systemContext } from '../../src/context.ts';
import { RequestValidationError } from '../../src/graphql/errors.ts';
import { issueCustomerSession } from '../../src/auth/customer-sessions.ts';
import { assertDownloadableFiles, fileDownloadLink, maxFileSize } from '../../src/modules/files/service.ts';
import { datetime, uuid } from '../helpers/matchers.ts';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { createAndConfirmCheckout, paidOrderOf } from '../helpers/purchases.ts';
import { expectStatus } from '../helpers/responses.ts';
import { eventually, rejectionOf } from '../helpers/waiting.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '100' } });

const HOUR_MS = 3600_000;

const base = () => t.server.base('sandbox');
const environment = () => t.server.kassa.environments.sandbox.environment;
const prisma = () => environment().prisma;

const sha256Base64 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('base64');

/** Deterministic, non-repeating bytes, so a part put at the wrong offset shows. */
function bytesOf(size: number, seed = 1): Buffer {
  const out = Buffer.alloc(size);
  let state = seed;
  for (let i = 0; i < size; i++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    out[i] = state >> 16;
  }
  return out;
}

/** The parts of `bytes` as the official web client cuts them: chunk_end exclusive, with checksums. */
function partsOf(bytes: Buffer, chunkSize: number): S3FileCreatePart[] {
  const parts: S3FileCreatePart[] = [];
  for (let start = 0, number = 1; start < bytes.length || number === 1; start += chunkSize, number++) {
    const end = Math.min(start + chunkSize, bytes.length);
    parts.push({ number, chunkStart: start, chunkEnd: end, checksumSha256Base64: sha256Base64(bytes.subarray(start, end)) });
  }
  return parts;
}

async function createFile(org: Org, bytes: Buffer, options: { name?: string; chunkSize?: number; checksum?: string; parts?: S3FileCreatePart[] } = {}) {
  return org.polar.files.create({
    service: 'downloadable',
    organizationId: org.organizationId,
    name: options.name ?? 'handbook.pdf',
    mimeType: 'application/pdf',
    size: bytes.length,
    checksumSha256Base64: options.checksum ?? sha256Base64(bytes),
    upload: { parts: options.parts ?? partsOf(bytes, options.chunkSize ?? 4096) },
  });
}

/** PUTs a part's bytes to its signed link, with the headers the link asks for. */
async function putPart(part: FileUpload['upload']['parts'][number], body: Uint8Array, url = part.url) {
  const response = await fetch(url, { method: 'PUT', headers: part.headers ?? {}, body: new Uint8Array(body) });
  const text = await response.text();
  return { status: response.status, etag: response.headers.get('etag'), body: text ? JSON.parse(text) : null };
}

async function putAllParts(file: FileUpload, bytes: Buffer): Promise<S3FileUploadCompletedPart[]> {
  const completed: S3FileUploadCompletedPart[] = [];
  for (const part of file.upload.parts) {
    const put = await putPart(part, bytes.subarray(part.chunkStart, part.chunkEnd));
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    completed.push({ number: part.number, checksumEtag: put.etag!, checksumSha256Base64: part.checksumSha256Base64 ?? null });
  }
  return completed;
}

async function completeUpload(org: Org, file: FileUpload, parts: S3FileUploadCompletedPart[]) {
  return org.polar.files.uploaded({ id: file.id, fileUploadCompleted: { id: file.upload.id, path: file.upload.path, parts } });
}

/** A whole upload: create, PUT every part, complete. */
async function uploadFile(org: Org, bytes: Buffer, name = 'handbook.pdf') {
  const file = await createFile(org, bytes, { name });
  return completeUpload(org, file, await putAllParts(file, bytes));
}

async function download(url: string) {
  const response = await fetch(url);
  return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
}

function withQuery(url: string, change: (params: URLSearchParams) => void): string {
  const parsed = new URL(url);
  change(parsed.searchParams);
  return parsed.toString();
}

async function filesOf(org: Org, request: { ids?: string[]; organizationId?: string } = {}) {
  return (await org.polar.files.list(request)).result;
}

describe('uploading a file in parts through the official client', () => {
  let org: Org;
  let bytes: Buffer;
  let created: FileUpload;
  let completed: S3FileUploadCompletedPart[];

  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    bytes = bytesOf(10_000);
    created = await createFile(org, bytes, { name: 'Guide à lire "v2".pdf', chunkSize: 4096 });
  });

  it('answers the creation with a signed, hour-long PUT link per part, and the file not uploaded yet', async () => {
    expect(created).toMatchObject({
      id: uuid,
      organizationId: org.organizationId,
      name: 'Guide à lire "v2".pdf',
      path: `${org.organizationId}/${created.id}/Guide à lire "v2".pdf`,
      mimeType: 'application/pdf',
      size: 10_000,
      sizeReadable: '9.8 KB',
      storageVersion: null,
      checksumEtag: null,
      checksumSha256Base64: sha256Base64(bytes),
      checksumSha256Hex: null,
      lastModifiedAt: null,
      version: null,
      isUploaded: false,
      service: 'downloadable',
    });
    expect(created.upload).toMatchObject({ id: created.id, path: created.path });
    expect(created.upload.parts.map((p) => [p.number, p.chunkStart, p.chunkEnd])).toEqual([
      [1, 0, 4096],
      [2, 4096, 8192],
      [3, 8192, 10_000],
    ]);
    for (const part of created.upload.parts) {
      const url = new URL(part.url);
      expect(`${url.origin}${url.pathname}`).toBe(`${base()}/files/${created.id}/parts/${part.number}`);
      expect(url.searchParams.get('signature')).toEqual(expect.any(String));
      expect(Number(url.searchParams.get('expires')) * 1000).toBe(part.expiresAt.getTime());
      expect(part.expiresAt.getTime()).toBeGreaterThan(Date.now() + HOUR_MS - 60_000);
      expect(part.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + HOUR_MS);
      expect(part.headers).toEqual({ 'x-checksum-sha256': part.checksumSha256Base64 });
    }
  });

  it('answers 201 with the REST body the client parses, every required field present', async () => {
    const small = bytesOf(10, 7);
    const response = await org.api('POST', '/files/', {
      organization_id: org.organizationId,
      name: 'small.bin',
      mime_type: 'application/octet-stream',
      size: 10,
      service: 'downloadable',
      upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: 10 }] },
    });
    const body = expectStatus(response, 201);
    expect(Object.keys(body).sort()).toEqual(
      [
        'checksum_etag', 'checksum_sha256_base64', 'checksum_sha256_hex', 'created_at', 'id', 'is_uploaded', 'last_modified_at', 'mime_type', 'name',
        'organization_id', 'path', 'service', 'size', 'size_readable', 'storage_version', 'upload', 'version',
      ].sort(),
    );
    expect(body).toMatchObject({ size_readable: '10.0 B', storage_version: null, checksum_sha256_base64: null, is_uploaded: false });
    expect(body.upload.parts).toEqual([{ number: 1, chunk_start: 0, chunk_end: 10, checksum_sha256_base64: null, url: expect.any(String), expires_at: datetime, headers: {} }]);
    const put = await putPart({ ...body.upload.parts[0], headers: {} }, small, body.upload.parts[0].url);
    expect(put.status).toBe(200);
  });

  it('is not listed while its parts are still going up', async () => {
    expect((await filesOf(org, { ids: [created.id] })).items).toEqual([]);
  });

  it('takes each part with a PUT to its link, answering 200 with the ETag of the bytes', async () => {
    completed = [];
    for (const part of created.upload.parts) {
      const body = bytes.subarray(part.chunkStart, part.chunkEnd);
      const put = await putPart(part, body);
      expect(put.status, JSON.stringify(put.body)).toBe(200);
      expect(put.etag).toBe(`"${createHash('md5').update(body).digest('hex')}"`);
      completed.push({ number: part.number, checksumEtag: put.etag!, checksumSha256Base64: part.checksumSha256Base64 ?? null });
    }
  });

  it('takes a part again before completion: a retried PUT replaces it', async () => {
    const part = created.upload.parts[1];
    const put = await putPart(part, bytes.subarray(part.chunkStart, part.chunkEnd));
    expect(put.status).toBe(200);
    expect(put.etag).toBe(completed[1].checksumEtag);
  });

  it('refuses completion with an ETag the part was not uploaded with: 422 at that part', async () => {
    const wrong = completed.map((p, i) => (i === 2 ? { ...p, checksumEtag: '"0123456789abcdef0123456789abcdef"' } : p));
    const error = await rejectionOf(completeUpload(org, created, wrong));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).data$.detail).toEqual([expect.objectContaining({ loc: ['body', 'parts', 2, 'checksum_etag'] })]);
  });

  it('refuses completion naming another upload: 422 at id', async () => {
    const response = await org.api('POST', `/files/${created.id}/uploaded`, { id: 'another', path: created.upload.path, parts: [] });
    expect(expectStatus(response, 422).detail).toEqual([expect.objectContaining({ loc: ['body', 'id'] })]);
  });

  it('completes the upload: 200 with the file uploaded, its SHA-256 in hex and base64 and its multipart ETag', async () => {
    const file = await completeUpload(org, created, completed);
    expect(file).toMatchObject({
      id: created.id,
      isUploaded: true,
      service: 'downloadable',
      checksumSha256Base64: sha256Base64(bytes),
      checksumSha256Hex: createHash('sha256').update(bytes).digest('hex'),
      checksumEtag: expect.stringMatching(/^"[0-9a-f]{32}-3"$/),
      lastModifiedAt: expect.any(Date),
      createdAt: expect.any(Date),
      sizeReadable: '9.8 KB',
    });
  });

  it('answers a second completion with the file as it is', async () => {
    const again = await completeUpload(org, created, completed);
    expect(again).toMatchObject({ id: created.id, isUploaded: true });
  });

  it('refuses to change a part once the file is complete: 409', async () => {
    const part = created.upload.parts[0];
    const put = await putPart(part, bytes.subarray(part.chunkStart, part.chunkEnd));
    expect(put.status).toBe(409);
    expect(put.body).toEqual({ error: 'FileAlreadyUploaded', detail: expect.any(String) });
  });

  it('lists the file, by organization and by ids', async () => {
    const page = await filesOf(org, { organizationId: org.organizationId });
    expect(page.items.map((f) => f.id)).toContain(created.id);
    const byId = await filesOf(org, { ids: [created.id] });
    expect(byId.pagination).toEqual({ totalCount: 1, maxPage: 1 });
    expect(byId.items[0]).toMatchObject({ id: created.id, service: 'downloadable', isUploaded: true, name: created.name });
  });

  it('downloads the very bytes through a signed link, as an attachment under its name', async () => {
    const link = await fileDownloadLink(environment(), { id: created.id }, new Date());
    expect(link.headers).toEqual({});
    expect(link.expiresAt.getTime()).toBeGreaterThan(Date.now() + HOUR_MS - 60_000);
    expect(link.url.startsWith(`${base()}/files/${created.id}/download?`)).toBe(true);
    const file = await download(link.url);
    expect(file.status).toBe(200);
    expect(file.bytes.equals(bytes)).toBe(true);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-length')).toBe('10000');
    expect(file.headers.get('content-disposition')).toBe(
      `attachment; filename="Guide _ lire _v2_.pdf"; filename*=UTF-8''${encodeURIComponent('Guide à lire "v2".pdf')}`,
    );
    expect(file.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('answers 403 to a download link with a tampered signature, a pushed-back expiry or another file', async () => {
    const { url } = await fileDownloadLink(environment(), { id: created.id }, new Date());
    const signature = new URL(url).searchParams.get('signature')!;
    const tampered = await download(withQuery(url, (q) => q.set('signature', `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`)));
    expect(tampered.status).toBe(403);
    expect(JSON.parse(tampered.bytes.toString())).toEqual({ error: 'Forbidden', detail: expect.stringMatching(/signature/) });
    expect((await download(withQuery(url, (q) => q.set('expires', String(Number(q.get('expires')) + 3600))))).status).toBe(403);
    expect((await download(withQuery(url, (q) => q.delete('signature')))).status).toBe(403);
    const other = await uploadFile(org, bytesOf(100, 3), 'other.pdf');
    expect((await download(url.replace(created.id, other.id))).status).toBe(403);
  });

  it('answers 403 to a download link once it has expired, and a fresh link works', async () => {
    const { url } = await fileDownloadLink(environment(), { id: created.id }, new Date());
    t.server.clock.now = new Date(Date.now() + HOUR_MS + 60_000);
    try {
      const expired = await download(url);
      expect(expired.status).toBe(403);
      expect(JSON.parse(expired.bytes.toString())).toEqual({ error: 'Forbidden', detail: expect.stringMatching(/expired/) });
    } finally {
      t.server.clock.now = null;
    }
    expect((await download((await fileDownloadLink(environment(), { id: created.id }, new Date())).url)).status).toBe(200);
  });

  it('never serves the file from the other environment: the same link under production /v1 is 403', async () => {
    const { url } = await fileDownloadLink(environment(), { id: created.id }, new Date());
    expect(url).toContain('/sandbox/v1/files/');
    expect((await download(url.replace('/sandbox/v1/', '/v1/'))).status).toBe(403);
  });

  it('renames the file and sets its version', async () => {
    const updated = await org.polar.files.update({ id: created.id, filePatch: { name: 'Guide v3.pdf', version: '3.0' } });
    expect(updated).toMatchObject({ id: created.id, name: 'Guide v3.pdf', version: '3.0', isUploaded: true });
    const rest = expectStatus(await org.api('PATCH', `/files/${created.id}`, { version: null }), 200);
    expect(rest).toMatchObject({ name: 'Guide v3.pdf', version: null, created_at: datetime, size_readable: '9.8 KB' });
    const blank = await org.api('PATCH', `/files/${created.id}`, { name: '  ' });
    expect(expectStatus(blank, 422).detail).toEqual([expect.objectContaining({ loc: ['body', 'name'] })]);
  });

  it('deletes the file: 204, then no longer listed, served or changed', async () => {
    const file = await uploadFile(org, bytesOf(50, 9), 'to-delete.zip');
    const { url } = await fileDownloadLink(environment(), file, new Date());
    expect((await download(url)).status).toBe(200);
    const response = await fetch(`${base()}/files/${file.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${org.token}` } });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    expect((await filesOf(org, { ids: [file.id] })).items).toEqual([]);
    expect((await download(url)).status).toBe(404);
    const again = await rejectionOf(org.polar.files.delete({ id: file.id }));
    expect(again).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(org.polar.files.update({ id: file.id, filePatch: { name: 'x' } }))).toBeInstanceOf(ResourceNotFound);
    const stored = await prisma().file.findUniqueOrThrow({ where: { id: file.id }, include: { parts: true } });
    expect(stored.deletedAt).not.toBeNull();
    expect(stored.parts).toEqual([]);
  });
});

describe('what an upload refuses', () => {
  let org: Org;
  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
  });

  const validationLocs = async (call: Promise<unknown>) => {
    const error = await rejectionOf(call);
    expect(error).toBeInstanceOf(HTTPValidationError);
    return (error as HTTPValidationError).data$.detail!.map((d) => d.loc);
  };

  it('refuses parts that leave a gap or overlap: 422 at the part that does not start where the previous ends', async () => {
    const bytes = bytesOf(300);
    const gap = [
      { number: 1, chunkStart: 0, chunkEnd: 100 },
      { number: 2, chunkStart: 101, chunkEnd: 300 },
    ];
    expect(await validationLocs(createFile(org, bytes, { parts: gap }))).toEqual([['body', 'upload', 'parts', 1, 'chunk_start']]);
    const overlap = [
      { number: 2, chunkStart: 90, chunkEnd: 300 },
      { number: 1, chunkStart: 0, chunkEnd: 100 },
    ];
    expect(await validationLocs(createFile(org, bytes, { parts: overlap }))).toEqual([['body', 'upload', 'parts', 0, 'chunk_start']]);
  });

  it('refuses parts that do not reach the end of the file, or go past it, and inclusive chunk ends', async () => {
    const bytes = bytesOf(300);
    expect(await validationLocs(createFile(org, bytes, { parts: [{ number: 1, chunkStart: 0, chunkEnd: 299 }] }))).toEqual([['body', 'upload', 'parts']]);
    expect(await validationLocs(createFile(org, bytes, { parts: [{ number: 1, chunkStart: 0, chunkEnd: 301 }] }))).toEqual([['body', 'upload', 'parts']]);
    const inclusive = [
      { number: 1, chunkStart: 0, chunkEnd: 99 },
      { number: 2, chunkStart: 100, chunkEnd: 299 },
    ];
    expect(await validationLocs(createFile(org, bytes, { parts: inclusive }))).toEqual([['body', 'upload', 'parts', 1, 'chunk_start']]);
  });

  it('refuses repeated part numbers, no parts, and malformed checksums', async () => {
    const bytes = bytesOf(200);
    const twice = [
      { number: 1, chunkStart: 0, chunkEnd: 100 },
      { number: 1, chunkStart: 100, chunkEnd: 200 },
    ];
    expect(await validationLocs(createFile(org, bytes, { parts: twice }))).toEqual([['body', 'upload', 'parts', 1, 'number']]);
    expect(await validationLocs(createFile(org, bytes, { parts: [] }))).toEqual([['body', 'upload', 'parts']]);
    expect(await validationLocs(createFile(org, bytes, { checksum: 'not-a-digest' }))).toEqual([['body', 'checksum_sha256_base64']]);
  });

  it(`refuses a file larger than ${maxFileSize} bytes, and a negative size`, async () => {
    const size = maxFileSize + 1;
    const request = (bytes: number) =>
      org.api('POST', '/files/', {
        organization_id: org.organizationId,
        name: 'huge.iso',
        mime_type: 'application/octet-stream',
        size: bytes,
        service: 'downloadable',
        upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: bytes }] },
      });
    expect(expectStatus(await request(size), 422).detail).toEqual([expect.objectContaining({ loc: ['body', 'size'], type: 'less_than_equal' })]);
    expect(expectStatus(await request(-1), 422).detail).toEqual([expect.objectContaining({ loc: ['body', 'size'] })]);
  });

  it('refuses other services than downloadable, and media types that are not one', async () => {
    const body = (changes: object) => ({
      organization_id: org.organizationId,
      name: 'logo.png',
      mime_type: 'image/png',
      size: 1,
      service: 'downloadable',
      upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: 1 }] },
      ...changes,
    });
    const media = await org.api('POST', '/files/', body({ service: 'product_media' }));
    expect(expectStatus(media, 422).detail).toEqual([{ loc: ['body', 'service'], msg: expect.stringMatching(/downloadable/), type: 'value_error' }]);
    const unknown = await org.api('POST', '/files/', body({ service: 'avatar' }));
    expect(expectStatus(unknown, 422).detail).toEqual([expect.objectContaining({ loc: ['body', 'service'] })]);
    const injected = await org.api('POST', '/files/', body({ mime_type: 'text/html\r\nx-evil: 1' }));
    expect(expectStatus(injected, 422).detail).toEqual([expect.objectContaining({ loc: ['body', 'mime_type'] })]);
  });

  it('refuses a part of the wrong length: 422 when shorter, 413 when longer, nothing stored', async () => {
    const bytes = bytesOf(200);
    const file = await createFile(org, bytes, { chunkSize: 100 });
    const [first] = file.upload.parts;
    const { headers: _checksum, ...withoutChecksum } = first;
    const shorter = await putPart({ ...withoutChecksum, headers: {} }, bytes.subarray(0, 99));
    expect(shorter.status).toBe(422);
    expect(shorter.body).toEqual({ error: 'PartSizeMismatch', detail: expect.stringMatching(/100 bytes/) });
    const longer = await putPart({ ...withoutChecksum, headers: {} }, bytes.subarray(0, 101));
    expect(longer.status).toBe(413);
    expect(longer.body).toEqual({ error: 'PayloadTooLarge', detail: expect.any(String) });
    const stored = await prisma().filePart.findUniqueOrThrow({ where: { fileId_number: { fileId: file.id, number: 1 } } });
    expect(stored.data).toBeNull();
  });

  it('refuses bytes that do not match the checksum declared for the part: 422', async () => {
    const bytes = bytesOf(200);
    const file = await createFile(org, bytes, { chunkSize: 100 });
    const [first] = file.upload.parts;
    const other = bytesOf(100, 42);
    const response = await putPart({ ...first, headers: {} }, other);
    expect(response.status).toBe(422);
    expect(response.body).toEqual({ error: 'ChecksumMismatch', detail: expect.stringMatching(/SHA-256/) });
    const header = await putPart({ ...first, headers: { 'x-checksum-sha256': sha256Base64(other) } }, bytes.subarray(0, 100));
    expect(header.status).toBe(422);
  });

  it('refuses a PUT with a forged, borrowed or expired signature: 403', async () => {
    const bytes = bytesOf(200);
    const file = await createFile(org, bytes, { chunkSize: 100 });
    const [first, second] = file.upload.parts;
    const body = bytes.subarray(0, 100);
    const forged = await putPart(first, body, withQuery(first.url, (q) => q.set('signature', 'forged')));
    expect(forged.status).toBe(403);
    expect(forged.body).toEqual({ error: 'Forbidden', detail: expect.stringMatching(/signature/) });
    // Part 1's signature does not open part 2.
    const borrowed = await putPart(first, bytes.subarray(100, 200), second.url.replace(/signature=[^&]+/, `signature=${new URL(first.url).searchParams.get('signature')}`));
    expect(borrowed.status).toBe(403);
    t.server.clock.now = new Date(Date.now() + HOUR_MS + 60_000);
    try {
      const expired = await putPart(first, body);
      expect(expired.status).toBe(403);
      expect(expired.body.detail).toMatch(/expired/);
    } finally {
      t.server.clock.now = null;
    }
    expect((await prisma().filePart.count({ where: { fileId: file.id, data: { not: null } } }))).toBe(0);
    expect((await putPart(first, body)).status).toBe(200);
  });

  it('refuses completion while a part is missing: 422 naming it', async () => {
    const bytes = bytesOf(300);
    const file = await createFile(org, bytes, { chunkSize: 100 });
    const completed = await putAllParts({ ...file, upload: { ...file.upload, parts: file.upload.parts.slice(0, 2) } }, bytes);
    const error = await rejectionOf(completeUpload(org, file, completed));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).data$.detail).toEqual([expect.objectContaining({ loc: ['body', 'parts'], msg: expect.stringMatching(/Part 3/) })]);
  });

  it('refuses completion when the whole file does not match the checksum given at creation: 422, the file not uploaded', async () => {
    const bytes = bytesOf(300);
    // Each part matches its own checksum, but the file was announced with another digest.
    const file = await createFile(org, bytes, { chunkSize: 100, checksum: sha256Base64(Buffer.from('something else')) });
    const completed = await putAllParts(file, bytes);
    const error = await rejectionOf(completeUpload(org, file, completed));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).data$.detail).toEqual([expect.objectContaining({ loc: ['body'], type: 'checksum_mismatch' })]);
    expect(await prisma().file.findUniqueOrThrow({ where: { id: file.id } })).toMatchObject({ isUploaded: false, checksumSha256Hex: null });
  });

  it('takes an empty file', async () => {
    const file = await uploadFile(org, Buffer.alloc(0), 'empty.txt');
    expect(file).toMatchObject({ size: 0, isUploaded: true, sizeReadable: '0.0 B' });
    const got = await download((await fileDownloadLink(environment(), file, new Date())).url);
    expect(got.status).toBe(200);
    expect(got.bytes.length).toBe(0);
  });
});

describe("who reaches an organization's files", () => {
  let owner: Org;
  let stranger: Org;
  let fileId: string;
  beforeAll(async () => {
    owner = await newOrganization(t.server, 'sandbox');
    stranger = await newOrganization(t.server, 'sandbox');
    fileId = (await uploadFile(owner, bytesOf(64), 'private.pdf')).id;
  });

  it('another organization neither lists, changes, completes nor deletes it: empty lists and 404', async () => {
    expect((await filesOf(stranger, { ids: [fileId] })).items).toEqual([]);
    expect((await filesOf(stranger, { organizationId: owner.organizationId })).items).toEqual([]);
    expect(await rejectionOf(stranger.polar.files.update({ id: fileId, filePatch: { name: 'mine.pdf' } }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(stranger.polar.files.delete({ id: fileId }))).toBeInstanceOf(ResourceNotFound);
    const uploaded = await stranger.api('POST', `/files/${fileId}/uploaded`, { id: fileId, path: 'x', parts: [] });
    expect(uploaded.status).toBe(404);
    expect(uploaded.body).toEqual({ error: 'ResourceNotFound', detail: expect.any(String) });
    expect(await prisma().file.findUniqueOrThrow({ where: { id: fileId } })).toMatchObject({ name: 'private.pdf', deletedAt: null });
  });

  it('another organization cannot create a file in it', async () => {
    const error = await rejectionOf(createFile({ ...stranger, organizationId: owner.organizationId }, bytesOf(10)));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).data$.detail).toEqual([expect.objectContaining({ loc: ['body', 'organization_id'] })]);
  });

  it('without a token: 401 on every file endpoint', async () => {
    const anonymous = restClient(base());
    for (const [method, path, body] of [
      ['GET', '/files/', undefined],
      ['POST', '/files/', { name: 'a', mime_type: 'text/plain', size: 1, service: 'downloadable', upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: 1 }] } }],
      ['PATCH', `/files/${fileId}`, { name: 'a' }],
      ['DELETE', `/files/${fileId}`, undefined],
      ['POST', `/files/${fileId}/uploaded`, { id: fileId, path: 'x', parts: [] }],
    ] as const) {
      const response = await anonymous(method, path, body);
      expect(response.status, `${method} ${path}`).toBe(401);
      expect(response.body).toEqual({ error: 'Unauthorized', detail: expect.any(String) });
    }
  });

  it('a token without the files scopes: 403 naming them', async () => {
    const limited = restClient(base(), await tokenWithScopes(t.server, owner, ['files:read'], 'read only'));
    expect(expectStatus(await limited('GET', `/files/?ids=${fileId}`), 200).items).toHaveLength(1);
    const patch = await limited('PATCH', `/files/${fileId}`, { name: 'renamed.pdf' });
    expect(patch.status).toBe(403);
    expect(patch.body).toEqual({ error: 'NotPermitted', detail: expect.stringContaining('files:write') });
  });

  it('answers a benefit naming files: only uploaded, live downloadable files of the organization itself', async () => {
    const pending = await createFile(owner, bytesOf(10));
    const foreign = await uploadFile(stranger, bytesOf(10), 'foreign.pdf');
    await expect(assertDownloadableFiles(prisma(), owner.organizationId, [fileId])).resolves.toBeUndefined();
    const error = await rejectionOf(assertDownloadableFiles(prisma(), owner.organizationId, [fileId, foreign.id, pending.id, 'not-a-uuid']));
    expect(error).toBeInstanceOf(RequestValidationError);
    expect((error as RequestValidationError).issues.map((i) => i.loc)).toEqual([
      ['input', 'properties', 'files', 1],
      ['input', 'properties', 'files', 2],
      ['input', 'properties', 'files', 3],
    ]);
  });
});

describe('files through GraphQL', () => {
  it('creates, completes and lists a file under core', async () => {
    const org = await newOrganization(t.server, 'sandbox');
    const bytes = bytesOf(30);
    const create = await org.gql(
      `mutation ($input: FileCreateInput!) { core { fileCreate(input: $input) { id isUploaded sizeReadable upload { id path parts { number url headers } } } } }`,
      { input: { organizationId: org.organizationId, name: 'notes.txt', mimeType: 'text/plain', size: 30, service: 'downloadable', upload: { parts: [{ number: 1, chunkStart: 0, chunkEnd: 30 }] } } },
    );
    expect(create.body.errors).toBeUndefined();
    const file = create.body.data.core.fileCreate;
    const put = await fetch(file.upload.parts[0].url, { method: 'PUT', body: new Uint8Array(bytes) });
    expect(put.status).toBe(200);
    const done = await org.gql(
      `mutation ($id: UUID!, $input: FileUploadCompletedInput!) { core { fileUploadComplete(id: $id, input: $input) { id isUploaded checksumSha256Hex } } }`,
      { id: file.id, input: { id: file.upload.id, path: file.upload.path, parts: [{ number: 1, checksumEtag: put.headers.get('etag') }] } },
    );
    expect(done.body.errors).toBeUndefined();
    const uploaded = { id: file.id, isUploaded: true, checksumSha256Hex: createHash('sha256').update(bytes).digest('hex') };
    expect(done.body.data.core.fileUploadComplete).toEqual(uploaded);
    // Under its deprecated first name, completing again returns the file as it is.
    const again = await org.gql(
      `mutation ($id: UUID!, $input: FileUploadCompletedInput!) { core { fileUploaded(id: $id, input: $input) { id isUploaded checksumSha256Hex } } }`,
      { id: file.id, input: { id: file.upload.id, path: file.upload.path, parts: [{ number: 1, checksumEtag: put.headers.get('etag') }] } },
    );
    expect(again.body.data.core.fileUploaded).toEqual(uploaded);
    const byId = await org.gql('query ($id: [UUID!]) { core { files(id: $id) { items { id } } } }', { id: [file.id, '00000000-0000-4000-8000-000000000000'] });
    expect(byId.body.data.core.files.items).toEqual([{ id: file.id }]);
    const list = await org.gql('{ core { files { items { id name } pagination { totalCount } } } }');
    expect(list.body.data.core.files).toEqual({ items: [{ id: file.id, name: 'notes.txt' }], pagination: { totalCount: 1 } });
  });
});

// ---------------------------------------------------------------------------------------------
// The customer side
// ---------------------------------------------------------------------------------------------

describe("a customer's downloadables", () => {
  let org: Org;
  let ebook: Buffer;
  let ebookId: string;
  let audioId: string;
  let extrasId: string;
  let benefitId: string;
  let extrasBenefitId: string;
  let bundleId: string;
  let extrasProductId: string;

  async function product(name: string, benefits: string[]) {
    const created = await org.polar.products.create({ name, recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 900, priceCurrency: 'usd' }] });
    await org.polar.products.updateBenefits({ id: created.id, productBenefitsUpdate: { benefits } });
    return created.id;
  }

  /** A purchase with a test card, returned once its benefits are granted. */
  async function buy(customerEmail: string, productId = bundleId) {
    const checkout = await createAndConfirmCheckout(org, productId, customerEmail);
    const order = await paidOrderOf(org, checkout.id);
    await eventually(
      () => prisma().benefitGrant.findMany({ where: { orderId: order.id, grantedAt: { not: null } } }),
      (grants) => grants.length === 1,
      'the benefit to be granted',
    );
    return order;
  }

  /** A customer session token, as the organization would issue one. */
  async function sessionOf(customerId: string): Promise<string> {
    const ctx = systemContext(environment(), prisma(), org.organizationId, () => new Date(), 'files-test');
    return (await issueCustomerSession(ctx, prisma(), { id: customerId })).token;
  }

  const downloadables = async (token: string, request: { benefitId?: string; page?: number; limit?: number } = {}) =>
    (await org.buyer.customerPortal.downloadables.list({ customerSession: token }, request)).result;
  const fileIdsOf = async (token: string) => (await downloadables(token)).items.map((d) => d.file.id);

  beforeAll(async () => {
    org = await newOrganization(t.server, 'sandbox');
    ebook = bytesOf(5_000, 11);
    ebookId = (await uploadFile(org, ebook, 'ebook.epub')).id;
    audioId = (await uploadFile(org, bytesOf(700, 12), 'audio.mp3')).id;
    extrasId = (await uploadFile(org, bytesOf(70, 13), 'extras.zip')).id;
    benefitId = (await org.polar.benefits.create({ type: 'downloadables', description: 'The ebook and its audio', properties: { files: [ebookId, audioId] } })).id;
    extrasBenefitId = (await org.polar.benefits.create({ type: 'downloadables', description: 'Extras', properties: { files: [extrasId] } })).id;
    bundleId = await product('Ebook bundle', [benefitId]);
    extrasProductId = await product('Extras pack', [extrasBenefitId]);
  });

  it('lists each file of a granted downloadables benefit with a signed link that downloads it', async () => {
    const order = await buy('reader@example.com');
    const token = await sessionOf(order.customerId);
    const page = await downloadables(token);
    expect(page.pagination).toEqual({ totalCount: 2, maxPage: 1 });
    expect(page.items.map((d) => [d.benefitId, d.file.id, d.file.name])).toEqual([
      [benefitId, ebookId, 'ebook.epub'],
      [benefitId, audioId, 'audio.mp3'],
    ]);
    const [first] = page.items;
    expect(first).toMatchObject({ id: uuid, file: { isUploaded: true, service: 'downloadable', sizeReadable: '4.9 KB', download: { url: expect.any(String), headers: {} } } });
    expect(first.file.download.expiresAt.getTime()).toBeGreaterThan(Date.now() + HOUR_MS - 60_000);
    expect(first.file.download.expiresAt.getTime()).toBeLessThanOrEqual(Date.now() + HOUR_MS);
    const got = await download(first.file.download.url);
    expect(got.status).toBe(200);
    expect(got.bytes.equals(ebook)).toBe(true);
    expect((await downloadables(token)).items.map((d) => d.id)).toEqual(page.items.map((d) => d.id));
    expect((await downloadables(token, { benefitId: extrasBenefitId })).items).toEqual([]);
    expect((await downloadables(token, { benefitId })).items).toHaveLength(2);
  });

  it('shows each customer only the files of their own grants', async () => {
    // The organization creates the returning buyer, so their later checkouts reach the same customer.
    await org.polar.customers.create({ email: 'bundle@example.com' });
    const bundleBuyer = await buy('bundle@example.com');
    const extrasBuyer = await buy('extras@example.com', extrasProductId);
    const nonBuyer = await org.polar.customers.create({ email: 'browser@example.com' });
    expect(await fileIdsOf(await sessionOf(bundleBuyer.customerId))).toEqual([ebookId, audioId]);
    expect(await fileIdsOf(await sessionOf(extrasBuyer.customerId))).toEqual([extrasId]);
    expect(await fileIdsOf(await sessionOf(nonBuyer.id))).toEqual([]);
    // Buying the extras too adds them to the bundle buyer's files.
    await buy('bundle@example.com', extrasProductId);
    expect(await fileIdsOf(await sessionOf(bundleBuyer.customerId))).toEqual([ebookId, audioId, extrasId]);
  });

  it("drops a revoked grant's files from the list; links issued before keep working only until they expire", async () => {
    const order = await buy('refunded@example.com');
    const token = await sessionOf(order.customerId);
    const [issued] = (await downloadables(token)).items;
    await org.polar.refunds.create({ orderId: order.id, reason: 'customer_request', amount: order.netAmount, revokeBenefits: true });
    await eventually(() => downloadables(token), (page) => page.items.length === 0, 'the revoked grant to disappear');
    expect((await downloadables(token)).pagination).toEqual({ totalCount: 0, maxPage: 0 });
    expect((await download(issued.file.download.url)).status).toBe(200);
    t.server.clock.now = new Date(Date.now() + HOUR_MS + 60_000);
    try {
      expect((await download(issued.file.download.url)).status).toBe(403);
    } finally {
      t.server.clock.now = null;
    }
  });

  it('drops a deleted file from the list', async () => {
    const order = await buy('deleted-file@example.com', extrasProductId);
    const token = await sessionOf(order.customerId);
    expect(await fileIdsOf(token)).toEqual([extrasId]);
    await org.polar.files.delete({ id: extrasId });
    expect(await fileIdsOf(token)).toEqual([]);
  });

  it("refuses a benefit that names another organization's file", async () => {
    const stranger = await newOrganization(t.server, 'sandbox');
    const foreign = await uploadFile(stranger, bytesOf(10), 'foreign.pdf');
    const error = await rejectionOf(org.polar.benefits.create({ type: 'downloadables', description: 'Stolen', properties: { files: [ebookId, foreign.id] } }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).data$.detail).toEqual([expect.objectContaining({ loc: ['body', 'properties', 'files', 1] })]);
  });

  it('pages the list', async () => {
    const order = await buy('pager@example.com');
    const token = await sessionOf(order.customerId);
    const all = await downloadables(token);
    const second = await downloadables(token, { page: 2, limit: 1 });
    expect(second.pagination).toEqual({ totalCount: 2, maxPage: 2 });
    expect(second.items.map((d) => d.id)).toEqual([all.items[1].id]);
  });

  describe('tokens of the wrong kind', () => {
    it('a customer token cannot reach Core: 403 on the files endpoints, NOT_PERMITTED on core', async () => {
      const order = await buy('curious@example.com');
      const token = await sessionOf(order.customerId);
      const asCustomer = restClient(base(), token);
      const list = await asCustomer('GET', '/files/');
      expect(list.status).toBe(403);
      expect(list.body).toEqual({ error: 'NotPermitted', detail: expect.any(String) });
      expect((await asCustomer('DELETE', `/files/${ebookId}`)).status).toBe(403);
      const sdkError = await rejectionOf(new Polar({ accessToken: token, serverURL: `${t.server.url}/sandbox` }).files.list({}));
      expect(sdkError).toBeInstanceOf(SDKError);
      expect((sdkError as SDKError).statusCode).toBe(403);
      const gql = await graphqlClient(base(), token)('{ core { files { items { id } } } }');
      expect(gql.body.errors?.[0].extensions.code).toBe('NOT_PERMITTED');
      expect(await prisma().file.findUniqueOrThrow({ where: { id: ebookId } })).toMatchObject({ deletedAt: null });
    });

    it('an organization token cannot reach the Customer Portal: 403', async () => {
      const response = await org.api('GET', '/customer-portal/downloadables/');
      expect(response.status).toBe(403);
      expect(response.body).toEqual({ error: 'NotPermitted', detail: expect.any(String) });
      const gql = await org.gql('{ customerPortal { downloadables { items { id } } } }');
      expect(gql.body.errors?.[0].extensions.code).toBe('NOT_PERMITTED');
    });

    it('no token, an expired session, a revoked one or a deleted customer: 401', async () => {
      expect((await restClient(base())('GET', '/customer-portal/downloadables/')).status).toBe(401);
      const order = await buy('short-lived@example.com');
      const expiring = await sessionOf(order.customerId);
      t.server.clock.now = new Date(Date.now() + 2 * HOUR_MS);
      try {
        expect((await restClient(base(), expiring)('GET', '/customer-portal/downloadables/')).status).toBe(401);
      } finally {
        t.server.clock.now = null;
      }
      const revoked = await sessionOf(order.customerId);
      await prisma().customerSession.updateMany({ where: { customerId: order.customerId }, data: { revokedAt: new Date() } });
      expect((await restClient(base(), revoked)('GET', '/customer-portal/downloadables/')).status).toBe(401);
      const live = await sessionOf(order.customerId);
      expect((await restClient(base(), live)('GET', '/customer-portal/downloadables/')).status).toBe(200);
      await org.polar.customers.delete({ id: order.customerId });
      expect((await restClient(base(), live)('GET', '/customer-portal/downloadables/')).status).toBe(401);
    });
  });
});
