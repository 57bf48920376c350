// Clients that go away mid-request: one that sends half a body and vanishes, one that aborts a
// GraphQL request or an OAuth form while sending it, one that drops a large download halfway. None
// of them is a fault of the server: it logs each at debug ("client disconnected"), never at error,
// writes nothing more to the dead socket, and goes on answering everyone else.
import { once } from 'node:events';
import { connect } from 'node:net';
import { randomBytes } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { fileDownloadLink } from '../../src/modules/files/service.ts';
import { uploadFile } from '../helpers/files.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually, sleep } from '../helpers/waiting.ts';

const t = useTestServer({ env: { LOG_LEVEL: 'debug' }, organizations: { org: 'production' } });

const parsedLogs = () => t.server.logs.map((line) => JSON.parse(line) as { level: number; msg: string; status?: number });
/** pino's levels: 50 is error, 60 fatal. */
const errorLines = () => parsedLogs().filter((line) => line.level >= 50);
const disconnectLines = () => parsedLogs().filter((line) => line.msg === 'client disconnected');

/**
 * Opens a connection, sends `head` and the first part of a body it announced as longer, waits for
 * the server to start reading, then resets the connection as a crashed or killed client does.
 */
async function vanishMidBody(method: string, path: string, headers: Record<string, string>, partialBody: string): Promise<void> {
  const socket = connect(Number(new URL(t.server.url).port), '127.0.0.1');
  await once(socket, 'connect');
  const lines = [`${method} ${path} HTTP/1.1`, 'host: 127.0.0.1', 'content-length: 4000', ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`)];
  socket.write(`${lines.join('\r\n')}\r\n\r\n${partialBody}`);
  await sleep(200);
  socket.resetAndDestroy();
}

/** The server still answers: its health, and a real request of the organization. */
async function stillServing() {
  expect((await fetch(`${t.server.url}/healthz`)).status).toBe(200);
  expect((await t.org.api('GET', '/products/')).status).toBe(200);
}

describe('a client that disconnects', () => {
  test('while sending a REST body, a GraphQL request or an OAuth form is logged at debug, not as an error', async () => {
    const before = disconnectLines().length;
    await vanishMidBody('POST', '/v1/products/', { authorization: `Bearer ${t.org.token}`, 'content-type': 'application/json' }, '{"name":"Half a prod');
    await vanishMidBody('POST', '/v1/graphql', { authorization: `Bearer ${t.org.token}`, 'content-type': 'application/json' }, '{"query":"{ core { produ');
    await vanishMidBody('POST', '/v1/oauth2/token', { 'content-type': 'application/x-www-form-urlencoded' }, 'grant_type=authorization_co');
    await sleep(500);
    expect(errorLines()).toEqual([]);
    await eventually(async () => disconnectLines().length - before, (count) => count >= 3, 'the three disconnects to be logged');
    expect(parsedLogs().filter((line) => line.status === 500)).toEqual([]);
    for (const line of disconnectLines()) expect(line.level).toBe(20);
    await stillServing();
  });

  test('halfway through a large download is logged at debug, not as an error', async () => {
    const bytes = randomBytes(8 * 1024 * 1024);
    const file = await uploadFile(t.org, bytes, 'large.pdf');
    const link = await fileDownloadLink(t.server.kassa.environments.production.environment, { id: file.id }, new Date());
    const before = disconnectLines().length;
    // Reads the start of the answer, stops reading (the server's writes back up), then resets.
    const url = new URL(link.url);
    const socket = connect(Number(url.port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write(`GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
    const [start] = (await once(socket, 'data')) as [Buffer];
    expect(start.toString('latin1')).toMatch(/^HTTP\/1\.1 200/);
    socket.pause();
    await sleep(300);
    socket.resetAndDestroy();
    await sleep(500);
    expect(errorLines()).toEqual([]);
    await eventually(async () => disconnectLines().length - before, (count) => count >= 1, 'the dropped download to be logged');
    // A whole download still works.
    const whole = await fetch(link.url);
    expect(Buffer.from(await whole.arrayBuffer()).equals(bytes)).toBe(true);
    await stillServing();
  }, 120_000); // uploading the file is the slow part
});
