// The container files, read as text: what an image built from them would be. The image itself is
// built and run by scripts/container-check.sh (docs/testing.md#the-container-image), outside `npm test`.
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

interface Stage {
  name: string;
  instructions: { op: string; args: string }[];
}

/** The Dockerfile's stages, each a list of instructions (continuation lines joined, comments dropped). */
function stages(text: string): Stage[] {
  const lines = text.replace(/\\\n/g, ' ').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const result: Stage[] = [];
  for (const line of lines) {
    const [, op, args] = /^(\S+)\s*(.*)$/.exec(line)!;
    if (op.toUpperCase() === 'FROM') result.push({ name: / AS (\S+)$/i.exec(args)?.[1] ?? '', instructions: [] });
    result.at(-1)?.instructions.push({ op: op.toUpperCase(), args });
  }
  return result;
}

const dockerfile = stages(readFileSync('Dockerfile', 'utf8'));
const runtime = dockerfile.at(-1)!;
const of = (stage: Stage, op: string) => stage.instructions.filter((i) => i.op === op).map((i) => i.args);

describe('the Dockerfile', () => {
  it('builds in one stage and runs from another that installs production dependencies only', () => {
    expect(dockerfile.map((s) => s.name)).toEqual(['builder', 'runtime']);
    expect(of(dockerfile[0], 'RUN').join('\n')).toMatch(/npm run build/);
    const installs = of(runtime, 'RUN').filter((r) => r.includes('npm ci'));
    expect(installs).toHaveLength(1);
    expect(installs[0]).toMatch(/npm ci --omit=dev/);
    expect(of(runtime, 'COPY').filter((c) => c.includes('--from=')).map((c) => c.split(/\s+/).slice(1).join(' '))).toEqual(['/app/dist ./dist']);
  });

  it('runs the compiled server as an unprivileged user, listening on every interface', () => {
    const users = of(runtime, 'USER');
    expect(users).toHaveLength(1);
    expect(users[0]).not.toMatch(/^(root|0)(:|$)/);
    expect(of(runtime, 'CMD')).toEqual(['["node", "dist/cli.js", "serve"]']);
    const env = of(runtime, 'ENV').join(' ');
    expect(env).toMatch(/HOST=0\.0\.0\.0/);
    const port = /PORT=(\d+)/.exec(env)?.[1];
    expect(of(runtime, 'EXPOSE')).toEqual([port]);
  });

  it('checks health on /readyz and keeps the embedded databases in a volume', () => {
    const [healthcheck] = of(runtime, 'HEALTHCHECK');
    expect(healthcheck).toMatch(/CMD .*\/readyz/);
    expect(of(runtime, 'ENV').join(' ')).toMatch(/DATA_DIR=\/data/);
    expect(of(runtime, 'VOLUME')).toEqual(['["/data"]']);
  });

  it('copies into each stage only files that exist and that .dockerignore lets through', () => {
    const ignored = readFileSync('.dockerignore', 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
    for (const stage of dockerfile) {
      for (const copy of of(stage, 'COPY').filter((c) => !c.includes('--from='))) {
        const sources = copy.split(/\s+/).slice(0, -1);
        for (const source of sources) {
          expect(existsSync(source), `${stage.name}: COPY ${source}`).toBe(true);
          expect(ignored.some((pattern) => source === pattern || source.startsWith(`${pattern}/`)), `${stage.name}: COPY ${source} is in .dockerignore`).toBe(false);
        }
      }
    }
    // The build compiles to the directory the runtime stage copies.
    expect(JSON.parse(readFileSync('tsconfig.build.json', 'utf8')).compilerOptions.outDir).toBe('dist');
  });
});

describe('compose.yaml', () => {
  const compose = readFileSync('compose.yaml', 'utf8');
  const kassa = compose.slice(compose.indexOf('\n  kassa:'));
  const variables = [...kassa.slice(kassa.indexOf('environment:'), kassa.indexOf('healthcheck:')).matchAll(/^ {6}([A-Z_]+):/gm)].map((m) => m[1]);

  it('gives Kassa its two databases and Redis, and only variables that configuration.md documents', () => {
    expect(variables).toEqual(expect.arrayContaining(['DATABASE_URL', 'SANDBOX_DATABASE_URL', 'REDIS_URL', 'SECRETS_KEY']));
    const documented = readFileSync('docs/configuration.md', 'utf8');
    for (const name of variables) expect(documented, name).toContain(`| \`${name}\` |`);
    expect(compose).toMatch(/image: docker\.io\/library\/postgres:15\n/);
    expect(compose).toMatch(/image: docker\.io\/library\/redis:7\n/);
    expect(kassa).toMatch(/condition: service_healthy[\s\S]*condition: service_healthy/);
    expect(kassa).toMatch(/healthcheck:\n\s+test: .*\/readyz/);
  });
});
