import { pino, type Logger } from 'pino';
import { AsyncLocalStorage } from 'node:async_hooks';
import type { EnvironmentName } from './config.ts';

export type { Logger };

/** Request-scoped values the logger stamps on every line written while serving the request. */
export const requestScope = new AsyncLocalStorage<{ requestId: string; environment: EnvironmentName }>();


/**
 * Anything shaped like a secret Kassa issues (`<prefix>_<kind>_<36 base62>`): tokens, session
 * tokens, codes, client and webhook secrets; and checkouts' client secrets (`<prefix>_c_<32
 * base64url>`), which appear in request paths. Client ids (`_ci_`) are public and kept. No word
 * boundary is required: a token glued to other characters (`token%3D…`) is still found.
 */
const secretShape = /([a-z][a-z0-9]{1,15})_(oat|us|pat|cst|whs|at|rt|ac|cs|rat)_[0-9A-Za-z]{36}/g;
const checkoutSecretShape = /([a-z][a-z0-9]{1,15})_c_[A-Za-z0-9_-]{32}/g;

/** A log line with every secret-shaped string replaced, wherever it is: message, error, nested field. */
export function scrubSecrets(line: string): string {
  return line.replace(secretShape, '$1_$2_[redacted]').replace(checkoutSecretShape, '$1_c_[redacted]');
}

// Every line written while a request is served carries its request id. Credentials never reach the
// log: headers that carry them are redacted by path, and every finished line is scrubbed of
// anything shaped like a Kassa secret before it is written.
export function createLogger(level: string, destination: pino.DestinationStream = pino.destination(1)): Logger {
  return pino(
    {
      level,
      base: { service: 'kassa' },
      mixin: () => {
        const scope = requestScope.getStore();
        return scope ? { requestId: scope.requestId, environment: scope.environment } : {};
      },
      redact: {
        paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', 'headers.cookie', '*.password', 'password', 'token', '*.client_secret', 'client_secret', '*.secret', 'secret'],
        censor: '[redacted]',
      },
    },
    { write: (line: string) => destination.write(scrubSecrets(line)) },
  );
}
