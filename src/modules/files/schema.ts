import { GraphQLEnumType } from 'graphql';
import { wireOnlyExtension, wireExtension } from '../../graphql/wire-values.ts';
import { builder, type BuilderTypes, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery, CustomerPortalQuery } from '../../graphql/roots.ts';
import {
  completeFileUpload,
  createFile,
  deleteFile,
  fileServices,
  listDownloadables,
  listFiles,
  readableSize,
  updateFile,
  type Downloadable as HeldDownloadable,
  type FileCreatePartInput as FilePartRange,
  type FileDownload as FileWithDownload,
  type FileLink as SignedLink,
  type FileService as FileServiceName,
  type FileUpload as FileWithUpload,
} from './service.ts';

const fileServiceDescription = 'What a file is for. Kassa takes downloadable files.';
// REST still checks a new file's service against every service the wire format names, so an
// unknown one gets the same error as before; those Kassa does not take get the message they had.
const restFileService = new GraphQLEnumType({
  name: 'FileService',
  description: fileServiceDescription,
  values: { downloadable: {}, product_media: {}, organization_avatar: {} } satisfies Record<(typeof fileServices)[number], object>,
});
export const FileService = builder.enumType('FileService', {
  description: fileServiceDescription,
  values: {
    downloadable: { description: 'A file granted to customers by a downloadables benefit.' },
  },
  extensions: wireExtension(restFileService),
});
// REST still takes the services Kassa does not serve, for the service to refuse them.
const refusedServices = wireOnlyExtension(['product_media', 'organization_avatar'], 'downloadable');

export const FileLink = builder.objectRef<SignedLink>('FileLink').implement({
  description: 'A signed link that works until expiresAt; send the headers with the request.',
  fields: (t) => ({
    url: t.exposeString('url', { description: 'The signed address; needs no token.' }),
    headers: t.field({ type: 'JSONObject', description: 'Headers to send with the request, name to value; often empty.', resolve: (link) => link.headers }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'When the link stops working: an hour after it was made.' }),
  }),
});

const FileUploadPart = builder.objectRef<FilePartRange & SignedLink>('FileUploadPart').implement({
  description: 'Where to PUT the bytes [chunkStart, chunkEnd) of the file.',
  fields: (t) => ({
    number: t.exposeInt('number', { description: 'The part number, from 1.' }),
    chunkStart: t.exposeInt('chunkStart', { description: 'The first byte of the part, from 0.' }),
    chunkEnd: t.exposeInt('chunkEnd', { description: 'Exclusive.' }),
    checksumSha256Base64: t.exposeString('checksumSha256Base64', { nullable: true, description: "The part's SHA-256 in base64, as given at creation; null if none was given." }),
    url: t.exposeString('url', { description: 'Where to PUT the bytes; needs no token.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'When the link stops working: an hour after creation.' }),
    headers: t.field({ type: 'JSONObject', description: 'Headers to send with the PUT: the checksum, when one was given.', resolve: (part) => part.headers }),
  }),
});

const FileUploadMultipart = builder.objectRef<FileWithUpload['upload']>('FileUploadMultipart').implement({
  description: 'The upload of a new file in parts; complete it with fileUploadComplete.',
  fields: (t) => ({
    id: t.exposeString('id', { description: 'The upload id, to give back to fileUploadComplete.' }),
    path: t.exposeString('path', { description: 'The upload path, to give back to fileUploadComplete.' }),
    parts: t.field({ type: [FileUploadPart], description: 'One link per part, by part number.', resolve: (upload) => upload.parts }),
  }),
});

// The file's fields, shared by File, FileUpload (with its upload links) and FileDownload (with its download link).
type FileFieldBuilder = PrismaFieldBuilder<'File'>;

const fileFields = (t: FileFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID', description: "The file's id." }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the file was created.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the file was last changed; null if never.' }),
  organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization that owns it.' }),
  name: t.exposeString('name', { description: 'The file name customers download it as.' }),
  path: t.exposeString('path', { description: 'Where it is stored: organization id / file id / name.' }),
  mimeType: t.exposeString('mimeType', { description: 'The media type, such as application/pdf.' }),
  size: t.exposeInt('size', { description: 'In bytes.' }),
  sizeReadable: t.string({ description: 'The size for people, such as "1.5 MB".', resolve: (file) => readableSize(file.size) }),
  storageVersion: t.string({ nullable: true, description: 'Kassa keeps no object versions: always null.', resolve: () => null }),
  checksumEtag: t.exposeString('checksumEtag', { nullable: true, description: 'The multipart ETag (MD5 of the parts\' MD5s, then the part count); null until uploaded.' }),
  checksumSha256Base64: t.exposeString('checksumSha256Base64', { nullable: true, description: "The file's SHA-256 in base64: as given at creation, then as computed at completion; null if neither." }),
  checksumSha256Hex: t.exposeString('checksumSha256Hex', { nullable: true, description: "The file's SHA-256 in hex; null until uploaded." }),
  lastModifiedAt: t.expose('lastModifiedAt', { type: 'DateTime', nullable: true, description: 'When the upload was completed; null until then.' }),
  version: t.exposeString('version', { nullable: true, description: 'A version label of the organization\'s choosing; null if none.' }),
  service: t.field({ type: FileService, description: 'What the file is for.', resolve: (file) => file.service as 'downloadable' }),
  isUploaded: t.exposeBoolean('isUploaded', { description: 'Whether the upload was completed; only uploaded files are listed and served.' }),
});

export const File = builder.prismaObject('File', {
  description: "A file of an organization; served once all its parts are uploaded.",
  fields: (t) => fileFields(t as unknown as FileFieldBuilder),
});

export const FileUpload = builder.prismaObject('File', {
  variant: 'FileUpload',
  description: 'A new file, with a signed link to PUT each of its parts to.',
  fields: (t) => ({
    ...fileFields(t as unknown as FileFieldBuilder),
    upload: t.field({ type: FileUploadMultipart, description: 'Where to upload each part.', resolve: (file) => (file as FileWithUpload).upload }),
  }),
});

export const FileDownload = builder.prismaObject('File', {
  variant: 'FileDownload',
  description: 'A file with a signed link to download it.',
  fields: (t) => ({
    ...fileFields(t as unknown as FileFieldBuilder),
    download: t.field({ type: FileLink, description: 'A signed link to GET the file, valid for an hour.', resolve: (file) => (file as FileWithDownload).download }),
  }),
});

const FileList = listType('File', File);

export const Downloadable = builder.objectRef<HeldDownloadable>('Downloadable').implement({
  description: 'A file the signed-in customer holds through a downloadables benefit.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID', description: 'Stands for this customer, benefit and file together; stable across calls.' }),
    benefitId: t.expose('benefitId', { type: 'UUID', description: 'The downloadables benefit that grants the file.' }),
    file: t.field({ type: FileDownload, description: 'The file, with a download link.', resolve: (downloadable) => downloadable.file }),
  }),
});

const DownloadableList = listType('Downloadable', Downloadable);

const FileCreatePartInput = builder.inputType('FileCreatePartInput', {
  description: 'One part of a new file: a byte range, uploaded on its own.',
  fields: (t) => ({
    number: t.int({ required: true, description: 'From 1.' }),
    chunkStart: t.int({ required: true, description: 'The first byte of the part.' }),
    chunkEnd: t.int({ required: true, description: 'The byte after the last one of the part: parts cover the file back to back.' }),
    checksumSha256Base64: t.string({ description: "The part's SHA-256, in base64; its upload must match it." }),
  }),
});

const FileCreateUploadInput = builder.inputType('FileCreateUploadInput', {
  description: 'How the file will be uploaded.',
  fields: (t) => ({
    parts: t.field({ type: [FileCreatePartInput], required: true, description: 'The parts, 1 to 10000, numbered from 1 and covering the file back to back.' }),
  }),
});

const FileCreateInput = builder.inputType('FileCreateInput', {
  description: 'A new file, to be uploaded in parts.',
  fields: (t) => ({
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
    name: t.string({ required: true, description: 'The file name, 1 to 255 characters, no control characters.' }),
    mimeType: t.string({ required: true, description: 'The media type, such as application/pdf.' }),
    size: t.int({ required: true, description: 'In bytes, at most 104857600 (100 MiB).' }),
    checksumSha256Base64: t.string({ description: "The whole file's SHA-256, in base64; completing the upload checks it." }),
    upload: t.field({ type: FileCreateUploadInput, required: true, description: 'The parts to upload.' }),
    service: t.field({ type: FileService, required: true, description: 'What the file is for.', extensions: refusedServices }),
    version: t.string({ description: 'A version label, at most 255 characters.' }),
  }),
});

const FileUploadCompletedPartInput = builder.inputType('FileUploadCompletedPartInput', {
  description: 'An uploaded part, as its upload answered.',
  fields: (t) => ({
    number: t.int({ required: true, description: 'The part number.' }),
    checksumEtag: t.string({ required: true, description: 'The ETag the upload of the part answered with.' }),
    checksumSha256Base64: t.string({ description: "The part's SHA-256 in base64. Not checked here: the whole file's checksum is." }),
  }),
});

const FileUploadCompletedInput = builder.inputType('FileUploadCompletedInput', {
  description: 'The finished upload: its id, path and parts.',
  fields: (t) => ({
    id: t.string({ required: true, description: 'The upload id given at creation.' }),
    path: t.string({ required: true, description: 'The upload path given at creation.' }),
    parts: t.field({ type: [FileUploadCompletedPartInput], required: true, description: 'The parts uploaded, each with its ETag.' }),
  }),
});

const FileUpdateInput = builder.inputType('FileUpdateInput', {
  description: 'Only the fields given change.',
  fields: (t) => ({
    name: t.string({ description: 'A new name, 1 to 255 characters.' }),
    version: t.string({ description: 'A new version label; null clears it.' }),
  }),
});


builder.objectFields(CoreQuery, (t) => ({
  files: t.field({
    type: FileList,
    authScopes: { scope: ['files:read', 'files:write'] },
    description: 'Uploaded files (not deleted) of the organizations the token reaches, newest first.',
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      id: t.arg({ type: ['UUID'], description: 'Only these files.' }),
      ids: t.arg({ type: ['UUID'], description: 'Only these files, as `id` (which other lists name this filter).', deprecationReason: 'use id' }),
    },
    resolve: (_root, { ids, ...args }, ctx) => listFiles(ctx, { ...args, id: ids ? [...(args.id ?? []), ...ids] : args.id }),
  }),
}));

/** `fileUploadComplete`, and under its first name, `fileUploaded`, deprecated. */
const completeUpload = (t: PothosSchemaTypes.ObjectFieldBuilder<BuilderTypes, object>, deprecationReason?: string) =>
  t.field({
    type: File,
    authScopes: { scope: 'files:write' },
    description:
      'Completes the upload once every part is PUT; completing twice returns the file as it is. RESOURCE_NOT_FOUND if the token does not reach it; BAD_USER_INPUT for a wrong upload id or path, a missing part, a wrong ETag, or bytes that do not match the SHA-256 given at creation.',
    deprecationReason,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The file's id." }),
      input: t.arg({ type: FileUploadCompletedInput, required: true, description: 'The finished upload.' }),
    },
    resolve: (_root, { id, input }, ctx) => completeFileUpload(ctx, id, input),
  });

builder.objectFields(CoreMutation, (t) => ({
  fileCreate: t.field({
    type: FileUpload,
    description:
      'Creates a file and returns a signed link per part: PUT each part there, then call fileUploadComplete. BAD_USER_INPUT names each problem: the name, media type, size, checksum format, a service other than downloadable, or parts that do not cover the file.',
    authScopes: { scope: 'files:write' },
    args: { input: t.arg({ type: FileCreateInput, required: true, description: 'The file to create.' }) },
    resolve: (_root, { input }, ctx) => createFile(ctx, { ...input, service: input.service as FileServiceName }),
  }),
  fileUploadComplete: completeUpload(t),
  fileUploaded: completeUpload(t, 'use fileUploadComplete'),
  fileUpdate: t.field({
    type: File,
    description: "Renames a file or changes its version label. RESOURCE_NOT_FOUND if the token does not reach it.",
    authScopes: { scope: 'files:write' },
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The file's id." }),
      input: t.arg({ type: FileUpdateInput, required: true, description: 'The fields to change.' }),
    },
    resolve: (_root, { id, input }, ctx) => updateFile(ctx, id, input),
  }),
  fileDelete: t.boolean({
    description: 'Deletes a file and returns true: its bytes are dropped and it is no longer listed or served. RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: 'files:write' },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The file's id." }) },
    resolve: (_root, { id }, ctx) => deleteFile(ctx, id),
  }),
}));

builder.objectFields(CustomerPortalQuery, (t) => ({
  downloadables: t.field({
    type: DownloadableList,
    description: "The files the signed-in customer holds through downloadables benefits, once per benefit and file, in the order the benefits were granted.",
    authScopes: { principal: 'customer' },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: "Only these organizations' files." }),
      benefitId: t.arg({ type: ['UUID'], description: 'Only files of these benefits.' }),
    },
    resolve: (_root, args, ctx) => listDownloadables(ctx, args),
  }),
}));
