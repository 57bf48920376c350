import { builder, type PrismaFieldBuilder } from '../../graphql/builder.ts';
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

export const FileService = builder.enumType('FileService', { values: fileServices, description: 'What a file is for. Kassa takes downloadable files.' });

export const FileLink = builder.objectRef<SignedLink>('FileLink').implement({
  description: 'A signed link that works until expiresAt; send the headers with the request.',
  fields: (t) => ({
    url: t.exposeString('url'),
    headers: t.field({ type: 'JSONObject', resolve: (link) => link.headers }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
  }),
});

const FileUploadPart = builder.objectRef<FilePartRange & SignedLink>('FileUploadPart').implement({
  description: 'Where to PUT the bytes [chunkStart, chunkEnd) of the file.',
  fields: (t) => ({
    number: t.exposeInt('number'),
    chunkStart: t.exposeInt('chunkStart'),
    chunkEnd: t.exposeInt('chunkEnd', { description: 'Exclusive.' }),
    checksumSha256Base64: t.exposeString('checksumSha256Base64', { nullable: true }),
    url: t.exposeString('url'),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    headers: t.field({ type: 'JSONObject', resolve: (part) => part.headers }),
  }),
});

const FileUploadMultipart = builder.objectRef<FileWithUpload['upload']>('FileUploadMultipart').implement({
  fields: (t) => ({
    id: t.exposeString('id'),
    path: t.exposeString('path'),
    parts: t.field({ type: [FileUploadPart], resolve: (upload) => upload.parts }),
  }),
});

// The file's fields, shared by File, FileUpload (with its upload links) and FileDownload (with its download link).
type FileFieldBuilder = PrismaFieldBuilder<'File'>;

const fileFields = (t: FileFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID' }),
  createdAt: t.expose('createdAt', { type: 'DateTime' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
  organizationId: t.expose('organizationId', { type: 'UUID' }),
  name: t.exposeString('name'),
  path: t.exposeString('path'),
  mimeType: t.exposeString('mimeType'),
  size: t.exposeInt('size', { description: 'In bytes.' }),
  sizeReadable: t.string({ resolve: (file) => readableSize(file.size) }),
  storageVersion: t.string({ nullable: true, description: 'Kassa keeps no object versions: always null.', resolve: () => null }),
  checksumEtag: t.exposeString('checksumEtag', { nullable: true }),
  checksumSha256Base64: t.exposeString('checksumSha256Base64', { nullable: true }),
  checksumSha256Hex: t.exposeString('checksumSha256Hex', { nullable: true }),
  lastModifiedAt: t.expose('lastModifiedAt', { type: 'DateTime', nullable: true }),
  version: t.exposeString('version', { nullable: true }),
  service: t.field({ type: FileService, resolve: (file) => file.service as FileServiceName }),
  isUploaded: t.exposeBoolean('isUploaded'),
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
    upload: t.field({ type: FileUploadMultipart, resolve: (file) => (file as FileWithUpload).upload }),
  }),
});

export const FileDownload = builder.prismaObject('File', {
  variant: 'FileDownload',
  description: 'A file with a signed link to download it.',
  fields: (t) => ({
    ...fileFields(t as unknown as FileFieldBuilder),
    download: t.field({ type: FileLink, resolve: (file) => (file as FileWithDownload).download }),
  }),
});

const FileList = listType('File', File);

export const Downloadable = builder.objectRef<HeldDownloadable>('Downloadable').implement({
  description: 'A file the signed-in customer holds through a downloadables benefit.',
  fields: (t) => ({
    id: t.expose('id', { type: 'UUID' }),
    benefitId: t.expose('benefitId', { type: 'UUID' }),
    file: t.field({ type: FileDownload, resolve: (downloadable) => downloadable.file }),
  }),
});

const DownloadableList = listType('Downloadable', Downloadable);

const FileCreatePartInput = builder.inputType('FileCreatePartInput', {
  fields: (t) => ({
    number: t.int({ required: true, description: 'From 1.' }),
    chunkStart: t.int({ required: true, description: 'The first byte of the part.' }),
    chunkEnd: t.int({ required: true, description: 'The byte after the last one of the part: parts cover the file back to back.' }),
    checksumSha256Base64: t.string({ description: "The part's SHA-256, in base64; its upload must match it." }),
  }),
});

const FileCreateUploadInput = builder.inputType('FileCreateUploadInput', {
  fields: (t) => ({ parts: t.field({ type: [FileCreatePartInput], required: true }) }),
});

const FileCreateInput = builder.inputType('FileCreateInput', {
  fields: (t) => ({
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
    name: t.string({ required: true }),
    mimeType: t.string({ required: true }),
    size: t.int({ required: true, description: 'In bytes.' }),
    checksumSha256Base64: t.string({ description: "The whole file's SHA-256, in base64; completing the upload checks it." }),
    upload: t.field({ type: FileCreateUploadInput, required: true }),
    service: t.field({ type: FileService, required: true }),
    version: t.string(),
  }),
});

const FileUploadCompletedPartInput = builder.inputType('FileUploadCompletedPartInput', {
  fields: (t) => ({
    number: t.int({ required: true }),
    checksumEtag: t.string({ required: true, description: 'The ETag the upload of the part answered with.' }),
    checksumSha256Base64: t.string(),
  }),
});

const FileUploadCompletedInput = builder.inputType('FileUploadCompletedInput', {
  fields: (t) => ({
    id: t.string({ required: true, description: 'The upload id given at creation.' }),
    path: t.string({ required: true, description: 'The upload path given at creation.' }),
    parts: t.field({ type: [FileUploadCompletedPartInput], required: true }),
  }),
});

const FileUpdateInput = builder.inputType('FileUpdateInput', {
  description: 'Only the fields given change.',
  fields: (t) => ({ name: t.string(), version: t.string() }),
});


builder.objectFields(CoreQuery, (t) => ({
  files: t.field({
    type: FileList,
    authScopes: { scope: ['files:read', 'files:write'] },
    description: 'Uploaded files, newest first.',
    args: { ...pageArgs(t.arg), organizationId: t.arg({ type: ['UUID'] }), ids: t.arg({ type: ['UUID'] }) },
    resolve: (_root, args, ctx) => listFiles(ctx, args),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  fileCreate: t.field({
    type: FileUpload,
    authScopes: { scope: 'files:write' },
    args: { input: t.arg({ type: FileCreateInput, required: true }) },
    resolve: (_root, { input }, ctx) => createFile(ctx, { ...input, service: input.service as FileServiceName }),
  }),
  fileUploaded: t.field({
    type: File,
    authScopes: { scope: 'files:write' },
    description: 'Completes the upload once every part is PUT.',
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: FileUploadCompletedInput, required: true }) },
    resolve: (_root, { id, input }, ctx) => completeFileUpload(ctx, id, input),
  }),
  fileUpdate: t.field({
    type: File,
    authScopes: { scope: 'files:write' },
    args: { id: t.arg({ type: 'UUID', required: true }), input: t.arg({ type: FileUpdateInput, required: true }) },
    resolve: (_root, { id, input }, ctx) => updateFile(ctx, id, input),
  }),
  fileDelete: t.boolean({
    authScopes: { scope: 'files:write' },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (_root, { id }, ctx) => deleteFile(ctx, id),
  }),
}));

builder.objectFields(CustomerPortalQuery, (t) => ({
  downloadables: t.field({
    type: DownloadableList,
    authScopes: { principal: 'customer' },
    args: { ...pageArgs(t.arg), organizationId: t.arg({ type: ['UUID'] }), benefitId: t.arg({ type: ['UUID'] }) },
    resolve: (_root, args, ctx) => listDownloadables(ctx, args),
  }),
}));
