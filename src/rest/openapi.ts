// The OpenAPI 3.1 description of the REST layer, generated from what serves it: the compiled route
// table (methods, paths, variables and how the adapter binds them), the GraphQL schema (types,
// defaults, descriptions, scopes) and the wire shapes toWire writes. Nothing here is written per
// route, so a route, field or argument added to the table is in the document as it is served.
import { type GraphQLSchema, type GraphQLInputType, TypeInfo, getNullableType, isListType, isNonNullType, visit, visitWithTypeInfo } from 'graphql';
import type { ErrorKind } from '../graphql/errors.ts';
import { idempotencyWindowMs } from './idempotency.ts';
import type { CompiledRoute, VariableBinding } from './route.ts';
import { JsonSchemas, jsonValue, type JsonSchema } from './json-schema.ts';

export type OpenApiDocument = Record<string, unknown> & { paths: Record<string, Record<string, OpenApiOperation>> };
export interface OpenApiOperation {
  operationId: string;
  tags: string[];
  parameters: { name: string; in: string }[];
  responses: Record<string, unknown>;
  [key: string]: unknown;
}

/** The REST paths in the document are relative to the server URL, which ends in `/v1`. */
export const documentPrefix = '/v1';

const reasons: Record<number, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content' };

const rateLimitHeaders = {
  'RateLimit-Limit': { description: 'The requests the most constrained budget allows per window.', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'What is left of that budget in the current window.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window ends.', schema: { type: 'integer' } },
  'RateLimit-Policy': { description: 'The budget as `limit;w=window_seconds`.', schema: { type: 'string' } },
};

const retryAfterHeader = { description: 'Seconds until requests are allowed again.', schema: { type: 'integer' } };

const securitySchemes = {
  access_token: {
    type: 'http',
    scheme: 'bearer',
    description: 'An organization access token, a personal access token or an OAuth 2.0 access token of this environment. The requirement lists the scopes that allow the call: any one of them is enough.',
  },
  customer_session: {
    type: 'http',
    scheme: 'bearer',
    description: 'A customer session token of this environment, made with POST /v1/customer-sessions/.',
  },
};

const description = `Kassa's REST API, served over the same GraphQL schema as \`/v1/graphql\`: each operation runs the GraphQL field it names, with the same scopes and rules.

- Field names are snake_case; lists are \`{items, pagination: {total_count, max_page}}\` with \`page\` (from 1) and \`limit\` (1 to 100).
- Errors are \`{"error": Name, "detail": sentence}\`; invalid input is 422 \`{"detail": [{"loc", "msg", "type"}]}\`, where \`loc\` starts with \`body\`, \`query\`, \`path\` or \`header\`.
- A POST may carry an \`Idempotency-Key\`: a retry with the same key and request gets the first answer back without running again.
- A path served by no operation answers 404 \`ResourceNotFound\` (the body the client library parses as its not-found error); a method the path does not serve, 405 \`MethodNotAllowed\`.
- Production and sandbox are separate servers of this document: tokens and data of one are unknown in the other.`;

/**
 * The document without `servers`, which depend on where the environment is served. Throws a
 * DocumentationError when the schema holds something it cannot describe, so the server does not
 * start with a document that lies.
 */
export function openApiDocument(schema: GraphQLSchema, routes: CompiledRoute[], served: { version: string; maxBodyBytes: number }): OpenApiDocument {
  const schemas = new JsonSchemas(schema);
  const paths: OpenApiDocument['paths'] = {};
  const operationIds = operationIdsOf(routes);
  const shared = sharedResponses(served.maxBodyBytes);
  for (const route of routes) {
    if (!route.path.startsWith(`${documentPrefix}/`)) throw new Error(`${route.method} ${route.path} is not under ${documentPrefix}`);
    const path = route.path.slice(documentPrefix.length);
    (paths[path] ??= {})[route.method.toLowerCase()] = operationOf(schema, route, schemas, operationIds.get(route)!, shared);
  }
  const tags = [...new Set(Object.values(paths).flatMap((methods) => Object.values(methods).flatMap((o) => o.tags)))];
  return {
    openapi: '3.1.0',
    info: { title: 'Kassa REST API', version: served.version, description, license: { name: 'MIT', identifier: 'MIT' } },
    tags: tags.map((name) => ({ name })),
    paths,
    components: { schemas: schemas.components, responses: responseComponents(schemas, shared), headers: { ...rateLimitHeaders, 'Retry-After': retryAfterHeader }, securitySchemes },
  };
}

/** The document as an environment serves it: its own base URL is the only server. */
export function forServer(document: OpenApiDocument, baseUrl: string, environment: string): OpenApiDocument {
  return { ...document, servers: [{ url: `${baseUrl}${documentPrefix}`, description: environment }] };
}

function operationOf(schema: GraphQLSchema, route: CompiledRoute, schemas: JsonSchemas, operationId: string, shared: Record<string, SharedResponse>): OpenApiOperation {
  const field = route.resultField;
  const graphqlName = `${route.document.definitions.some((d) => 'operation' in d && d.operation === 'mutation') ? 'Mutation' : 'Query'}.${route.resultPath.join('.')}`;
  const scopes = scopesOf(route);
  const arguments_ = argumentsOf(schema, route);
  const parameters: OpenApiOperation['parameters'] = route.variables.filter((v) => v.source !== 'body').map((binding) => parameterOf(binding, schemas, arguments_.get(binding.name)));
  if (route.method === 'POST') parameters.push(idempotencyKey);
  const operation: OpenApiOperation = {
    operationId,
    tags: [tagOf(route.path)],
    summary: route.csv ? `${humanized(field.name)} as a CSV file` : (summaryOf(field.description) ?? humanized(field.name)),
    description: [field.description, `Runs the GraphQL field \`${graphqlName}\`.`, scopes.note].filter(Boolean).join('\n\n'),
    parameters,
    responses: responsesOf(route, schemas, shared),
    security: scopes.requirements,
  };
  const body = route.variables.find((v) => v.source === 'body');
  if (body) operation.requestBody = { required: true, content: { 'application/json': { schema: schemas.input(body.type) } } };
  if (field.deprecationReason) operation.deprecated = true;
  return operation;
}

const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: `Makes retries safe: the first answer to a key is kept for ${idempotencyWindowMs / 3_600_000} hours and returned to a retry of the same request; the key with another request is refused (422).`,
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
};

interface ArgumentInfo {
  description?: string | null;
  deprecationReason?: string | null;
  default?: unknown;
}

/** For each variable, the argument it is passed to: its description, deprecation and default. */
function argumentsOf(schema: GraphQLSchema, route: CompiledRoute): Map<string, ArgumentInfo> {
  const found = new Map<string, ArgumentInfo>();
  const typeInfo = new TypeInfo(schema);
  visit(
    route.document,
    visitWithTypeInfo(typeInfo, {
      Variable(node) {
        const argument = typeInfo.getArgument();
        const type = typeInfo.getInputType();
        if (!argument || !type) return;
        const defaultValue = typeInfo.getDefaultValue();
        found.set(node.name.value, {
          description: argument.description,
          deprecationReason: argument.deprecationReason,
          default: defaultValue === undefined ? undefined : jsonValue(defaultValue, type),
        });
      },
    }),
  );
  return found;
}

/** A path or query parameter as the adapter reads it (see queryValue in adapter.ts). */
function parameterOf(binding: VariableBinding, schemas: JsonSchemas, argument: ArgumentInfo | undefined) {
  const inner = getNullableType(binding.type) as GraphQLInputType;
  const parameter: Record<string, unknown> = { name: binding.wireName, in: binding.source };
  if (binding.source === 'path') {
    parameter.required = true;
    parameter.schema = schemas.inputValue(inner);
  } else if (!isListType(inner) && 'name' in inner && inner.name === 'JSONObject') {
    // `metadata[key]=value`, each key any of its repeated values.
    Object.assign(parameter, { style: 'deepObject', explode: true, schema: { type: 'object', additionalProperties: { type: 'string' } } });
  } else {
    // A query string cannot carry null: the parameter is the type's value, or absent.
    parameter.schema = isListType(inner) ? { type: 'array', items: schemas.inputValue(getNullableType(inner.ofType) as GraphQLInputType) } : schemas.inputValue(inner);
    if (argument?.default !== undefined) (parameter.schema as JsonSchema).default = argument.default;
    parameter.required = isNonNullType(binding.type) && argument?.default === undefined;
  }
  const notes = [argument?.description, isListType(inner) ? 'Repeat the parameter to give several values: any of them matches.' : null, argument?.deprecationReason && `Deprecated: ${argument.deprecationReason}.`];
  if (notes.some(Boolean)) parameter.description = notes.filter(Boolean).join(' ');
  if (argument?.deprecationReason) parameter.deprecated = true;
  return parameter as { name: string; in: string };
}

/** Who may call the route: the token kind its surface admits, and the scopes its field requires (any one). */
function scopesOf(route: CompiledRoute): { requirements: Record<string, string[]>[]; note: string | null } {
  if (!route.admits) return { requirements: [], note: 'Needs no token.' };
  const scheme = route.admits.includes('customer') ? 'customer_session' : 'access_token';
  const authScopes = (route.resultField.extensions?.pothosOptions as { authScopes?: unknown } | undefined)?.authScopes;
  const declared = typeof authScopes === 'object' && authScopes !== null ? (authScopes as { scope?: string | string[]; $all?: { scope?: string | string[] } }) : {};
  const scopes = ([] as string[]).concat(declared.scope ?? declared.$all?.scope ?? []);
  const requirements = scopes.length ? scopes.map((scope) => ({ [scheme]: [scope] })) : [{ [scheme]: [] }];
  return { requirements, note: scopes.length ? `Requires a token with the scope ${scopes.map((s) => `\`${s}\``).join(' or ')}.` : null };
}

/** An answer several operations give alike, by name in `components.responses`. */
interface SharedResponse {
  status: number;
  /** The `error` names of the body; none for a validation body. */
  errors: string[];
  description: string;
  headers?: Record<string, unknown>;
}

function sharedResponses(maxBodyBytes: number): Record<string, SharedResponse> {
  const retryAfter = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } };
  return {
    Unauthorized: { status: 401, errors: ['Unauthorized'], description: 'No token, or a token that is invalid, expired or revoked.' },
    InvalidToken: { status: 401, errors: ['Unauthorized'], description: 'A token was sent and it is invalid, expired or revoked (the operation needs none).' },
    NotPermitted: { status: 403, errors: ['NotPermitted'], description: 'The token may not do this: another kind of token, a missing scope, or no access to the resource.' },
    ResourceNotFound: { status: 404, errors: ['ResourceNotFound'], description: 'A resource the request names does not exist, or the token cannot reach it.' },
    IdempotencyKeyInUse: { status: 409, errors: ['IdempotencyKeyInUse'], description: 'A request with this Idempotency-Key is still running.' },
    PayloadTooLarge: { status: 413, errors: ['PayloadTooLarge'], description: `The body is longer than ${maxBodyBytes} bytes.` },
    UnsupportedMediaType: { status: 415, errors: ['UnsupportedMediaType'], description: 'The body is not sent as application/json.' },
    ValidationError: { status: 422, errors: [], description: 'A parameter or the body is invalid: every problem, each with its location.' },
    RateLimitExceeded: { status: 429, errors: ['RateLimitExceeded'], description: 'A rate limit is exhausted: the body names it, Retry-After says when to come back.', headers: { ...retryAfter, ...rateLimitHeaderRefs } },
    InternalServerError: { status: 500, errors: ['InternalServerError'], description: 'An unexpected error; the detail quotes the request id.' },
    RateLimiterUnavailable: {
      status: 503,
      errors: ['RateLimiterUnavailable'],
      description: 'Only where rate limits are counted in Redis and the deployment refuses what it cannot count: the store cannot be reached.',
      headers: retryAfter,
    },
  };
}

const rateLimitHeaderRefs = Object.fromEntries(Object.keys(rateLimitHeaders).map((name) => [name, { $ref: `#/components/headers/${name}` }]));

function responseComponents(schemas: JsonSchemas, shared: Record<string, SharedResponse>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(shared).map(([name, response]) => [
      name,
      { description: response.description, ...(response.headers && { headers: response.headers }), content: { 'application/json': { schema: bodyOf(schemas, response.errors, !response.errors.length) } } },
    ]),
  );
}

/** The body of an error response: `{error, detail}` for the named errors, and the bodies of their own for the others. */
function bodyOf(schemas: JsonSchemas, errors: string[], validation: boolean, others: JsonSchema[] = []): JsonSchema {
  const bodies: JsonSchema[] = [...others];
  const named = errors.filter((e) => e !== 'RateLimitExceeded');
  if (named.length) bodies.push(errorBody(named));
  if (errors.includes('RateLimitExceeded')) bodies.push(schemas.define('RateLimitExceeded', rateLimitExceeded));
  if (validation) bodies.push(schemas.define('ValidationError', validationError));
  return bodies.length === 1 ? bodies[0] : { anyOf: bodies };
}

/**
 * Every answer the route can give, as the REST layer emits it: the success body is the wire shape
 * of the route's field; the errors are those the adapter, the server around it and the field's
 * declared errors produce.
 */
function responsesOf(route: CompiledRoute, schemas: JsonSchemas, shared: Record<string, SharedResponse>): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  const success: Record<string, unknown> = { description: reasons[route.status] ?? 'Success', headers: rateLimitHeaderRefs };
  if (route.csv) {
    success.description = `A CSV file (RFC 4180, CRLF line ends), streamed: a header row (${route.csv.columns.map((c) => c.header).join(', ')}), then one row per item. A cell starting with =, +, - or @ is prefixed with a single quote.`;
    success.content = { 'text/csv': { schema: { type: 'string' } } };
  } else if (route.status !== 204) success.content = { 'application/json': { schema: schemas.output(route.resultField.type, route.shape) } };
  responses[route.status] = success;

  const generic = ['PayloadTooLarge', 'RateLimitExceeded', 'InternalServerError', 'RateLimiterUnavailable', route.admits ? 'Unauthorized' : 'InvalidToken'];
  if (route.admits) generic.push('NotPermitted');
  if (route.pathParams.length || route.body) generic.push('ResourceNotFound');
  if (route.method === 'POST') generic.push('IdempotencyKeyInUse');
  if (route.body) generic.push('UnsupportedMediaType');
  if (route.variables.length || route.method === 'POST') generic.push('ValidationError');
  const declared = declaredErrors(route);
  for (const name of generic) {
    const { status } = shared[name];
    if (!declared.some((e) => e.status === status)) responses[status] = { $ref: `#/components/responses/${name}` };
  }
  // A status the field's own errors share with a generic answer: one response with every body.
  for (const status of new Set(declared.map((e) => e.status))) {
    const alike = generic.map((name) => shared[name]).filter((r) => r.status === status);
    const own = declared.filter((e) => e.status === status);
    const errors = [...alike.flatMap((r) => r.errors), ...own.filter((e) => !e.restFields).map((e) => e.restError)];
    // An error whose body carries more than `error` and `detail` has a body of its own.
    const extended = own.filter((e) => e.restFields).map((e) => errorBody([e.restError], e.restFields));
    const validation = alike.some((r) => !r.errors.length);
    const description = [...alike.map((r) => r.description), ...declared.filter((e) => e.status === status).map((e) => `${e.restError}: ${e.description}`)].join(' ');
    const headers = Object.assign({}, ...alike.map((r) => r.headers ?? {})) as Record<string, unknown>;
    responses[status] = { description, ...(Object.keys(headers).length && { headers }), content: { 'application/json': { schema: bodyOf(schemas, errors, validation, extended) } } };
  }
  return Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
}

/** The errors the route's field declares it raises (`raises` in graphql/errors.ts). */
function declaredErrors(route: CompiledRoute): ErrorKind[] {
  const errors = route.resultField.extensions?.errors;
  return Array.isArray(errors) ? (errors as ErrorKind[]) : [];
}

function errorBody(names: string[], fields: string[] = []): JsonSchema {
  return {
    type: 'object',
    properties: { error: { type: 'string', enum: [...new Set(names)].sort() }, detail: { type: 'string' }, ...Object.fromEntries(fields.map((f) => [f, { type: 'string' }])) },
    required: ['error', 'detail', ...fields],
    additionalProperties: false,
  };
}

const validationError: JsonSchema = {
  type: 'object',
  description: 'Every problem with the input at once.',
  properties: {
    detail: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          loc: { type: 'array', items: { type: ['string', 'integer'] }, description: 'Where: `body`, `query`, `path` or `header`, then the keys and indexes down to the value.' },
          msg: { type: 'string' },
          type: { type: 'string', description: 'The kind of problem: `missing`, `extra_forbidden`, `value_error`, `int_parsing`, …' },
        },
        required: ['loc', 'msg', 'type'],
        additionalProperties: false,
      },
    },
  },
  required: ['detail'],
  additionalProperties: false,
};

const rateLimitExceeded: JsonSchema = {
  type: 'object',
  properties: {
    error: { const: 'RateLimitExceeded' },
    detail: { type: 'string' },
    limit: {
      type: 'object',
      properties: { name: { type: 'string' }, limit: { type: 'integer' }, window_seconds: { type: 'integer' }, retry_after: { type: 'integer' } },
      required: ['name', 'limit', 'window_seconds', 'retry_after'],
      additionalProperties: false,
    },
  },
  required: ['error', 'detail', 'limit'],
  additionalProperties: false,
};

/** Resources by their path: `/v1/products/{id}` is tagged products, `/v1/customer-portal/orders/` customer-portal/orders. */
function tagOf(path: string): string {
  const [resource, sub] = path.slice(documentPrefix.length + 1).split('/');
  return resource === 'customer-portal' && sub ? `${resource}/${sub}` : resource;
}

/**
 * Each route's GraphQL field path (`core.products`), made unique where several routes run one
 * field: by the path parameters that tell them apart (`core.customerStateByExternalId`).
 */
function operationIdsOf(routes: CompiledRoute[]): Map<CompiledRoute, string> {
  const counts = new Map<string, number>();
  // A CSV export runs its list's field: it is that field's export.
  const baseOf = (route: CompiledRoute) => `${route.resultPath.join('.')}${route.csv ? 'Export' : ''}`;
  for (const route of routes) counts.set(baseOf(route), (counts.get(baseOf(route)) ?? 0) + 1);
  const ids = new Map<CompiledRoute, string>();
  for (const route of routes) {
    const base = baseOf(route);
    const by = route.pathParams.map((p) => p.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase())).join('And');
    const id = counts.get(base)! > 1 && by ? `${base}By${by}` : base;
    if ([...ids.values()].includes(id)) throw new Error(`Two REST routes would share the operationId ${id}`);
    ids.set(route, id);
  }
  return ids;
}

/** `customerStateByExternalId` as `Customer state by external id`. */
function humanized(name: string): string {
  const words = name.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The first sentence of a description, for the operation's one-line summary. */
function summaryOf(description: string | null | undefined): string | undefined {
  const sentence = description?.split(/(?<=\.)\s/)[0].trim();
  return sentence && sentence.length <= 120 ? sentence.replace(/\.$/, '') : undefined;
}
