// Mutations run one after another, in the order the document gives them. GraphQL runs the fields
// of the Mutation root serially, but Kassa's mutations sit one level down, under `core` and
// `customerPortal`, where GraphQL would run them all at once: two dependent changes in one
// document would race. This plugin chains the resolvers of the two mutation surfaces per request,
// so each starts once the one before it has finished, failed or not: the document's second
// mutation sees what its first one committed.
import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import type { GraphQLFieldResolver } from 'graphql';

const surfaces = new Set(['CoreMutation', 'CustomerPortalMutation']);

/** The last mutation started in each request, by the request's context. */
const lastStarted = new WeakMap<object, Promise<unknown>>();

export class SerialMutationsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(resolver: GraphQLFieldResolver<unknown, Types['Context'], object>, fieldConfig: PothosOutputFieldConfig<Types>) {
    if (!surfaces.has(fieldConfig.parentType)) return resolver;
    return (parent: unknown, args: object, context: Types['Context'], info: Parameters<GraphQLFieldResolver<unknown, unknown>>[3]) => {
      const previous = lastStarted.get(context as object);
      const run = previous ? previous.then(() => resolver(parent, args, context, info)) : Promise.resolve().then(() => resolver(parent, args, context, info));
      // The next one waits for this one to settle, whatever its outcome.
      lastStarted.set(context as object, run.then(() => undefined, () => undefined));
      return run;
    };
  }
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      serialMutations: SerialMutationsPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin('serialMutations', SerialMutationsPlugin);
export default 'serialMutations' as const;
