// Partial data: one failure costs only its own field. Every field of the operation roots (`Query`,
// `Mutation`) and of the two API surfaces (`core` and `customerPortal`, for queries and mutations)
// is nullable. A lookup of an unknown id, a list refused for a bad argument, a mutation that fails,
// or a surface the token may not reach answers `null` at its path with an error there
// (`extensions.code`), and its siblings keep their data: the first mutation of a document keeps its
// committed result when the second fails. This is GitHub's convention (null plus an error at the
// path), rather than payload types with `userErrors`; docs/graphql.md describes it.
//
// Fields deeper down stay non-null: a product's prices cannot fail apart from the product.
import SchemaBuilder, { BasePlugin, type PothosOutputFieldConfig, type SchemaTypes } from '@pothos/core';
import { GraphQLError, type ExecutionResult } from 'graphql';
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import { graphqlAnswerType } from './media-types.ts';

/** The types whose fields are each their own unit of failure. */
export const failureBoundaries: ReadonlySet<string> = new Set([
  'Query',
  'Mutation',
  'CoreQuery',
  'CoreMutation',
  'CustomerPortalQuery',
  'CustomerPortalMutation',
]);

export class PartialDataPlugin<Types extends SchemaTypes> extends BasePlugin<Types> {
  override onOutputFieldConfig(fieldConfig: PothosOutputFieldConfig<Types>): PothosOutputFieldConfig<Types> {
    if (!failureBoundaries.has(fieldConfig.parentType) || fieldConfig.type.nullable) return fieldConfig;
    return { ...fieldConfig, type: { ...fieldConfig.type, nullable: true } };
  }
}

declare global {
  export namespace PothosSchemaTypes {
    export interface Plugins<Types extends SchemaTypes> {
      partialData: PartialDataPlugin<Types>;
    }
  }
}

SchemaBuilder.registerPlugin('partialData', PartialDataPlugin);
export default 'partialData' as const;

/**
 * The HTTP status of an answer that holds data is 200, whatever failed beside it: a client reads
 * the errors at their paths. Under `application/json`, an answer that holds nothing (every field
 * null down to the first value: a token the surface refuses, a lone lookup of an unknown id, a
 * lone mutation refused) keeps the status of its errors, so a missing token is still a 401 with
 * its `WWW-Authenticate` challenge and a refused input a 422. Under
 * `application/graphql-response+json` any non-null `data` is 200, as GraphQL over HTTP requires.
 * The REST routes run in process and map errors themselves; this concerns GraphQL over HTTP only.
 */
export function usePartialDataStatus(): YogaPlugin {
  return {
    onResultProcess({ request, result, setResult }) {
      if (Array.isArray(result) || Symbol.asyncIterator in result) return;
      const { data, errors } = result as ExecutionResult;
      if (!errors?.length || data == null) return;
      const strict = graphqlAnswerType(request.headers.get('accept') ?? undefined).startsWith('application/graphql-response+json');
      if (!strict && !holdsData(data)) return;
      setResult({ ...result, errors: errors.map(withoutStatus) });
    },
  };
}

/** Whether any value below the root is more than objects of nulls; an empty list is a value. */
function holdsData(value: unknown): boolean {
  if (value === null || value === undefined) return false;
  if (typeof value !== 'object' || Array.isArray(value)) return true;
  return Object.values(value).some(holdsData);
}

function withoutStatus(error: GraphQLError): GraphQLError {
  const http = error.extensions?.http as { status?: number } | undefined;
  if (!http?.status) return error;
  const { http: _http, ...extensions } = error.extensions;
  return new GraphQLError(error.message, { nodes: error.nodes, source: error.source, positions: error.positions, path: error.path, originalError: error.originalError, extensions });
}
