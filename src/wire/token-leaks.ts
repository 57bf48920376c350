// The documented JSON of a leaked token, the `token.leaked` event's data: which token was
// reported, where it was found, and when Kassa revoked it. No GraphQL type or GET route returns
// it; it exists only as this event.
export interface TokenLeak {
  /** What the token was: `organization_access_token`, `oauth_refresh_token`, … */
  tokenKind: string;
  tokenId: string;
  /** Where the token was found, as the report says. */
  url: string | null | undefined;
  source: string | null | undefined;
  /** The token type the reporter matched. */
  reportedType: string;
  revokedAt: Date;
}

export function tokenLeakWire(leak: TokenLeak): Record<string, unknown> {
  return {
    token_kind: leak.tokenKind,
    token_id: leak.tokenId,
    url: leak.url,
    source: leak.source,
    reported_type: leak.reportedType,
    revoked_at: leak.revokedAt.toISOString(),
  };
}
