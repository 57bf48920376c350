import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('schema.graphql', () => {
  it('passes the schema lint (npm run lint:schema): described throughout, names by convention', async () => {
    const eslint = new ESLint({ cwd: root, overrideConfigFile: 'eslint.schema.config.js' });
    const [result] = await eslint.lintFiles(['schema.graphql']);
    const problems = result.messages.map((m) => `schema.graphql:${m.line}:${m.column} ${m.message} (${m.ruleId})`);
    expect(problems, 'describe the element where the code defines it (a `description:`), then run `npm run schema:write`').toEqual([]);
  });

  it('refuses a mutation named verb first, a query field named get…, and an input not ending in Input', async () => {
    const eslint = new ESLint({ cwd: root, overrideConfigFile: 'eslint.schema.config.js' });
    const text = `
"""Root."""
type Query {
  """Reads."""
  getProducts: Boolean
  """Groups."""
  core: CoreMutation
}

"""Core."""
type CoreMutation {
  """Creates."""
  createProduct(
    """The product."""
    input: ProductNew
  ): Boolean
  """Creates."""
  productCreate: Boolean
}

"""New."""
input ProductNew {
  """Name."""
  name: String
}
`;
    const [result] = await eslint.lintText(text, { filePath: 'schema.graphql' });
    const named = result.messages.filter((m) => m.ruleId === '@graphql-eslint/naming-convention').map((m) => m.message);
    expect(named).toHaveLength(3);
    expect(named.join('\n')).toMatch(/"createProduct"/);
    expect(named.join('\n')).toMatch(/getProducts/);
    expect(named.join('\n')).toMatch(/ProductNew/);
  });
});
