// Leaked tokens reported by a secret-scanning service, in the format of GitHub's secret scanning
// partner program: a JSON array of `{token, type, url, source}`, signed over the raw body with the
// reporter's ECDSA P-256 key (`Github-Public-Key-Identifier`, `Github-Public-Key-Signature`: base64
// DER). The keys come from SECRET_SCANNING_PUBLIC_KEYS, not from the network.
// Every reported token that is live in this environment is revoked at once, in one transaction with
// the event that tells its organization where it leaked. The answer labels each entry
// `true_positive` (a bearer token this environment issued, live or not) or `false_positive`, by
// the token's SHA-256.
// A report that is unsigned, signed with an unknown key or tampered with changes nothing.
import { verify } from 'node:crypto';
import type { Config } from '../config.ts';
import { announcePrincipalChange } from '../auth/principal-cache.ts';
import { hashToken, isWellFormedToken, type TokenKind } from '../auth/tokens.ts';
import { systemContext, type Environment } from '../context.ts';
import type { Db } from '../db/client.ts';
import { recordEvent } from '../events/outbox.ts';
import { tokenLeakWire } from '../wire/token-leaks.ts';

export type ScanningKey = Config['secretScanningKeys'][number];

export interface ScanReport {
  token: string;
  type: string;
  url: string | null;
  source: string | null;
}

export type ScanAnswer = { status: number; body: unknown };

/** The kinds a leak revokes: every kind that works as a bearer token. Client and webhook secrets are labelled false_positive (not looked up). */
const revocableKinds = ['oat', 'pat', 'us', 'at', 'rt', 'cst'] as const satisfies readonly TokenKind[];
type RevocableKind = (typeof revocableKinds)[number];

const maxReports = 1000;

function refusal(status: number, error: string, detail: string): ScanAnswer {
  return { status, body: { error, detail } };
}

/** The signature check: a known key, a valid ECDSA SHA-256 signature over the exact bytes received. */
export function checkSignature(keys: readonly ScanningKey[], keyId: string | undefined, signature: string | undefined, body: Buffer): boolean {
  if (!keyId || !signature) return false;
  const key = keys.find((k) => k.keyIdentifier === keyId);
  if (!key) return false;
  try {
    return verify('sha256', body, { key: key.pem, dsaEncoding: 'der' }, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

function parseReports(body: Buffer): ScanReport[] | string {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return 'The body is not valid JSON.';
  }
  if (!Array.isArray(value)) return 'The body must be a JSON array of reported tokens.';
  if (value.length > maxReports) return `At most ${maxReports} tokens per report.`;
  const reports: ScanReport[] = [];
  for (const [index, entry] of value.entries()) {
    if (typeof entry !== 'object' || entry === null || typeof (entry as ScanReport).token !== 'string') return `Entry ${index} needs a "token" string.`;
    const { token, type, url, source } = entry as Record<string, unknown>;
    reports.push({ token: token as string, type: text(type, 200) ?? '', url: text(url, 2000), source: text(source, 200) });
  }
  return reports;
}

/** A reporter's string as it can be stored: cut to `max`, without NUL (PostgreSQL text cannot hold it). */
function text(value: unknown, max: number): string | null {
  return typeof value === 'string' ? value.replace(/\u0000/g, '').slice(0, max) : null;
}

/** The kind a well-formed token of this deployment names, or null for anything else. */
function kindOf(token: string, prefix: string): TokenKind | null {
  const match = new RegExp(`^${prefix}_([a-z]+)_`).exec(token);
  const kind = match?.[1] as TokenKind | undefined;
  return kind && isWellFormedToken(token, prefix, kind) ? kind : null;
}

/** Not revoked and not expired: what the conditional updates below revoke, once. */
const liveAt = (now: Date) => ({ revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] });

interface Found {
  organizationId: string | null;
  /** What the event names: the token's record, never the token. */
  tokenId: string;
  live: boolean;
}

/** Finds a reported token in this environment and, if it is live, revokes it (and what goes with it). */
async function revokeLeaked(tx: Db, kind: RevocableKind, tokenHash: string, now: Date): Promise<{ found: Found | null; ended: string[] }> {
  switch (kind) {
    case 'oat': {
      const token = await tx.organizationAccessToken.findUnique({ where: { tokenHash } });
      if (!token) return { found: null, ended: [] };
      const { count } = await tx.organizationAccessToken.updateMany({ where: { id: token.id, ...liveAt(now) }, data: { revokedAt: now } });
      return { found: { organizationId: token.organizationId, tokenId: token.id, live: count > 0 }, ended: count > 0 ? [tokenHash] : [] };
    }
    case 'pat': {
      const token = await tx.personalAccessToken.findUnique({ where: { tokenHash } });
      if (!token) return { found: null, ended: [] };
      const { count } = await tx.personalAccessToken.updateMany({ where: { id: token.id, ...liveAt(now) }, data: { revokedAt: now } });
      return { found: { organizationId: null, tokenId: token.id, live: count > 0 }, ended: count > 0 ? [tokenHash] : [] };
    }
    case 'us': {
      const session = await tx.userSession.findUnique({ where: { tokenHash } });
      if (!session) return { found: null, ended: [] };
      const { count } = await tx.userSession.updateMany({ where: { id: session.id, revokedAt: null, expiresAt: { gt: now } }, data: { revokedAt: now } });
      return { found: { organizationId: null, tokenId: session.id, live: count > 0 }, ended: count > 0 ? [tokenHash] : [] };
    }
    case 'at':
    case 'rt': {
      const token = await tx.oAuthToken.findFirst({ where: kind === 'at' ? { accessTokenHash: tokenHash } : { refreshTokenHash: tokenHash } });
      if (!token) return { found: null, ended: [] };
      // A leaked access or refresh token ends its whole grant: every token of the family.
      const family = await tx.oAuthToken.findMany({ where: { familyId: token.familyId, revokedAt: null }, select: { id: true, accessTokenHash: true } });
      const { count } = await tx.oAuthToken.updateMany({ where: { id: { in: family.map((t) => t.id) }, revokedAt: null }, data: { revokedAt: now } });
      return { found: { organizationId: token.organizationId, tokenId: token.id, live: count > 0 }, ended: count > 0 ? family.map((t) => t.accessTokenHash) : [] };
    }
    case 'cst': {
      const session = await tx.customerSession.findUnique({ where: { tokenHash }, include: { customer: { select: { organizationId: true } } } });
      if (!session) return { found: null, ended: [] };
      const { count } = await tx.customerSession.updateMany({ where: { id: session.id, revokedAt: null, expiresAt: { gt: now } }, data: { revokedAt: now } });
      return { found: { organizationId: session.customer.organizationId, tokenId: session.id, live: count > 0 }, ended: count > 0 ? [tokenHash] : [] };
    }
  }
}

const kindNames: Record<RevocableKind, string> = {
  oat: 'organization_access_token',
  pat: 'personal_access_token',
  us: 'user_session_token',
  at: 'oauth_access_token',
  rt: 'oauth_refresh_token',
  cst: 'customer_session_token',
};

/** Handles one signed report: verifies it, revokes what is live, records the events, labels every entry. */
export async function reportLeakedTokens(
  environment: Environment,
  request: { keyId: string | undefined; signature: string | undefined; body: Buffer; requestId: string },
  now: Date,
): Promise<ScanAnswer> {
  const keys = environment.config.secretScanningKeys;
  if (keys.length === 0) return refusal(404, 'NotFound', 'Secret scanning is not configured on this deployment (SECRET_SCANNING_PUBLIC_KEYS).');
  if (!checkSignature(keys, request.keyId, request.signature, request.body)) {
    return refusal(401, 'Unauthorized', 'The report must be signed: send Github-Public-Key-Identifier and Github-Public-Key-Signature (ECDSA P-256, SHA-256, base64 DER) over the exact body.');
  }
  const reports = parseReports(request.body);
  if (typeof reports === 'string') return { status: 422, body: { detail: [{ loc: ['body'], msg: reports, type: 'value_error' }] } };

  const prefix = environment.config.tokenPrefix;
  const labels: { token_hash: string; token_type: string; label: 'true_positive' | 'false_positive' }[] = [];
  const ended: string[] = [];
  await environment.prisma.$transaction(async (tx) => {
    for (const report of reports) {
      const tokenHash = hashToken(report.token);
      const kind = kindOf(report.token, prefix);
      let known = false;
      if (kind && (revocableKinds as readonly string[]).includes(kind)) {
        const revocable = kind as RevocableKind;
        const { found, ended: hashes } = await revokeLeaked(tx as Db, revocable, tokenHash, now);
        known = found !== null;
        ended.push(...hashes);
        if (found?.live && found.organizationId) {
          const ctx = systemContext(environment, tx as Db, found.organizationId, () => now, request.requestId);
          const data = tokenLeakWire({ tokenKind: kindNames[revocable], tokenId: found.tokenId, url: report.url, source: report.source, reportedType: report.type, revokedAt: now });
          await recordEvent(ctx, tx as Db, 'token.leaked', found.organizationId, found.tokenId, data);
        }
      }
      labels.push({ token_hash: tokenHash, token_type: report.type, label: known ? 'true_positive' : 'false_positive' });
    }
    if (ended.length) await announcePrincipalChange(tx as Db, ended);
  });
  environment.principals.forget(ended);
  return { status: 200, body: labels };
}
