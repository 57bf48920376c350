import SchemaBuilder from '@pothos/core';
import { type GraphQLResolveInfo, parse, responsePathAsArray } from 'graphql';
import { compileQuery, isCompiledQuery } from 'graphql-jit';
import { describe, expect, it } from 'vitest';
import StablePathsPlugin from '../../src/graphql/stable-paths.ts';

// A schema of its own, compiled by graphql-jit as Kassa's is, whose object fields write down the
// `info.path` their resolvers receive.
function recordingSchema() {
  const seen: { field: string; path: GraphQLResolveInfo['path'] }[] = [];
  // Kassa's other plugins declare their options as required of every builder; this one uses none of them.
  const builder = new SchemaBuilder<{ Context: object }>({ plugins: [StablePathsPlugin] } as ConstructorParameters<typeof SchemaBuilder<{ Context: object }>>[0]);
  const Tag = builder.objectRef<{ name: string }>('Tag').implement({ fields: (t) => ({ name: t.exposeString('name') }) });
  const Row = builder.objectRef<{ id: number }>('Row').implement({
    fields: (t) => ({
      id: t.exposeInt('id'),
      tag: t.field({
        type: Tag,
        resolve: (row, _args, _ctx, info) => {
          seen.push({ field: 'tag', path: info.path });
          return { name: `tag ${row.id}` };
        },
      }),
    }),
  });
  builder.queryType({
    fields: (t) => ({
      rows: t.field({
        type: [Row],
        resolve: (_root, _args, _ctx, info) => {
          seen.push({ field: 'rows', path: info.path });
          return [{ id: 1 }, { id: 2 }];
        },
      }),
    }),
  });
  const compiled = compileQuery(builder.toSchema(), parse('{ rows { id tag { name } again: tag { name } } }'));
  if (!isCompiledQuery(compiled)) throw new Error('the query did not compile');
  return { seen, run: (context: object) => compiled.query(undefined, context, {}) };
}

describe('stable response paths under graphql-jit', () => {
  it('give each field execution the path graphql-js would, keys and list indices included', async () => {
    const { seen, run } = recordingSchema();
    const result = await run({});
    expect(result.data).toEqual({ rows: [1, 2].map((id) => ({ id, tag: { name: `tag ${id}` }, again: { name: `tag ${id}` } })) });
    expect(seen.map(({ path }) => responsePathAsArray(path))).toEqual([['rows'], ['rows', 0, 'tag'], ['rows', 0, 'again'], ['rows', 1, 'tag'], ['rows', 1, 'again']]);
  });

  it('share the links above a field between the fields beneath it, within one request', async () => {
    const { seen, run } = recordingSchema();
    await run({});
    const [rows, firstTag, firstAgain, secondTag] = seen.map(({ path }) => path);
    // The row link (rows.0) is one object for both of its fields, and its parent is `rows` itself.
    expect(firstTag.prev).toBe(firstAgain.prev);
    expect(firstTag.prev!.prev).toBe(rows);
    expect(secondTag.prev).not.toBe(firstTag.prev);
    expect(secondTag.prev!.prev).toBe(rows);
  });

  it('never share paths between requests', async () => {
    const { seen, run } = recordingSchema();
    await run({});
    const first = seen.splice(0).map(({ path }) => path);
    await run({});
    const second = seen.map(({ path }) => path);
    expect(second.map(responsePathAsArray)).toEqual(first.map(responsePathAsArray));
    second.forEach((path, i) => expect(path).not.toBe(first[i]));
  });
});
