// The REST adapter: matches a documented path, turns path, query and body into the operation's
// variables, runs the operation through the same envelop pipeline as /graphql, and maps the result
// (or its error) to the REST body. It holds no business rules.
import type { RunOperation } from '../graphql/in-process.ts';
import {
  type ExecutionResult,
  type GraphQLError,
  type GraphQLInputType,
  type GraphQLSchema,
  coerceInputValue,
  getNullableType,
  isListType,
  isNonNullType,
  GraphQLBoolean,
  GraphQLFloat,
  GraphQLInt,
  getNamedType,
} from 'graphql';
import type { Context } from '../context.ts';
import { KassaError, NotPermittedError, RequestValidationError, UnauthenticatedError, ValidationIssues, type Loc, type ValidationIssue } from '../graphql/errors.ts';
import { compileRoute, type CompiledRoute, type CsvExport, type RestRoute, type VariableBinding } from './route.ts';
import { csvRow } from './csv.ts';
import { snakeCase, toWire } from '../wire/shape.ts';
import { fromWire, graphqlEnumValues } from './input.ts';
import { nulCharacterIssues } from '../graphql/text.ts';
import { inputPathKey, WireOnlyValueError } from '../graphql/wire-values.ts';
import { maxVariableErrors, overlongList, overlongListError } from '../graphql/variable-limits.ts';
import { nestingIssue, tooDeepAt } from '../graphql/nesting.ts';

export interface RestRequest {
  method: string;
  /** The path under the environment's base, e.g. `/v1/products/`. */
  path: string;
  query: URLSearchParams;
  /** The body's media type, lowercased, without parameters (http/request.ts). */
  contentType: string | undefined;
  body: Buffer;
  idempotencyKey?: string;
}

export interface RestResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  /**
   * A body written as it is produced (a CSV export), instead of `body`. It may throw part way:
   * the status is sent by then, so the edge ends the connection without completing the answer.
   */
  stream?: AsyncIterable<string>;
}

export type RestHandler = (request: RestRequest, context: Context) => Promise<RestResponse>;

export function restError(status: number, error: string, detail: string): RestResponse {
  return { status, body: { error, detail } };
}

function validationResponse(issues: ValidationIssue[]): RestResponse {
  return { status: 422, body: { detail: issues } };
}

export function compileRoutes(schema: GraphQLSchema, routes: RestRoute[]): CompiledRoute[] {
  const seen = new Set<string>();
  return routes.map((route) => {
    const key = `${route.method} ${route.path}`;
    if (seen.has(key)) throw new Error(`Duplicate REST route ${key}`);
    seen.add(key);
    return compileRoute(schema, route);
  });
}

const tooManyIssues = Symbol('too many validation issues');

/** `run` executes a route's operation in-process, through the same pipeline as /graphql. */
export function createRestHandler(routes: CompiledRoute[], run: RunOperation): RestHandler {
  return async (request, context) => {
    const match = matchRoute(routes, request.method, request.path);
    if (match === 'method-not-allowed') return restError(405, 'MethodNotAllowed', `${request.method} is not allowed on ${request.path}.`);
    if (!match) {
      const hint = !request.path.endsWith('/') && matchRoute(routes, request.method, `${request.path}/`) ? ` Did you mean ${request.path}/ ?` : '';
      return restError(404, 'ResourceNotFound', `No endpoint at ${request.method} ${request.path}.${hint}`);
    }
    const { route, params } = match;
    const refusal = surfaceRefusal(route, context);
    if (refusal) return restError(refusal.status, refusal.restError, refusal.message);

    const issues = new ValidationIssues();
    let body: unknown;
    if (route.body) {
      const parsed = parseJsonBody(request);
      if ('response' in parsed) return parsed.response;
      body = parsed.value;
    }
    const variables: Record<string, unknown> = {};
    // Wire values GraphQL does not offer reach the operation as their stand-in; the service finds
    // the value sent in the context and refuses it among the request's other faults.
    const wireOnly = new Map<string, string>();
    for (const binding of route.variables) {
      const raw =
        binding.source === 'path'
          ? params[binding.wireName]
          : binding.source === 'body'
            ? fromWire(body, binding.type, ['body'], (loc) => issues.add(loc, 'Extra inputs are not permitted', 'extra_forbidden'))
            : queryValue(request.query, binding, issues);
      if (raw === undefined) {
        if (isNonNullType(binding.type)) issues.add(wireLoc(binding), 'Field required', 'missing');
        continue;
      }
      const overlong = overlongList(raw, wireLoc(binding));
      if (overlong) {
        issues.add(overlong.loc, overlongListError(overlong).issues[0].msg, 'too_long');
        continue;
      }
      try {
        coerceInputValue(raw, binding.restType, (path, _invalid, error) => {
          // Past the first errors the answer says no more, so coercion stops (see graphql/variable-limits.ts).
          if (issues.list.length >= maxVariableErrors) throw tooManyIssues;
          const loc = [...wireLoc(binding), ...path.map((p) => (typeof p === 'string' ? snakeCase(p) : p))];
          // graphql-js reports a missing field at its parent; the client wants the field itself.
          const missing = /^Field "(\w+)" of required type "[^"]+" was not provided\.$/.exec(error.message);
          if (missing) issues.add([...loc, snakeCase(missing[1])], 'Field required', 'missing');
          else if (error instanceof WireOnlyValueError) {
            wireOnly.set(inputPathKey([binding.name, ...path]), error.value);
            setAt(raw, path, error.standIn);
          } else issues.add(loc, error.message, 'value_error');
        });
      } catch (error) {
        if (error !== tooManyIssues) throw error;
        break;
      }
      nulCharacterIssues(binding.source === 'body' ? body : raw, wireLoc(binding), issues.list);
      variables[binding.name] = graphqlEnumValues(raw, binding.type);
    }
    if (issues.list.length) return validationResponse(issues.list);

    const operationContext = wireOnly.size ? { ...context, wireOnlyValues: wireOnly } : context;
    const result = await run(route.document, variables, operationContext);
    if (result.errors?.length) return errorResponse(result.errors[0], route, context);
    if (route.csv) return { status: 200, headers: csvHeaders(route.csv), stream: csvPages(route, route.csv, result, (cursor) => run(route.document, { ...variables, [route.csv!.cursor]: cursor }, operationContext)) };
    if (route.status === 204) return { status: 204 };
    const value = resultAt(result.data, route.resultPath);
    return { status: route.status, body: toWire(value, route.shape) };
  };
}

function csvHeaders(csv: CsvExport): Record<string, string> {
  return { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': `attachment; filename="${csv.filename}"` };
}

interface ListPage {
  items: unknown[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/**
 * The header row, then the rows of each page as it is read. The first page was read before the
 * answer started, so a refusal (no token, a bad filter) is an ordinary error answer; a later page
 * that fails ends the stream with the error.
 */
async function* csvPages(route: CompiledRoute, csv: CsvExport, first: ExecutionResult, next: (cursor: string) => Promise<ExecutionResult>): AsyncGenerator<string> {
  yield csvRow(csv.columns.map((c) => c.header));
  let page = resultAt(first.data, route.resultPath) as ListPage;
  for (;;) {
    if (page.items.length) yield page.items.map((item) => csvRow(csv.columns.map((c) => c.cell(item)))).join('');
    if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) return;
    const result = await next(page.pageInfo.endCursor);
    if (result.errors?.length) throw innermost(result.errors[0]);
    page = resultAt(result.data, route.resultPath) as ListPage;
  }
}

/** Puts `value` at `path` inside a variable's value read from the wire (a path graphql-js gave). */
function setAt(root: unknown, path: readonly (string | number)[], value: unknown): void {
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], root);
  (parent as Record<string | number, unknown>)[path[path.length - 1]] = value;
}

/** Why the principal may not call the route's surface at all, answered as GraphQL would answer it. */
function surfaceRefusal(route: CompiledRoute, context: Context): KassaError | null {
  if (!route.admits || route.admits.includes(context.principal.kind)) return null;
  if (context.principal.kind === 'anonymous') return new UnauthenticatedError();
  return new NotPermittedError(`This endpoint is not available to this kind of token (requires: ${route.admits.join(' or ')}).`);
}

function matchRoute(routes: CompiledRoute[], method: string, path: string) {
  let pathMatched = false;
  for (const route of routes) {
    const m = route.pattern.exec(path);
    if (!m) continue;
    pathMatched = true;
    if (route.method !== method) continue;
    const params: Record<string, string> = {};
    for (const [i, name] of route.pathParams.entries()) {
      try {
        params[name] = decodeURIComponent(m[i + 1]);
      } catch {
        params[name] = m[i + 1];
      }
    }
    return { route, params };
  }
  return pathMatched ? ('method-not-allowed' as const) : null;
}

function parseJsonBody(request: RestRequest): { value: unknown } | { response: RestResponse } {
  const mediaType = request.contentType;
  if (request.body.length === 0) {
    return { response: validationResponse([{ loc: ['body'], msg: 'Field required: send a JSON body', type: 'missing' }]) };
  }
  if (mediaType !== 'application/json') {
    return { response: restError(415, 'UnsupportedMediaType', `Send the body as JSON with "Content-Type: application/json" (got ${mediaType ? `"${mediaType}"` : 'none'}).`) };
  }
  let value: unknown;
  try {
    value = JSON.parse(request.body.toString('utf8'));
  } catch (error) {
    return { response: validationResponse([{ loc: ['body'], msg: `JSON decode error: ${(error as Error).message}`, type: 'json_invalid' }]) };
  }
  const tooDeep = tooDeepAt(value, ['body']);
  if (tooDeep) return { response: validationResponse([nestingIssue(tooDeep)]) };
  return { value };
}

function wireLoc(binding: VariableBinding): Loc {
  return binding.source === 'body' ? ['body'] : [binding.source, binding.wireName];
}

/** A query parameter as the variable's type: repeated keys make lists, `name[key]=v` makes objects. */
function queryValue(query: URLSearchParams, binding: VariableBinding, issues: ValidationIssues): unknown {
  const nullable = getNullableType(binding.type) as GraphQLInputType;
  const named = getNamedType(binding.type);
  if (named.name === 'JSONObject') {
    const object: Record<string, string[]> = {};
    const bracketed = new RegExp(`^${binding.wireName}\\[([^\\]]+)\\]$`);
    for (const [key, value] of query) {
      const m = bracketed.exec(key);
      if (m) (object[m[1]] ??= []).push(value);
    }
    return Object.keys(object).length ? object : undefined;
  }
  const values = query.getAll(binding.wireName);
  if (values.length === 0) return undefined;
  const convert = (raw: string, loc: Loc) => {
    if (named === GraphQLInt) {
      if (/^[+-]?\d+$/.test(raw.trim())) return Number(raw);
      issues.add(loc, 'Input should be a valid integer, unable to parse string as an integer', 'int_parsing');
    } else if (named === GraphQLFloat) {
      if (raw.trim() !== '' && Number.isFinite(Number(raw))) return Number(raw);
      issues.add(loc, 'Input should be a valid number, unable to parse string as a number', 'float_parsing');
    } else if (named === GraphQLBoolean) {
      const lowered = raw.toLowerCase();
      if (['true', '1', 'yes', 'on'].includes(lowered)) return true;
      if (['false', '0', 'no', 'off'].includes(lowered)) return false;
      issues.add(loc, 'Input should be a valid boolean, unable to interpret input', 'bool_parsing');
    } else {
      return raw;
    }
    return null;
  };
  if (isListType(nullable)) return values.map((v, i) => convert(v, [...wireLoc(binding), i]));
  return convert(values[values.length - 1], wireLoc(binding));
}

/** A GraphQL error as the REST error body the client library parses. */
function errorResponse(error: GraphQLError, route: CompiledRoute, context: Context): RestResponse {
  const original = innermost(error);
  if (original instanceof RequestValidationError) {
    return validationResponse(original.issues.map((issue) => ({ ...issue, loc: restLoc(issue.loc, route) })));
  }
  if (original instanceof KassaError) return { status: original.status, body: { error: original.restError, detail: original.message, ...original.restFields } };
  return restError(500, 'InternalServerError', `An unexpected error occurred. Quote request id ${context.requestId} when reporting it.`);
}

function innermost(error: Error): Error {
  let current: Error = error;
  while ((current as GraphQLError).originalError) current = (current as GraphQLError).originalError!;
  return current;
}

/** A loc in GraphQL argument terms (`['input', 'priceAmount']`) in REST terms (`['body', 'price_amount']`). */
function restLoc(loc: Loc, route: CompiledRoute): Loc {
  const [argument, ...rest] = loc;
  const binding = route.variables.find((v) => v.name === argument);
  const tail = rest.map((p) => (typeof p === 'string' ? snakeCase(p) : p));
  if (!binding) return [typeof argument === 'string' ? snakeCase(argument) : argument, ...tail];
  return [...wireLoc(binding), ...tail];
}

/** The value at `path` in a GraphQL result's data. */
export function resultAt(data: unknown, path: string[]): unknown {
  return path.reduce<unknown>((value, key) => (value as Record<string, unknown> | null | undefined)?.[key], data);
}
