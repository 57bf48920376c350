// Global object identification (Relay's Node): every resource a token can look up by id
// implements `Node`, and `node(id:)` / `nodes(ids:)` at the query root fetch any of them by id.
// A resource's id is already globally unique (a random UUID, never reused across tables), so it is
// its global id; clients treat it as opaque.
//
// Each resource exports a loader beside its own lookup, with that lookup's scopes and function,
// so `node(id:)` reaches exactly what the resource's own lookup reaches: the same organizations,
// the same environment (each has its own database), the same customer. graphql/schema.ts lists the
// loaders and hands them to `nodeFields`. Which resource an id names is found by asking each listed
// table whether it holds the id; the resource's own (scoped) lookup then decides whether the caller
// may see it. An id the caller may not see, in another
// organization, another customer's or nobody's, gets the same RESOURCE_NOT_FOUND.
import { queryFromInfo } from '@pothos/plugin-prisma';
import type { GraphQLResolveInfo } from 'graphql';
import type { Context } from '../context.ts';
import type { Scope } from '../auth/scopes.ts';
import { builder, canonicalUuidOrNull, holdsAnyScope, missingScope } from './builder.ts';
import { NotPermittedError, RequestValidationError, ResourceNotFoundError, UnauthenticatedError } from './errors.ts';

/** Which surface a loader serves: organization tokens (`core`) or a signed-in customer. */
export type NodeSurface = 'core' | 'customerPortal';

/** The Prisma delegates a node can live in. */
type NodeModel = 'product' | 'customer' | 'order' | 'subscription' | 'checkout' | 'refund' | 'dispute' | 'payment' | 'benefit' | 'benefitGrant' | 'licenseKey' | 'webhookEndpoint' | 'organization' | 'discount' | 'checkoutLink' | 'meter' | 'usageEvent' | 'customField' | 'customerMeter';

export interface NodeLoader {
  surface: NodeSurface;
  /** The table whose ids this loader answers for. */
  model: NodeModel;
  /** The GraphQL type (object or interface) the loader returns. */
  typeName: string;
  /** The scopes of the resource's own lookup: the token must hold one of them. */
  scopes?: readonly Scope[];
  /** The resource's own lookup; throws ResourceNotFoundError when the caller does not reach it. */
  load(ctx: Context, id: string, query: object): Promise<object>;
  /** The object type of a loaded row, when `typeName` is an interface. */
  objectType?(row: object): string | undefined;
}

/** The type a node resolver found, carried on the row for `Node.resolveType`. */
const nodeType = Symbol('nodeType');

export const Node = builder.interfaceRef<object>('Node').implement({
  description: 'A resource that can be fetched by its id alone, with node(id:) or nodes(ids:) at the query root.',
  fields: (t) => ({
    id: t.id({ description: 'The global id: unique across every type; treat it as opaque.', resolve: (node) => (node as { id: string }).id }),
  }),
  resolveType: (node) => (node as { [nodeType]?: string })[nodeType],
});

export const maxNodes = 100;

/** An id as the tables hold it: a UUID in either case is lowercased, as the UUID scalar does; anything else is kept, to be not found. */
function asNodeId(id: string | number): string {
  const text = String(id);
  return canonicalUuidOrNull(text) ?? text;
}

function surfaceOf(ctx: Context): NodeSurface {
  switch (ctx.principal.kind) {
    case 'anonymous':
      throw new UnauthenticatedError();
    case 'customer':
      return 'customerPortal';
    default:
      return 'core';
  }
}

/** Which of `loaders` holds each id: one indexed query per table, whatever the number of ids. */
async function locate(ctx: Context, ids: string[], candidates: NodeLoader[]): Promise<Map<string, NodeLoader>> {
  const found = new Map<string, NodeLoader>();
  const canonical = ids.filter((id) => canonicalUuidOrNull(id) === id);
  if (!canonical.length) return found;
  const models = [...new Set(candidates.map((loader) => loader.model))];
  const owners = await Promise.all(
    models.map(async (model) => {
      const delegate = ctx.prisma[model] as unknown as { findMany(args: object): Promise<{ id: string }[]> };
      return { model, rows: await delegate.findMany({ where: { id: { in: canonical } }, select: { id: true } }) };
    }),
  );
  for (const { model, rows } of owners) {
    const loader = candidates.find((candidate) => candidate.model === model)!;
    for (const row of rows) found.set(row.id, loader);
  }
  return found;
}

async function loadNode(ctx: Context, id: string, loader: NodeLoader | undefined, info: GraphQLResolveInfo): Promise<object> {
  if (!loader) throw new ResourceNotFoundError(`No node has the id ${JSON.stringify(id.slice(0, 64))}.`);
  // The lookup decides first, so a missing scope is told only of what the caller's organization holds.
  const query = queryFromInfo({ context: ctx, info, typeName: loader.typeName });
  const row = await loader.load(ctx, id, query).catch((error: unknown) => {
    if (error instanceof ResourceNotFoundError) throw new ResourceNotFoundError(`No node has the id ${JSON.stringify(id)}.`);
    throw error;
  });
  if (loader.scopes && !holdsAnyScope(ctx.principal, loader.scopes)) throw new NotPermittedError(missingScope(loader.scopes));
  const typename = loader.objectType?.(row) ?? loader.typeName;
  return Object.assign(row, { [nodeType]: typename });
}

/** `node(id:)` and `nodes(ids:)` at the query root, answered by `loaders`: one per resource and surface. */
export function nodeFields(loaders: readonly NodeLoader[]): void {
  builder.queryFields((t) => ({
    node: t.field({
      type: Node,
      nullable: true,
      description:
        "Any resource by its id, as the resource's own lookup would answer it: null with RESOURCE_NOT_FOUND for an id the token does not reach. An organization's token reaches Core types, a customer's their portal types.",
      args: { id: t.arg.id({ required: true, description: 'The global id of the resource.' }) },
      resolve: async (_root, { id }, ctx, info) => {
        const surface = surfaceOf(ctx);
        const candidates = loaders.filter((loader) => loader.surface === surface);
        const text = asNodeId(id);
        const located = await locate(ctx, [text], candidates);
        return loadNode(ctx, text, located.get(text), info);
      },
    }),
    nodes: t.field({
      type: [Node],
      nullable: { list: true, items: true },
      description: `Up to ${maxNodes} resources by their ids, in the order asked; each one the token does not reach is null, with RESOURCE_NOT_FOUND at its index.`,
      args: { ids: t.arg.idList({ required: true, description: `The global ids, at most ${maxNodes}.` }) },
      resolve: async (_root, { ids }, ctx, info) => {
        const surface = surfaceOf(ctx);
        if (ids.length > maxNodes) throw RequestValidationError.at(['ids'], `List should have at most ${maxNodes} items after validation, not ${ids.length}`, 'too_long');
        const texts = ids.map(asNodeId);
        const candidates = loaders.filter((loader) => loader.surface === surface);
        const located = await locate(ctx, texts, candidates);
        // Each item fails on its own: an error in the list is null with the error at its index.
        const settled = await Promise.allSettled(texts.map((text) => loadNode(ctx, text, located.get(text), info)));
        return settled.map((result) => (result.status === 'fulfilled' ? result.value : (result.reason as Error)));
      },
    }),
  }));
}
