// REST inputs: a wire body or query value (snake_case keys, REST's spelling of enums) as the
// GraphQL variable it stands for, checked against the type REST values are checked against.
import {
  type GraphQLInputType,
  type GraphQLNamedInputType,
  type GraphQLNullableType,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  isEnumType,
  isScalarType,
  isInputObjectType,
  isListType,
  isNonNullType,
} from 'graphql';
import type { Loc } from '../graphql/errors.ts';
import { enumWire, WireOnlyValueError, wireOnlyValues, type WireOnlyValues } from '../graphql/wire-values.ts';
import { camelCase } from '../wire/shape.ts';

/**
 * A wire input (snake_case keys) as the GraphQL input it stands for. Keys that name no input field
 * are reported, so a typo never silently drops a change.
 */
export function fromWire(value: unknown, type: GraphQLInputType, loc: Loc, unknownKey: (loc: Loc) => void): unknown {
  if (value === null || value === undefined) return value;
  if (isNonNullType(type)) return fromWire(value, type.ofType, loc, unknownKey);
  if (isListType(type)) {
    return Array.isArray(value) ? value.map((item, i) => fromWire(item, type.ofType, [...loc, i], unknownKey)) : fromWire(value, type.ofType, loc, unknownKey);
  }
  if (isInputObjectType(type) && typeof value === 'object' && !Array.isArray(value)) {
    const fields = type.getFields();
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      const field = fields[camelCase(key)];
      if (!field) unknownKey([...loc, key]);
      else out[field.name] = fromWire(item, field.type, [...loc, key], unknownKey);
    }
    return out;
  }
  return value;
}



/**
 * The type a REST value is checked against: the variable's GraphQL type, except where the schema
 * declares that REST spells or checks an enum otherwise (graphql/wire-values.ts). Built once per type.
 */
export function restInputType(type: GraphQLInputType): GraphQLInputType {
  if (isNonNullType(type)) {
    const inner = restInputType(type.ofType);
    return inner === type.ofType ? type : new GraphQLNonNull(inner as GraphQLNullableType & GraphQLInputType);
  }
  if (isListType(type)) {
    const inner = restInputType(type.ofType);
    return inner === type.ofType ? type : new GraphQLList(inner);
  }
  let rest = restTypes.get(type);
  if (!rest) {
    rest = isEnumType(type) ? (enumWire(type)?.type ?? type) : isInputObjectType(type) ? restInputObject(type) : type;
    restTypes.set(type, rest);
  }
  return rest;
}
const restTypes = new WeakMap<GraphQLNamedInputType, GraphQLInputType>();

function restInputObject(type: GraphQLInputObjectType): GraphQLInputType {
  restTypes.set(type, type); // a recursive input refers to itself until the fields are known
  const config = type.toConfig();
  let changed = false;
  const fields = Object.fromEntries(
    Object.entries(config.fields).map(([name, field]) => {
      const wireOnly = wireOnlyValues(field.extensions);
      const fieldType = wireOnly ? standingIn(restInputType(field.type), wireOnly) : restInputType(field.type);
      if (fieldType !== field.type) changed = true;
      return [name, { ...field, type: fieldType }];
    }),
  );
  return changed ? new GraphQLInputObjectType({ ...config, fields }) : type;
}

/** `type` with its leaf reporting each wire-only value, for the REST adapter to send the stand-in. */
function standingIn(type: GraphQLInputType, wireOnly: WireOnlyValues): GraphQLInputType {
  if (isNonNullType(type)) return new GraphQLNonNull(standingIn(type.ofType, wireOnly) as GraphQLNullableType & GraphQLInputType);
  if (isListType(type)) return new GraphQLList(standingIn(type.ofType, wireOnly));
  const check = (value: unknown) => {
    if (typeof value === 'string' && wireOnly.includes(value)) throw new WireOnlyValueError(value, wireOnly.standIn);
  };
  if (isEnumType(type)) {
    // Still an enum, so values it does not know get graphql-js' own message, as before.
    return new (class extends GraphQLEnumType {
      override parseValue(value: unknown, hideSuggestions?: boolean) {
        check(value);
        return super.parseValue(value, hideSuggestions);
      }
    })(type.toConfig());
  }
  if (isScalarType(type)) {
    const config = type.toConfig();
    return new GraphQLScalarType({ ...config, parseValue: (value) => (check(value), config.parseValue!(value)) });
  }
  throw new Error(`wireOnlyValues on ${String(type)}: only a leaf input can take them`);
}

/**
 * A REST value, already checked against restInputType, as the GraphQL variable: each enum value
 * REST spells otherwise becomes the name of the enum value it stands for.
 */
export function graphqlEnumValues(value: unknown, type: GraphQLInputType): unknown {
  if (value === null || value === undefined) return value;
  if (isNonNullType(type)) return graphqlEnumValues(value, type.ofType);
  if (isListType(type)) return Array.isArray(value) ? value.map((item) => graphqlEnumValues(item, type.ofType)) : graphqlEnumValues(value, type.ofType);
  if (isEnumType(type) && enumWire(type)) return type.getValues().find((v) => v.value === value)?.name ?? value;
  if (isInputObjectType(type) && typeof value === 'object' && !Array.isArray(value)) {
    const fields = type.getFields();
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fields[key] ? graphqlEnumValues(item, fields[key].type) : item]));
  }
  return value;
}
