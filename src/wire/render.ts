// Renders a resource by name and id, as its documented JSON, by running its operation
// (wire/resources.ts) against the schema as Kassa itself, for the resource's organization.
//
// The renderer is built where the schema is composed (server.ts) and handed to each environment,
// so the services that record events never import the schema that imports them.
import {
  execute,
  getNamedType,
  isCompositeType,
  Kind,
  parse,
  validate,
  type DocumentNode,
  type ExecutionResult,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { systemContext, type Context } from '../context.ts';
import type { Db } from '../db/client.ts';
import { toWire, wireShape, type WireShape } from './shape.ts';
import { wireResources, type WireResource } from './resources.ts';

/** The JSON of `resource` `id`, read through `db` (the transaction that made the change sees it). */
export type WireRenderer = (ctx: Context, db: Db, organizationId: string, resource: WireResource, id: string) => Promise<unknown>;

interface Compiled {
  document: DocumentNode;
  /** The response keys down to the resource: the surface root, then its field. */
  path: [string, string];
  shape: WireShape | null;
}

export function createWireRenderer(schema: GraphQLSchema): WireRenderer {
  // Compiled once each, at start: an operation the schema refuses stops the start.
  const compiled = Object.fromEntries(Object.entries(wireResources).map(([name, operation]) => [name, compile(schema, name, operation)])) as Record<WireResource, Compiled>;
  return async (ctx, db, organizationId, resource, id) => {
    const { document, path, shape } = compiled[resource];
    const contextValue = systemContext(ctx.environment, db, organizationId, ctx.now, ctx.requestId);
    const result = (await execute({ schema, document, variableValues: { id }, contextValue })) as ExecutionResult;
    if (result.errors?.length) throw result.errors[0];
    const data = result.data as Record<string, Record<string, unknown> | null> | null | undefined;
    return toWire(data?.[path[0]]?.[path[1]], shape);
  };
}

function compile(schema: GraphQLSchema, name: string, operation: string): Compiled {
  const document = parse(operation);
  const errors = validate(schema, document);
  if (errors.length) throw new Error(`wire resource ${name}: ${errors.map((e) => e.message).join('; ')}`);
  const definition = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const fragments = Object.fromEntries(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );
  const surface = definition.selectionSet.selections[0] as FieldNode;
  const field = surface.selectionSet!.selections[0] as FieldNode;
  const surfaceType = getNamedType(schema.getQueryType()!.getFields()[surface.name.value].type) as GraphQLObjectType;
  const type = getNamedType(surfaceType.getFields()[field.name.value].type);
  const shape = field.selectionSet && isCompositeType(type) ? wireShape(schema, type, field.selectionSet, fragments) : null;
  return { document, path: [surface.alias?.value ?? surface.name.value, field.alias?.value ?? field.name.value], shape };
}
