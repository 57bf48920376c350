// Meter filters and aggregations: what a client sends, checked, and compiled to SQL over the
// usage_events table (aliased `e`). Invariant: nothing a client sends is ever spliced into SQL.
// Column names come from a fixed table below; metadata property names and values reach the
// database only as bound parameters of jsonb operators (`e.metadata -> $1`).
import { Prisma } from '../../generated/prisma/client.ts';
import type { Loc, ValidationIssues } from '../../graphql/errors.ts';
import { metadataLimits } from '../../graphql/metadata.ts';

export const filterOperators = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'like', 'not_like'] as const;
export type FilterOperator = (typeof filterOperators)[number];
export type FilterValue = string | number | boolean;

export interface FilterClause {
  property: string;
  operator: FilterOperator;
  value: FilterValue;
}

export interface Filter {
  conjunction: 'and' | 'or';
  clauses: (FilterClause | Filter)[];
}

export const aggregationFunctions = ['count', 'sum', 'max', 'min', 'avg', 'unique'] as const;
export type AggregationFunction = (typeof aggregationFunctions)[number];

export interface Aggregation {
  func: AggregationFunction;
  /** The metadata property aggregated; null for count. */
  property: string | null;
}

/** How deep filters nest (a filter inside a filter is one level), and how many clauses one level holds. */
export const filterLimits = { maxDepth: 5, maxClauses: 50, maxStringLength: 500 };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The metadata key a clause or an aggregation names: `name` is the event's name; any other
 * property is a metadata key, spelled bare (`tokens`) or prefixed (`metadata.tokens`).
 */
function metadataKey(property: string): string {
  return property.startsWith('metadata.') ? property.slice('metadata.'.length) : property;
}

function checkProperty(issues: ValidationIssues, property: unknown, loc: Loc): property is string {
  if (typeof property !== 'string') {
    issues.add(loc, 'Input should be a valid string', 'string_type');
    return false;
  }
  const key = metadataKey(property);
  if (key.length < 1 || key.length > metadataLimits.maxKeyLength) {
    issues.add(loc, `A property is "name" or a metadata key of 1 to ${metadataLimits.maxKeyLength} characters.`, 'value_error');
    return false;
  }
  return true;
}

/** A filter as a client sent it, checked: every problem is added to `issues` at its own loc. */
export function checkFilter(issues: ValidationIssues, value: unknown, loc: Loc, depth = 1): Filter {
  const empty: Filter = { conjunction: 'and', clauses: [] };
  if (!isObject(value)) {
    issues.add(loc, 'Input should be a filter: {"conjunction": "and" | "or", "clauses": [...]}', 'model_type');
    return empty;
  }
  if (depth > filterLimits.maxDepth) {
    issues.add(loc, `Filters nest at most ${filterLimits.maxDepth} levels deep.`, 'too_deep');
    return empty;
  }
  for (const key of Object.keys(value)) {
    if (key !== 'conjunction' && key !== 'clauses') issues.add([...loc, key], 'Extra inputs are not permitted', 'extra_forbidden');
  }
  const conjunction = value.conjunction;
  if (conjunction !== 'and' && conjunction !== 'or') issues.add([...loc, 'conjunction'], "Input should be 'and' or 'or'", 'enum');
  if (!Array.isArray(value.clauses)) {
    issues.add([...loc, 'clauses'], 'Input should be a valid list', 'list_type');
    return empty;
  }
  if (value.clauses.length > filterLimits.maxClauses) {
    issues.add([...loc, 'clauses'], `A filter holds at most ${filterLimits.maxClauses} clauses.`, 'too_long');
    return empty;
  }
  const clauses = value.clauses.map((clause, i) => {
    const at = [...loc, 'clauses', i];
    if (isObject(clause) && 'conjunction' in clause) return checkFilter(issues, clause, at, depth + 1);
    return checkClause(issues, clause, at);
  });
  return { conjunction: conjunction as Filter['conjunction'], clauses };
}

function checkClause(issues: ValidationIssues, value: unknown, loc: Loc): FilterClause {
  const clause = { property: '', operator: 'eq', value: '' } as FilterClause;
  if (!isObject(value)) {
    issues.add(loc, 'Input should be a clause {"property", "operator", "value"} or a nested filter', 'model_type');
    return clause;
  }
  for (const key of Object.keys(value)) {
    if (!['property', 'operator', 'value'].includes(key)) issues.add([...loc, key], 'Extra inputs are not permitted', 'extra_forbidden');
  }
  if (value.property === undefined) issues.add([...loc, 'property'], 'Field required', 'missing');
  else if (checkProperty(issues, value.property, [...loc, 'property'])) clause.property = value.property;
  if (!(filterOperators as readonly unknown[]).includes(value.operator)) {
    issues.add([...loc, 'operator'], `Input should be ${filterOperators.map((o) => `'${o}'`).join(', ')}`, 'enum');
  } else clause.operator = value.operator as FilterOperator;
  const operand = value.value;
  if (operand === undefined) issues.add([...loc, 'value'], 'Field required', 'missing');
  else if (typeof operand === 'string') {
    if (operand.length > filterLimits.maxStringLength) issues.add([...loc, 'value'], `String should have at most ${filterLimits.maxStringLength} characters`, 'string_too_long');
    clause.value = operand;
  } else if ((typeof operand === 'number' && Number.isFinite(operand)) || typeof operand === 'boolean') clause.value = operand;
  else issues.add([...loc, 'value'], 'Input should be a string, a finite number or a boolean', 'value_error');
  if ((clause.operator === 'like' || clause.operator === 'not_like') && typeof operand !== 'string') {
    issues.add([...loc, 'value'], `${clause.operator} compares text: give a string.`, 'string_type');
  }
  return clause;
}

/** An aggregation as a client sent it, checked: count takes no property, every other function one. */
export function checkAggregation(issues: ValidationIssues, value: { func: AggregationFunction; property?: string | null }, loc: Loc): Aggregation {
  if (value.func === 'count') {
    if (value.property != null) issues.add([...loc, 'property'], 'count takes no property.', 'extra_forbidden');
    return { func: 'count', property: null };
  }
  if (value.property == null) {
    issues.add([...loc, 'property'], `Field required: ${value.func} aggregates a metadata property.`, 'missing');
    return { func: value.func, property: null };
  }
  if (value.property === 'name') issues.add([...loc, 'property'], `${value.func} aggregates a metadata property, not the event's name.`, 'value_error');
  checkProperty(issues, value.property, [...loc, 'property']);
  return { func: value.func, property: value.property };
}

// ---------------------------------------------------------------------------------------------
// Compiling to SQL

const sqlTrue = Prisma.sql`TRUE`;
const sqlFalse = Prisma.sql`FALSE`;

const comparisons: Record<'eq' | 'gt' | 'gte' | 'lt' | 'lte', Prisma.Sql> = {
  eq: Prisma.raw('='),
  gt: Prisma.raw('>'),
  gte: Prisma.raw('>='),
  lt: Prisma.raw('<'),
  lte: Prisma.raw('<='),
};

/** `%text%` with the text's own `%`, `_` and `\` matching only themselves: like means "contains". */
function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, '\\$&')}%`;
}

/**
 * One clause. On the event's name, a text comparison. On metadata, a jsonb comparison: eq and ne
 * compare the JSON values (1 = 1.0; "1" ≠ 1), the order comparisons hold only between values of
 * the same JSON type (a number is never greater than a string), like matches the value's text.
 * ne and not_like also match events without the property.
 */
function clauseSql(clause: FilterClause): Prisma.Sql {
  const { operator, value } = clause;
  if (clause.property === 'name') {
    const text = String(value);
    if (operator === 'like') return Prisma.sql`e.name LIKE ${containsPattern(text)}`;
    if (operator === 'not_like') return Prisma.sql`e.name NOT LIKE ${containsPattern(text)}`;
    if (operator === 'ne') return Prisma.sql`e.name <> ${text}`;
    return Prisma.sql`e.name ${comparisons[operator]} ${text}`;
  }
  const key = metadataKey(clause.property);
  const json = JSON.stringify(value);
  switch (operator) {
    case 'eq':
      return Prisma.sql`(e.metadata -> ${key}::text) = ${json}::jsonb`;
    case 'ne':
      return Prisma.sql`(e.metadata -> ${key}::text) IS DISTINCT FROM ${json}::jsonb`;
    case 'like':
      return Prisma.sql`(e.metadata ->> ${key}::text) LIKE ${containsPattern(String(value))}`;
    case 'not_like':
      return Prisma.sql`(e.metadata ->> ${key}::text) IS NULL OR (e.metadata ->> ${key}::text) NOT LIKE ${containsPattern(String(value))}`;
    default:
      return Prisma.sql`(jsonb_typeof(e.metadata -> ${key}::text) = ${typeof value} AND (e.metadata -> ${key}::text) ${comparisons[operator]} ${json}::jsonb)`;
  }
}

/** A checked filter as a SQL condition over `e`: an empty `and` matches every event, an empty `or` none. */
export function filterSql(filter: Filter): Prisma.Sql {
  if (!filter.clauses.length) return filter.conjunction === 'and' ? sqlTrue : sqlFalse;
  const parts = filter.clauses.map((clause) => Prisma.sql`(${'conjunction' in clause ? filterSql(clause) : clauseSql(clause)})`);
  return Prisma.join(parts, filter.conjunction === 'and' ? ' AND ' : ' OR ', '(', ')');
}

/**
 * A checked aggregation as a SQL aggregate over `e`, a double precision that is 0 over no events.
 * sum, max, min and avg read the property's numbers only (events where it is missing or not a
 * number are left out); unique counts its distinct JSON values.
 */
export function aggregationSql(aggregation: Aggregation): Prisma.Sql {
  if (aggregation.func === 'count') return Prisma.sql`count(*)::float8`;
  const key = metadataKey(aggregation.property!);
  if (aggregation.func === 'unique') return Prisma.sql`count(DISTINCT e.metadata -> ${key}::text)::float8`;
  const number = Prisma.sql`CASE WHEN jsonb_typeof(e.metadata -> ${key}::text) = 'number' THEN (e.metadata ->> ${key}::text)::numeric END`;
  const functions = { sum: Prisma.raw('sum'), max: Prisma.raw('max'), min: Prisma.raw('min'), avg: Prisma.raw('avg') };
  return Prisma.sql`coalesce(${functions[aggregation.func]}(${number}), 0)::float8`;
}
