// GraphQL run inside the process, through the same envelop pipeline and context as over HTTP: how
// the REST routes and the hosted pages use the schema instead of reimplementing it.
import type { GetEnvelopedFn } from '@envelop/core';
import type { DocumentNode, ExecutionResult } from 'graphql';
import type { Context } from '../context.ts';

export type RunOperation = (document: DocumentNode, variables: Record<string, unknown>, context: Context) => Promise<ExecutionResult>;

export function inProcess(getEnveloped: GetEnvelopedFn<any>): RunOperation {
  return async (document, variables, context) => {
    const { execute, contextFactory, schema } = getEnveloped(context);
    return (await execute({ schema, document, variableValues: variables, contextValue: await contextFactory() })) as ExecutionResult;
  };
}
