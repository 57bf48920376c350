// /healthz and /readyz, for operators: alive, and able to reach both environments' databases.
import { environmentNames } from '../../config.ts';
import type { RestResponse } from '../../rest/adapter.ts';
import type { EdgeEnvironments, EndpointHandler } from '../endpoints.ts';
import { send } from '../send.ts';

export const answerHealth: EndpointHandler<'health'> = async ({ res }) => send(res, { status: 200, body: { status: 'ok' } });

export function answerReadiness(deps: { environments: EdgeEnvironments; accepting(): boolean }): EndpointHandler<'readiness'> {
  async function readiness(): Promise<RestResponse> {
    if (!deps.accepting()) return { status: 503, body: { status: 'shutting_down' } };
    const checks = await Promise.all(
      environmentNames.map(async (name) => {
        try {
          await deps.environments[name].environment.prisma.$queryRaw`SELECT 1`;
          return [name, 'ok'] as const;
        } catch {
          return [name, 'unavailable'] as const;
        }
      }),
    );
    const ready = checks.every(([, state]) => state === 'ok');
    return { status: ready ? 200 : 503, body: { status: ready ? 'ready' : 'unavailable', databases: Object.fromEntries(checks) } };
  }
  return async ({ res }) => send(res, await readiness());
}
