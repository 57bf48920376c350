// Limits in the GraphQL pipeline, as Shopify's API counts them. Before any resolver runs, an
// operation gets its requested cost (src/graphql/cost.ts: its objects, every list at its bound);
// one over the maximum cost, depth or alias count is refused. The operation then counts one
// request against the principal's per-minute budget (or, without a token, the client address's),
// as a REST call does, and the license key endpoints' per-address limit by how many of them it
// calls. Its requested cost is taken from the caller's points bucket; once it has run, the
// points it did not use (requested minus actual, the objects the answer holds) go back. The
// answer carries `extensions.cost`.
// Only GraphQL requests over HTTP are metered here: a REST route is charged once per request by
// the HTTP layer, whatever operation it runs.
import { GraphQLError, Kind, parse, type DocumentNode, type ExecutionResult, type SelectionNode } from 'graphql';
import type { Plugin } from '@envelop/core';
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import type { Context } from '../context.ts';
import { answerCost, checkNesting, costViolation, documentSize, maxDocumentNesting, operationCost, sizeViolation, type CostLimits } from '../graphql/cost.ts';
import { rateLimitHeaders, type LimitState, type RateLimiter } from './limiter.ts';
import { RedisUnavailableError, type BucketCharge } from './store.ts';

/** What the HTTP layer hands a GraphQL request: the environment's limiter, the client, and the latest limit state. */
export interface RateMeter {
  limiter: RateLimiter;
  clientIp: string;
  state: LimitState | null;
  refused: boolean;
}

/** The unauthenticated license key mutations: limited per client address. */
const licenseFields = new Set(['licenseKeyValidate', 'licenseKeyActivate', 'licenseKeyDeactivate']);

/** How many license key mutations an operation calls at its root, fragments (named or inline) included. */
function licenseCalls(document: DocumentNode, operationName: string | null | undefined): number {
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION && (!operationName || d.name?.value === operationName));
  if (operation?.kind !== Kind.OPERATION_DEFINITION || operation.operation !== 'mutation') return 0;
  const fragments = new Map(document.definitions.flatMap((d) => (d.kind === Kind.FRAGMENT_DEFINITION ? [[d.name.value, d] as const] : [])));
  const count = (selections: readonly SelectionNode[], seen: Set<string>): number =>
    selections.reduce((total, selection) => {
      if (selection.kind === Kind.FIELD) return total + (licenseFields.has(selection.name.value) ? 1 : 0);
      if (selection.kind === Kind.INLINE_FRAGMENT) return total + count(selection.selectionSet.selections, seen);
      const fragment = fragments.get(selection.name.value);
      // Validation refuses cycles; the guard keeps a cycle from looping before it does.
      if (!fragment || seen.has(fragment.name.value)) return total;
      return total + count(fragment.selectionSet.selections, new Set([...seen, fragment.name.value]));
    }, 0);
  return count(operation.selectionSet.selections, new Set());
}

/** A document refused before validation: 400 whatever the response's media type (`spec: false`). */
function tooComplex(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'QUERY_TOO_COMPLEX', http: { status: 400, spec: false } } });
}

function refusal(message: string, code: string, status: number, headers: Record<string, string> = {}) {
  return { errors: [new GraphQLError(message, { extensions: { code, http: { status, headers } } })] };
}

export function useRateLimits(limits: CostLimits): YogaPlugin & Plugin {
  return {
    // A document of more tokens, or deeper nesting, than allowed is refused while parsing, before it is built.
    onParse({ setParseFn, parseFn }) {
      setParseFn((source, options) => {
        checkNesting(source, maxDocumentNesting, limits.maxTokens);
        return (parseFn ?? parse)(source, { ...options, maxTokens: limits.maxTokens });
      });
    },
    onValidate({ params, setResult }) {
      // A document that selects too many fields once its fragments are expanded is refused before
      // validation and compiling, whose work grows with that expansion. The validation cache keeps
      // the refusal for the document.
      const violation = sizeViolation(documentSize(params.documentAST), limits);
      if (violation) return setResult([tooComplex(violation)]);
      // graphql-js stops validating a document once it has spent its work budget on it (comparing
      // fields that share a response name, following fragments): say so in the same terms.
      return ({ result, setResult: replace }: { result: readonly Error[]; setResult(errors: GraphQLError[]): void }) => {
        if (result.some((error: Error) => error.message === 'Validation aborted.')) {
          replace([tooComplex('Validating the document took more work than allowed: select each field once per place, and spread fewer fragments into the same selection.')]);
        }
      };
    },
    async onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as Context;
      const meter = ctx.rateLimit;
      if (!meter) return;
      const cost = operationCost(args.schema, args.document, args.operationName, args.variableValues as Record<string, unknown> | undefined);
      const violation = costViolation(cost, limits);
      if (violation) return setResultAndStopExecution(refusal(violation, 'QUERY_TOO_COMPLEX', 400));
      const { limiter } = meter;
      const points = limiter.config.enabled ? limiter.points(ctx.principal, meter.clientIp) : null;
      // An operation dearer than a full bucket would be refused for ever: say so, not "retry".
      if (points && cost.cost > points.capacity) {
        return setResultAndStopExecution(refusal(`The query costs ${cost.cost} points, more than the ${points.capacity} a bucket holds: ask for fewer items with smaller \`limit\` or \`first\` arguments, or select fewer nested objects.`, 'QUERY_TOO_COMPLEX', 400));
      }
      // With the limits off nothing is counted, and nothing is reported.
      if (!points) return;
      const now = ctx.now().getTime();
      const licenses = licenseCalls(args.document, args.operationName);
      const anonymous = ctx.principal.kind === 'anonymous';
      // The operation counts one request, as a REST call does; its cost goes to the points bucket.
      const requests = anonymous ? limiter.anonymous(meter.clientIp) : limiter.principal(ctx.principal);
      const verdict = await limiter.charge([licenses ? limiter.license(meter.clientIp, licenses) : null, requests], now);
      if (!verdict.allowed) {
        meter.refused = true;
        if (verdict.reason === 'store_unavailable') return setResultAndStopExecution(unavailable());
        meter.state = verdict.state;
        return setResultAndStopExecution(refusal(limiter.explain(verdict.state), 'RATE_LIMITED', 429, rateLimitHeaders(verdict.state, true)));
      }
      if (verdict.state) meter.state = verdict.state;
      let taken: Awaited<ReturnType<typeof limiter.take>>;
      try {
        taken = await limiter.take(points, cost.cost, now);
      } catch (error) {
        // Failing closed: the store cannot be reached. Anything else is a fault, left to masking.
        if (!(error instanceof RedisUnavailableError)) throw error;
        return setResultAndStopExecution(unavailable());
      }
      if (taken && !taken.allowed) {
        // The request budget admitted it: its RateLimit-* headers stay, and Retry-After is the points'.
        const wait = Math.max(1, Math.ceil((cost.cost - taken.available) / points.restorePerSecond));
        const message = `Throttled: the query costs ${cost.cost} points and ${taken.available} of ${points.capacity} are available, restored at ${points.restorePerSecond} a second. Retry after ${wait} second${wait === 1 ? '' : 's'}.`;
        const result = refusal(message, 'THROTTLED', 429, { 'retry-after': String(wait) });
        return setResultAndStopExecution({ ...result, extensions: { cost: costExtension(cost.cost, 0, throttleStatus(points, taken.available)) } });
      }
      let throttle = taken ? throttleStatus(points, taken.available) : null;
      return {
        async onExecuteDone({ result, setResult }: { result: ExecutionResult | AsyncIterable<ExecutionResult>; setResult(result: ExecutionResult): void }) {
          if (Symbol.asyncIterator in result) return;
          const actual = answerCost(args.schema, args.document, args.operationName, result.data);
          if (throttle) {
            // What the operation did not use goes back; what it used beyond the estimate (a list
            // without a bound that held more than assumed) is taken, as the work is done.
            const settled = await limiter.take(points, actual - cost.cost, ctx.now().getTime(), true).catch(() => null);
            if (settled) throttle = throttleStatus(points, settled.available);
          }
          setResult({ ...result, extensions: { ...result.extensions, cost: costExtension(cost.cost, actual, throttle) } });
        },
      };
    },
    onResponse({ response, serverContext }) {
      const meter = (serverContext as Partial<Context>).rateLimit;
      if (!meter?.state) return;
      for (const [name, value] of Object.entries(rateLimitHeaders(meter.state, meter.refused))) response.headers.set(name, value);
    },
  };
}

/** Shopify's `throttleStatus`: the caller's points bucket after this operation. */
interface ThrottleStatus {
  maximumAvailable: number;
  currentlyAvailable: number;
  restoreRate: number;
}

function throttleStatus(bucket: BucketCharge, available: number): ThrottleStatus {
  return { maximumAvailable: bucket.capacity, currentlyAvailable: available, restoreRate: bucket.restorePerSecond };
}

function costExtension(requested: number, actual: number, throttleStatus: ThrottleStatus | null) {
  return { requestedQueryCost: requested, actualQueryCost: actual, throttleStatus };
}

function unavailable() {
  return refusal('The rate limit store cannot be reached. Retry shortly.', 'RATE_LIMITER_UNAVAILABLE', 503, { 'retry-after': '1' });
}

