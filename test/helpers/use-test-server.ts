// The setup most end-to-end files share: one server for the file (or for a describe block),
// started before its tests and closed after them, and the organizations its tests use.
//
//   const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { org: 'sandbox', other: 'sandbox' } });
//   it('…', async () => { await t.org.api('GET', '/products/'); t.server.clock.now = …; });
//
// Registers a beforeAll (start the server, stop the sandbox's job runner if asked, set the clock if
// asked, then make the organizations one after the other, in the order named) and an afterAll
// (close the server), plus an afterEach when the clock is to be reset. Hooks the file registers
// after this call run after its beforeAll and before its afterAll, so the server is up for them
// and still up when they clean up. Anything else a file needs it sets up in its own hooks.
import { afterAll, afterEach, beforeAll } from 'vitest';
import type { EnvironmentName } from '../../src/config.ts';
import { newOrganization, type Org } from './organizations.ts';
import { startTestServer, type TestServer } from './server.ts';

export interface TestServerOptions<Name extends string> {
  /** Settings for `startTestServer`, as environment variables, over its defaults. */
  env?: Record<string, string>;
  /** Stop the sandbox's background job runner once the server is up: the tests run due work themselves. */
  stopSandboxJobs?: boolean;
  /** The time the server's clock is set to once it is up, before any organization is made. */
  clock?: Date;
  /** Organizations to make once the server is up, by the name the handle gives them: each with its environment. */
  organizations?: Record<Name, EnvironmentName>;
  /** Set the server's clock back to the real time after each test. */
  resetClockAfterEach?: boolean;
}

/** The server and the organizations, readable once the beforeAll has run (in hooks and tests, not while the file is collected). */
export type TestServerHandle<Name extends string> = { readonly server: TestServer } & { readonly [N in Name]: Org };

export function useTestServer<const Name extends string = never>(options: TestServerOptions<Name> = {}): TestServerHandle<Name> {
  const { env = {}, stopSandboxJobs = false, clock, resetClockAfterEach = false } = options;
  const organizations = Object.entries<EnvironmentName>(options.organizations ?? ({} as Record<Name, EnvironmentName>));
  if (organizations.some(([name]) => name === 'server')) throw new Error('useTestServer: "server" names the server; give the organization another name');

  let server: TestServer | undefined;
  const orgs = new Map<string, Org>();
  beforeAll(async () => {
    server = await startTestServer(env);
    if (stopSandboxJobs) await server.kassa.environments.sandbox.jobs.stop();
    if (clock) server.clock.now = clock;
    for (const [name, environment] of organizations) orgs.set(name, await newOrganization(server, environment));
  });
  afterAll(() => server?.close());
  if (resetClockAfterEach) {
    afterEach(() => {
      if (server) server.clock.now = null;
    });
  }

  const notReady = (name: string) =>
    new Error(`useTestServer: ${name} is not there: it is made in beforeAll, so read it in a hook or a test (or see why beforeAll failed)`);
  const handle = {
    get server(): TestServer {
      if (!server) throw notReady('the server');
      return server;
    },
  };
  for (const [name] of organizations) {
    Object.defineProperty(handle, name, {
      enumerable: true,
      get(): Org {
        const org = orgs.get(name);
        if (!org) throw notReady(`organization "${name}"`);
        return org;
      },
    });
  }
  return handle as TestServerHandle<Name>;
}
