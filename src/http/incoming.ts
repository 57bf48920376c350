// What the edge reads of a request besides its headers' meaning (http/request.ts): the request
// target, the request id and the body.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** The largest body read for a request, unless its endpoint sets its own limit. */
export const maxBodyBytes = 1024 * 1024;

export interface RequestTarget {
  pathname: string;
  searchParams: URLSearchParams;
}

/**
 * The path and query of a request target, read as a path: never resolved as a URL, so `//host/…`
 * names no host, and `.`, `..`, `//` and `%2F` stay in the path, matching no route. The
 * absolute form (`http://host/v1/…`, RFC 9112 §3.2.2) is served by its path.
 */
export function requestTarget(target: string): RequestTarget {
  const absolute = /^https?:\/\/[^/?]*/i.exec(target);
  const originForm = absolute ? target.slice(absolute[0].length) : target;
  const query = originForm.indexOf('?');
  const pathname = query === -1 ? originForm : originForm.slice(0, query);
  return { pathname: pathname || '/', searchParams: new URLSearchParams(query === -1 ? '' : originForm.slice(query + 1)) };
}

/** The client's X-Request-Id when it is a plain token of at most 128 characters, else a new one. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
}

/** The body, or null when it is larger than `limit` bytes (the rest is not read). */
export async function readBody(req: IncomingMessage, limit = maxBodyBytes): Promise<Buffer | null> {
  if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] === undefined) return Buffer.alloc(0);
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) return null;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** A header sent once; undefined when it is missing or repeated. */
export function singleHeader(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}
