// JSON Schema (2020-12, as OpenAPI 3.1 uses it) for the REST wire format, read from the GraphQL
// schema and the wire shapes toWire and fromWire walk: an output object has exactly the keys
// toWire writes for an object of its type, an input object the snake_case keys fromWire accepts.
// Every schema with a name lives once in `components`, and is referred to by $ref.
import {
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLString,
  astFromValue,
  getNullableType,
  isAbstractType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  valueFromASTUntyped,
} from 'graphql';
import { metadataLimits } from '../graphql/metadata.ts';
import { enumWire } from '../graphql/wire-values.ts';
import { camelCase, snakeCase, type WireShape } from '../wire/shape.ts';

export type JsonSchema = { [keyword: string]: unknown };

export class DocumentationError extends Error {}

/** How each scalar looks on the wire; a scalar missing here fails the document, so none goes undescribed. */
const scalars: Record<string, JsonSchema> = {
  [GraphQLString.name]: { type: 'string' },
  [GraphQLID.name]: { type: 'string' },
  [GraphQLInt.name]: { type: 'integer', format: 'int32' },
  [GraphQLFloat.name]: { type: 'number' },
  [GraphQLBoolean.name]: { type: 'boolean' },
  UUID: { type: 'string', format: 'uuid' },
  DateTime: { type: 'string', format: 'date-time' },
  Date: { type: 'string', format: 'date' },
  JSONObject: { type: 'object' },
  // A metered price's unit amount: decimal text on output; a number or its text on input.
  UnitAmount: { anyOf: [{ type: 'string' }, { type: 'number' }] },
  // A clause is {property, operator, value} or a nested filter (docs/usage.md).
  MeterFilter: {
    type: 'object',
    required: ['conjunction', 'clauses'],
    properties: { conjunction: { type: 'string', enum: ['and', 'or'] }, clauses: { type: 'array', items: { type: 'object' } } },
  },
};

export class JsonSchemas {
  readonly components: Record<string, JsonSchema> = {};
  /** Component names by what they stand for: a GraphQL type name, or an output shape's content. */
  private readonly names = new Map<string, string>();

  constructor(private readonly schema: GraphQLSchema) {}

  /** A schema stored once under a name derived from `base`; `identity` says when two are the same. */
  private named(base: string, identity: string, build: () => JsonSchema): JsonSchema {
    let name = this.names.get(identity);
    if (name === undefined) {
      name = base;
      for (let n = 2; name in this.components; n++) name = `${base}${n}`;
      this.names.set(identity, name);
      // Claimed before it is built, so a recursive input type refers to itself.
      this.components[name] = {};
      Object.assign(this.components[name], build());
    }
    return ref(name);
  }

  /** A schema of the document's own (an error body) under `name`. */
  define(name: string, schema: JsonSchema): JsonSchema {
    return this.named(name, `document:${name}`, () => schema);
  }

  scalar(type: GraphQLNamedType): JsonSchema {
    if (isEnumType(type)) {
      // REST spells some enums otherwise (the sort orders): the document describes the wire.
      const wire = enumWire(type)?.type;
      if (wire) return this.scalar(wire);
      return this.named(type.name, `type:${type.name}`, () => withDescription({ type: 'string', enum: type.getValues().map((v) => v.name) }, type.description));
    }
    if (type.name === 'Metadata') return this.named(type.name, `type:${type.name}`, () => metadataSchema(type.description));
    const values = type.extensions?.values;
    // A scalar that accepts a fixed list of strings (the sorting properties).
    if (Array.isArray(values)) return this.named(type.name, `type:${type.name}`, () => withDescription({ type: 'string', enum: values }, type.description));
    const known = scalars[type.name];
    if (!known) throw new DocumentationError(`The scalar ${type.name} has no wire description in rest/json-schema.ts`);
    return { ...known };
  }

  /** What a variable of `type` accepts in a JSON body: snake_case keys, no others, null where GraphQL takes it. */
  input(type: GraphQLInputType): JsonSchema {
    return isNonNullType(type) ? this.inputValue(type.ofType) : nullable(this.inputValue(type));
  }

  /** A value of the nullable `inner` type, not null (a path or query parameter cannot be). */
  inputValue(inner: GraphQLInputType): JsonSchema {
    if (isListType(inner)) return { type: 'array', items: this.input(inner.ofType as GraphQLInputType) };
    if (!isInputObjectType(inner)) return this.scalar(inner as GraphQLNamedType);
    return this.named(inner.name, `type:${inner.name}`, () => {
      const properties: Record<string, JsonSchema> = {};
      const required: string[] = [];
      for (const field of Object.values(inner.getFields())) {
        const wire = snakeCase(field.name);
        // fromWire finds a field by camelCase(key): a name that does not come back would be unreachable.
        if (camelCase(wire) !== field.name) throw new DocumentationError(`${inner.name}.${field.name} has no snake_case spelling that maps back to it`);
        const schema = { ...this.input(field.type) };
        if (field.defaultValue !== undefined) schema.default = jsonValue(field.defaultValue, field.type);
        properties[wire] = annotate(schema, field.description, field.deprecationReason);
        if (isNonNullType(field.type) && field.defaultValue === undefined) required.push(wire);
      }
      const schema: JsonSchema = { type: 'object', properties, additionalProperties: false };
      if (required.length) schema.required = required;
      if (inner.isOneOf) Object.assign(schema, { minProperties: 1, maxProperties: 1 });
      return withDescription(schema, inner.description);
    });
  }

  /** What toWire writes for a value of `type` selected with `shape`. */
  output(type: GraphQLOutputType, shape: WireShape | null): JsonSchema {
    if (!isNonNullType(type)) return nullable(this.outputValue(type, shape));
    return this.outputValue(type.ofType, shape);
  }

  private outputValue(type: GraphQLOutputType, shape: WireShape | null): JsonSchema {
    if (isListType(type)) return { type: 'array', items: this.output(type.ofType, shape) };
    if (isScalarType(type) || isEnumType(type)) return this.scalar(type);
    if (!shape) throw new DocumentationError(`${(type as GraphQLNamedType).name} is selected without fields`);
    if (isObjectType(type)) return this.object(type, shape);
    const variants = [...new Map(this.schema.getPossibleTypes(type).map((t) => this.object(t, shape)).map((s) => [s.$ref as string, s])).values()];
    if (variants.length === 1) return variants[0];
    // anyOf, not oneOf: two types may write the same keys, and the value is then each of them.
    return this.named(type.name, `shape:${type.name}:${JSON.stringify(variants)}`, () => withDescription({ anyOf: variants }, type.description));
  }

  /**
   * The object toWire writes for an object of `type`: the shape's fields selected on the type
   * (or on an interface or union it belongs to), then the shape's constants under keys still free.
   */
  private object(type: GraphQLObjectType, shape: WireShape): JsonSchema {
    const properties: Record<string, JsonSchema> = {};
    // A field the wire leaves out when null is optional, and never null when present.
    const optional = new Set<string>();
    for (const field of shape.fields.values()) {
      const definition = this.selectedOn(field.on, type);
      if (!definition) continue;
      if (field.omitNull) optional.add(field.wire);
      const value = field.omitNull ? this.outputValue(isNonNullType(definition.type) ? definition.type.ofType : definition.type, field.shape) : this.output(definition.type, field.shape);
      properties[field.wire] = annotate(value, definition.description, definition.deprecationReason);
    }
    for (const [key, value] of Object.entries(shape.constants)) {
      if (!(key in properties)) properties[key] = { const: value, description: 'Always this value: Kassa does not model this part of the resource.' };
    }
    const required = Object.keys(properties).filter((key) => !optional.has(key));
    const schema = withDescription({ type: 'object', properties, required, additionalProperties: false }, type.description);
    return this.named(type.name, `shape:${type.name}:${JSON.stringify(schema)}`, () => schema);
  }

  private selectedOn(on: Map<string, GraphQLField<unknown, unknown>>, type: GraphQLObjectType): GraphQLField<unknown, unknown> | undefined {
    for (const [parentName, field] of on) {
      const parent = this.schema.getType(parentName);
      if (parent === type || (parent && isAbstractType(parent) && this.schema.isSubType(parent, type))) return field;
    }
    return undefined;
  }
}

export function ref(name: string): JsonSchema {
  return { $ref: `#/components/schemas/${name}` };
}

/** The schema, or null. */
export function nullable(schema: JsonSchema): JsonSchema {
  if (typeof schema.type === 'string' && !('enum' in schema) && !('const' in schema)) return { ...schema, type: [schema.type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}

/** A GraphQL default value as JSON: enum values by name, input objects with snake_case keys. */
export function jsonValue(value: unknown, type: GraphQLInputType): unknown {
  const ast = astFromValue(value, type);
  return ast ? snakeKeys(valueFromASTUntyped(ast), type) : null;
}

function snakeKeys(value: unknown, type: GraphQLInputType): unknown {
  const inner = getNullableType(type) as GraphQLInputType;
  if (value === null || value === undefined) return value;
  if (isListType(inner)) return (Array.isArray(value) ? value : [value]).map((item) => snakeKeys(item, inner.ofType));
  if (!isInputObjectType(inner)) return value;
  const fields = inner.getFields();
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, item]) => [snakeCase(key), snakeKeys(item, fields[key].type)]));
}

function withDescription(schema: JsonSchema, description: string | null | undefined): JsonSchema {
  return description ? { ...schema, description } : schema;
}

/** A field's description and deprecation, beside its schema (2020-12 allows both next to $ref). */
function annotate(schema: JsonSchema, description: string | null | undefined, deprecationReason: string | null | undefined): JsonSchema {
  const out = withDescription(schema, [description, deprecationReason && `Deprecated: ${deprecationReason}.`].filter(Boolean).join(' ') || null);
  return deprecationReason ? { ...out, deprecated: true } : out;
}

function metadataSchema(description: string | null | undefined): JsonSchema {
  return withDescription(
    {
      type: 'object',
      maxProperties: metadataLimits.maxKeys,
      propertyNames: { minLength: 1, maxLength: metadataLimits.maxKeyLength },
      additionalProperties: { anyOf: [{ type: 'string', maxLength: metadataLimits.maxStringLength }, { type: 'integer' }, { type: 'number' }, { type: 'boolean' }] },
    },
    description,
  );
}
