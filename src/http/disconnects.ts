// A client that goes away mid-request (a closed tab, a dropped network, an aborted fetch) is no
// fault of the server. Its traces are recognised here, so that they are logged as what they are,
// at debug, and nothing more is written to a socket that is gone. An error counts as a disconnect
// only when it has a disconnect's shape and the request's own connection is closed: a reset of a
// database or Redis connection while the client waits is still an unexpected error.
import type { IncomingMessage, ServerResponse } from 'node:http';

const disconnectCodes = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_UNABLE_TO_PIPE']);

/** Whether the error, or an error it wraps, is the kind a vanished peer leaves: a reset, a broken pipe, an aborted body. */
export function looksLikeDisconnect(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as NodeJS.ErrnoException).code;
    if ((code && disconnectCodes.has(code)) || current.message === 'aborted' || current.name === 'AbortError') return true;
  }
  return false;
}

/** Whether the client of this request has closed its connection (or the server has, for it). */
export function clientGone(req: IncomingMessage, res: ServerResponse): boolean {
  return res.destroyed || req.socket?.destroyed !== false || (req.destroyed && !req.complete);
}

/** Whether `error` is the client of this request disconnecting, not a fault of the server. */
export function isClientDisconnect(error: unknown, req: IncomingMessage, res: ServerResponse): boolean {
  return clientGone(req, res) && looksLikeDisconnect(error);
}
