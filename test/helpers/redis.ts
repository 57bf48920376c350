// A redis-server of the test's own, on a free loopback port, nothing kept on disk. .ci/run installs
// Debian's redis-server; a machine without it fails the tests that need one, it does not skip them.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { eventually } from './waiting.ts';

export const hasRedis = (() => {
  try {
    execFileSync('which', ['redis-server'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export interface TestRedis {
  url: string;
  stop(): void;
}

export async function startRedis(): Promise<TestRedis> {
  if (!hasRedis) throw new Error('redis-server is missing: install the Debian package "redis-server", as .ci/run does.');
  const port = await freePort();
  const child: ChildProcess = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const url = `redis://127.0.0.1:${port}`;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on('error', () => {}); // refused until redis-server listens
  await eventually(() => probe.connect().then(() => true, () => false), (ok) => ok, 'redis-server to start', 5000);
  probe.disconnect();
  return { url, stop: () => child.kill() };
}
