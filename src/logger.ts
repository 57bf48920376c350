import { pino, type Logger } from 'pino';
import { requestScope } from './context.ts';

export type { Logger };

// Every line written while a request is served carries its request id. Credentials never reach the
// log: headers that carry them are redacted wherever they appear.
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'kassa' },
      mixin: () => {
        const scope = requestScope.getStore();
        return scope ? { requestId: scope.requestId, environment: scope.environment } : {};
      },
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'headers.authorization', '*.password', 'password', 'token'], censor: '[redacted]' },
    },
    destination,
  );
}
