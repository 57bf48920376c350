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
});
