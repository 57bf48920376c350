// A file's bytes: one part uploaded, or the whole file downloaded, each by a signed link
// (modules/files/service.ts checks it).
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { attachmentDisposition, fileBytes, filePartTarget, storeFilePart } from '../../modules/files/service.ts';
import { restError } from '../../rest/adapter.ts';
import type { EdgeEnvironments, EndpointHandler } from '../endpoints.ts';
import { readBody, singleHeader } from '../incoming.ts';
import { send } from '../send.ts';

export function answerFilePart(deps: { environments: EdgeEnvironments; clock: () => Date }): EndpointHandler<'file-part'> {
  return async ({ req, res, endpoint, url }) => {
    const { environment } = deps.environments[endpoint.environment];
    const part = await filePartTarget(environment, endpoint.fileId, endpoint.part, url.searchParams, deps.clock());
    if ('status' in part) return send(res, restError(part.status, part.error, part.detail));
    const body = await readBody(req, part.length);
    if (body === null) return send(res, restError(413, 'PayloadTooLarge', `Part ${part.number} is ${part.length} bytes long; the request body is longer.`));
    const stored = await storeFilePart(environment, part, body, singleHeader(req, 'x-checksum-sha256'));
    if ('status' in stored) return send(res, restError(stored.status, stored.error, stored.detail));
    send(res, { status: 200, headers: { etag: stored.etag } });
  };
}

export function answerFileDownload(deps: { environments: EdgeEnvironments; clock: () => Date }): EndpointHandler<'file-download'> {
  return async ({ res, endpoint, url }) => {
    const download = await fileBytes(deps.environments[endpoint.environment].environment, endpoint.fileId, url.searchParams, deps.clock());
    if ('status' in download) return send(res, restError(download.status, download.error, download.detail));
    res.writeHead(200, {
      'content-type': download.file.mimeType,
      'content-length': download.file.size,
      'content-disposition': attachmentDisposition(download.file.name),
      'cache-control': 'private, no-store',
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
    });
    return pipeline(Readable.from(download.chunks), res);
  };
}
