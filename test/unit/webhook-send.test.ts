// One webhook POST over a kept-alive connection: a receiver that closed the connection as it was
// reused (its idle timeout) is sent the request again, once, on a new connection, instead of the
// attempt failing with ECONNRESET and waiting minutes for its retry.
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAgents, send } from '../../src/webhooks/send.ts';

describe('send on a kept-alive connection', () => {
  let server: Server;
  let url: string;
  const requestsBySocket = new Map<Socket, number>();
  const bodies: string[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      const nth = (requestsBySocket.get(req.socket) ?? 0) + 1;
      requestsBySocket.set(req.socket, nth);
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        bodies.push(`${nth}:${Buffer.concat(chunks).toString()}`);
        // The second request on a connection finds it closed, as an idle timeout closes it.
        if (nth === 2) req.socket.destroy();
        else res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('is sent again on a new connection when the reused one is closed before any answer', async () => {
    const agents = newAgents();
    const options = { policy: 'local' as const, timeoutMs: 5000, agents };
    try {
      expect((await send(url, 'first', {}, options)).httpCode).toBe(204);
      const second = await send(url, 'second', {}, options);
      expect([second.httpCode, second.response]).toEqual([204, null]);
      // Dropped once on the reused connection, then answered on a new one.
      expect(bodies).toEqual(['1:first', '2:second', '1:second']);
    } finally {
      agents.http.destroy();
    }
  });

  it('is not sent again when a new connection fails: the attempt fails', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const result = await send(`http://127.0.0.1:${port}/`, 'x', {}, { policy: 'local', timeoutMs: 5000, agents: newAgents() });
    expect([result.httpCode, result.response]).toEqual([null, 'Connection failed: ECONNREFUSED']);
  });
});
