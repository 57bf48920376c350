// A REST route is a table entry: method, documented path, and the GraphQL operation it runs.
// Path parameters bind to the operation's variables of the same name, query parameters to the
// variables whose snake_case name they carry, and the JSON body to the `body` variable.
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  GraphQLObjectType,
  Kind,
  getNamedType,
  isCompositeType,
  parse,
  typeFromAST,
  validate,
} from 'graphql';
import { camelCase, wireShape, type WireShape } from '../wire/shape.ts';
import { restInputType } from './input.ts';

export interface RestRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** The documented path, trailing slash included, with `{name}` parameters. */
  path: string;
  operation: string;
  /** The variable that receives the JSON body. */
  body?: string;
  /** The success status: 200 unless said otherwise; 204 sends no body. */
  status?: number;
  /** Answers a CSV file, streamed page by page, instead of JSON (see CsvExport). */
  csv?: CsvExport;
}

/**
 * A route whose answer is a CSV file. Its operation selects one page of a list, `items` and
 * `pageInfo { hasNextPage endCursor }`; the adapter runs it again with each page's end cursor in
 * the `cursor` variable and writes the rows of each page as it comes, so the file is never held
 * whole. The cursor variable is not a parameter of the route.
 */
export interface CsvExport {
  cursor: string;
  columns: readonly CsvColumn[];
  /** The name the download is saved under (Content-Disposition). */
  filename: string;
}

export interface CsvColumn {
  header: string;
  /** The cell of one item, from the item as GraphQL answers it (camelCase). */
  cell(item: any): unknown;
}

export interface VariableBinding {
  name: string;
  type: GraphQLInputType;
  /** The type REST values are checked against (wire.ts restInputType): REST's spelling of enums. */
  restType: GraphQLInputType;
  source: 'path' | 'query' | 'body';
  /** The name on the wire: the path parameter or query parameter. */
  wireName: string;
}

export interface CompiledRoute extends RestRoute {
  pattern: RegExp;
  pathParams: string[];
  document: DocumentNode;
  variables: VariableBinding[];
  /** The result's root field and the field under it whose value is the REST body. */
  resultPath: string[];
  /** The GraphQL field at the end of resultPath: its type and options describe the REST body. */
  resultField: GraphQLField<unknown, unknown>;
  shape: WireShape | null;
  status: number;
  /**
   * The principal kinds the operation's surface root admits (read from its `authScopes`), or null
   * for the public endpoints. The adapter checks it before reading the request, so a token of the
   * wrong kind is refused as such, whatever the body holds.
   */
  admits: string[] | null;
}

export class RouteDefinitionError extends Error {}

/** Root fields that only group the fields of an API surface. */
const surfaces = ['core', 'customerPortal'];

export function compileRoute(schema: GraphQLSchema, route: RestRoute): CompiledRoute {
  const where = `${route.method} ${route.path}`;
  const document = parse(route.operation);
  const errors = validate(schema, document);
  if (errors.length) throw new RouteDefinitionError(`${where}: ${errors.map((e) => e.message).join('; ')}`);
  const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  const fragments = Object.fromEntries(
    document.definitions.filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION).map((f) => [f.name.value, f]),
  );

  const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  const pattern = new RegExp(`^${route.path.split(/\{\w+\}/).map(escapeRegExp).join('([^/]+)')}$`);

  const bound = (operation.variableDefinitions ?? []).filter((definition) => definition.variable.name.value !== route.csv?.cursor);
  if (route.csv && bound.length === (operation.variableDefinitions ?? []).length) throw new RouteDefinitionError(`${where}: no variable $${route.csv.cursor} for the CSV pages' cursor`);
  const variables: VariableBinding[] = bound.map((definition) => {
    const name = definition.variable.name.value;
    const type = typeFromAST(schema, definition.type) as GraphQLInputType;
    const restType = restInputType(type);
    const pathParam = pathParams.find((p) => camelCase(p) === name);
    if (pathParam) return { name, type, restType, source: 'path', wireName: pathParam };
    if (route.body === name) return { name, type, restType, source: 'body', wireName: 'body' };
    return { name, type, restType, source: 'query', wireName: name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) };
  });
  for (const p of pathParams) {
    if (!variables.some((v) => v.source === 'path' && v.wireName === p)) throw new RouteDefinitionError(`${where}: no variable for path parameter {${p}}`);
  }
  if (route.body && !variables.some((v) => v.source === 'body')) throw new RouteDefinitionError(`${where}: no variable $${route.body}`);

  // The REST body is the value of the single field under the surface root (core or
  // customerPortal), or of the single root field for the public endpoints.
  const root = operation.selectionSet.selections[0];
  const rootType = schema.getRootType(operation.operation)!;
  if (operation.selectionSet.selections.length !== 1 || root.kind !== Kind.FIELD) {
    throw new RouteDefinitionError(`${where}: the operation must select one root field`);
  }
  const resultPath = [root.alias?.value ?? root.name.value];
  let parentType = rootType;
  let field = root;
  let admits: string[] | null = null;
  if (surfaces.includes(root.name.value)) {
    const authScopes = (rootType.getFields()[root.name.value].extensions?.pothosOptions as { authScopes?: { principal?: string | string[] } } | undefined)?.authScopes;
    if (!authScopes?.principal) throw new RouteDefinitionError(`${where}: the ${root.name.value} root declares no principal kinds`);
    admits = ([] as string[]).concat(authScopes.principal);
    const inner = root.selectionSet?.selections[0];
    if (root.selectionSet?.selections.length !== 1 || inner?.kind !== Kind.FIELD) {
      throw new RouteDefinitionError(`${where}: the operation must select one field under ${root.name.value}`);
    }
    parentType = getNamedType(rootType.getFields()[root.name.value].type) as GraphQLObjectType;
    field = inner;
    resultPath.push(inner.alias?.value ?? inner.name.value);
  }
  const resultField = parentType.getFields()[field.name.value];
  const resultType = getNamedType(resultField.type);
  const shape = field.selectionSet && isCompositeType(resultType) ? wireShape(schema, resultType, field.selectionSet, fragments) : null;

  return {
    ...route,
    status: route.status ?? 200,
    pattern,
    pathParams,
    document,
    variables,
    resultPath,
    resultField,
    shape,
    admits,
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');
}
