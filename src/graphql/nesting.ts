// Input nesting. No input of Kassa nests deeper than a few levels (metadata is flat; the deepest,
// such as a product's prices, reach about five or six), so a JSON value nested deeper than
// `maxInputNesting` is refused where it enters: REST bodies, GraphQL variables, OAuth
// bodies. The check walks with its own stack, so no depth can overflow it; everything behind it
// (variable coercion, the wire mapping, the NUL guard, JSON columns) then meets bounded input.
import { type DocumentNode, Kind, visit } from 'graphql';
import type { Plugin } from '@envelop/core';
import { RequestValidationError, type Loc, type ValidationIssue } from './errors.ts';

/** The deepest nesting of arrays and objects accepted in one input value; well above any field's need. */
export const maxInputNesting = 32;

const isContainer = (value: unknown): value is object =>
  Array.isArray(value) || (typeof value === 'object' && value !== null && (Object.getPrototypeOf(value) === Object.prototype || Object.getPrototypeOf(value) === null));

interface Frame {
  value: unknown;
  /** How many arrays and objects enclose `value`, counting itself when it is one. */
  depth: number;
  parent: Frame | null;
  key: string | number | null;
}

/**
 * Where `value` (at `loc`) holds an array or object nested more than `max` deep, as the loc of
 * the first such one the walk meets; null when it stays within `max`.
 */
export function tooDeepAt(value: unknown, loc: Loc, max = maxInputNesting): Loc | null {
  const pending: Frame[] = [{ value, depth: isContainer(value) ? 1 : 0, parent: null, key: null }];
  while (pending.length) {
    const frame = pending.pop()!;
    if (frame.depth > max) return locOf(frame, loc);
    if (!isContainer(frame.value)) continue;
    const entries: [string | number, unknown][] = Array.isArray(frame.value) ? frame.value.map((item, i) => [i, item]) : Object.entries(frame.value);
    for (const [key, item] of entries) {
      if (isContainer(item)) pending.push({ value: item, depth: frame.depth + 1, parent: frame, key });
    }
  }
  return null;
}

function locOf(frame: Frame, loc: Loc): Loc {
  const tail: (string | number)[] = [];
  for (let at: Frame | null = frame; at?.parent; at = at.parent) tail.push(at.key!);
  return [...loc, ...tail.reverse()];
}

/** The issue a value nested too deep is refused with, at the loc `tooDeepAt` found. */
export function nestingIssue(at: Loc): ValidationIssue {
  return {
    loc: at,
    msg: `Arrays and objects nested more than ${maxInputNesting} levels deep: no field takes a value nested this deep; send the value the field documents.`,
    type: 'json_too_deep',
  };
}

/** Whether a document's inline values nest deeper than `maxInputNesting`, by document: parsed documents are cached and reused. */
const inlineTooDeep = new WeakMap<DocumentNode, boolean>();

function hasInlineTooDeep(document: DocumentNode): boolean {
  let found = inlineTooDeep.get(document);
  if (found === undefined) {
    found = false;
    let depth = 0;
    // graphql's visit keeps its own stack, so a deep literal cannot overflow it.
    const container = {
      enter: () => {
        if (++depth > maxInputNesting) found = true;
      },
      leave: () => {
        depth--;
      },
    };
    visit(document, { [Kind.LIST]: container, [Kind.OBJECT]: container });
    inlineTooDeep.set(document, found);
  }
  return found;
}

/**
 * Refuses a GraphQL operation whose variables or inline values nest deeper than `maxInputNesting`,
 * before anything else reads them: listed first among the plugins, its hooks run before the
 * others' and before the variables are coerced.
 */
export function useInputNestingLimit(): Plugin {
  const check = (document: DocumentNode, variables: Record<string, unknown> | null | undefined) => {
    if (hasInlineTooDeep(document)) return new RequestValidationError([nestingIssue(['query'])]);
    for (const [name, value] of Object.entries(variables ?? {})) {
      const at = tooDeepAt(value, [name]);
      if (at) return new RequestValidationError([nestingIssue(at)]);
    }
    return null;
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const refusal = check(args.document, args.variableValues as Record<string, unknown> | null | undefined);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const refusal = check(args.document, args.variableValues as Record<string, unknown> | null | undefined);
      if (refusal) setResultAndStopExecution({ errors: [refusal] });
    },
  };
}
