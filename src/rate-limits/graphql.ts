// Limits in the GraphQL pipeline. Before any resolver runs, an operation gets its static cost
// (src/graphql/cost.ts); one over the maximum cost, depth or alias count is refused. The principal's
// budget is then charged by that cost, and the license key endpoints' per-address limit by how
// many of them the operation calls. The answer carries `extensions.cost`, as Shopify's API does.
// Only GraphQL requests over HTTP are metered here: a REST route is charged once per request by
// the HTTP layer, whatever operation it runs.
import { GraphQLError, Kind, parse, type DocumentNode, type ExecutionResult } from 'graphql';
import type { Plugin } from '@envelop/core';
import type { Plugin as YogaPlugin } from 'graphql-yoga';
import type { Context } from '../context.ts';
import { costViolation, operationCost, type CostLimits } from '../graphql/cost.ts';
import { rateLimitHeaders, type LimitState, type RateLimiter } from './limiter.ts';

/** What the HTTP layer hands a GraphQL request: the environment's limiter, the client, and the latest limit state. */
export interface RateMeter {
  limiter: RateLimiter;
  clientIp: string;
  state: LimitState | null;
  refused: boolean;
}

/** The unauthenticated license key mutations: limited per client address. */
const licenseFields = new Set(['licenseKeyValidate', 'licenseKeyActivate', 'licenseKeyDeactivate']);

function licenseCalls(document: DocumentNode, operationName: string | null | undefined): number {
  const operation = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION && (!operationName || d.name?.value === operationName));
  if (operation?.kind !== Kind.OPERATION_DEFINITION || operation.operation !== 'mutation') return 0;
  return operation.selectionSet.selections.filter((s) => s.kind === Kind.FIELD && licenseFields.has(s.name.value)).length;
}

function refusal(message: string, code: string, status: number, headers: Record<string, string> = {}) {
  return { errors: [new GraphQLError(message, { extensions: { code, http: { status, headers } } })] };
}

export function useRateLimits(limits: CostLimits): YogaPlugin & Plugin {
  return {
    // A document of more tokens than allowed is refused while parsing, before it is built.
    onParse({ setParseFn, parseFn }) {
      setParseFn((source, options) => (parseFn ?? parse)(source, { ...options, maxTokens: limits.maxTokens }));
    },
    async onExecute({ args, setResultAndStopExecution }) {
      const ctx = args.contextValue as Context;
      const meter = ctx.rateLimit;
      if (!meter) return;
      const cost = operationCost(args.schema, args.document, args.operationName, args.variableValues as Record<string, unknown> | undefined);
      const violation = costViolation(cost, limits);
      if (violation) return setResultAndStopExecution(refusal(violation, 'QUERY_TOO_COMPLEX', 400));
      const { limiter } = meter;
      if (!limiter.config.enabled) return;
      const licenses = licenseCalls(args.document, args.operationName);
      const verdict = await limiter.charge([licenses ? limiter.license(meter.clientIp, licenses) : null, limiter.principal(ctx.principal, Math.max(1, cost.cost))], ctx.now().getTime());
      if (!verdict.allowed) {
        meter.refused = true;
        if (verdict.reason === 'store_unavailable') return setResultAndStopExecution(refusal('The rate limit store cannot be reached. Retry shortly.', 'RATE_LIMITER_UNAVAILABLE', 503, { 'retry-after': '1' }));
        meter.state = verdict.state;
        return setResultAndStopExecution(refusal(limiter.explain(verdict.state), 'RATE_LIMITED', 429, rateLimitHeaders(verdict.state, true)));
      }
      if (verdict.state) meter.state = verdict.state;
      const budget = verdict.state?.name === 'principal' ? verdict.state : null;
      return {
        onExecuteDone({ result, setResult }: { result: ExecutionResult | AsyncIterable<ExecutionResult>; setResult(result: ExecutionResult): void }) {
          if (Symbol.asyncIterator in result) return;
          const extensions = {
            ...result.extensions,
            cost: {
              requestedQueryCost: cost.cost,
              // The data root is no field; every object under it is one.
              actualQueryCost: Math.max(0, objectsIn(result.data) - 1),
              throttleStatus: budget && { maximumAvailable: budget.limit, currentlyAvailable: budget.remaining, windowSeconds: budget.windowSeconds, resetSeconds: budget.resetSeconds },
            },
          };
          setResult({ ...result, extensions });
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

/** The objects an answer holds: what resolving it actually cost. */
function objectsIn(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + objectsIn(item), 0);
  if (value === null || typeof value !== 'object') return 0;
  let count = 1;
  for (const field of Object.values(value)) count += objectsIn(field);
  return count;
}
