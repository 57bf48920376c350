// Text Kassa can store: PostgreSQL text and jsonb cannot hold the NUL character, and jsonb refuses
// a lone UTF-16 surrogate (half of a pair, which no Unicode text holds), so input that carries
// either is refused up front, naming where it is, instead of failing in the database.
import { type DocumentNode, Kind, visit } from 'graphql';
import type { Plugin } from '@envelop/core';
import { RequestValidationError, type Loc, type ValidationIssue } from './errors.ts';

const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether PostgreSQL would refuse to store `text`: a NUL, or a lone surrogate. */
function unstorable(text: string): boolean {
  return text.includes('\u0000') || loneSurrogate.test(text);
}

interface Frame {
  value: unknown;
  parent: Frame | null;
  key: string | number | null;
  /** The key itself is unstorable: reported in its turn, in place of its value. */
  nulKey: boolean;
}

/** Every place in `value` (at `loc`) holding text PostgreSQL cannot store (a NUL or a lone surrogate); walks with its own stack, so any depth is safe. */
export function nulCharacterIssues(value: unknown, loc: Loc, issues: ValidationIssue[] = []): ValidationIssue[] {
  const problem = (frame: Frame) => {
    const text = frame.nulKey ? String(frame.key) : String(frame.value);
    if (text.includes('\u0000')) issues.push({ loc: locOf(frame, loc), msg: 'Text must not contain the NUL character (\\u0000).', type: 'string_nul' });
    else issues.push({ loc: locOf(frame, loc), msg: 'Text must be valid Unicode: it holds half of a UTF-16 surrogate pair (\\ud800 to \\udfff) without the other half.', type: 'string_unicode' });
  };
  const pending: Frame[] = [{ value, parent: null, key: null, nulKey: false }];
  while (pending.length) {
    const frame = pending.pop()!;
    const item = frame.value;
    if (frame.nulKey) {
      problem(frame);
    } else if (typeof item === 'string') {
      if (unstorable(item)) problem(frame);
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) pending.push({ value: item[i], parent: frame, key: i, nulKey: false });
    } else if (item !== null && typeof item === 'object' && !(item instanceof Date)) {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) pending.push({ value: entries[i][1], parent: frame, key: entries[i][0], nulKey: unstorable(entries[i][0]) });
    }
  }
  return issues;
}

function locOf(frame: Frame, loc: Loc): Loc {
  const tail: (string | number)[] = [];
  for (let at: Frame | null = frame; at?.parent; at = at.parent) tail.push(at.key!);
  return [...loc, ...tail.reverse()];
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
