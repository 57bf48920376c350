// Bounds on the variables of an operation, checked before they are coerced for execution. Coercing
// is linear in the variables' size, but each invalid item costs an error object and a line of the
// answer: a body of a million bytes could hold a quarter of a million invalid ids, and so take
// seconds of the event loop and answer megabytes. So a list may hold at most `maxListItems` items
// (Shopify's API refuses arrays past 250), and coercion stops at the first `maxVariableErrors`
// errors, as graphql-js's own variable coercion does when asked.
import { getOperationAST, getVariableValues, GraphQLError } from 'graphql';
import type { Plugin } from '@envelop/core';
import { RequestValidationError, type Loc } from './errors.ts';

export const maxListItems = 1000;
export const maxVariableErrors = 20;

/** Where the first list longer than `maxListItems` sits in `value`, walked without recursion, or null. */
export function overlongList(value: unknown, loc: Loc): { loc: Loc; length: number } | null {
  interface Pending {
    value: unknown;
    key: string | number | null;
    parent: Pending | null;
  }
  const stack: Pending[] = [{ value, key: null, parent: null }];
  while (stack.length) {
    const entry = stack.pop()!;
    const current = entry.value;
    if (current === null || typeof current !== 'object') continue;
    if (Array.isArray(current)) {
      if (current.length > maxListItems) {
        const path: Loc = [];
        for (let at: Pending | null = entry; at?.key != null; at = at.parent) path.push(at.key);
        return { loc: [...loc, ...path.reverse()], length: current.length };
      }
      for (let i = 0; i < current.length; i++) stack.push({ value: current[i], key: i, parent: entry });
    } else {
      for (const key of Object.keys(current)) stack.push({ value: (current as Record<string, unknown>)[key], key, parent: entry });
    }
  }
  return null;
}

export function overlongListError(found: { loc: Loc; length: number }): RequestValidationError {
  return RequestValidationError.at(found.loc, `A list may hold at most ${maxListItems} items; this one holds ${found.length}. Send fewer items, or split the request.`, 'too_long');
}

/**
 * A variable value its type refuses, as BAD_USER_INPUT with its issue (graphql-js reports it without a
 * code). It is a request error, so the answer has no `data`: 400 under
 * application/graphql-response+json, which must not answer 2xx without data, and 200 under
 * application/json, as GraphQL over HTTP asks of a variable coercion failure (`spec: true`).
 */
export function refusedVariable(error: GraphQLError): GraphQLError {
  const variable = /^Variable "\$(\w+)"/.exec(error.message)?.[1];
  const issues = [{ loc: variable ? [variable] : [], msg: error.message, type: 'value_error' }];
  const extensions = { ...error.extensions, code: 'BAD_USER_INPUT', issues, http: { status: 400, spec: true } };
  return new GraphQLError(error.message, { nodes: error.nodes, originalError: error.originalError, extensions });
}

/**
 * Refuses an operation whose variables hold an overlong list, and stops coercion at the first
 * errors; a subscription alike, before its stream opens, with the same BAD_USER_INPUT.
 */
export function useVariableLimits(): Plugin {
  const check = ({ args, setResultAndStopExecution }: Pick<Parameters<NonNullable<Plugin['onExecute']>>[0], 'args' | 'setResultAndStopExecution'>) => {
    const given = (args.variableValues ?? {}) as Record<string, unknown>;
    const found = overlongList(given, []);
    if (found) return setResultAndStopExecution({ errors: [overlongListError(found)] });
    const operation = getOperationAST(args.document, args.operationName);
    if (!operation?.variableDefinitions?.length) return;
    const coerced = getVariableValues(args.schema, operation.variableDefinitions, given, { maxErrors: maxVariableErrors });
    if (coerced.errors) setResultAndStopExecution({ errors: coerced.errors.map(refusedVariable) });
  };
  return { onExecute: check, onSubscribe: check };
}
