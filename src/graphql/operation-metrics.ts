// Counts the GraphQL operations received over HTTP for the operators' metrics: by name and type,
// with their requested cost. The operations the REST routes and the hosted pages run in-process
// are counted as the HTTP requests they serve, not here.
import type { Plugin } from '@envelop/core';
import { getOperationAST, type DocumentNode, type GraphQLSchema } from 'graphql';
import type { Context } from '../context.ts';
import { operationCost } from './cost.ts';

interface OperationArgs {
  schema: GraphQLSchema;
  document: DocumentNode;
  operationName?: string | null;
  variableValues?: unknown;
  contextValue: unknown;
}

function count(args: OperationArgs): void {
  const ctx = args.contextValue as Context;
  // Set for GraphQL over HTTP only (see Context).
  if (!ctx.rateLimit) return;
  const operation = getOperationAST(args.document, args.operationName);
  if (!operation) return;
  const { cost } = operationCost(args.schema, args.document, args.operationName, args.variableValues as Record<string, unknown> | undefined);
  ctx.environment.metrics.graphqlOperation(operation.name?.value, operation.operation, cost);
}

export function useOperationMetrics(): Plugin {
  return {
    onExecute: ({ args }) => count(args),
    onSubscribe: ({ args }) => count(args),
  };
}
