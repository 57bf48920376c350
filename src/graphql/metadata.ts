// Metadata: a flat object of string, integer, float or boolean values, with bounded size so a
// merchant's annotations cannot grow into a storage channel.
import { GraphQLError, Kind, type ValueNode } from 'graphql';
import { builder } from './builder.ts';

export const metadataLimits = { maxKeys: 50, maxKeyLength: 40, maxStringLength: 500 };
export type Metadata = Record<string, string | number | boolean>;

function parseMetadata(value: unknown): Metadata {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GraphQLError('Metadata must be an object of string, integer, float or boolean values.');
  }
  const entries = Object.entries(value);
  if (entries.length > metadataLimits.maxKeys) {
    throw new GraphQLError(`Metadata can have at most ${metadataLimits.maxKeys} keys (got ${entries.length}).`);
  }
  for (const [key, item] of entries) {
    if (key.length < 1 || key.length > metadataLimits.maxKeyLength) {
      throw new GraphQLError(`Metadata key "${key.slice(0, 50)}" must be 1 to ${metadataLimits.maxKeyLength} characters long.`);
    }
    if (typeof item === 'string') {
      if (item.length > metadataLimits.maxStringLength) {
        throw new GraphQLError(`Metadata value for "${key}" must be at most ${metadataLimits.maxStringLength} characters long.`);
      }
    } else if (typeof item === 'number') {
      if (!Number.isFinite(item)) throw new GraphQLError(`Metadata value for "${key}" must be a finite number.`);
    } else if (typeof item !== 'boolean') {
      throw new GraphQLError(`Metadata value for "${key}" must be a string, integer, float or boolean.`);
    }
  }
  return value as Metadata;
}

/** An inline metadata object: one level of fields, since metadata is flat. */
function literalToJs(node: ValueNode): unknown {
  if (node.kind !== Kind.OBJECT) throw new GraphQLError('Metadata must be an object of string, integer, float or boolean values.');
  return Object.fromEntries(node.fields.map((f) => [f.name.value, literalValue(f.value)]));
}

function literalValue(node: ValueNode): unknown {
  switch (node.kind) {
    case Kind.STRING:
      return node.value;
    case Kind.INT:
      return Number.parseInt(node.value, 10);
    case Kind.FLOAT:
      return Number.parseFloat(node.value);
    case Kind.BOOLEAN:
      return node.value;
    default:
      throw new GraphQLError('Metadata values must be strings, numbers or booleans.');
  }
}

export const MetadataScalar = builder.scalarType('Metadata', {
  description: `Key-value pairs: at most ${metadataLimits.maxKeys} keys of up to ${metadataLimits.maxKeyLength} characters; values are strings (up to ${metadataLimits.maxStringLength} characters), integers, floats or booleans.`,
  serialize: (value) => value as Metadata,
  parseValue: parseMetadata,
  parseLiteral: (node) => parseMetadata(literalToJs(node)),
});

/** Prisma conditions matching metadata `{key: [accepted values]}`: every key must match one of its values. */
export function metadataWhere(filter: Record<string, unknown> | null | undefined) {
  if (!filter) return [];
  return Object.entries(filter).map(([key, raw]) => {
    const values = ([] as unknown[]).concat(raw);
    const candidates = values.flatMap((v) => {
      if (typeof v !== 'string') return [v];
      const asNumber = Number(v);
      const out: unknown[] = [v];
      if (v.trim() !== '' && Number.isFinite(asNumber)) out.push(asNumber);
      if (v === 'true' || v === 'false') out.push(v === 'true');
      return out;
    });
    return { OR: candidates.map((value) => ({ metadata: { path: [key], equals: value as never } })) };
  });
}
