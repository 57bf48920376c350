// Writing an answer to the Node response: a REST-shaped JSON answer, GraphQL errors answered before
// yoga runs, and GraphiQL's page and assets.
import type { ServerResponse } from 'node:http';
import type { GraphQLError } from 'graphql';
import { graphqlAnswerType } from '../graphql/media-types.ts';
import type { GraphiqlResponse } from '../pages/graphiql.ts';
import type { RestResponse } from '../rest/adapter.ts';

export function send(res: ServerResponse, response: RestResponse): void {
  if (response.status === 401) res.setHeader('www-authenticate', 'Bearer');
  if (response.headers) for (const [k, v] of Object.entries(response.headers)) res.setHeader(k, v);
  if (response.status === 204 || response.body === undefined) {
    res.writeHead(response.status).end();
    return;
  }
  const payload = JSON.stringify(response.body);
  res.writeHead(response.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }).end(payload);
}

/**
 * An answer whose body is written as it is produced, chunk by chunk (chunked transfer encoding: no
 * length is known). Each chunk waits for the client to take the one before, so a slow reader holds
 * back the producer instead of filling memory; a client that leaves stops it. An error part way
 * is thrown to the listener, which logs it and ends the connection: the client sees an
 * incomplete answer, never a short one that looks whole.
 */
export async function sendStream(res: ServerResponse, response: RestResponse & { stream: AsyncIterable<string> }): Promise<void> {
  if (response.headers) for (const [k, v] of Object.entries(response.headers)) res.setHeader(k, v);
  res.writeHead(response.status);
  for await (const chunk of response.stream) {
    if (res.destroyed) return;
    if (!res.write(chunk)) await drained(res);
  }
  if (!res.destroyed) res.end();
}

function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Errors answered before yoga runs, in the media type the client prefers, without their HTTP extension as yoga writes them. */
export function sendGraphqlErrors(res: ServerResponse, status: number, errors: GraphQLError[], accept: string | undefined): void {
  const body = errors.map((error) => {
    const { http: _http, ...extensions } = error.extensions;
    return { ...error.toJSON(), extensions };
  });
  const payload = JSON.stringify({ errors: body });
  if (status === 401) res.setHeader('www-authenticate', 'Bearer');
  res.writeHead(status, { 'content-type': graphqlAnswerType(accept), 'content-length': Buffer.byteLength(payload) }).end(payload);
}

export function sendGraphiql(res: ServerResponse, response: GraphiqlResponse, headOnly = false): void {
  const length = typeof response.body === 'string' ? Buffer.byteLength(response.body) : response.body.length;
  res.writeHead(response.status, response.status === 304 ? response.headers : { ...response.headers, 'content-length': length });
  res.end(headOnly || response.status === 304 ? undefined : response.body);
}
