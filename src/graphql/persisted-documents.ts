// Persisted documents over HTTP: a request may name its document by SHA-256 instead of sending the
// text, in the automatic persisted queries protocol (Apollo's APQ):
//   `"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "<64 hex digits>"}}`.
// A hash alone runs the document known by that hash: one of the operator's trusted documents, or
// one a client registered by sending the text with its hash. An unknown hash is answered
// PERSISTED_QUERY_NOT_FOUND, so the client sends the text with the hash once.
//
// Invariants:
// - A hash only ever names the text whose SHA-256 it is: a text sent with another hash is refused.
// - A document is registered once it has parsed and validated (the limits of parsing and
//   validation applied: tokens, nesting, fields); the limits checked before execution (cost,
//   depth, aliases, rate limits) apply to every request that runs it, by text or by hash alike,
//   since what runs is the text, set as the request's query. A document over the cost limit may
//   so be registered, and is refused each time it is asked for.
// - Each environment has its own store, bounded by count and by bytes, least recently used first.
// - With trusted documents only, no client registers anything, and a document not in the list is
//   refused, whether sent by hash or as text. The REST routes and hosted pages run their operations
//   in-process (environment.graphql), which never reaches this plugin.
import { createHash } from 'node:crypto';
import { parse, validate, type GraphQLSchema } from 'graphql';
import type { Plugin } from '@envelop/core';
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import { ConfigError, type PersistedDocumentsConfig } from '../config.ts';
import { DocumentCache } from './document-cache.ts';
import { KassaError } from './errors.ts';

const sha256Hex = /^[0-9a-fA-F]{64}$/;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The hash is unknown to this environment; the client sends the text with its hash. Message and code as Apollo's clients expect them. */
const persistedQueryNotFound = () => new KassaError('PersistedQueryNotFound', 'PERSISTED_QUERY_NOT_FOUND', 404, 'PersistedQueryNotFound');

const notSupported = () =>
  new KassaError('PersistedQueryNotSupported', 'PERSISTED_QUERY_NOT_SUPPORTED', 400, 'PersistedQueryNotSupported');

const invalid = (message: string) => new KassaError(message, 'PERSISTED_QUERY_INVALID', 400, 'PersistedQueryInvalid');

const mismatch = () =>
  new KassaError(
    'The persisted query\'s sha256Hash is not the SHA-256 of the query sent with it: send the SHA-256 of the exact query text (UTF-8), as 64 hexadecimal digits.',
    'PERSISTED_QUERY_MISMATCH',
    400,
    'PersistedQueryMismatch',
  );

const onlyTrusted = (how: 'hash' | 'text') =>
  new KassaError(
    how === 'hash'
      ? 'This server runs only its trusted documents, and none has this sha256Hash. Send the hash of a document from the list the server was given.'
      : 'This server runs only its trusted documents, and this query is not one of them. Send the sha256Hash of a document from the list the server was given, as extensions.persistedQuery.',
    'PERSISTED_QUERY_ONLY',
    400,
    'PersistedQueryOnly',
  );

/** The hash an `extensions.persistedQuery` names, lowercased; refused unless it is exactly version 1 with a SHA-256 in hex. */
function requestedHash(extension: unknown): string {
  const example = '{"version": 1, "sha256Hash": "<SHA-256 of the query, 64 hexadecimal digits>"}';
  if (extension === null || typeof extension !== 'object' || Array.isArray(extension)) throw invalid(`extensions.persistedQuery must be an object: ${example}.`);
  const { version, sha256Hash } = extension as { version?: unknown; sha256Hash?: unknown };
  if (version !== 1) throw invalid(`Unsupported persisted query version: only version 1 is supported, as ${example}.`);
  if (typeof sha256Hash !== 'string' || !sha256Hex.test(sha256Hash)) throw invalid(`extensions.persistedQuery.sha256Hash must be a SHA-256 as 64 hexadecimal digits: ${example}.`);
  return sha256Hash.toLowerCase();
}

/**
 * Every trusted document must validate against this schema: one that never could (a manifest
 * built for another version of the API) stops the start, naming the variable, not the first
 * client that sends it.
 */
export function checkTrustedDocuments(schema: GraphQLSchema, trusted: ReadonlyMap<string, string>): void {
  for (const [hash, document] of trusted) {
    const errors = validate(schema, parse(document));
    if (errors.length) throw new ConfigError('GRAPHQL_TRUSTED_DOCUMENTS', `maps ${hash} to a document this API refuses: ${errors[0].message}`);
  }
}

export interface PersistedDocuments {
  plugin: YogaPlugin & Plugin;
  /** The documents clients registered in this environment. */
  registered: DocumentCache<string>;
}

/** The persisted documents of one environment: its own registered store, and the operator's trusted list. */
export function persistedDocuments(config: PersistedDocumentsConfig): PersistedDocuments {
  const { trusted, trustedOnly, automatic } = config;
  const registered = new DocumentCache<string>(automatic?.maxDocuments ?? 0, automatic?.maxBytes ?? 0, (_hash, document) => Buffer.byteLength(document));
  // The text and hash a request offers for registration, kept until its validation is known.
  const offered = new WeakMap<object, { hash: string; query: string }>();

  const plugin: YogaPlugin & Plugin = {
    onParams({ params, setParams, context }) {
      const extension = params.extensions?.persistedQuery;
      if (extension === undefined || extension === null) {
        // Plain text: under trusted documents only, it runs only when it is one of them.
        if (trustedOnly && typeof params.query === 'string' && !trusted.has(sha256(params.query))) throw onlyTrusted('text');
        return;
      }
      const hash = requestedHash(extension);
      if (!automatic && trusted.size === 0) throw notSupported();
      if (params.query === undefined || params.query === null) {
        const document = trusted.get(hash) ?? (trustedOnly ? undefined : registered.get(hash));
        if (document === undefined) throw trustedOnly ? onlyTrusted('hash') : persistedQueryNotFound();
        setParams({ ...params, query: document });
        return;
      }
      // Not a string: yoga's own check of the parameters refuses it.
      if (typeof params.query !== 'string') return;
      if (sha256(params.query) !== hash) throw mismatch();
      if (trusted.has(hash)) return;
      if (trustedOnly) throw onlyTrusted('text');
      if (automatic) offered.set(context, { hash, query: params.query });
    },
    onValidate({ context }) {
      const offer = offered.get(context);
      if (!offer) return;
      return ({ result }: { result: readonly Error[] }) => {
        if (result.length === 0) registered.set(offer.hash, offer.query);
      };
    },
  };
  return { plugin, registered };
}
