// Execution is compiled by graphql-jit, whose variable coercion applies a variable's default only
// when the variable's type is nullable: `$limit: Int! = 10` left out would be refused as "not
// provided". The GraphQL spec (§6.4.1 CoerceVariableValues) applies the default to both, so the
// defaults are filled in before execution, exactly as if the client had sent them.
import { Kind, valueFromASTUntyped, type DocumentNode, type VariableDefinitionNode } from 'graphql';
import type { Plugin } from '@envelop/core';

/** The variables with a default, by document and operation name: parsed documents are cached and reused. */
const defaultsOf = new WeakMap<DocumentNode, Map<string | undefined, VariableDefinitionNode[]>>();

function variablesWithDefaults(document: DocumentNode, operationName: string | undefined | null): VariableDefinitionNode[] {
  let byOperation = defaultsOf.get(document);
  if (!byOperation) defaultsOf.set(document, (byOperation = new Map()));
  const key = operationName ?? undefined;
  let found = byOperation.get(key);
  if (!found) {
    const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION && (key === undefined || d.name?.value === key));
    found = operation?.kind === Kind.OPERATION_DEFINITION ? (operation.variableDefinitions ?? []).filter((v) => v.defaultValue !== undefined) : [];
    byOperation.set(key, found);
  }
  return found;
}

export function useVariableDefaults(): Plugin {
  return {
    onExecute({ args }) {
      const withDefaults = variablesWithDefaults(args.document, args.operationName);
      const given = (args.variableValues ?? {}) as Record<string, unknown>;
      const missing = withDefaults.filter((v) => !Object.hasOwn(given, v.variable.name.value));
      if (missing.length === 0) return;
      const variableValues = { ...given };
      for (const v of missing) variableValues[v.variable.name.value] = valueFromASTUntyped(v.defaultValue!);
      // The execute function receives this same arguments object once every hook has run.
      args.variableValues = variableValues;
    },
  };
}
