// How many live event streams (GraphQL over SSE) may be open at once: at most `perPrincipal` for
// one holder and `perProcess` in all. A stream holds its connection, a subscription and memory for
// as long as it lasts, so an unbounded number of them would let one token exhaust the process.
// A slot is taken before the stream is answered and given back when its response closes, however
// it closes: the client ends it, disconnects abruptly, or the server ends it. Counts are this
// process's own; each process behind a load balancer enforces its own.
import type { EnvironmentName, LiveStreamLimits } from '../config.ts';
import type { Principal } from '../context.ts';
import { addressKey } from '../rate-limits/address-key.ts';

/** Who a stream is counted against: `key` to count by, `subject` to name it in a refusal. */
export interface StreamHolder {
  key: string;
  subject: string;
}

export type StreamSlot = { granted: true; release(): void } | { granted: false; limit: 'principal' | 'process'; max: number; subject: string };

/**
 * The holder of a stream opened with `principal`: the organization of an organization-scoped
 * token (its access tokens and OAuth tokens share), the user of a session, personal or
 * user-scoped OAuth token, the customer of a customer session, or else the client address.
 */
export function streamHolder(environment: EnvironmentName, principal: Principal, clientIp: string): StreamHolder {
  switch (principal.kind) {
    case 'organization':
    case 'system':
      return { key: `${environment}:organization:${principal.organizationId}`, subject: 'organization' };
    case 'user':
      return { key: `${environment}:user:${principal.userId}`, subject: 'user' };
    case 'customer':
      return { key: `${environment}:customer:${principal.customerId}`, subject: 'customer' };
    default:
      return { key: `address:${addressKey(clientIp)}`, subject: 'client address' };
  }
}

export class StreamSlots {
  private total = 0;
  private readonly byHolder = new Map<string, number>();

  constructor(readonly limits: LiveStreamLimits) {}

  /** A slot for one more stream of `holder`, or the limit that refuses it. `release` is safe to call more than once. */
  take(holder: StreamHolder): StreamSlot {
    const held = this.byHolder.get(holder.key) ?? 0;
    if (held >= this.limits.perPrincipal) return { granted: false, limit: 'principal', max: this.limits.perPrincipal, subject: holder.subject };
    if (this.total >= this.limits.perProcess) return { granted: false, limit: 'process', max: this.limits.perProcess, subject: 'server' };
    this.total++;
    this.byHolder.set(holder.key, held + 1);
    let released = false;
    return {
      granted: true,
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        const left = (this.byHolder.get(holder.key) ?? 1) - 1;
        if (left > 0) this.byHolder.set(holder.key, left);
        else this.byHolder.delete(holder.key);
      },
    };
  }

  /** Streams open now: in all, or of one holder. */
  open(holder?: StreamHolder): number {
    return holder ? (this.byHolder.get(holder.key) ?? 0) : this.total;
  }
}

/** The 429 answer to a refused stream, in GraphQL's shape, saying which limit and what to do. */
export function streamRefusal(refused: Extract<StreamSlot, { granted: false }>): { status: number; body: unknown } {
  const message =
    refused.limit === 'principal'
      ? `Too many open event streams: at most ${refused.max} per ${refused.subject} may be open at once. Close a stream you no longer read (end its request), or share one stream between consumers, then open this one again.`
      : `Too many open event streams on this server: at most ${refused.max} may be open at once. Retry in a while, or through another server.`;
  return {
    status: 429,
    body: { errors: [{ message, extensions: { code: 'TOO_MANY_STREAMS', limit: { name: refused.limit === 'principal' ? 'streams_per_principal' : 'streams_per_process', max: refused.max } } }] },
  };
}
