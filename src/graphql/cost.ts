// Cost of a GraphQL operation, in the spirit of Shopify's cost model: what it costs is the objects
// its answer holds. The static measure below is the operation's requested cost, computed before
// execution so an expensive request is refused before it touches the database; its actual cost,
// counted on the answer once it has run (src/rate-limits/graphql.ts), uses the same rule.
//
// - Each object, interface or union value the answer may hold costs 1: a field returning one
//   costs 1 plus what is selected under it; a list costs that for each item it may hold. Scalar
//   and enum fields cost 0, and so does introspection: `__typename`, `__schema`, `__type` and
//   everything under them.
// - A list's size is its bound: its `first` or `last` argument, else its `limit` (a literal, a
//   variable, the variable's default or the argument's default), else 10 items.
// - A field with such a bound that returns a `*List` page is one object, and the page's `items`
//   and `edges` hold up to that bound: `products(limit: 100) { items { organization { id } } }`
//   costs 1 + 100 * (1 + 1) = 201; `products(first: 5) { edges { node { id } } }` costs
//   1 + 5 * (1 + 1) = 11.
// - Fragments, named and inline, are expanded. On an interface or union the cost is that of the
//   most expensive possible type. A recursive spread counts as empty.
// - Depth is the deepest nesting of fields (a root field is at depth 1), except that `__Type.ofType`
//   adds none: it is a single item that ends after a type's few wrappers, and the standard
//   introspection query nests it nine deep.
// - Aliases counts the fields that carry an alias, with fragments expanded where they are spread.
// - Tokens counts the lexical tokens of the whole document, when it was parsed with its location.
// - @skip and @include are ignored: a conditional selection counts as selected.
import {
  Kind,
  Lexer,
  SchemaMetaFieldDef,
  Source,
  TokenKind,
  TypeMetaFieldDef,
  getNamedType,
  getNullableType,
  isCompositeType,
  isIntrospectionType,
  isListType,
  isObjectType,
  syntaxError,
  valueFromASTUntyped,
} from 'graphql';
import type {
  DocumentNode,
  FieldNode,
  FragmentDefinitionNode,
  GraphQLCompositeType,
  GraphQLField,
  GraphQLSchema,
  OperationDefinitionNode,
  SelectionSetNode,
} from 'graphql';

export interface CostLimits {
  maxCost: number;
  maxDepth: number;
  maxAliases: number;
  maxTokens: number;
  /** Fields a document may select once its fragments are expanded. */
  maxFields: number;
}


export interface OperationCost {
  cost: number;
  depth: number;
  aliases: number;
  tokens: number;
}

/** Size of a list field without a `limit` argument. */
const defaultListSize = 10;

/** Cost of the operation that would run; throws nothing. Variables are the raw request variables (defaults from variable definitions and argument defaults apply when absent). */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Record<string, unknown> | null | undefined,
): OperationCost {
  const given = variables ?? {};
  const known = measuredCosts(document, operationName);
  const hit = known.find((measured) => measured.reads.every((name, i) => Object.is(given[name], measured.values[i])));
  if (hit) return hit.cost;
  const tokens = documentTokens(document);
  const operation = pickOperation(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root) return { cost: 0, depth: 0, aliases: 0, tokens };
  const walker = new Walker(schema, document, operation, given);
  const cost = { ...walker.selectionSet(operation.selectionSet, root, undefined), tokens };
  remember(known, { reads: walker.reads, values: walker.reads.map((name) => given[name]), cost });
  return cost;
}

/**
 * Costs already measured for a document and operation, with the variables each measure read (the
 * only ones it depends on): a parsed document is cached and reused, so a repeated request is not
 * walked again. A few variants per document are kept; a list's size given in a variable that
 * changes with every request is measured every time.
 */
interface MeasuredCost {
  reads: string[];
  values: unknown[];
  cost: OperationCost;
}
const measured = new WeakMap<DocumentNode, Map<string, MeasuredCost[]>>();
const variantsPerOperation = 8;

function measuredCosts(document: DocumentNode, operationName: string | null | undefined): MeasuredCost[] {
  let byOperation = measured.get(document);
  if (!byOperation) measured.set(document, (byOperation = new Map()));
  const name = operationName ?? '';
  let list = byOperation.get(name);
  if (!list) byOperation.set(name, (list = []));
  return list;
}

function remember(list: MeasuredCost[], cost: MeasuredCost): void {
  if (list.length >= variantsPerOperation) list.shift();
  list.push(cost);
}

/** Tokens by document: a parsed document is cached and reused, its source is not lexed again. */
const tokensOf = new WeakMap<DocumentNode, number>();

function documentTokens(document: DocumentNode): number {
  let tokens = tokensOf.get(document);
  if (tokens === undefined) {
    tokens = document.loc ? countTokens(document.loc.source.body, Number.POSITIVE_INFINITY) : 0;
    tokensOf.set(document, tokens);
  }
  return tokens;
}

/** The first limit the cost breaks, as a sentence that says what to change, or null. */
export function costViolation(cost: OperationCost, limits: CostLimits): string | null {
  if (cost.cost > limits.maxCost) {
    return `The query costs ${cost.cost}, above the limit of ${limits.maxCost}: ask for fewer items with smaller \`limit\` arguments, or select fewer nested objects.`;
  }
  if (cost.depth > limits.maxDepth) {
    return `The query nests fields ${cost.depth} deep, above the limit of ${limits.maxDepth}: select fewer levels of nested objects.`;
  }
  if (cost.aliases > limits.maxAliases) {
    return `The query uses ${cost.aliases} aliases, above the limit of ${limits.maxAliases}: split it into several requests.`;
  }
  if (cost.tokens > limits.maxTokens) {
    return `The query has ${cost.tokens} tokens, above the limit of ${limits.maxTokens}: shorten it or split it into several requests.`;
  }
  return null;
}

/** The sentence that refuses a document too large to validate and compile, or null. */
export function sizeViolation(size: DocumentSize, limits: CostLimits): string | null {
  if (size.fields <= limits.maxFields) return null;
  const fields = Number.isSafeInteger(size.fields) ? String(size.fields) : 'more than 2^53';
  return `The document selects ${fields} fields once its fragments are expanded, above the limit of ${limits.maxFields}: select fewer fields, or spread each fragment in fewer places.`;
}

/**
 * The deepest a document may nest brackets, braces and parentheses. graphql's parser recurses once
 * per level, so a document of nothing but `[` runs it out of stack (a RangeError) before the token
 * limit stops it; no operation within the depth limit comes near this.
 */
export const maxDocumentNesting = 100;

/** Throws a syntax error when the document nests deeper than `maxNesting`; reads at most `maxTokens` tokens, without recursion. */
export function checkNesting(source: string | Source, maxNesting: number, maxTokens: number): void {
  const lexer = new Lexer(typeof source === 'string' ? new Source(source) : source);
  let depth = 0;
  try {
    for (let count = 0; count <= maxTokens; count++) {
      const token = lexer.advance();
      if (token.kind === TokenKind.EOF) return;
      if (token.kind === TokenKind.BRACKET_L || token.kind === TokenKind.BRACE_L || token.kind === TokenKind.PAREN_L) depth++;
      else if (token.kind === TokenKind.BRACKET_R || token.kind === TokenKind.BRACE_R || token.kind === TokenKind.PAREN_R) depth--;
      if (depth > maxNesting) throw syntaxError(lexer.source, token.start, `Document nests more than ${maxNesting} levels deep. Parsing aborted.`);
    }
  } catch (error) {
    // Any other syntax error is the parser's to report.
    if (depth > maxNesting) throw error;
  }
}

/** Number of lexical tokens in the query source (graphql's Lexer), for the token limit, stopping early once above `max`. */
export function countTokens(source: string, max: number): number {
  const lexer = new Lexer(new Source(source));
  let count = 0;
  try {
    // Comments are skipped, as graphql's own `maxTokens` parse option skips them.
    while (count <= max && lexer.advance().kind !== TokenKind.EOF) count++;
  } catch {
    // A syntax error: parsing will report it; the tokens read so far are the count.
  }
  return count;
}

function pickOperation(document: DocumentNode, name: string | null | undefined): OperationDefinitionNode | undefined {
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  if (name) return operations.find((o) => o.name?.value === name);
  return operations.length === 1 ? operations[0] : undefined;
}

type Measure = Omit<OperationCost, 'tokens'>;

/** A selection set's measure: `cost` applies to every runtime type, `costByType` adds to some. */
interface Tally extends Measure {
  costByType: Map<string, number>;
}

class Walker {
  /** The request variables the measure read, in the order first read. */
  readonly reads: string[] = [];
  private readonly fragments = new Map<string, FragmentDefinitionNode>();
  private readonly variables: Record<string, unknown>;
  // Named fragments are measured once per page limit, so a chain of fragments that each spread the
  // next twice takes time in the document's length, not in its expansion's.
  private readonly fragmentTallies = new Map<string, Tally>();
  private readonly measuring = new Set<string>();

  constructor(
    private readonly schema: GraphQLSchema,
    document: DocumentNode,
    operation: OperationDefinitionNode,
    variables: Record<string, unknown>,
  ) {
    for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(d.name.value, d);
    this.variables = { ...variables };
    for (const v of operation.variableDefinitions ?? []) {
      const name = v.variable.name.value;
      if (this.variables[name] === undefined && v.defaultValue) this.variables[name] = valueFromASTUntyped(v.defaultValue);
    }
  }

  /** `itemsLimit` is the `limit` of the field that returned this `*List` page, for its `items`. */
  selectionSet(set: SelectionSetNode, type: GraphQLCompositeType, itemsLimit: number | undefined): Measure {
    const { cost, costByType, depth, aliases } = this.tally(set, type, itemsLimit);
    return { cost: cost + Math.max(0, ...costByType.values()), depth, aliases };
  }

  private tally(set: SelectionSetNode, type: GraphQLCompositeType, itemsLimit: number | undefined): Tally {
    const total: Tally = { cost: 0, costByType: new Map(), depth: 0, aliases: 0 };
    for (const selection of set.selections) {
      let part: Tally | undefined;
      if (selection.kind === Kind.FIELD) {
        part = { ...this.field(selection, type, itemsLimit), costByType: new Map() };
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const condition = selection.typeCondition ? this.schema.getType(selection.typeCondition.name.value) : type;
        if (isCompositeType(condition)) part = this.narrow(this.tally(selection.selectionSet, condition, itemsLimit), condition, type);
      } else {
        const fragment = this.fragments.get(selection.name.value);
        const condition = fragment && this.schema.getType(fragment.typeCondition.name.value);
        if (fragment && isCompositeType(condition)) part = this.narrow(this.fragment(fragment, condition, itemsLimit), condition, type);
      }
      if (!part) continue;
      total.cost += part.cost;
      for (const [t, cost] of part.costByType) total.costByType.set(t, (total.costByType.get(t) ?? 0) + cost);
      total.depth = Math.max(total.depth, part.depth);
      total.aliases += part.aliases;
    }
    return total;
  }

  private fragment(fragment: FragmentDefinitionNode, condition: GraphQLCompositeType, itemsLimit: number | undefined): Tally | undefined {
    const key = `${fragment.name.value}:${itemsLimit ?? ''}`;
    if (this.measuring.has(key)) return undefined;
    let tally = this.fragmentTallies.get(key);
    if (!tally) {
      this.measuring.add(key);
      tally = this.tally(fragment.selectionSet, condition, itemsLimit);
      this.measuring.delete(key);
      this.fragmentTallies.set(key, tally);
    }
    return tally;
  }

  /** Restricts a fragment's tally to the runtime types of `parent` its type condition matches. */
  private narrow(tally: Tally | undefined, condition: GraphQLCompositeType, parent: GraphQLCompositeType): Tally | undefined {
    if (!tally) return undefined;
    const parentTypes = this.runtimeTypes(parent);
    const matching = [...this.runtimeTypes(condition)].filter((t) => parentTypes.has(t));
    if (matching.length === parentTypes.size) return tally;
    const costByType = new Map(matching.map((t) => [t, tally.cost + (tally.costByType.get(t) ?? 0)]));
    return { cost: 0, costByType, depth: tally.depth, aliases: tally.aliases };
  }

  private runtimeTypes(type: GraphQLCompositeType): Set<string> {
    return new Set(isObjectType(type) ? [type.name] : this.schema.getPossibleTypes(type).map((t) => t.name));
  }

  private field(node: FieldNode, parent: GraphQLCompositeType, itemsLimit: number | undefined): Measure {
    const name = node.name.value;
    const introspection = name.startsWith('__') || isIntrospectionType(parent);
    const own = { cost: 0, depth: introspection && name === 'ofType' ? 0 : 1, aliases: node.alias ? 1 : 0 };
    const def = this.fieldDef(parent, name);
    const type = def && getNamedType(def.type);
    if (!def || !node.selectionSet || !isCompositeType(type)) return own;

    const limit = this.limit(node, def);
    const nullable = getNullableType(def.type);
    const isList = isListType(nullable);
    const size = isList ? (limit ?? (name === 'items' || name === 'edges' ? itemsLimit : undefined) ?? defaultListSize) : 1;
    const isPage = !isList && (type.name.endsWith('List') || type.name.endsWith('Connection'));
    const children = this.selectionSet(node.selectionSet, type, isPage ? limit : undefined);
    // Each object the field may return is one: a list of them `size` times over.
    return {
      cost: size * ((introspection ? 0 : 1) + children.cost),
      depth: own.depth + children.depth,
      aliases: own.aliases + children.aliases,
    };
  }

  private fieldDef(parent: GraphQLCompositeType, name: string): GraphQLField<unknown, unknown> | undefined {
    if (name === SchemaMetaFieldDef.name) return SchemaMetaFieldDef;
    if (name === TypeMetaFieldDef.name) return TypeMetaFieldDef;
    return 'getFields' in parent ? parent.getFields()[name] : undefined;
  }

  /**
   * The most items the field's page may hold: its `first` or `last` argument when given, else its
   * `limit`, as execution would see them; undefined when it has none of them.
   */
  private limit(node: FieldNode, def: GraphQLField<unknown, unknown>): number | undefined {
    return this.argument(node, def, 'first') ?? this.argument(node, def, 'last') ?? this.argument(node, def, 'limit');
  }

  private argument(node: FieldNode, def: GraphQLField<unknown, unknown>, name: string): number | undefined {
    const arg = def.args.find((a) => a.name === name);
    if (!arg) return undefined;
    const value = node.arguments?.find((a) => a.name.value === name)?.value;
    if (value?.kind === Kind.VARIABLE && !this.reads.includes(value.name.value)) this.reads.push(value.name.value);
    const given = value ? valueFromASTUntyped(value, this.variables) : undefined;
    const limit = given ?? arg.defaultValue;
    return typeof limit === 'number' && Number.isInteger(limit) ? Math.max(0, limit) : undefined;
  }
}

/**
 * What an answer actually cost, counted as the estimate counts: one per object a field of object,
 * interface or union type returned; values of scalars (a metadata object is a JSON scalar) and
 * introspection are free. Walks the answer beside the operation's selections; fields under type
 * conditions the object did not meet are absent from the answer, so every condition is followed.
 */
export function answerCost(schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined, data: unknown): number {
  const operation = pickOperation(document, operationName);
  const root = operation && schema.getRootType(operation.operation);
  if (!operation || !root || data === null || typeof data !== 'object') return 0;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);

  /** The fields selected under `set`, by response key, with every type condition's fields. */
  const fieldsOf = (set: SelectionSetNode, into = new Map<string, FieldNode[]>(), seen = new Set<string>()) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const key = selection.alias?.value ?? selection.name.value;
        into.set(key, [...(into.get(key) ?? []), selection]);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) fieldsOf(selection.selectionSet, into, seen);
      else if (!seen.has(selection.name.value)) {
        seen.add(selection.name.value);
        const fragment = fragments.get(selection.name.value);
        if (fragment) fieldsOf(fragment.selectionSet, into, seen);
      }
    }
    return into;
  };
  /** The type a field named `name` returns on some runtime type of `type`. */
  const fieldType = (type: GraphQLCompositeType, name: string) => {
    for (const candidate of isObjectType(type) ? [type] : schema.getPossibleTypes(type)) {
      const field = candidate.getFields()[name];
      if (field) return getNamedType(field.type);
    }
    return undefined;
  };
  // What to follow under an object, by the field nodes and type that returned it: worked out once,
  // not once per item of a list.
  type Step = { key: string; nodes: FieldNode[]; type: GraphQLCompositeType };
  const plans = new WeakMap<FieldNode[], Map<string, Step[]>>();
  const planOf = (nodes: FieldNode[], type: GraphQLCompositeType): Step[] => {
    let byType = plans.get(nodes);
    if (!byType) plans.set(nodes, (byType = new Map()));
    let plan = byType.get(type.name);
    if (!plan) {
      const selected = new Map<string, FieldNode[]>();
      for (const node of nodes) if (node.selectionSet) fieldsOf(node.selectionSet, selected);
      plan = [];
      for (const [key, fieldNodes] of selected) {
        if (fieldNodes[0].name.value.startsWith('__')) continue;
        const child = fieldType(type, fieldNodes[0].name.value);
        if (child && isCompositeType(child)) plan.push({ key, nodes: fieldNodes, type: child });
      }
      byType.set(type.name, plan);
    }
    return plan;
  };
  const objects = (value: unknown, nodes: FieldNode[], type: GraphQLCompositeType): number => {
    if (value === null || typeof value !== 'object') return 0;
    if (Array.isArray(value)) return value.reduce<number>((sum, item) => sum + objects(item, nodes, type), 0);
    let count = 1;
    for (const step of planOf(nodes, type)) count += objects((value as Record<string, unknown>)[step.key], step.nodes, step.type);
    return count;
  };
  // The data root is no field; every object under it is one.
  const rootField = { kind: Kind.FIELD, name: { kind: Kind.NAME, value: '' }, selectionSet: operation.selectionSet } as FieldNode;
  return Math.max(0, objects(data, [rootField], root) - 1);
}

/** The size of a document as it would run: fields selected once fragments are expanded, and their deepest nesting. */
export interface DocumentSize {
  /** Every selected field, scalars and `__typename` included, counted once per place a fragment is spread. */
  fields: number;
  depth: number;
}

/**
 * Measures a document without expanding it: each named fragment is measured once and its size
 * reused wherever it is spread, so the walk takes time in the document's length even when its
 * expansion is exponential (a chain of fragments that each spread the previous one twice). Every
 * operation counts, since validation reads them all. Needs no schema, so it runs before validation;
 * unknown and cyclic spreads count as empty (validation refuses them).
 */
export function documentSize(document: DocumentNode): DocumentSize {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION && !fragments.has(d.name.value)) fragments.set(d.name.value, d);
  const sizes = new Map<string, DocumentSize>();
  const measuring = new Set<string>();
  const empty: DocumentSize = { fields: 0, depth: 0 };

  const fragmentSize = (name: string): DocumentSize => {
    const known = sizes.get(name);
    if (known) return known;
    const fragment = fragments.get(name);
    if (!fragment || measuring.has(name)) return empty;
    measuring.add(name);
    const size = setSize(fragment.selectionSet);
    measuring.delete(name);
    sizes.set(name, size);
    return size;
  };
  // Recursion follows the document's own nesting, which the token limit bounds.
  const setSize = (set: SelectionSetNode): DocumentSize => {
    let fields = 0;
    let depth = 0;
    for (const selection of set.selections) {
      const part =
        selection.kind === Kind.FIELD
          ? selection.selectionSet
            ? ((inner) => ({ fields: 1 + inner.fields, depth: 1 + inner.depth }))(setSize(selection.selectionSet))
            : { fields: 1, depth: 1 }
          : selection.kind === Kind.INLINE_FRAGMENT
            ? setSize(selection.selectionSet)
            : fragmentSize(selection.name.value);
      fields += part.fields;
      depth = Math.max(depth, part.depth);
    }
    return { fields, depth };
  };

  let fields = 0;
  let depth = 0;
  for (const d of document.definitions) {
    if (d.kind !== Kind.OPERATION_DEFINITION) continue;
    const size = setSize(d.selectionSet);
    fields += size.fields;
    depth = Math.max(depth, size.depth);
  }
  return { fields, depth };
}
