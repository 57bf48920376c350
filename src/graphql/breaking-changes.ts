// Breaking changes to the committed contract (schema.graphql) are made on purpose or not at all.
// The schema the code builds is compared with the committed one by GraphQL Inspector; each change
// it rates BREAKING must be declared in schema-changes.json, with the reason, before
// `npm run schema:write` writes it. Dangerous and non-breaking changes need no declaration.
import { readFile } from 'node:fs/promises';
import { buildSchema, type GraphQLSchema } from 'graphql';
import { CriticalityLevel, diff, type Change } from '@graphql-inspector/core';

/** One entry of schema-changes.json: a breaking change made on purpose. */
export interface DeclaredChange {
  /** The change's path as Inspector names it: `Type`, `Type.field`, `Type.field.argument`, `Enum.value`. */
  path: string;
  /** Inspector's change type, such as `FIELD_REMOVED` or `FIELD_TYPE_CHANGED`. */
  type: string;
  /** Why clients must adapt, for the changelog and for whoever reviews the change. */
  reason: string;
}

export const declarationsFile = 'schema-changes.json';

/** The breaking changes from `committed` to `current` that no declaration names (path and type). */
export async function undeclaredBreakingChanges(
  committed: string | GraphQLSchema,
  current: string | GraphQLSchema,
  declared: readonly DeclaredChange[],
): Promise<Change[]> {
  const changes = await diff(toSchema(committed), toSchema(current));
  return changes.filter(
    (change) =>
      change.criticality.level === CriticalityLevel.Breaking &&
      !declared.some((d) => d.path === (change.path ?? '') && d.type === change.type),
  );
}

/** The message for the developer: each undeclared change, and the entry that would declare it. */
export function describeUndeclared(changes: readonly Change[]): string {
  const lines = changes.map((c) => `  - ${c.type} at ${c.path ?? '(schema)'}: ${c.message}`);
  const example = changes.map((c) => ({ path: c.path ?? '', type: c.type, reason: 'why clients must adapt' }));
  return [
    `The schema has ${changes.length} breaking change${changes.length === 1 ? '' : 's'} that ${declarationsFile} does not declare:`,
    ...lines,
    '',
    `If the break is intended, add an entry per change to ${declarationsFile} (a JSON list), e.g.`,
    JSON.stringify(example, null, 2),
    'then run `npm run schema:write`. Otherwise change the code so the schema stays compatible.',
  ].join('\n');
}

/** The declarations committed at the repository root; none when the file does not exist. */
export async function readDeclarations(root: URL): Promise<DeclaredChange[]> {
  let text: string;
  try {
    text = await readFile(new URL(declarationsFile, root), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const list: unknown = JSON.parse(text);
  const valid = (d: unknown): d is DeclaredChange =>
    typeof d === 'object' && d !== null && ['path', 'type', 'reason'].every((k) => typeof (d as Record<string, unknown>)[k] === 'string');
  if (!Array.isArray(list) || !list.every(valid) || list.some((d) => d.reason.trim() === '')) {
    throw new Error(`${declarationsFile} must be a JSON list of { "path": string, "type": string, "reason": non-empty string }.`);
  }
  return list;
}

function toSchema(schema: string | GraphQLSchema): GraphQLSchema {
  return typeof schema === 'string' ? buildSchema(schema) : schema;
}
