// Every error a client can cause is a KassaError: a GraphQL error with `extensions.code` and the
// HTTP status it stands for. The REST adapter turns the same errors into the documented REST bodies.
import { GraphQLError } from 'graphql';

export type Loc = (string | number)[];
export interface ValidationIssue {
  loc: Loc;
  msg: string;
  type: string;
}

export class KassaError extends GraphQLError {
  constructor(
    message: string,
    /** `extensions.code` in GraphQL. */
    readonly code: string,
    /** The HTTP status, for REST and for GraphQL over HTTP. */
    readonly status: number,
    /** The `error` name in the REST body: `{"error": restError, "detail": message}`. */
    readonly restError: string,
    extra: Record<string, unknown> = {},
    /**
     * What the REST body carries besides `error` and `detail`, by wire name: for the few errors a
     * client acts on (a secret to finish a payment method's authentication with).
     */
    readonly restFields: Readonly<Record<string, string>> = {},
  ) {
    super(message, { extensions: { code, http: { status }, ...extra } });
  }
}

/** A kind of error a field may raise, as the REST reference lists it. */
export interface ErrorKind {
  code: string;
  status: number;
  restError: string;
  /** When it is raised, in a sentence. */
  description: string;
  /** The REST body's fields besides `error` and `detail`, if any. */
  restFields?: string[];
}

/**
 * A field's extensions naming the errors it raises besides those any field may (no token, not
 * permitted, not found, invalid input). Each is given as an error made by the service's own
 * factory, so its code, status and REST name are the ones the service throws.
 */
export function raises(...errors: { error: KassaError; when: string }[]): { errors: ErrorKind[] } {
  return {
    errors: errors.map(({ error, when }) => ({
      code: error.code,
      status: error.status,
      restError: error.restError,
      description: when,
      ...(Object.keys(error.restFields).length ? { restFields: Object.keys(error.restFields) } : {}),
    })),
  };
}

export class UnauthenticatedError extends KassaError {
  constructor(message = 'Authentication required: send a valid access token as "Authorization: Bearer <token>".') {
    super(message, 'UNAUTHENTICATED', 401, 'Unauthorized');
  }
}

export class NotPermittedError extends KassaError {
  constructor(message = 'You are not permitted to perform this action.') {
    super(message, 'NOT_PERMITTED', 403, 'NotPermitted');
  }
}

export class ResourceNotFoundError extends KassaError {
  constructor(message = 'Not found') {
    super(message, 'RESOURCE_NOT_FOUND', 404, 'ResourceNotFound');
  }
}

/** Bad input, with the location of each problem (the loc is in GraphQL argument names). */
export class RequestValidationError extends KassaError {
  constructor(readonly issues: ValidationIssue[]) {
    super(issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '), 'BAD_USER_INPUT', 422, 'RequestValidationError', { issues });
  }

  static at(loc: Loc, msg: string, type = 'value_error'): RequestValidationError {
    return new RequestValidationError([{ loc, msg, type }]);
  }
}

/** Collects validation problems so a request hears about all of them at once. */
export class ValidationIssues {
  readonly list: ValidationIssue[] = [];
  add(loc: Loc, msg: string, type = 'value_error'): void {
    this.list.push({ loc, msg, type });
  }
  throwIfAny(): void {
    if (this.list.length) throw new RequestValidationError(this.list);
  }
}
