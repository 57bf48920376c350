// Generated bad input, over every REST route and every GraphQL mutation, derived from the route
// table and the schema: malformed JSON, wrong types, boundary and huge numbers, NUL and lone
// surrogates, overlong strings, deep nesting and unknown fields, with and without each kind of
// token. Whatever arrives, the server answers below 500 with the documented error body, a request
// it refuses writes nothing, and it keeps answering.
//
// FUZZ_RUNS sets the cases per property (default 100, so four properties make 400); FUZZ_SEED
// replays a run (every run prints its seed). `npm run fuzz` runs a long one.
import fc from 'fast-check';
import { type GraphQLField, type GraphQLInputType, type GraphQLObjectType, getNamedType, isCompositeType, isNonNullType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schema } from '../../src/graphql/schema.ts';
import { compileRoutes } from '../../src/rest/adapter.ts';
import type { CompiledRoute } from '../../src/rest/route.ts';
import { restRoutes } from '../../src/rest/routes/index.ts';
import { RawJson, deepArray, deepObject, hostileString, invalid, plausible, toJson, toLiteral, type Generation } from '../helpers/generated-input.ts';
import type { Org } from '../helpers/organizations.ts';
import { expectStatus } from '../helpers/responses.ts';
import { useTestServer } from '../helpers/use-test-server.ts';

const runs = Number(process.env.FUZZ_RUNS ?? 100);
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const requestTimeoutMs = 20_000;

const routes = compileRoutes(schema, restRoutes);

type TokenKind = 'none' | 'organization' | 'customer' | 'otherOrganization' | 'sandbox' | 'garbage';
const tokenKinds: TokenKind[] = ['none', 'organization', 'customer', 'otherOrganization', 'sandbox', 'garbage'];
/** Principal kinds each token kind stands for, to tell whether a surface admits it. */
const principalOf: Record<TokenKind, string | null> = {
  none: 'anonymous',
  organization: 'organization',
  customer: 'customer',
  otherOrganization: 'organization',
  sandbox: null,
  garbage: null,
};
/** Whether a token of this kind is refused, whatever the input, where `admits` is what the surface admits (null: anyone). */
function tokenRefused(token: TokenKind, admits: string[] | null): boolean {
  const principal = principalOf[token];
  if (principal === null) return true;
  return admits !== null && !admits.includes(principal);
}

/** Authorization headers that name no token of this environment. */
const garbageAuthorization = fc.constantFrom(
  'Bearer garbage',
  `Bearer service_oat_${'A'.repeat(36)}`,
  `Bearer service_cst_${'0'.repeat(36)}`,
  `Bearer service_us_${'z'.repeat(36)}`,
  `Bearer ${'x'.repeat(8_000)}`,
  'Bearer service_oat_',
  'Bearer \u00ff\u00fe',
);

/** Names of mutations and routes that remove the fixtures or the tokens the run depends on: they get random ids only. */
const destructive = /Delete|Revoke|signOut|Cancel/;

interface Fixtures {
  org: Org;
  other: Org;
  sandbox: Org;
  customerToken: string;
  ids: string[];
  clientSecret: string;
}
// Mail is kept in memory, so what mails a code (a customer's email change) is run to its end, not refused
// with the 503 of a server that sends none (email-none.test.ts covers that).
const t = useTestServer({ env: { EMAIL_TRANSPORT: 'memory' }, organizations: { org: 'production', other: 'production', sandbox: 'sandbox' } });
let fx: Fixtures;
const counts = { rest: 0, graphql: 0 };

beforeAll(async () => {
  const { org, other, sandbox } = t;
  const product = expectStatus(await org.api('POST', '/products/', { name: 'Fixture', recurring_interval: null, prices: [{ amount_type: 'fixed', price_amount: 1000 }] }), 201);
  const customer = expectStatus(await org.api('POST', '/customers/', { email: `fixture-${Date.now()}@example.com`, external_id: `fixture-${product.id}` }), 201);
  const session = expectStatus(await org.api('POST', '/customer-sessions/', { customer_id: customer.id }), 201);
  const checkout = expectStatus(await org.api('POST', '/checkouts/', { products: [product.id] }), 201);
  const benefit = expectStatus(await org.api('POST', '/benefits/', { type: 'custom', description: 'Fixture', properties: { note: 'n' } }), 201);
  fx = {
    org,
    other,
    sandbox,
    customerToken: session.token,
    ids: [product.id, product.prices[0].id, customer.id, checkout.id, benefit.id],
    clientSecret: checkout.client_secret,
  };
  await untilQuiet();
});

afterAll(() => {
  console.log(`generated input: ${counts.rest + counts.graphql} cases (REST ${counts.rest}, GraphQL ${counts.graphql}), seed ${seed}`);
});

function authorization(token: TokenKind, garbage: string): Record<string, string> {
  switch (token) {
    case 'none':
      return {};
    case 'organization':
      return { authorization: `Bearer ${fx.org.token}` };
    case 'customer':
      return { authorization: `Bearer ${fx.customerToken}` };
    case 'otherOrganization':
      return { authorization: `Bearer ${fx.other.token}` };
    case 'sandbox':
      return { authorization: `Bearer ${fx.sandbox.token}` };
    case 'garbage':
      return { authorization: garbage };
  }
}

// What "nothing written" compares: the rows of every table and the latest change to each. Left
// out: what a refused request is meant to record (failed sign-ins, idempotency keys) and when a
// token was last used.
const notCompared = new Set(['_prisma_migrations', 'login_attempts', 'idempotency_keys']);
let snapshotQuery: string | undefined;

async function snapshot(): Promise<string> {
  const { prisma } = t.server.kassa.environments.production.environment;
  if (!snapshotQuery) {
    const columns = await prisma.$queryRawUnsafe<{ table_name: string; column_name: string }[]>(
      `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name`,
    );
    const tables = new Map<string, Set<string>>();
    for (const { table_name, column_name } of columns) {
      if (!notCompared.has(table_name)) (tables.get(table_name) ?? tables.set(table_name, new Set()).get(table_name)!).add(column_name);
    }
    snapshotQuery = [...tables]
      .map(([table, cols]) => {
        const changed = cols.has('modified_at') && !cols.has('last_used_at') ? `max(modified_at)::text` : `''`;
        return `SELECT '${table}' AS t, count(*)::text AS n, ${changed} AS m FROM "${table}"`;
      })
      .join(' UNION ALL ');
  }
  const rows = await prisma.$queryRawUnsafe<{ t: string; n: string; m: string | null }[]>(snapshotQuery);
  return rows
    .map((r) => `${r.t}=${r.n}@${r.m ?? ''}`)
    .sort()
    .join('\n');
}

/** Waits until the fixtures' background work (events, jobs) has settled. */
async function untilQuiet() {
  let last = await snapshot();
  for (let i = 0; i < 20; i++) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const now = await snapshot();
    if (now === last) return;
    last = now;
  }
}

function changedTables(before: string, after: string): string {
  const was = new Set(before.split('\n'));
  return after
    .split('\n')
    .filter((line) => !was.has(line))
    .join(', ');
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
  json: unknown;
}

async function send(url: string, init: { method: string; headers: Record<string, string>; body?: string | Buffer }): Promise<Answer> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, body: typeof init.body === 'string' ? init.body : init.body && new Uint8Array(init.body), signal: AbortSignal.timeout(requestTimeoutMs) });
  } catch (error) {
    const cause = (error as Error & { cause?: Error }).cause?.message;
    throw new Error(`no answer from ${init.method} ${url.slice(0, 200)} (body of ${init.body?.length ?? 0} bytes): ${(error as Error).message}${cause ? ` (${cause})` : ''}`);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', text, json };
}

const excerpt = (answer: Answer) => `${answer.status} ${answer.text.slice(0, 500)}`;

/** The REST error bodies the client library parses: 422 `{detail: [{loc, msg, type}]}`, others `{error, detail}`. */
function expectRestAnswer(answer: Answer) {
  expect(answer.status, excerpt(answer)).toBeLessThan(500);
  if (answer.status < 400) return;
  expect(answer.contentType, excerpt(answer)).toMatch(/^application\/json/);
  const body = answer.json as Record<string, unknown>;
  if (answer.status === 422) {
    expect(Object.keys(body), excerpt(answer)).toEqual(['detail']);
    const issues = body.detail as unknown[];
    expect(issues.length, excerpt(answer)).toBeGreaterThan(0);
    for (const issue of issues as Record<string, unknown>[]) {
      expect(Object.keys(issue).sort(), excerpt(answer)).toEqual(['loc', 'msg', 'type']);
      expect((issue.loc as unknown[]).every((p) => typeof p === 'string' || typeof p === 'number'), excerpt(answer)).toBe(true);
      expect(typeof issue.msg === 'string' && typeof issue.type === 'string', excerpt(answer)).toBe(true);
    }
  } else {
    expect(typeof body?.error === 'string' && typeof body.detail === 'string', excerpt(answer)).toBe(true);
    expect(Object.keys(body).filter((k) => !['error', 'detail', 'limit'].includes(k)), excerpt(answer)).toEqual([]);
  }
}

/** GraphQL errors: `{errors: [{message, extensions: {code}}]}`; 411 and 413 come before GraphQL, in the REST shape. */
function expectGraphQLAnswer(answer: Answer): { errors?: unknown[]; data?: unknown } {
  expect(answer.status, excerpt(answer)).toBeLessThan(500);
  if (answer.status === 411 || answer.status === 413) {
    expectRestAnswer(answer);
    return { errors: [answer.json] };
  }
  expect(answer.contentType, excerpt(answer)).toMatch(/^application\/(graphql-response\+)?json/);
  const body = answer.json as { errors?: { message?: unknown; extensions?: { code?: unknown } }[]; data?: unknown };
  expect(body !== null && typeof body === 'object', excerpt(answer)).toBe(true);
  if (answer.status >= 400) expect(body.errors ?? [], excerpt(answer)).not.toHaveLength(0);
  for (const error of body.errors ?? []) {
    expect(typeof error.message, excerpt(answer)).toBe('string');
    expect(typeof error.extensions?.code, excerpt(answer)).toBe('string');
  }
  return body;
}

/** Runs the checks of one case, naming the case in any failure. */
function about(context: string, checks: () => void) {
  try {
    checks();
  } catch (error) {
    (error as Error).message = `${context}\n${(error as Error).message}`;
    throw error;
  }
}

/** GET /healthz answers 200, quickly. */
async function expectHealthy() {
  const started = performance.now();
  const answer = await send(`${t.server.url}/healthz`, { method: 'GET', headers: {} });
  expect(answer.status).toBe(200);
  expect(performance.now() - started).toBeLessThan(2_000);
}

function assertProperty<T>(name: string, arbitrary: fc.Arbitrary<T>, check: (value: T) => Promise<void>) {
  return fc.assert(fc.asyncProperty(arbitrary, check), {
    numRuns: runs,
    seed,
    path: process.env.FUZZ_PATH,
    // Shrinking replays a failure request by request; FUZZ_SHRINK=1 asks for it.
    endOnFailure: process.env.FUZZ_SHRINK !== '1',
    // The failure names its case (see `about`); the generated value itself may be megabytes long.
    reporter: (details) => {
      if (!details.failed) return;
      const replay = `FUZZ_SEED=${seed} FUZZ_PATH=${details.counterexamplePath}`;
      console.log(`generated input (${name}) failed after ${details.numRuns} cases: replay with ${replay}`);
      throw new Error(`${name}, case ${details.numRuns} (replay with ${replay}):\n${(details.errorInstance as Error | null)?.message ?? String(details.errorInstance)}`);
    },
  });
}

// ---------------------------------------------------------------- REST

/** A path segment as a client would encode it, lone surrogates included (as the bytes of their UTF-8-like form). */
function encodeSegment(value: string): string {
  // Kept under the server's header size limit, which refuses longer request lines before Kassa sees them.
  return Array.from(value.slice(0, 1_000))
    .map((ch) => {
      try {
        return encodeURIComponent(ch);
      } catch {
        const c = ch.charCodeAt(0);
        return [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
      }
    })
    .join('');
}

/** Segments sent as they are, not encoded. */
const rawSegment = fc.constantFrom('%', '%zz', '%00', '%ED%A0%80', '%C0%AE', '%2F', '..%2F..', '%FF%FE', 'a;b', '%20');

interface RestCase {
  method: string;
  path: string;
  token: TokenKind;
  garbage: string;
  contentType?: string;
  body?: string | Buffer;
  idempotencyKey?: string;
  /** Why the request must be refused, when it must. */
  mustRefuse: string | null;
}

function generation(wire: boolean, hostility: number, destructiveName: boolean): Generation {
  return { wire, ids: destructiveName ? [] : fx.ids, hostility };
}

/** A path parameter's value that names nothing: a random id, malformed text, raw percent escapes. */
function pathValueNamingNothing(route: CompiledRoute, name: string): fc.Arbitrary<string> {
  const binding = route.variables.find((v) => v.source === 'path' && v.wireName === name)!;
  const named = getNamedType(binding.type).name;
  return fc.oneof(
    (named === 'UUID' ? fc.uuid() : fc.string({ minLength: 1, maxLength: 12 }).map((s) => `none-${s}`)).map(encodeSegment),
    invalid(binding.type, generation(false, 0, true)).map((v) => encodeSegment(typeof v === 'string' ? v : toJson(v).slice(0, 200))),
    hostileString.filter((s) => s.length > 0).map(encodeSegment),
    rawSegment,
  );
}

function pathValue(route: CompiledRoute, name: string): fc.Arbitrary<string> {
  const named = getNamedType(route.variables.find((v) => v.source === 'path' && v.wireName === name)!.type).name;
  const known = destructive.test(route.operation) || route.method === 'DELETE' ? [] : named === 'UUID' ? fx.ids : name === 'client_secret' ? [fx.clientSecret] : [];
  return known.length ? fc.oneof(fc.constantFrom(...known), pathValueNamingNothing(route, name)) : pathValueNamingNothing(route, name);
}

/** What may stand before a route's path: nothing, mostly; else a second slash, or a slash and an authority-like part. */
const pathPrefix = fc.oneof({ weight: 30, arbitrary: fc.constant('') }, { weight: 1, arbitrary: fc.constantFrom('/', '//', '//[', '//%zz', '/.', '/v1/..') });

function buildPath(route: CompiledRoute, values: Record<string, string>, prefix: string): string {
  return `${prefix}${route.path.replace(/\{(\w+)\}/g, (_, name: string) => values[name])}`;
}

const queryArbitrary = (route: CompiledRoute, hostility: number) => {
  const bindings = route.variables.filter((v) => v.source === 'query');
  const pairs = bindings.map((b) =>
    fc.option(
      fc.oneof(plausible(b.type, generation(false, hostility, false)), hostileString).map((v): [string, string][] =>
        (Array.isArray(v) ? v : [v]).map((item) => [b.wireName, typeof item === 'string' ? item : toJson(item)]),
      ),
      { nil: [] as [string, string][] },
    ),
  );
  return fc.tuple(fc.tuple(...pairs), fc.option(fc.tuple(fc.constantFrom('unknown', 'limit[]', 'metadata[', ''), hostileString), { nil: undefined })).map(([lists, extra]) => {
    const query = new URLSearchParams();
    for (const list of lists) for (const [k, v] of list) query.append(k, v.slice(0, 1_000));
    if (extra) query.append(extra[0], extra[1].slice(0, 1_000));
    const text = query.toString();
    return text ? `?${text}` : '';
  });
};

/** Bodies that are not the JSON object a route reads. */
const brokenBody = fc.oneof(
  fc.record({
    contentType: fc.constant('application/json'),
    body: fc.constantFrom<string | Buffer>(
      '{',
      '{"name": }',
      '[1, 2',
      "{'name': 'single quotes'}",
      '{"name":"a"} trailing',
      'nul',
      '\u0000',
      '{"a":1,}',
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0x22, 0x7d]),
      '[]',
      '"text"',
      '42',
      'null',
      'true',
      deepArray.text,
      deepObject.text,
      `{"name":"${'x'.repeat(1024 * 1024)}"}`,
    ),
  }),
  fc.record({
    contentType: fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', ''),
    body: fc.constantFrom('{"name":"Starter"}', 'name=Starter', '<name>Starter</name>'),
  }),
  fc.constant({ contentType: 'application/json', body: '' }),
);

/** One request to a route: the route's own method and path, with every part generated. */
function restCase(route: CompiledRoute, mustBeRefused: boolean): fc.Arbitrary<RestCase> {
  const destructiveRoute = destructive.test(route.operation) || route.method === 'DELETE';
  const bodyBinding = route.variables.find((v) => v.source === 'body');
  const refusingTokens = tokenKinds.filter((t) => tokenRefused(t, route.admits));
  // Where the refusal comes from: a token, a path parameter naming nothing, or a body no type accepts.
  const reasons = [...(refusingTokens.length ? ['token'] : []), ...(route.pathParams.length ? ['path'] : []), ...(bodyBinding ? ['body'] : [])];
  const reason = mustBeRefused && route.method !== 'GET' ? fc.constantFrom(...reasons) : fc.constant('none');
  return reason.chain((why) => {
    const token = why === 'token' ? fc.constantFrom(...refusingTokens) : fc.constantFrom(...tokenKinds);
    const params = fc.record(Object.fromEntries(route.pathParams.map((p) => [p, why === 'path' ? pathValueNamingNothing(route, p) : pathValue(route, p)])));
    const hostility = mustBeRefused ? 0 : 0.15;
    const gen = generation(true, hostility, destructiveRoute || mustBeRefused);
    const body: fc.Arbitrary<{ contentType?: string; body?: string | Buffer }> = !bodyBinding
      ? fc.constant({})
      : why === 'body'
        ? fc.oneof(
            { weight: 3, arbitrary: invalid(bodyBinding.type, gen).map((v) => ({ contentType: 'application/json', body: toJson(v) })) },
            { weight: 1, arbitrary: brokenBody },
          )
        : fc.oneof(
            { weight: 4, arbitrary: plausible(bodyBinding.type, gen).map((v) => ({ contentType: 'application/json', body: toJson(v) })) },
            { weight: 1, arbitrary: invalid(bodyBinding.type, gen).map((v) => ({ contentType: 'application/json', body: toJson(v) })) },
            { weight: 1, arbitrary: brokenBody },
          );
    return fc
      .record({
        token,
        garbage: garbageAuthorization,
        params,
        query: queryArbitrary(route, hostility),
        body,
        prefix: pathPrefix,
        idempotencyKey: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom('retry-1', 'a b', 'x'.repeat(300), 'tab\there', `key-${seed}`) }),
      })
      .map(({ token, garbage, params, query, body, prefix, idempotencyKey }) => ({
        method: route.method,
        path: `${buildPath(route, params, prefix)}${query}`,
        token,
        garbage,
        ...body,
        idempotencyKey: route.method === 'POST' ? idempotencyKey : undefined,
        mustRefuse: why === 'none' ? null : why,
      }));
  });
}

async function sendRest(c: RestCase): Promise<Answer> {
  counts.rest += 1;
  const headers: Record<string, string> = { ...authorization(c.token, c.garbage) };
  if (c.contentType) headers['content-type'] = c.contentType;
  if (c.idempotencyKey !== undefined) headers['idempotency-key'] = c.idempotencyKey;
  return send(`${t.server.url}${c.path}`, { method: c.method, headers, body: c.method === 'GET' ? undefined : c.body });
}

function describeRest(c: RestCase): string {
  const body = c.body === undefined ? '' : ` body ${String(c.body).slice(0, 300)}${String(c.body).length > 300 ? `… (${c.body.length} chars)` : ''}`;
  const key = c.idempotencyKey === undefined ? '' : ` idempotency-key=${JSON.stringify(c.idempotencyKey.slice(0, 40))}`;
  return `${c.method} ${c.path.slice(0, 300)} token=${c.token} content-type=${c.contentType ?? '-'}${key}${body}`;
}

// ---------------------------------------------------------------- GraphQL

interface Mutation {
  /** `core`, `customerPortal`, or null for a root field. */
  surface: string | null;
  field: GraphQLField<unknown, unknown>;
  admits: string[] | null;
}

function principalsOf(field: GraphQLField<unknown, unknown>): string[] | null {
  const principal = (field.extensions?.pothosOptions as { authScopes?: { principal?: string | string[] } } | undefined)?.authScopes?.principal;
  return principal === undefined ? null : ([] as string[]).concat(principal);
}

const mutations: Mutation[] = Object.values(schema.getMutationType()!.getFields()).flatMap((root): Mutation[] => {
  if (root.name !== 'core' && root.name !== 'customerPortal') return [{ surface: null, field: root, admits: principalsOf(root) }];
  const surfaceAdmits = principalsOf(root);
  return Object.values((getNamedType(root.type) as GraphQLObjectType).getFields()).map((field) => ({ surface: root.name, field, admits: principalsOf(field) ?? surfaceAdmits }));
});

interface GraphQLCase {
  transport: 'json' | 'get' | 'text/plain' | 'form' | 'graphql-response';
  token: TokenKind;
  garbage: string;
  /** The JSON body as sent (text), or for GET the query string. */
  payload: string;
  mustRefuse: string | null;
  surface: string | null;
  field: string;
}

interface ArgumentValue {
  name: string;
  type: GraphQLInputType;
  value: unknown;
  inline: boolean;
}

function documentOf(m: Mutation, args: ArgumentValue[], wanted: string | null): string {
  const declared = args.filter((a) => !a.inline);
  const composite = isCompositeType(getNamedType(m.field.type));
  // A flaw the operation has no place for becomes an unknown argument.
  const flaw = (wanted === 'variable-type' && !declared.length) || (wanted === 'unknown-field' && !composite) ? 'unknown-argument' : wanted;
  const declarations = declared.map((a) => `$${a.name}: ${flaw === 'variable-type' && a === declared[0] ? 'Int' : String(a.type)}`);
  const passed = args.map((a) => `${a.name}: ${a.inline ? toLiteral(a.value) : `$${a.name}`}`);
  if (flaw === 'unknown-argument') passed.push('unknownArgument: 1');
  const selection = composite ? ` { __typename${flaw === 'unknown-field' ? ' noSuchField' : ''} }` : '';
  const call = `${m.field.name}${passed.length ? `(${passed.join(', ')})` : ''}${selection}`;
  const body = m.surface ? `${m.surface} { ${call} }` : call;
  const document = `mutation Generated${declarations.length ? `(${declarations.join(', ')})` : ''} { ${body} }`;
  if (flaw === 'syntax') return document.slice(0, -3);
  if (flaw === 'deep-document') return `mutation { ${m.surface ?? m.field.name}(a: ${'['.repeat(nestingOfDocument)}${']'.repeat(nestingOfDocument)}) }`;
  return document;
}
const nestingOfDocument = 5_000;

/** Flaws of the operation itself, each refused before anything runs. */
const documentFlaws = ['unknown-argument', 'unknown-field', 'syntax', 'variable-type', 'deep-document'];
/** Request bodies that are not a GraphQL request. */
const brokenRequests = fc.constantFrom(
  '{',
  '{"query": "mutation {"',
  '[]',
  '[{"query": 1}]',
  '"mutation"',
  '42',
  'null',
  '{"query": 42}',
  '{"query": null}',
  '{}',
  '{"query": "mutation { __typename }", "variables": "x"}',
  '{"query": "mutation { __typename }", "variables": [1]}',
  '{"query": "mutation { __typename }", "operationName": 7}',
  '{"query": "\\u0000"}',
  `{"query": "mutation { noSuchField }", "variables": ${deepObject.text}}`,
  `{"query": "mutation { noSuchField }", "extensions": ${deepArray.text}}`,
);

function graphqlCase(m: Mutation, mustBeRefused: boolean): fc.Arbitrary<GraphQLCase> {
  const destructiveName = destructive.test(m.field.name);
  const refusingTokens = tokenKinds.filter((t) => tokenRefused(t, m.admits));
  const args = m.field.args;
  const reasons = [
    ...(refusingTokens.length ? ['token'] : []),
    ...(args.length ? ['argument'] : []),
    ...(args.some((a) => isNonNullType(a.type)) ? ['missing-argument'] : []),
    'document',
    'request',
  ];
  // Signing out would end the token the run depends on: it is only ever sent refused.
  const refused = mustBeRefused || m.field.name === 'signOut';
  const reason = refused ? fc.constantFrom(...reasons) : fc.constantFrom('none', 'none', 'none', 'document', 'request');
  return reason.chain((why) => {
    const hostility = refused ? 0 : 0.15;
    const gen: Generation = { wire: false, ids: destructiveName || refused ? [] : fx.ids, hostility };
    const token = why === 'token' ? fc.constantFrom(...refusingTokens) : fc.constantFrom(...tokenKinds);
    const corrupted = why === 'argument' ? fc.nat(args.length - 1) : fc.constant(-1);
    const missing = why === 'missing-argument' ? fc.constantFrom(...args.filter((a) => isNonNullType(a.type)).map((a) => a.name)) : fc.constant('');
    const flaw = why === 'document' ? fc.constantFrom(...documentFlaws) : fc.constant(null);
    return fc.tuple(token, corrupted, missing, flaw).chain(([tokenKind, bad, missingName, documentFlaw]) => {
      const values = fc.tuple(
        ...args.map((a, i) =>
          fc.record({
            name: fc.constant(a.name),
            type: fc.constant(a.type),
            value: i === bad ? invalid(a.type, gen) : plausible(a.type, gen),
            inline: fc.nat(4).map((n) => n === 0),
          }),
        ),
      );
      const transport = fc.constantFrom<GraphQLCase['transport']>('json', 'json', 'json', 'json', 'json', 'json', 'get', 'text/plain', 'form', 'graphql-response');
      return fc.tuple(values, transport, garbageAuthorization, why === 'request' ? brokenRequests : fc.constant(null)).map(([argValues, via, garbage, broken]) => {
        const sent = argValues.filter((a) => a.name !== missingName);
        const document = documentOf(m, sent, documentFlaw);
        const variables = Object.fromEntries(sent.filter((a) => !a.inline).map((a) => [a.name, a.value]));
        const payload = broken ?? `{"query":${JSON.stringify(document)},"variables":${toJson(variables)}}`;
        // A URL over the server's header limit is refused before any request exists; and GET and
        // form requests are rebuilt from the JSON, which JSON.stringify cannot do for deep nesting.
        const transport = broken || ((via === 'get' || via === 'form') && payload.length > 6_000) ? 'json' : via;
        return {
          transport,
          token: tokenKind,
          garbage,
          payload,
          // A mutation is never run over GET, whatever else is wrong.
          mustRefuse: why === 'none' ? (transport === 'get' ? 'get' : null) : why,
          surface: m.surface,
          field: m.field.name,
        };
      });
    });
  });
}

async function sendGraphQL(c: GraphQLCase): Promise<Answer> {
  counts.graphql += 1;
  const url = `${t.server.url}/v1/graphql`;
  const headers: Record<string, string> = { ...authorization(c.token, c.garbage) };
  if (c.transport === 'get') {
    const request = JSON.parse(c.payload) as { query: string; variables: unknown };
    const query = new URLSearchParams({ query: request.query, variables: JSON.stringify(request.variables) });
    return send(`${url}?${query}`, { method: 'GET', headers });
  }
  if (c.transport === 'form') {
    const request = JSON.parse(c.payload) as { query: string; variables: unknown };
    headers['content-type'] = 'application/x-www-form-urlencoded';
    return send(url, { method: 'POST', headers, body: new URLSearchParams({ query: request.query, variables: JSON.stringify(request.variables) }).toString() });
  }
  headers['content-type'] = c.transport === 'text/plain' ? 'text/plain' : 'application/json';
  if (c.transport === 'graphql-response') headers.accept = 'application/graphql-response+json';
  return send(url, { method: 'POST', headers, body: c.payload });
}

function describeGraphQL(c: GraphQLCase): string {
  return `${c.transport} token=${c.token} ${c.payload.slice(0, 600)}${c.payload.length > 600 ? `… (${c.payload.length} chars)` : ''}`;
}

/** Whether the answer ran the mutation: its field has a value. */
function ran(body: { data?: unknown }, c: GraphQLCase): boolean {
  const data = body.data as Record<string, Record<string, unknown> | null> | null | undefined;
  const value = c.surface ? data?.[c.surface]?.[c.field] : (data as Record<string, unknown> | null | undefined)?.[c.field];
  return value !== undefined && value !== null;
}

// ---------------------------------------------------------------- the properties

const anyRoute = (mustBeRefused: boolean) => fc.constantFrom(...routes).chain((route) => restCase(route, mustBeRefused));
const anyMutation = (mustBeRefused: boolean) => fc.constantFrom(...mutations).chain((m) => graphqlCase(m, mustBeRefused));
const timeout = Math.max(60_000, runs * 2_000);

describe('generated input', () => {
  // First, while nothing generated has been accepted: nothing runs in the background, so any
  // change between two snapshots is the refused request's.
  it('a refused REST request answers the documented error and writes nothing', { timeout }, async () => {
    let before = await snapshot();
    await assertProperty('REST refused', anyRoute(true), async (c) => {
      const answer = await sendRest(c);
      const context = describeRest(c);
      about(context, () => expectRestAnswer(answer));
      if (c.mustRefuse) expect(answer.status, `${context}\nmust be refused (${c.mustRefuse}): ${excerpt(answer)}`).toBeGreaterThanOrEqual(400);
      const after = await snapshot();
      if (answer.status >= 400 || c.method === 'GET') expect(changedTables(before, after), `${context}\nwrote after ${excerpt(answer)}`).toBe('');
      before = after;
    });
    await expectHealthy();
  });

  it('a refused GraphQL mutation answers the documented errors and writes nothing', { timeout }, async () => {
    let before = await snapshot();
    await assertProperty('GraphQL refused', anyMutation(true), async (c) => {
      const answer = await sendGraphQL(c);
      const context = describeGraphQL(c);
      let body: { errors?: unknown[]; data?: unknown } = {};
      about(context, () => (body = expectGraphQLAnswer(answer)));
      if (c.mustRefuse) {
        expect(body.errors ?? [], `${context}\nmust be refused (${c.mustRefuse}): ${excerpt(answer)}`).not.toHaveLength(0);
        expect(ran(body, c), `${context}\nran though it must be refused: ${excerpt(answer)}`).toBe(false);
        const after = await snapshot();
        expect(changedTables(before, after), `${context}\nwrote after ${excerpt(answer)}`).toBe('');
        before = after;
      } else {
        before = await snapshot();
      }
    });
    await expectHealthy();
  });

  it('any REST request, plausible or hostile, answers below 500 in the documented shape', { timeout }, async () => {
    await assertProperty('REST any', anyRoute(false), async (c) => {
      const answer = await sendRest(c);
      about(describeRest(c), () => expectRestAnswer(answer));
    });
    await expectHealthy();
  });

  it('any GraphQL mutation, plausible or hostile, answers below 500 in the documented shape', { timeout }, async () => {
    await assertProperty('GraphQL any', anyMutation(false), async (c) => {
      const answer = await sendGraphQL(c);
      about(describeGraphQL(c), () => expectGraphQLAnswer(answer));
    });
    await expectHealthy();
  });
});
