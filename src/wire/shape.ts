// The wire format: how GraphQL results look on the REST surface, in webhook payloads and in live
// events. Field names are snake_case, enum values REST spells otherwise are their wire strings (see
// graphql/wire-values.ts), everything else is the GraphQL value unchanged. The mapping follows the
// schema, so values of opaque scalars (metadata) keep their own keys.
import {
  type FragmentDefinitionNode,
  type GraphQLCompositeType,
  type GraphQLField,
  type GraphQLSchema,
  type SelectionSetNode,
  getNamedType,
  isAbstractType,
  isCompositeType,
  isEnumType,
  isInterfaceType,
  isObjectType,
  Kind,
} from 'graphql';
import { wireValues } from '../graphql/wire-values.ts';
import { omittedWhenNullOf, wireConstantsOf } from './constants.ts';

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
  /** Left out of the wire object when null, rather than sent as null (wire/constants.ts). */
  omitNull?: boolean;
}

export function wireShape(
  schema: GraphQLSchema,
  parentType: GraphQLCompositeType,
  selectionSet: SelectionSetNode,
  fragments: Record<string, FragmentDefinitionNode>,
): WireShape {
  const shape: WireShape = { fields: new Map(), constants: { ...wireConstantsOf(parentType.name) } };
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
        } else {
          const omitNull = omittedWhenNullOf(type.name, name);
          shape.fields.set(key, { wire: snakeCase(key), shape: nested, values: isEnumType(named) ? wireValues(named) : null, on, ...(omitNull ? { omitNull } : {}) });
        }
      } else {
        const set2 = selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments[selection.name.value];
        const condition = set2.typeCondition ? (schema.getType(set2.typeCondition.name.value) as GraphQLCompositeType) : type;
        if (isAbstractType(type) && isObjectType(condition)) Object.assign(shape.constants, wireConstantsOf(condition.name));
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
  omitNull: boolean[];
}
const plans = new WeakMap<WireShape, WalkPlan>();

function planOf(shape: WireShape): WalkPlan {
  let plan = plans.get(shape);
  if (!plan) {
    const fields = [...shape.fields];
    plan = { keys: fields.map(([key]) => key), wires: fields.map(([, f]) => f.wire), shapes: fields.map(([, f]) => f.shape), constants: Object.entries(shape.constants), omitNull: fields.map(([, f]) => f.omitNull === true) };
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
  const { keys, wires, shapes, constants, omitNull } = planOf(shape);
  const out: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  for (let i = 0; i < keys.length; i++) {
    const item = source[keys[i]];
    if (omitNull[i] && item == null) continue;
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

