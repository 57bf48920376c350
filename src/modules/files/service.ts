// Files an organization uploads, for its downloadables benefits. The bytes go up in parts, each PUT
// to its own signed link that expires; completing the upload checks that every part arrived and
// that the whole file has the SHA-256 announced at creation. Only then is the file served, and
// only through signed links that expire within the hour, so a leaked link soon stops working.
// Parts follow the official client's convention: `chunk_start` inclusive, `chunk_end` exclusive.
import { createHash, randomUUID } from 'node:crypto';
import type { Context, Environment } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { File, Prisma } from '../../generated/prisma/client.ts';
import { reach } from '../../auth/reach.ts';
import { checkLink, linkKey, signLink } from '../../auth/signed-links.ts';
import { RequestValidationError, ResourceNotFoundError, ValidationIssues, type Loc } from '../../graphql/errors.ts';
import { pageWindow, toPage, type Page, type PageArgs } from '../../graphql/pagination.ts';
import { wireOnlyValue } from '../../graphql/wire-values.ts';
import { organizationFilter, owningOrganization } from '../organizations/access.ts';

/** The largest file Kassa takes, in bytes. */
export const maxFileSize = 100 * 1024 * 1024;
/** As many parts as an S3 multipart upload may have. */
export const maxFileParts = 10_000;
/** How long an upload or download link works. */
export const fileLinkLifetimeMs = 3600 * 1000;
const maxNameLength = 255;

export const fileServices = ['downloadable', 'product_media', 'organization_avatar'] as const;
export type FileService = (typeof fileServices)[number];

export interface FileCreatePartInput {
  number: number;
  chunkStart: number;
  chunkEnd: number;
  checksumSha256Base64?: string | null;
}

export interface FileCreateInput {
  organizationId?: string | null;
  name: string;
  mimeType: string;
  size: number;
  checksumSha256Base64?: string | null;
  upload: { parts: FileCreatePartInput[] };
  service: FileService;
  version?: string | null;
}

export interface FileUploadCompletedInput {
  id: string;
  path: string;
  parts: { number: number; checksumEtag: string; checksumSha256Base64?: string | null }[];
}

export interface FileUpdateInput {
  name?: string | null;
  version?: string | null;
}

export interface FileListArgs extends PageArgs {
  organizationId?: string[] | null;
  id?: string[] | null;
}

/** A signed link: the URL, when it stops working, and the headers to send with it. */
export interface FileLink {
  url: string;
  expiresAt: Date;
  headers: Record<string, string>;
}

export type FileUpload = File & { upload: { id: string; path: string; parts: (FileCreatePartInput & FileLink)[] } };
export type FileDownload = File & { download: FileLink };
export interface Downloadable {
  id: string;
  benefitId: string;
  file: FileDownload;
}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// A media type as RFC 6838 spells it, with optional parameters; it is sent back as Content-Type.
const mimeTypePattern = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}(\s*;\s*[a-z0-9!#$&^_.+-]+=([a-z0-9!#$&^_.+-]+|"[^"\\\r\n]*"))*$/i;
const controlCharacters = /[\u0000-\u001f\u007f]/;

/** The environment's key for file links; distinct from other link keys so no link can stand in for another kind. */
const fileLinkKey = (prisma: Db) => linkKey(prisma, 'file-links');
const partSubject = (fileId: string, number: number) => `file-part:${fileId}:${number}`;
const downloadSubject = (fileId: string) => `file-download:${fileId}`;

/** A size as people read it, in binary units: `1.5 KB`, `12.0 MB`. */
export function readableSize(size: number): string {
  let value = size;
  for (const unit of ['', 'K', 'M', 'G', 'T']) {
    if (Math.abs(value) < 1024) return `${value.toFixed(1)} ${unit}B`;
    value /= 1024;
  }
  return `${value.toFixed(1)} PB`;
}

function sha256Base64(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('base64');
}

function checkName(name: string, loc: Loc, issues: ValidationIssues): void {
  if (name.trim().length === 0) issues.add(loc, 'String should have at least 1 character', 'string_too_short');
  else if (name.length > maxNameLength) issues.add(loc, `String should have at most ${maxNameLength} characters`, 'string_too_long');
  else if (controlCharacters.test(name)) issues.add(loc, 'The name must not contain control characters.');
}

function checkVersion(version: string | null | undefined, loc: Loc, issues: ValidationIssues): void {
  if (version != null && version.length > maxNameLength) issues.add(loc, `String should have at most ${maxNameLength} characters`, 'string_too_long');
  else if (version != null && controlCharacters.test(version)) issues.add(loc, 'The version must not contain control characters.');
}

function checkChecksum(checksum: string | null | undefined, loc: Loc, issues: ValidationIssues): void {
  if (checksum == null) return;
  if (!/^[A-Za-z0-9+/]{43}=$/.test(checksum)) issues.add(loc, 'Give the SHA-256 digest in base64 (44 characters).', 'value_error');
}

/** The parts, in order of number, must cover [0, size) exactly: each starts where the previous ends. */
function checkPartsCoverFile(input: FileCreateInput, issues: ValidationIssues): void {
  const loc = ['input', 'upload', 'parts'];
  const parts = input.upload.parts;
  if (parts.length === 0) return issues.add(loc, 'List should have at least 1 item after validation, not 0', 'too_short');
  if (parts.length > maxFileParts) return issues.add(loc, `List should have at most ${maxFileParts} items`, 'too_long');
  const numbers = new Set<number>();
  for (const [i, part] of parts.entries()) {
    if (part.number < 1 || part.number > maxFileParts) issues.add([...loc, i, 'number'], `Part numbers run from 1 to ${maxFileParts}.`, 'value_error');
    else if (numbers.has(part.number)) issues.add([...loc, i, 'number'], `Part number ${part.number} is given twice.`, 'value_error');
    numbers.add(part.number);
    checkChecksum(part.checksumSha256Base64, [...loc, i, 'checksumSha256Base64'], issues);
  }
  if (issues.list.length) return;
  const ordered = parts.map((part, i) => ({ part, i })).sort((a, b) => a.part.number - b.part.number);
  let covered = 0;
  for (const { part, i } of ordered) {
    if (part.chunkStart !== covered) {
      return issues.add([...loc, i, 'chunkStart'], `Part ${part.number} must start at byte ${covered}, where the previous part ends.`, 'value_error');
    }
    if (part.chunkEnd < part.chunkStart) return issues.add([...loc, i, 'chunkEnd'], `Part ${part.number} ends before it starts.`, 'value_error');
    covered = part.chunkEnd;
  }
  if (covered !== input.size) issues.add(loc, `The parts cover ${covered} bytes but the file has ${input.size} (chunk_end is exclusive).`, 'value_error');
}

function checkFileCreate(input: FileCreateInput, service: string): void {
  const issues = new ValidationIssues();
  if (service !== 'downloadable') {
    issues.add(['input', 'service'], `Only downloadable files are supported; ${service} files are not.`, 'value_error');
  }
  checkName(input.name, ['input', 'name'], issues);
  if (!mimeTypePattern.test(input.mimeType)) issues.add(['input', 'mimeType'], 'Give a media type such as application/pdf.', 'value_error');
  if (input.size < 0) issues.add(['input', 'size'], 'Input should be greater than or equal to 0', 'greater_than_equal');
  else if (input.size > maxFileSize) issues.add(['input', 'size'], `Input should be less than or equal to ${maxFileSize}`, 'less_than_equal');
  checkChecksum(input.checksumSha256Base64, ['input', 'checksumSha256Base64'], issues);
  checkVersion(input.version, ['input', 'version'], issues);
  issues.throwIfAny();
  checkPartsCoverFile(input, issues);
  issues.throwIfAny();
}

function partLink(ctx: Context, key: Buffer, fileId: string, part: FileCreatePartInput): FileLink {
  const link = signLink(key, partSubject(fileId, part.number), new Date(ctx.now().getTime() + fileLinkLifetimeMs));
  return {
    url: `${ctx.environment.publicUrl}/v1/files/${fileId}/parts/${part.number}?${link.query}`,
    expiresAt: link.expiresAt,
    headers: part.checksumSha256Base64 ? { 'x-checksum-sha256': part.checksumSha256Base64 } : {},
  };
}

export async function createFile(ctx: Context, input: FileCreateInput): Promise<FileUpload> {
  const organizationId = owningOrganization(ctx, input.organizationId, ['input', 'organizationId']);
  checkFileCreate(input, wireOnlyValue(ctx, ['input', 'service']) ?? input.service);
  const id = randomUUID();
  const parts = [...input.upload.parts].sort((a, b) => a.number - b.number);
  const file = await ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const created = await db.file.create({
      data: {
        id,
        organizationId,
        name: input.name,
        path: `${organizationId}/${id}/${input.name}`,
        mimeType: input.mimeType,
        size: input.size,
        service: input.service,
        checksumSha256Base64: input.checksumSha256Base64 ?? null,
        version: input.version ?? null,
        createdAt: ctx.now(),
      },
    });
    await db.filePart.createMany({
      data: parts.map((part) => ({
        fileId: id,
        number: part.number,
        chunkStart: part.chunkStart,
        chunkEnd: part.chunkEnd,
        checksumSha256Base64: part.checksumSha256Base64 ?? null,
      })),
    });
    return created;
  });
  const key = await fileLinkKey(ctx.prisma);
  return {
    ...file,
    upload: {
      id: file.id,
      path: file.path,
      parts: parts.map((part) => ({
        number: part.number,
        chunkStart: part.chunkStart,
        chunkEnd: part.chunkEnd,
        checksumSha256Base64: part.checksumSha256Base64 ?? null,
        ...partLink(ctx, key, file.id, part),
      })),
    },
  };
}

async function findFile(ctx: Context, db: Db, id: string): Promise<File> {
  const file = await db.file.findFirst({ where: { id, organizationId: organizationFilter(ctx), deletedAt: null } });
  if (!file) throw new ResourceNotFoundError('File not found.');
  return file;
}

/** S3's ETag of a part: the MD5 of its bytes, quoted. */
function partEtag(data: Uint8Array): string {
  return `"${createHash('md5').update(data).digest('hex')}"`;
}

const unquoted = (etag: string) => etag.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1');

/**
 * Completes an upload: every part must hold its bytes, the parts named must carry the ETags their
 * uploads returned, and the whole file must match the SHA-256 given at creation. Completing twice
 * returns the file as it is.
 */
export async function completeFileUpload(ctx: Context, id: string, input: FileUploadCompletedInput): Promise<File> {
  return ctx.prisma.$transaction(
    async (tx) => {
      const db = tx as Db;
      // Part uploads hold this row FOR SHARE: no part changes between the checks and the commit.
      await db.$queryRaw`SELECT id FROM files WHERE id = ${id}::uuid FOR UPDATE`;
      const file = await findFile(ctx, db, id);
      if (file.isUploaded) return file;
      const issues = new ValidationIssues();
      if (input.id !== file.id) issues.add(['input', 'id'], 'This is not the upload id of this file.');
      if (input.path !== file.path) issues.add(['input', 'path'], 'This is not the upload path of this file.');
      issues.throwIfAny();
      const parts = await db.filePart.findMany({ where: { fileId: id }, select: { number: true }, orderBy: { number: 'asc' } });
      const missing = await db.filePart.findMany({ where: { fileId: id, data: null }, select: { number: true }, orderBy: { number: 'asc' } });
      if (missing.length) {
        throw RequestValidationError.at(['input', 'parts'], `Part ${missing.map((p) => p.number).join(', ')} has not been uploaded yet.`, 'missing');
      }
      const sha256 = createHash('sha256');
      const etags = new Map<number, string>();
      const md5s: Buffer[] = [];
      // One part in memory at a time.
      for (const { number } of parts) {
        const { data } = await db.filePart.findUniqueOrThrow({ where: { fileId_number: { fileId: id, number } }, select: { data: true } });
        sha256.update(data!);
        md5s.push(createHash('md5').update(data!).digest());
        etags.set(number, partEtag(data!));
      }
      for (const [i, part] of input.parts.entries()) {
        const etag = etags.get(part.number);
        if (etag === undefined) issues.add(['input', 'parts', i, 'number'], `This file has no part ${part.number}.`);
        else if (unquoted(part.checksumEtag) !== unquoted(etag)) {
          issues.add(['input', 'parts', i, 'checksumEtag'], `Part ${part.number} was uploaded with ETag ${etag}.`, 'value_error');
        }
      }
      issues.throwIfAny();
      const digest = sha256.digest();
      const base64 = digest.toString('base64');
      if (file.checksumSha256Base64 && file.checksumSha256Base64 !== base64) {
        throw RequestValidationError.at(
          ['input'],
          `The uploaded bytes have SHA-256 ${base64}, not ${file.checksumSha256Base64} as given at creation: upload the parts again.`,
          'checksum_mismatch',
        );
      }
      return db.file.update({
        where: { id },
        data: {
          isUploaded: true,
          checksumSha256Base64: base64,
          checksumSha256Hex: digest.toString('hex'),
          // S3's multipart ETag: the MD5 of the parts' MD5s, and the number of parts.
          checksumEtag: `"${createHash('md5').update(Buffer.concat(md5s)).digest('hex')}-${parts.length}"`,
          lastModifiedAt: ctx.now(),
        },
      });
    },
    { timeout: 60_000 },
  );
}

export async function listFiles(ctx: Context, args: FileListArgs): Promise<Page<File>> {
  const window = pageWindow(args);
  const where: Prisma.FileWhereInput = {
    organizationId: organizationFilter(ctx, args.organizationId),
    deletedAt: null,
    isUploaded: true,
    ...(args.id?.length ? { id: { in: args.id } } : {}),
  };
  const [items, total] = await Promise.all([
    ctx.prisma.file.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], ...window }),
    ctx.prisma.file.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function updateFile(ctx: Context, id: string, input: FileUpdateInput): Promise<File> {
  const issues = new ValidationIssues();
  if (input.name != null) checkName(input.name, ['input', 'name'], issues);
  checkVersion(input.version, ['input', 'version'], issues);
  issues.throwIfAny();
  const file = await findFile(ctx, ctx.prisma, id);
  return ctx.prisma.file.update({
    where: { id: file.id },
    data: { ...(input.name != null ? { name: input.name } : {}), ...(input.version !== undefined ? { version: input.version } : {}) },
  });
}

/** Deletes a file: it stays on record, its bytes are dropped, and it is no longer listed or served. */
export async function deleteFile(ctx: Context, id: string): Promise<boolean> {
  return ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    await db.$queryRaw`SELECT id FROM files WHERE id = ${id}::uuid FOR UPDATE`;
    const file = await findFile(ctx, db, id);
    await db.file.update({ where: { id: file.id }, data: { deletedAt: ctx.now() } });
    await db.filePart.deleteMany({ where: { fileId: file.id } });
    return true;
  });
}

/**
 * Refuses file ids that are not uploaded, non-deleted downloadable files of the organization, so a
 * benefit can never hand out another organization's file. The issue of each id is at its position.
 */
export async function assertDownloadableFiles(db: Db, organizationId: string, fileIds: string[]): Promise<void> {
  const wellFormed = fileIds.filter((id) => uuidPattern.test(id));
  const found = await db.file.findMany({
    where: { id: { in: wellFormed }, organizationId, service: 'downloadable', isUploaded: true, deletedAt: null },
    select: { id: true },
  });
  const known = new Set(found.map((f) => f.id.toLowerCase()));
  const issues = new ValidationIssues();
  for (const [i, id] of fileIds.entries()) {
    if (!known.has(id.toLowerCase())) issues.add(['input', 'properties', 'files', i], 'File not found, or not uploaded yet.', 'value_error');
  }
  issues.throwIfAny();
}

function downloadLink(environment: Environment, key: Buffer, file: Pick<File, 'id'>, now: Date): FileLink {
  const link = signLink(key, downloadSubject(file.id), new Date(now.getTime() + fileLinkLifetimeMs));
  return { url: `${environment.publicUrl}/v1/files/${file.id}/download?${link.query}`, expiresAt: link.expiresAt, headers: {} };
}

/** A signed link downloading the file, valid for an hour from `now`. */
export async function fileDownloadLink(environment: Environment, file: Pick<File, 'id'>, now: Date): Promise<FileLink> {
  return downloadLink(environment, await fileLinkKey(environment.prisma), file, now);
}

export interface DownloadableListArgs extends PageArgs {
  organizationId?: string[] | null;
  benefitId?: string[] | null;
}

/** The id of a file a customer holds through a benefit: the same on every listing, however many grants carry it. */
function downloadableId(customerId: string, benefitId: string, fileId: string): string {
  const hex = createHash('sha256').update(`${customerId}:${benefitId}:${fileId}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/**
 * The signed-in customer's downloadables: each file of each downloadables benefit granted to them
 * and not revoked, once per benefit, in the order the benefits were granted.
 */
export async function listDownloadables(ctx: Context, args: DownloadableListArgs): Promise<Page<Downloadable>> {
  const { principal } = ctx;
  if (principal.kind !== 'customer') throw new ResourceNotFoundError('Downloadables are listed for a signed-in customer.');
  const window = pageWindow(args);
  const organizationId = principal.organizationId;
  const organizationMatches = !args.organizationId?.length || args.organizationId.includes(organizationId);
  const grants = organizationMatches
    ? await ctx.prisma.benefitGrant.findMany({
        where: {
          AND: [
            reach(ctx).benefitGrant,
            { grantedAt: { not: null }, revokedAt: null, benefit: { type: 'downloadables', deletedAt: null } },
            args.benefitId?.length ? { benefitId: { in: args.benefitId } } : {},
          ],
        },
        orderBy: [{ grantedAt: 'asc' }, { id: 'asc' }],
        select: { benefitId: true, properties: true },
      })
    : [];
  const held = new Map<string, { benefitId: string; fileId: string }>();
  for (const grant of grants) {
    const files = (grant.properties as { files?: unknown }).files;
    for (const fileId of Array.isArray(files) ? files : []) {
      if (typeof fileId !== 'string' || !uuidPattern.test(fileId)) continue;
      const id = fileId.toLowerCase();
      held.set(`${grant.benefitId}:${id}`, { benefitId: grant.benefitId, fileId: id });
    }
  }
  const files = await ctx.prisma.file.findMany({
    where: { id: { in: [...new Set([...held.values()].map((h) => h.fileId))] }, organizationId, service: 'downloadable', isUploaded: true, isEnabled: true, deletedAt: null },
  });
  const byId = new Map(files.map((file) => [file.id, file]));
  const available = [...held.values()].filter((h) => byId.has(h.fileId));
  const key = await fileLinkKey(ctx.prisma);
  const items: Downloadable[] = available.slice(window.skip, window.skip + window.take).map(({ benefitId, fileId }) => {
    const file = byId.get(fileId)!;
    return { id: downloadableId(principal.customerId, benefitId, fileId), benefitId, file: { ...file, download: downloadLink(ctx.environment, key, file, ctx.now()) } };
  });
  return toPage(items, available.length, args);
}

// ---- The byte endpoints, served outside GraphQL: the signed link is the authorization. ----

export type FileBytesRefusal = { status: 403 | 404 | 409 | 422; error: string; detail: string };

function linkRefusal(check: 'forged' | 'expired', what: string): FileBytesRefusal {
  return check === 'expired'
    ? { status: 403, error: 'Forbidden', detail: `This ${what} link has expired: ask for a new one.` }
    : { status: 403, error: 'Forbidden', detail: `This ${what} link is not valid: its signature does not match.` };
}

export interface FilePartTarget {
  fileId: string;
  number: number;
  /** The part's length in bytes: exactly what the PUT must carry. */
  length: number;
  checksumSha256Base64: string | null;
}

/** The part a signed upload link names, if the link is valid and the file still takes uploads. */
export async function filePartTarget(environment: Environment, fileId: string, number: number, query: URLSearchParams, now: Date): Promise<FilePartTarget | FileBytesRefusal> {
  const check = checkLink(await fileLinkKey(environment.prisma), partSubject(fileId, number), query, now);
  if (check !== 'valid') return linkRefusal(check, 'upload');
  const part = await environment.prisma.filePart.findUnique({
    where: { fileId_number: { fileId, number } },
    select: { chunkStart: true, chunkEnd: true, checksumSha256Base64: true, file: { select: { isUploaded: true, deletedAt: true } } },
  });
  if (!part || part.file.deletedAt) return { status: 404, error: 'NotFound', detail: 'This file no longer exists.' };
  if (part.file.isUploaded) return { status: 409, error: 'FileAlreadyUploaded', detail: 'This file is uploaded and complete; its parts cannot change.' };
  return { fileId, number, length: part.chunkEnd - part.chunkStart, checksumSha256Base64: part.checksumSha256Base64 };
}

/**
 * Stores the bytes of a part: exactly its length, and, where a SHA-256 was declared (at creation or
 * in the `x-checksum-sha256` header), matching it. A part may be uploaded again until the file is complete.
 */
export async function storeFilePart(environment: Environment, target: FilePartTarget, body: Buffer, declaredChecksum: string | undefined): Promise<{ etag: string } | FileBytesRefusal> {
  if (body.length !== target.length) {
    return { status: 422, error: 'PartSizeMismatch', detail: `Part ${target.number} is ${target.length} bytes long; the request carried ${body.length}.` };
  }
  const checksum = sha256Base64(body);
  if (target.checksumSha256Base64 && checksum !== target.checksumSha256Base64) {
    return { status: 422, error: 'ChecksumMismatch', detail: `The bytes have SHA-256 ${checksum}, not ${target.checksumSha256Base64} as declared for part ${target.number}.` };
  }
  if (declaredChecksum !== undefined && checksum !== declaredChecksum.trim()) {
    return { status: 422, error: 'ChecksumMismatch', detail: `The bytes have SHA-256 ${checksum}, not ${declaredChecksum.trim()} as the x-checksum-sha256 header says.` };
  }
  return environment.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const [file] = await db.$queryRaw<{ is_uploaded: boolean; deleted_at: Date | null }[]>`
      SELECT is_uploaded, deleted_at FROM files WHERE id = ${target.fileId}::uuid FOR SHARE`;
    if (!file || file.deleted_at) return { status: 404, error: 'NotFound', detail: 'This file no longer exists.' } as const;
    if (file.is_uploaded) return { status: 409, error: 'FileAlreadyUploaded', detail: 'This file is uploaded and complete; its parts cannot change.' } as const;
    await db.filePart.update({ where: { fileId_number: { fileId: target.fileId, number: target.number } }, data: { data: new Uint8Array(body) } });
    return { etag: partEtag(body) };
  });
}

export type FileBytes = { file: File; chunks: AsyncIterable<Uint8Array> };

/** The file behind a signed download link, its bytes read one part at a time. */
export async function fileBytes(environment: Environment, fileId: string, query: URLSearchParams, now: Date): Promise<FileBytes | FileBytesRefusal> {
  const check = checkLink(await fileLinkKey(environment.prisma), downloadSubject(fileId), query, now);
  if (check !== 'valid') return linkRefusal(check, 'download');
  const file = await environment.prisma.file.findFirst({ where: { id: fileId, isUploaded: true, isEnabled: true, deletedAt: null } });
  if (!file) return { status: 404, error: 'NotFound', detail: 'This file no longer exists.' };
  const parts = await environment.prisma.filePart.findMany({ where: { fileId }, select: { number: true }, orderBy: { number: 'asc' } });
  async function* chunks() {
    for (const { number } of parts) {
      const part = await environment.prisma.filePart.findUnique({ where: { fileId_number: { fileId, number } }, select: { data: true } });
      if (!part?.data) throw new Error(`Part ${number} of file ${fileId} vanished while it was being downloaded`);
      yield part.data;
    }
  }
  return { file, chunks: chunks() };
}

/** `Content-Disposition` that saves the file under its name, ASCII fallback first (RFC 6266). */
export function attachmentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}
