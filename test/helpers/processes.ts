// `kassa serve` as an operator starts it: a separate Node process, configured by its environment.
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

export const kassaBin = path.resolve('src/kassa.js');

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  exited: Promise<number | null>;
}

/** Starts `kassa serve` on a free port and resolves once it says where it listens. */
export function serveProcess(env: Record<string, string>): Promise<ServeProcess> {
  const child = spawn(process.execPath, [kassaBin, 'serve'], { env: { ...process.env, PORT: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      output += d;
      const line = output.split('\n').find((l) => l.includes('Kassa is listening'));
      if (line) resolve({ child, url: JSON.parse(line).url, output: () => output, exited });
    });
    child.stderr!.on('data', (d) => (output += d));
    child.on('close', (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
  });
}
