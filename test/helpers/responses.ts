// Assertions on what the REST and GraphQL surfaces answer.
import { expect } from 'vitest';
import type { GqlResponse, RestResponse } from './server.ts';

/** Checks the status of a REST response (showing its body when it is another) and returns the body. */
export function expectStatus(response: RestResponse, status: number) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
}

/** A JSON error body of exactly `{error, detail}` with a string detail, at `status`. */
export function expectErrorBody(response: RestResponse, status: number, error: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  expect(response.body).toEqual({ error, detail: expect.any(String) });
}

/** A 422 in the documented shape, with an issue whose loc is exactly `loc`. */
export function expectValidationError(response: RestResponse, loc: (string | number)[], type?: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(422);
  expect(Object.keys(response.body)).toEqual(['detail']);
  expect(response.body.detail.length).toBeGreaterThan(0);
  for (const issue of response.body.detail) {
    expect(issue).toEqual({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) });
  }
  const issue = response.body.detail.find((i: { loc: unknown[] }) => JSON.stringify(i.loc) === JSON.stringify(loc));
  expect(issue, `no issue at ${JSON.stringify(loc)} in ${JSON.stringify(response.body.detail)}`).toBeDefined();
  if (type) expect(issue.type).toBe(type);
  return issue;
}

/** The data of a GraphQL response that must not have errors. */
export async function graphqlData(response: Promise<GqlResponse>) {
  const { body } = await response;
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  return body.data;
}

/** The single error of a GraphQL response, checked for its code (and its HTTP status, when given). */
export async function graphqlFailure(response: Promise<GqlResponse>, code: string, status?: number) {
  const answered = await response;
  const error = singleGraphQLError(answered, code);
  if (status !== undefined) expect(answered.status).toBe(status);
  return error;
}

/** The single error of a GraphQL response, checked for its code and for having a message. */
export function expectGraphQLError(response: GqlResponse, code: string) {
  const error = singleGraphQLError(response, code);
  expect(error.message).toEqual(expect.any(String));
  return error;
}

function singleGraphQLError(response: GqlResponse, code: string) {
  expect(response.body.errors, JSON.stringify(response.body)).toHaveLength(1);
  const [error] = response.body.errors!;
  expect(error.extensions.code).toBe(code);
  return error;
}

/**
 * An answer that holds nothing: every field null down to the first value (`{core: null}`,
 * `{core: {productCreate: null}}`), as a refused request leaves it, or no `data` at all (refused
 * before execution). Root fields are nullable, so a failure answers null at its own path rather
 * than erasing `data`.
 */
export function expectNoData(data: unknown) {
  const values = (value: unknown): unknown[] =>
    value !== null && typeof value === 'object' && !Array.isArray(value) ? Object.values(value).flatMap(values) : [value];
  expect(values(data).filter((value) => value !== null && value !== undefined), JSON.stringify(data)).toEqual([]);
}
