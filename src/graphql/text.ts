// Text Kassa can store: PostgreSQL text and jsonb cannot hold the NUL character, so input that
// carries one is refused up front, naming where it is, instead of failing in the database.
import { type DocumentNode, Kind, visit } from 'graphql';
import type { Plugin } from '@envelop/core';
import { RequestValidationError, type Loc, type ValidationIssue } from './errors.ts';

export function nulCharacterIssues(value: unknown, loc: Loc, issues: ValidationIssue[] = []): ValidationIssue[] {
  const problem = (at: Loc) => issues.push({ loc: at, msg: 'Text must not contain the NUL character (\\u0000).', type: 'string_nul' });
  if (typeof value === 'string') {
    if (value.includes('\u0000')) problem(loc);
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => nulCharacterIssues(item, [...loc, i], issues));
  } else if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('\u0000')) problem([...loc, key]);
      else nulCharacterIssues(item, [...loc, key], issues);
    }
  }
  return issues;
}

/** Whether a document's inline strings carry a NUL character, by document: parsed documents are cached and reused. */
const inlineNul = new WeakMap<DocumentNode, boolean>();

function hasInlineNul(document: DocumentNode): boolean {
  let found = inlineNul.get(document);
  if (found === undefined) {
    found = false;
    visit(document, {
      [Kind.STRING]: (node) => {
        if (node.value.includes('\u0000')) found = true;
      },
    });
    inlineNul.set(document, found);
  }
  return found;
}

/** Refuses a GraphQL operation whose variables or inline strings carry a NUL character. */
export function useNulCharacterGuard(): Plugin {
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const issues: ValidationIssue[] = [];
      for (const [name, value] of Object.entries(args.variableValues ?? {})) nulCharacterIssues(value, [name], issues);
      if (hasInlineNul(args.document)) issues.push({ loc: ['query'], msg: 'Text must not contain the NUL character (\\u0000).', type: 'string_nul' });
      if (issues.length) setResultAndStopExecution({ errors: [new RequestValidationError(issues)] });
    },
  };
}
