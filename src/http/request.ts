// What Kassa reads of a request's headers, parsed once at the edge and handed on to REST, GraphQL,
// the OAuth provider and the pages. Nothing below this layer reads a header.
import type { IncomingHttpHeaders } from 'node:http';

/** The Authorization header, split into its scheme (lowercased) and credentials. */
export interface Authorization {
  scheme: string;
  credentials: string;
}

export interface RequestFacts {
  /** Undefined without an Authorization header; `scheme: ''` when it has no scheme. */
  authorization: Authorization | undefined;
  /** The cookies, by name; the first of a repeated name wins; undecodable ones are left out. */
  cookies: ReadonlyMap<string, string>;
  origin: string | undefined;
  /** `Sec-Fetch-Site`, as browsers send it: same-origin, same-site, cross-site or none. */
  fetchSite: string | undefined;
  /** The body's media type, lowercased, without parameters. */
  mediaType: string | undefined;
}

const single = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);

export function requestFacts(headers: IncomingHttpHeaders): RequestFacts {
  return {
    authorization: parseAuthorization(headers.authorization),
    cookies: parseCookies(headers.cookie),
    origin: single(headers.origin),
    fetchSite: single(headers['sec-fetch-site']),
    mediaType: headers['content-type']?.split(';')[0].trim().toLowerCase() || undefined,
  };
}

function parseAuthorization(header: string | undefined): Authorization | undefined {
  if (header === undefined || header === '') return undefined;
  const match = /^(\S+)\s+(\S+)\s*$/.exec(header);
  return match ? { scheme: match[1].toLowerCase(), credentials: match[2] } : { scheme: '', credentials: header };
}

function parseCookies(header: string | undefined): Map<string, string> {
  const jar = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    if (jar.has(name)) continue;
    // Another application on this host may set cookies Kassa cannot decode: those are not Kassa's.
    try {
      jar.set(name, decodeURIComponent(part.slice(at + 1).trim()));
    } catch {
      continue;
    }
  }
  return jar;
}

/**
 * The bearer token the request carries: undefined without an Authorization header, null when the
 * header is not `Bearer <token>`.
 */
export function bearerToken(facts: RequestFacts): string | undefined | null {
  if (!facts.authorization) return undefined;
  return facts.authorization.scheme === 'bearer' ? facts.authorization.credentials : null;
}
