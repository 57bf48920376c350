// OAuth 2.0 errors (RFC 6749 §5.2, RFC 7591 §3.2.2, RFC 6750 §3.1). Every refusal of the provider is
// one of these: a named error whose description says which rule was broken, never a silent fallback.
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'access_denied'
  | 'server_error'
  | 'invalid_token'
  | 'insufficient_scope'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'login_required'
  | 'consent_required'
  | 'request_not_supported'
  | 'request_uri_not_supported'
  | 'unsupported_token_type';

export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
    this.name = 'OAuthError';
  }

  toJSON() {
    return { error: this.error, error_description: this.description };
  }
}

export class InvalidRequest extends OAuthError {
  constructor(description: string) {
    super('invalid_request', description);
  }
}

/** Client authentication failed (unknown client, no or wrong credentials, wrong method): 401. */
export class InvalidClient extends OAuthError {
  constructor(description: string) {
    super('invalid_client', description, 401);
  }
}

export class InvalidGrant extends OAuthError {
  constructor(description: string) {
    super('invalid_grant', description);
  }
}

export class UnauthorizedClient extends OAuthError {
  constructor(description: string) {
    super('unauthorized_client', description);
  }
}

export class UnsupportedGrantType extends OAuthError {
  constructor(description: string) {
    super('unsupported_grant_type', description);
  }
}

export class UnsupportedResponseType extends OAuthError {
  constructor(description: string) {
    super('unsupported_response_type', description);
  }
}

export class InvalidScope extends OAuthError {
  constructor(description: string) {
    super('invalid_scope', description);
  }
}

export class AccessDenied extends OAuthError {
  constructor(description: string) {
    super('access_denied', description, 403);
  }
}

/** A bearer token that is missing, unknown, expired or revoked (RFC 6750 §3.1): 401. */
export class InvalidToken extends OAuthError {
  constructor(description: string) {
    super('invalid_token', description, 401);
  }
}

export class InvalidRedirectUri extends OAuthError {
  constructor(description: string) {
    super('invalid_redirect_uri', description);
  }
}

export class InvalidClientMetadata extends OAuthError {
  constructor(description: string) {
    super('invalid_client_metadata', description);
  }
}
