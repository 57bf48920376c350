// A resource in its REST representation, produced by running the GET route's own operation, so
// an event's `data` is always exactly what a GET of the resource returns at that moment.
//
// The schema and the route table are loaded on first use: services import this module, and the
// schema imports the services, so a static import would hand some modules a half-built schema.
import { execute, type ExecutionResult } from 'graphql';
import { systemContext, type Context } from '../context.ts';
import type { Db } from '../db/client.ts';
import { compileRoutes, resultAt } from './adapter.ts';
import { compileRoute, type CompiledRoute } from './routes.ts';
import { toWire } from './wire.ts';

let getRoutes: Map<string, CompiledRoute> | undefined;
const operations = new Map<string, CompiledRoute>();

/**
 * Renders `route` (e.g. `GET /v1/customers/{id}`) for an organization, reading through `db` —
 * pass the transaction that made the change so the rendering sees it.
 */
export async function renderWire(
  ctx: Context,
  db: Db,
  organizationId: string,
  route: string | { operation: string },
  variables: Record<string, unknown>,
): Promise<unknown> {
  const [{ schema }, { restRoutes }] = await Promise.all([import('../graphql/schema.ts'), import('./table.ts')]);
  getRoutes ??= new Map(compileRoutes(schema, restRoutes).filter((r) => r.method === 'GET').map((r) => [`GET ${r.path}`, r]));
  let compiled: CompiledRoute | undefined;
  if (typeof route === 'string') compiled = getRoutes.get(route);
  else {
    compiled = operations.get(route.operation) ?? compileRoute(schema, { method: 'GET', path: '/', operation: route.operation });
    operations.set(route.operation, compiled);
  }
  if (!compiled) throw new Error(`No GET route ${String(route)} to render with`);
  const contextValue = systemContext(ctx.environment, db, organizationId, ctx.now, ctx.requestId);
  const result = (await execute({ schema, document: compiled.document, variableValues: variables, contextValue })) as ExecutionResult;
  if (result.errors?.length) throw result.errors[0];
  return toWire(resultAt(result.data, compiled.resultPath), compiled.shape);
}
