// One response path object per field execution, as graphql-js gives resolvers.
//
// Execution is compiled by graphql-jit, which writes each resolver's `info.path` as a fresh object
// literal on every call, the whole chain up to the root. The Prisma plugin keys what it knows of a
// request by path object (which rows a query loaded, and under which field), and memoises each
// path's string form on that object: with a new chain per call, every row of every list rebuilt
// every string and filled a WeakMap with entries used once. It cost the products list more than
// its GraphQL execution did.
//
// This plugin hands the resolvers of fields that return objects (the only ones the Prisma plugin
// and its selections look at) a path interned per request: the same keys from the root give the
// same object, so each link is built once per request (a subscription's events share a context,
// so their paths are left alone). Listed before the Prisma plugin, so it runs first.
import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type PothosOutputFieldType, type SchemaTypes } from '@pothos/core';
import type { GraphQLFieldResolver, GraphQLResolveInfo } from 'graphql';

type ResponsePath = GraphQLResolveInfo['path'];

/** An interned link, with the links beneath it by key. */
interface Link {
  readonly prev: Link | undefined;
  readonly key: string | number;
  readonly typename: string | undefined;
  below?: Map<string | number, Link>;
}

/** The top links of each request's paths, by the request's context. */
const requests = new WeakMap<object, Map<string | number, Link>>();

function intern(path: ResponsePath | undefined, top: Map<string | number, Link>): Link | undefined {
  if (!path) return undefined;
  const prev = intern(path.prev, top);
  const siblings = prev ? (prev.below ??= new Map()) : top;
  let link = siblings.get(path.key);
  if (!link) {
    link = { prev, key: path.key, typename: path.typename };
    siblings.set(path.key, link);
  }
  return link;
}

function returnsObjects<Types extends SchemaTypes>(type: PothosOutputFieldType<Types>): boolean {
  if (type.kind === 'List') return returnsObjects(type.type);
  return type.kind === 'Object' || type.kind === 'Interface' || type.kind === 'Union';
}

export class StablePathsPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override wrapResolve(resolver: GraphQLFieldResolver<unknown, Types['Context'], object>, fieldConfig: PothosOutputFieldConfig<Types>) {
    if (!returnsObjects(fieldConfig.type)) return resolver;
    return (parent: unknown, args: object, context: Types['Context'], info: GraphQLResolveInfo) => {
      // A subscription runs once per event with one context: its paths are left as they come.
      if (info.operation.operation === 'subscription') return resolver(parent, args, context, info);
      let top = requests.get(context as object);
      if (!top) {
        top = new Map();
        requests.set(context as object, top);
      }
      // Every call gets an info object of its own (graphql-jit and graphql-js both build one per
      // field execution), so it is given its interned path in place rather than copied.
      (info as { path: ResponsePath }).path = intern(info.path, top) as ResponsePath;
      return resolver(parent, args, context, info);
    };
  }
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      stablePaths: StablePathsPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin('stablePaths', StablePathsPlugin);
export default 'stablePaths' as const;
