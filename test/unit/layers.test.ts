// The layers' import rules (.dependency-cruiser.cjs, docs/architecture.md) hold for src/, and a
// crossing is reported by the name of the rule it breaks.
import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const depcruise = join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: { name: string }[];
}

async function violations(cwd: string): Promise<Violation[]> {
  const { stdout } = await promisify(execFile)(process.execPath, [depcruise, 'src', '--config', join(root, '.dependency-cruiser.cjs'), '--output-type', 'json'], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
  });
  return (JSON.parse(stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

describe('the layers', () => {
  it('src/ breaks no import rule and has no import cycle (npm run lint:layers)', async () => {
    const found = await violations(root);
    expect(found.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([]);
  }, 120_000);

  it('names the rule a crossing breaks: a module importing REST, pages reading the database, a cycle, the metrics importing more than types', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kassa-layers-'));
    try {
      const file = (path: string, text: string) => {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      };
      cpSync(join(root, 'tsconfig.json'), join(dir, 'tsconfig.json'));
      file('src/modules/things/service.ts', "import { route } from '../../rest/routes/things.ts';\nexport const thing = () => route;\n");
      file('src/rest/routes/things.ts', "export const route = 'GET /v1/things/';\n");
      file('src/pages/things.ts', "import { db } from '../db/client.ts';\nexport const page = () => db;\n");
      file('src/db/client.ts', "export const db = {};\n");
      file('src/events/a.ts', "import { b } from './b.ts';\nexport const a = () => b;\n");
      file('src/events/b.ts', "import { a } from './a.ts';\nexport const b = () => a;\n");
      file('src/observability/counts.ts', "import { db } from '../db/client.ts';\nimport type { Thing } from '../db/types.ts';\nexport const count = (thing: Thing) => [db, thing];\n");
      file('src/db/types.ts', "export interface Thing { id: string }\n");
      const found = await violations(dir);
      expect(found.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort()).toEqual([
        'no-circular: src/events/a.ts -> src/events/b.ts',
        'observability-is-a-leaf: src/observability/counts.ts -> src/db/client.ts',
        'pages-use-graphql-or-auth: src/pages/things.ts -> src/db/client.ts',
        'resources-know-no-http: src/modules/things/service.ts -> src/rest/routes/things.ts',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
