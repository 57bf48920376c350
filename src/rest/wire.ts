// The wire format: how GraphQL results and inputs look on the REST surface (and in webhook payloads).
// Field names are snake_case, enum values REST spells otherwise are their wire strings (see
// graphql/wire-values.ts), everything else is the GraphQL value unchanged. The mapping follows
// the schema, so values of opaque scalars (metadata) keep their own keys.
import {
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedInputType,
  type GraphQLNullableType,
  type GraphQLSchema,
  type SelectionSetNode,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  getNamedType,
  isEnumType,
  isScalarType,
  isAbstractType,
  isCompositeType,
  isInputObjectType,
  isListType,
  isNonNullType,
  isObjectType,
  isInterfaceType,
  Kind,
} from 'graphql';
import type { Loc } from '../graphql/errors.ts';
import { enumWire, WireOnlyValueError, wireOnlyValues, wireValues, type WireOnlyValues } from '../graphql/wire-values.ts';

export const snakeCase = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
export const camelCase = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/** How one selection set maps to its wire object: response key to wire key and nested shape. */
export interface WireShape {
  fields: Map<string, WireField>;
  /** Wire fields with a constant value, for parts of a resource Kassa does not model (yet). */
  constants: Record<string, unknown>;
}

export interface WireField {
  wire: string;
  shape: WireShape | null;
  /** For a field of an enum that REST spells otherwise: each value's wire string, by its GraphQL name. */
  values: ReadonlyMap<string, unknown> | null;
  /**
   * The field's definition by the name of each type it is selected on: an object of another type
   * (another type condition) has no such key. Documents of the wire format read it (rest/openapi.ts).
   */
  on: Map<string, GraphQLField<unknown, unknown>>;
}

const wireConstants = new Map<string, Record<string, unknown>>();

/** Declares wire fields that always carry the same value for objects of a GraphQL type. */
export function defineWireConstants(typeName: string, constants: Record<string, unknown>): void {
  // Shared by every response, so frozen: nothing may change them in place.
  for (const value of Object.values(constants)) Object.freeze(value);
  wireConstants.set(typeName, { ...wireConstants.get(typeName), ...constants });
}

export function wireShape(
  schema: GraphQLSchema,
  parentType: GraphQLCompositeType,
  selectionSet: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode>,
): WireShape {
  const shape: WireShape = { fields: new Map(), constants: { ...wireConstants.get(parentType.name) } };
  const visit = (type: GraphQLCompositeType, set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (name === '__typename') continue;
        const key = selection.alias?.value ?? name;
        if (!(isObjectType(type) || isInterfaceType(type))) continue;
        const field = type.getFields()[name];
        const named = getNamedType(field.type);
        const nested = selection.selectionSet && isCompositeType(named) ? wireShape(schema, named, selection.selectionSet, fragments) : null;
        // One field selected under several type conditions (each type's `properties`): the shapes merge.
        const earlier = shape.fields.get(key);
        const on = earlier?.on ?? new Map<string, GraphQLField<unknown, unknown>>();
        on.set(type.name, field);
        if (earlier?.shape && nested) {
          for (const [name, field] of nested.fields) {
            for (const [typeName, definition] of earlier.shape.fields.get(name)?.on ?? []) if (!field.on.has(typeName)) field.on.set(typeName, definition);
            earlier.shape.fields.set(name, field);
          }
          Object.assign(earlier.shape.constants, nested.constants);
        } else shape.fields.set(key, { wire: snakeCase(key), shape: nested, values: isEnumType(named) ? wireValues(named) : null, on });
      } else {
        const set2 = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments[selection.name.value];
        const condition = set2.typeCondition ? (schema.getType(set2.typeCondition.name.value) as GraphQLCompositeType) : type;
        if (isAbstractType(type) && isObjectType(condition)) Object.assign(shape.constants, wireConstants.get(condition.name));
        visit(condition, set2.selectionSet);
      }
    }
  };
  visit(parentType, selectionSet);
  return shape;
}

/** A shape as `toWire` walks it: arrays, built once per shape, instead of the maps it is merged in. */
interface WalkPlan {
  keys: string[];
  wires: string[];
  shapes: (WireShape | null)[];
  constants: [string, unknown][];
}
const plans = new WeakMap<WireShape, WalkPlan>();

function planOf(shape: WireShape): WalkPlan {
  let plan = plans.get(shape);
  if (!plan) {
    const fields = [...shape.fields];
    plan = { keys: fields.map(([key]) => key), wires: fields.map(([, f]) => f.wire), shapes: fields.map(([, f]) => f.shape), constants: Object.entries(shape.constants) };
    plans.set(shape, plan);
  }
  return plan;
}

/**
 * Where the enum fields REST spells otherwise are in a shape: their wire keys with their values'
 * wire strings, and the fields that lead to more. Null when the shape has none: nearly every route.
 */
interface RenamePlan {
  leaves: [string, ReadonlyMap<string, unknown>][];
  nested: [string, RenamePlan][];
}
const renamePlans = new WeakMap<WireShape, RenamePlan | null>();

function renamePlanOf(shape: WireShape): RenamePlan | null {
  let plan = renamePlans.get(shape);
  if (plan === undefined) {
    const leaves: RenamePlan['leaves'] = [];
    const nested: RenamePlan['nested'] = [];
    for (const field of shape.fields.values()) {
      if (field.values) leaves.push([field.wire, field.values]);
      const inner = field.shape && renamePlanOf(field.shape);
      if (inner) nested.push([field.wire, inner]);
    }
    plan = leaves.length || nested.length ? { leaves, nested } : null;
    renamePlans.set(shape, plan);
  }
  return plan;
}

/**
 * A result as the wire writes it. The walk is the same for every route; a route whose shape holds
 * enum fields REST spells otherwise then rewrites those fields alone (the plan is made once per shape).
 */
export function toWire(value: unknown, shape: WireShape | null): unknown {
  const out = walk(value, shape);
  const renames = shape && renamePlanOf(shape);
  if (renames) rename(out, renames);
  return out;
}

function rename(value: unknown, plan: RenamePlan): void {
  // Constants are shared between responses (and frozen): they are never rewritten.
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  if (Array.isArray(value)) {
    for (const item of value) rename(item, plan);
    return;
  }
  const object = value as Record<string, unknown>;
  for (const [wire, values] of plan.leaves) if (object[wire] !== undefined) object[wire] = wireValue(object[wire], values);
  for (const [wire, inner] of plan.nested) rename(object[wire], inner);
}

function walk(value: unknown, shape: WireShape | null): unknown {
  if (value === null || value === undefined || shape === null) return value ?? null;
  if (Array.isArray(value)) return value.map((item) => walk(item, shape));
  const { keys, wires, shapes, constants } = planOf(shape);
  const out: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  for (let i = 0; i < keys.length; i++) {
    const item = source[keys[i]];
    // A field of another type condition is absent from the result, and stays absent.
    if (item !== undefined || keys[i] in source) out[wires[i]] = shapes[i] === null ? (item ?? null) : walk(item, shapes[i]);
  }
  for (let i = 0; i < constants.length; i++) {
    if (!(constants[i][0] in out)) out[constants[i][0]] = constants[i][1];
  }
  return out;
}

/** An enum field's value (or list of values) as the wire spells it. */
function wireValue(value: unknown, values: ReadonlyMap<string, unknown>): unknown {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.map((item) => wireValue(item, values));
  return values.get(value as string) ?? value;
}

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
