// Input generated from the schema's own input types, for the generated-input suite: values a
// client could plausibly send, values no type accepts, and the hostile strings and numbers in
// between (boundary and huge numbers, NUL, lone surrogates, overlong text, deep nesting).
import fc from 'fast-check';
import {
  type GraphQLInputType,
  type GraphQLNamedType,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
} from 'graphql';
import { snakeCase } from '../../src/wire/shape.ts';

/** JSON text placed as is: numbers JSON.stringify cannot write (2^53+1, 1e400) and deep nesting. */
export class RawJson {
  constructor(readonly text: string) {}
  toJSON(): string {
    return `<raw ${this.text.length > 60 ? `${this.text.slice(0, 60)}… (${this.text.length} chars)` : this.text}>`;
  }
}

/** JSON text of a generated value, RawJson parts written verbatim. */
export function toJson(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}:${toJson(item)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** GraphQL literal text of a generated value (enum names are written as strings, which GraphQL refuses). */
export function toLiteral(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toLiteral).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, item]) => `${key}: ${toLiteral(item)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const nestingDepth = 5_000;
export const deepArray = new RawJson(`${'['.repeat(nestingDepth)}${']'.repeat(nestingDepth)}`);
export const deepObject = new RawJson(`${'{"a":'.repeat(nestingDepth)}1${'}'.repeat(nestingDepth)}`);
export const overlong = 'x'.repeat(100_000);

/** Strings a type may or may not accept, but no server may fall over on. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\ud800',
    '\udfff',
    'a\ud800b',
    '\uffff',
    '\u202e',
    '💥',
    '%00',
    '%',
    '../../etc/passwd',
    'null',
    'NaN',
    '-Infinity',
    '1e400',
    '0x1F',
    "'; DROP TABLE products; --",
    '<script>alert(1)</script>',
    '\r\n\t',
    overlong,
  ),
  fc.string({ unit: 'binary', maxLength: 24 }),
);

/** Numbers around every boundary a value may cross: 32-bit, 2^53, finite, sign. */
export const hostileNumber: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  0,
  -1,
  0.5,
  2 ** 31 - 1,
  2 ** 31,
  -(2 ** 31),
  -(2 ** 31) - 1,
  2 ** 53,
  Number.MAX_SAFE_INTEGER,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
  -Number.MAX_VALUE,
  new RawJson('9007199254740993'),
  new RawJson('1e400'),
  new RawJson('-1e400'),
  new RawJson('-0'),
  new RawJson(`1${'0'.repeat(400)}`),
  new RawJson('1.0000000000000000000000001'),
);

/** Any value of any JSON kind, mostly hostile: the leaves of the "maybe valid" inputs. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: hostileString },
  { weight: 3, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, true, false, {}, [], deepArray, deepObject, new RawJson('{"__proto__":{"polluted":1}}')) },
);

export interface Generation {
  /** Keys as the REST wire spells them (snake_case) instead of GraphQL names. */
  wire: boolean;
  /** Ids of rows that exist, offered next to random ones for every UUID. */
  ids: string[];
  /** How often a leaf is replaced by a hostile value (0 for plausible input only). */
  hostility: number;
}

const maxDepth = 4;

/** A value of `type` as a client would plausibly send it, with hostile leaves at the given rate. */
export function plausible(type: GraphQLInputType, gen: Generation, field = '', depth = 0): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) return plausible(type.ofType, gen, field, depth);
  const inner = plausibleNullable(type, gen, field, depth);
  return fc.oneof({ weight: 12, arbitrary: inner }, { weight: 1, arbitrary: fc.constant(null) });
}

function plausibleNullable(type: GraphQLInputType, gen: Generation, field: string, depth: number): fc.Arbitrary<unknown> {
  if (isListType(type)) return fc.array(plausible(type.ofType, gen, field, depth + 1), { maxLength: 3 });
  if (isInputObjectType(type)) {
    if (depth >= maxDepth) return fc.constant({});
    const fields = Object.values(type.getFields());
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    const required: string[] = [];
    for (const f of fields) {
      const key = gen.wire ? snakeCase(f.name) : f.name;
      record[key] = plausible(f.type, gen, f.name, depth + 1);
      if (isNonNullType(f.type) && f.defaultValue === undefined) required.push(key);
    }
    return fc.record(record, { requiredKeys: required });
  }
  const leaf = plausibleLeaf(getNamedType(type), gen, field);
  if (gen.hostility <= 0) return leaf;
  return fc.oneof({ weight: Math.round((1 - gen.hostility) * 100), arbitrary: leaf }, { weight: Math.round(gen.hostility * 100), arbitrary: hostileValue });
}

function plausibleLeaf(named: GraphQLNamedType, gen: Generation, field: string): fc.Arbitrary<unknown> {
  if (isEnumType(named)) return fc.constantFrom(...named.getValues().map((v) => v.name));
  const ids = gen.ids.length ? fc.oneof(fc.constantFrom(...gen.ids), fc.uuid()) : fc.uuid();
  switch (named.name) {
    case 'UUID':
      return ids;
    case 'Int':
      return fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: -5, max: 5 }));
    case 'Float':
      return fc.double({ min: -1000, max: 1000, noNaN: true });
    case 'Boolean':
      return fc.boolean();
    case 'DateTime':
      return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
    case 'Date':
      return fc.date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));
    case 'JSONObject':
    case 'Metadata':
      return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean()), { maxKeys: 3 });
    default:
      return plausibleString(field);
  }
}

function plausibleString(field: string): fc.Arbitrary<string> {
  if (/email/i.test(field)) return fc.emailAddress();
  if (/url|uri/i.test(field)) return fc.constantFrom('https://example.com/hook', 'http://127.0.0.1:9/x', 'https://example.com/success?checkout_id={CHECKOUT_ID}');
  if (/currency/i.test(field)) return fc.constantFrom('usd', 'eur', 'USD');
  if (/country/i.test(field)) return fc.constantFrom('US', 'DE', 'FR');
  if (/timezone/i.test(field)) return fc.constantFrom('UTC', 'America/New_York', 'Asia/Kolkata', 'Mars/Olympus_Mons', 'EST');
  if (/scope/i.test(field)) return fc.constantFrom('products:read', 'products:write openid', 'orders:read');
  return fc.oneof(fc.constantFrom('Starter', 'Pro plan', 'user_42', 'key-1'), fc.string({ maxLength: 16 }));
}

/** Values of no kind a scalar or enum accepts. */
function wrongLeaf(named: GraphQLNamedType): fc.Arbitrary<unknown> {
  const nul = fc.constantFrom('\u0000', 'a\u0000b', `${'x'.repeat(10)}\u0000`);
  if (isEnumType(named)) return fc.oneof(fc.constantFrom<unknown>('NOT_A_MEMBER', 1, true, {}, [1, 2]), nul);
  switch (named.name) {
    case 'Int':
      return fc.constantFrom<unknown>('12', 1.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, new RawJson('9007199254740993'), new RawJson('1e400'), true, 'NaN', {}, [true]);
    case 'Float':
      return fc.constantFrom<unknown>('1.5', 'NaN', new RawJson('1e400'), new RawJson('-1e400'), true, {}, ['x']);
    case 'Boolean':
      return fc.constantFrom<unknown>('true', 1, 0, 'yes', {}, [0]);
    case 'UUID':
      return fc.oneof(fc.constantFrom<unknown>('not-a-uuid', '', 123, true, {}, '00000000-0000-0000-0000-00000000000g', `${'0'.repeat(8)}-0000-0000-0000-${'0'.repeat(12)}}`, overlong), nul);
    case 'DateTime':
      return fc.constantFrom<unknown>('yesterday', '2024-13-45T99:99:99Z', '', true, {}, ['2024-01-01T00:00:00Z', 1]);
    case 'Date':
      return fc.constantFrom<unknown>('yesterday', '2024-02-30', '2024-1-1', '2024-01-01T00:00:00Z', '', true, 20240101, {}, ['2024-01-01']);
    case 'JSONObject':
      return fc.constantFrom<unknown>('text', 42, [1, 2], true, deepObject, { '\u0000': 1 }, { key: 'a\u0000' });
    case 'Metadata':
      return fc.constantFrom<unknown>('text', 42, [1, 2], true, { nested: { a: 1 } }, { '': 'empty key' }, { ['k'.repeat(41)]: 1 }, { long: 'v'.repeat(501) }, deepObject, { key: 'a\u0000' });
    case 'String':
    case 'ID':
    default:
      return fc.oneof(fc.constantFrom<unknown>(42, true, {}, [1], deepArray), nul);
  }
}

/**
 * A value of `type` that no server may accept: one part of an otherwise plausible value is wrong
 * (a value of the wrong kind, NUL in text, an unknown field, a required field missing, null where
 * null is not allowed, deep nesting).
 */
export function invalid(type: GraphQLInputType, gen: Generation, field = '', depth = 0): fc.Arbitrary<unknown> {
  if (isNonNullType(type)) {
    return fc.oneof({ weight: 1, arbitrary: fc.constant(null) }, { weight: 6, arbitrary: invalidNullable(type.ofType, gen, field, depth) });
  }
  return invalidNullable(type, gen, field, depth);
}

function invalidNullable(type: GraphQLInputType, gen: Generation, field: string, depth: number): fc.Arbitrary<unknown> {
  if (isListType(type)) {
    const item = type.ofType;
    return fc.oneof(
      fc.tuple(fc.array(plausible(item, gen, field, depth + 1), { maxLength: 2 }), invalid(item, gen, field, depth + 1)).map(([items, bad]) => [...items, bad]),
      fc.constant(deepArray),
    );
  }
  if (isInputObjectType(type)) {
    const fields = Object.values(type.getFields());
    const key = (name: string) => (gen.wire ? snakeCase(name) : name);
    const base = plausibleNullable(type, gen, field, depth) as fc.Arbitrary<Record<string, unknown>>;
    const choices: fc.Arbitrary<unknown>[] = [
      fc.tuple(base, fc.constantFrom('unknown_field', 'zzz', '__proto__x', 'constructor'), hostileValue).map(([object, name, value]) => ({ ...object, [name]: value })),
      fc.constantFrom<unknown>('text', 42, true, [1, 2], deepArray, deepObject),
    ];
    if (fields.length && depth < maxDepth) {
      choices.push(
        fc
          .constantFrom(...fields)
          .chain((f) => fc.tuple(base, fc.constant(key(f.name)), invalid(f.type, gen, f.name, depth + 1)))
          .map(([object, name, value]) => ({ ...object, [name]: value })),
      );
    }
    const required = fields.filter((f) => isNonNullType(f.type) && f.defaultValue === undefined);
    if (required.length) {
      choices.push(
        fc.tuple(base, fc.constantFrom(...required)).map(([object, f]) => {
          const { [key(f.name)]: _dropped, ...rest } = object;
          return rest;
        }),
      );
    }
    return fc.oneof(...choices);
  }
  return wrongLeaf(getNamedType(type));
}
