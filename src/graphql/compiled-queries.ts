// Operations run compiled by graphql-jit, each compiled once and reused. A compiled query belongs
// to one document and one operation in it: a document that holds several operations is compiled
// once for each operation that runs, never answered with another operation's plan.
//
// Compiling is the dearest step of a new document (it expands every fragment), so it comes last:
// the document has passed its size limit at parse, validation, and its cost, before this runs. The
// cache holds documents weakly; they live as long as the parse cache keeps them (bounded by count
// and by their total length), or for ever for the operations the REST routes and pages hold.
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { makeExecute, makeSubscribe, type Plugin, type TypedExecutionArgs } from '@envelop/core';
import type { DocumentNode, ExecutionResult } from 'graphql';

type Compiled = Pick<CompiledQuery, 'query' | 'subscribe' | 'stringify'>;

const compiledByDocument = new WeakMap<DocumentNode, Map<string, Compiled>>();

function compiled(args: TypedExecutionArgs<unknown>): Compiled {
  let byOperation = compiledByDocument.get(args.document);
  if (!byOperation) compiledByDocument.set(args.document, (byOperation = new Map()));
  const operationName = args.operationName ?? '';
  let entry = byOperation.get(operationName);
  if (!entry) {
    const result = compileQuery(args.schema, args.document, args.operationName ?? undefined);
    // A document that cannot be compiled (no such operation, say) answers its errors every time.
    entry = isCompiledQuery(result) ? result : { query: () => result as ExecutionResult, stringify: JSON.stringify };
    byOperation.set(operationName, entry);
  }
  return entry;
}

async function run(args: TypedExecutionArgs<unknown>) {
  const entry = compiled(args);
  const result = await (entry.subscribe ?? entry.query)(args.rootValue, args.contextValue, args.variableValues);
  if (!(Symbol.asyncIterator in Object(result))) (result as ExecutionResult & { stringify?: unknown }).stringify = entry.stringify;
  return result;
}

export function useCompiledQueries(): Plugin {
  const execute = makeExecute(run as never);
  const subscribe = makeSubscribe(run as never);
  return {
    onExecute({ setExecuteFn }) {
      setExecuteFn(execute);
    },
    onSubscribe({ setSubscribeFn }) {
      setSubscribeFn(subscribe);
    },
  };
}
