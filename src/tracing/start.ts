// Starts tracing for `kassa serve` before the application's modules load, so the instrumentations
// see `node:http`, `pg` and `graphql` as they are imported: the import-in-the-middle loader hook
// is registered (wrapping only the modules an instrumentation asked for), then the SDK starts.
// When the settings leave traces off, neither the hook nor the SDK is loaded.
import { register } from 'node:module';
import { tracingSettings, type Env } from './settings.ts';

let running: { shutdown(): Promise<void> } | null = null;

/** Whether the command serves requests: the only one traced. */
const serves = (argv: readonly string[]) => argv.length === 0 || argv[0] === 'serve';

/** Starts tracing when the command is `serve` and the settings turn it on; returns whether it did. */
export async function startTracing(argv: readonly string[], env: Env): Promise<boolean> {
  if (!serves(argv)) return false;
  let settings;
  try {
    settings = tracingSettings(env, (variable, problem) => {
      throw new Error(`${variable} ${problem}`);
    });
  } catch {
    // loadConfig reports the variable and stops the process before it serves anything.
    return false;
  }
  if (!settings) return false;
  const { createAddHookMessageChannel } = await import('import-in-the-middle');
  const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
  register('import-in-the-middle/hook.mjs', import.meta.url, registerOptions);
  const { startSdk } = await import('./sdk.ts');
  running = startSdk(settings);
  await waitForAllMessagesAcknowledged();
  return true;
}

/** Exports the spans still buffered and stops the SDK; nothing when tracing is off. */
export async function stopTracing(): Promise<void> {
  const sdk = running;
  running = null;
  await sdk?.shutdown();
}
