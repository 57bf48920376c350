// Operations run compiled by graphql-jit, each compiled once and reused. A compiled query belongs
// to one document and one operation in it: a document that holds several operations is compiled
// once for each operation that runs, never answered with another operation's plan.
//
// Compiling is the dearest step of a new document (it expands every fragment), so it comes last:
// the document has passed its size limit at parse, validation, and its cost, before this runs. The
// cache holds documents weakly; they live as long as the parse cache keeps them (bounded by count
// and by their total length), or for ever for the operations the REST routes and pages hold.
//
// Subscriptions are left to graphql-js: graphql-jit hands the subscribe resolver the variables as
// its arguments (an argument written in the document, or under another variable name, is lost) and
// coerces the already coerced variables again for each event, which fails for an enum whose values
// are renamed (an event type filter, `order_paid` standing for `order.paid`).
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';
import { makeExecute, type Plugin, type TypedExecutionArgs } from '@envelop/core';
import type { DocumentNode, ExecutionResult } from 'graphql';

type Compiled = Pick<CompiledQuery, 'query' | 'stringify'>;

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
  const result = (await entry.query(args.rootValue, args.contextValue, args.variableValues)) as ExecutionResult & { stringify?: unknown };
  result.stringify = entry.stringify;
  return result;
}

export function useCompiledQueries(): Plugin {
  const execute = makeExecute(run as never);
  return {
    onExecute({ setExecuteFn }) {
      setExecuteFn(execute);
    },
  };
}
