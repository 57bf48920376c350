// A webhook receiver on 127.0.0.1, as an integrator would run one: it verifies every request with
// the official client's `validateEvent` (or, for Discord and Slack messages, which are not events,
// with the `standardwebhooks` verifier it uses) and answers as the test tells it to.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { validateEvent } from '@polar-sh/sdk/webhooks';
import { Webhook } from 'standardwebhooks';

export interface Receipt {
  /** The `webhook-id` header. */
  id: string;
  headers: Record<string, string>;
  body: string;
  /** The event as `validateEvent` parsed it (or the verified JSON for chat formats); null when refused. */
  event: any;
  /** Why the verifier refused the request; null when it verified. */
  refused: string | null;
  /** When it arrived (real time). */
  at: number;
}

/** What the receiver does with a request: answer with a status (and body), or hang without answering. */
export type Answer = number | { status: number; body: string } | 'hang';

export interface Receiver {
  url: string;
  /** The signing secret the receiver verifies with (the endpoint's). */
  secret: string;
  receipts: Receipt[];
  /** Decides each answer; `nth` counts the requests with this webhook-id so far, from 1. Default 200. */
  answer: (receipt: Receipt, nth: number) => Answer;
  /** The receipts of one webhook-id. */
  of(id: string): Receipt[];
  /** Requests held without an answer. */
  hanging: ServerResponse[];
  close(): Promise<void>;
}

export async function startReceiver(verify: 'event' | 'signature' = 'event'): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    secret: '',
    receipts: [],
    answer: () => 200,
    of: (id) => receiver.receipts.filter((r) => r.id === id),
    hanging: [],
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    const receipt: Receipt = { id: headers['webhook-id'], headers, body, event: null, refused: null, at: Date.now() };
    try {
      receipt.event =
        verify === 'event' ? validateEvent(body, headers, receiver.secret) : new Webhook(Buffer.from(receiver.secret, 'utf8').toString('base64')).verify(body, headers);
    } catch (error) {
      receipt.refused = error instanceof Error ? `${error.constructor.name}: ${error.message}` : String(error);
    }
    receiver.receipts.push(receipt);
    const answer = receiver.answer(receipt, receiver.of(receipt.id).length);
    if (answer === 'hang') {
      receiver.hanging.push(res);
      return;
    }
    const { status, body: text } = typeof answer === 'number' ? { status: answer, body: status2xx(answer) ? 'ok' : 'not now' } : answer;
    res.writeHead(status, { 'content-type': 'text/plain' }).end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

const status2xx = (status: number) => status >= 200 && status < 300;
