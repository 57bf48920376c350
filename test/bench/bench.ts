// `npm run bench`: loopback load on `GET /v1/products/?limit=100` (100 products seeded) through REST,
// the same query in GraphQL, and a baseline — a bare node:http handler making the same Prisma query
// (the products with their prices and benefits, and the count) on the same database, without
// authentication — all served by one child process while this one generates the load. Each
// surface is reported as a ratio to the baseline, so the figure is Kassa's own overhead whatever
// the machine, and to a ceiling: the same process serving the bytes of Kassa's REST answer, taken
// once, from bare node:http with no database. Targets: REST and GraphQL each at least 0.9 of the
// baseline and 0.02 of the ceiling, p99 under 50 ms.
// Then the nested case: a page of 100 customers (199 orders seeded, 1 to 3 each) with their orders
// and the orders' lines and prices, in one GraphQL query (Customer.orders, read with its parent),
// next to the REST calls an integrator needs for the same data, and a baseline making the
// equivalent Prisma query (the columns the GraphQL query asks for). The REST equivalent is the
// fewest calls that return it: `GET /v1/customers/?limit=100`, then the orders of those customers
// in one filtered list, `GET /v1/orders/?limit=100&customer_id=…` (the 100 ids as repeated
// parameters), page after page: 3 calls for 199 orders, each after the one before, since the
// orders' filter needs the customers and the page count the first page. REST orders carry their
// lines with their price ids. Asking each customer's orders apart would take 101 calls, and the
// orders list alone misses customers without orders and the customers' order. A check before
// the load asserts that the three surfaces return the same customers, orders and lines in the
// same order. Throughput is in pages per second (a REST page is its 3 calls). Target: GraphQL
// serves at least as many pages per second as the REST equivalent.
// Then the rate limiter's overhead: the same products list without limits, with the in-memory
// store and with Redis, as ratios to no limits.
// Then the webhook case (./webhooks.ts): a burst of paid orders in sandbox to their order.paid
// deliveries at a loopback receiver, in orders/s and p50/p99 from commit to receipt (targets: 200
// orders/s, p99 under 500 ms). Then the fan-out case (./webhooks.ts): BENCH_FANOUT_EVENTS events
// (5,000) committed at once to one endpoint, in deliveries/s (target: 2,000).
// Then the usage case (./usage.ts): BENCH_USAGE_EVENTS events (1,000,000 by default) ingested in
// batches of 1000, in events/s, then one customer's meter quantities over one month, in p50/p99.
// Every response of a measured run must be 200: anything else stops the bench.
// Then the metered case (./metered.ts): one renewal sweep over BENCH_METERED_SUBSCRIPTIONS (10,000)
// subscriptions with a metered price and meter credits, in this process, timed.
// Then the oauth case (./oauth.ts): the authorization-code and refresh grants and userinfo, in req/s.
// Then the processes case (PostgreSQL only): the order pipeline on one Kassa process, then on two
// sharing the database and a Redis, with the throughput ratio and every webhook sent once.
// Then the soak case: the REST products list under load for BENCH_SOAK_SECONDS (600), the server's
// resident memory sampled every 5 s and printed as a curve, flat when the second half peaks no
// higher than the first (plus 64 MB).
// BENCH_CASES selects the cases (comma-separated: products, nested, ratelimits, webhooks, fanout, processes, usage, metered, oauth, soak;
// all by default).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';
import { benchUsage } from './usage.ts';
import { onPostgres } from './targets.ts';
import { benchOAuth, type OAuthSeed } from './oauth.ts';
import { benchMetered } from './metered.ts';
import { benchWebhookFanout, benchWebhooks } from './webhooks.ts';
import { hasRedis, startRedis } from '../helpers/redis.ts';

const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 10);
/** The products list's targets: a share of the bare-Prisma baseline and of the bare-bytes ceiling, and the p99 at 10 connections. */
const readTargets = { ofBaseline: 0.9, ofCeiling: 0.02, p99Ms: 50 };
const knownCases = ['products', 'nested', 'ratelimits', 'webhooks', 'fanout', 'processes', 'usage', 'metered', 'oauth', 'soak'];
const oauthCodes = Number(process.env.BENCH_OAUTH_CODES ?? 20_000);
const cases = new Set((process.env.BENCH_CASES ?? knownCases.join(',')).split(',').map((c) => c.trim()));
for (const name of cases) if (!knownCases.includes(name)) throw new Error(`BENCH_CASES: unknown case ${name} (${knownCases.join(', ')})`);

interface Target {
  kassa: string;
  baseline: string;
  token: string;
  sandboxToken: string;
  /** The oauth case's client and codes, when the target was asked to issue them. */
  oauth?: OAuthSeed;
  /** The target process's resident memory now, in MB (Linux's /proc). */
  rssMb(): number;
  /** The CPU time the target process has used so far, in ms (user and system, Linux's /proc). */
  cpuMs(): number;
  /** Sends the target a command (target.ts reads them on stdin) and resolves with its answer. */
  command(request: object): Promise<any>;
  stop(): void;
}

function cpuMs(pid: number): number {
  // utime and stime, the 14th and 15th fields, in clock ticks (100 a second on Linux).
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Math.round(Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

/** BENCH_TARGET_NODE_ARGS: more Node.js options for the target process, e.g. `--cpu-prof --cpu-prof-dir=/tmp/profiles`. */
const targetNodeArgs = (process.env.BENCH_TARGET_NODE_ARGS ?? '').split(' ').filter(Boolean);

/** Starts a target process (./target.ts) with more Kassa settings, and reads its addresses; `orders` seeds the nested case's customers and orders. */
async function startTarget(kassaEnv: Record<string, string> = {}, orders = false): Promise<Target> {
  const child = spawn(process.execPath, [...targetNodeArgs, '--import', 'tsx', new URL('./target.ts', import.meta.url).pathname], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, BENCH_KASSA_ENV: JSON.stringify(kassaEnv), BENCH_SEED_ORDERS: orders ? '1' : '0', BENCH_OAUTH_CODES: cases.has('oauth') ? String(oauthCodes) : '0' },
  });
  // The first line is the addresses; each later one answers a command, in order.
  const answers: ((line: string) => void)[] = [];
  const lines = createInterface({ input: child.stdout! });
  const addresses = await new Promise<Omit<Target, 'stop' | 'command'>>((resolve, reject) => {
    lines.once('line', (line) => {
      resolve(JSON.parse(line));
      lines.on('line', (next) => answers.shift()?.(next));
    });
    child.once('exit', (code) => reject(new Error(`the benchmark target exited with ${code}`)));
  });
  const command = (request: object) =>
    new Promise<any>((resolve, reject) => {
      answers.push((line) => {
        const answer = JSON.parse(line);
        if (answer.error) reject(new Error(`the benchmark target: ${answer.error}`));
        else resolve(answer);
      });
      child.stdin!.write(`${JSON.stringify(request)}\n`);
    });
  return { ...addresses, command, rssMb: () => rssMb(child.pid!), cpuMs: () => cpuMs(child.pid!), stop: () => child.kill('SIGTERM') };
}

// Limits stay on, as in production, with budgets no benchmark reaches: every request is counted
// and every GraphQL operation's cost taken from its points bucket, none is refused.
const unreachedBudgets = {
  RATE_LIMITS: 'on',
  RATE_LIMIT_PER_MINUTE: '1000000',
  RATE_LIMIT_IP_PER_SECOND: '1000000',
  GRAPHQL_POINTS_MAXIMUM: '100000000',
  GRAPHQL_POINTS_RESTORE_RATE: '100000000',
};
const targets: Target[] = [];
const addresses = await startTarget(unreachedBudgets, cases.has('nested'));
targets.push(addresses);

const graphqlQuery = `query { core { products(limit: 100) { items {
  id createdAt modifiedAt name description recurringInterval isRecurring isArchived organizationId metadata
  prices { id createdAt modifiedAt amountType isArchived productId type recurringInterval
    ... on ProductPriceFixed { priceCurrency priceAmount }
    ... on ProductPriceCustom { priceCurrency minimumAmount maximumAmount presetAmount } }
  benefits { id createdAt modifiedAt type description selectable deletable organizationId metadata }
} pagination { totalCount maxPage } } } }`;

interface Surface {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** When a page takes several calls: the paths each connection requests in turn, from `url`. */
  paths?: string[];
  /** The CPU time used so far by the process serving it, to report the CPU time each request takes. */
  cpuMs?: () => number;
}

/** The products list through REST and GraphQL on a target, and the target's baseline. */
function productSurfaces(target: Omit<Target, 'stop'>): Record<'ceiling' | 'baseline' | 'rest' | 'graphql', Surface> {
  const auth = { authorization: `Bearer ${target.token}` };
  const { cpuMs } = target;
  return {
    ceiling: { url: `${target.baseline}/ceiling`, method: 'GET', headers: {}, cpuMs },
    baseline: { url: `${target.baseline}/products`, method: 'GET', headers: {}, cpuMs },
    rest: { url: `${target.kassa}/v1/products/?limit=100`, method: 'GET', headers: auth, cpuMs },
    graphql: { url: `${target.kassa}/v1/graphql`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: graphqlQuery }), cpuMs },
  };
}

async function fetchJson(surface: Surface, path?: string) {
  const response = await fetch(path ? new URL(path, surface.url) : surface.url, { method: surface.method, headers: surface.headers, body: surface.body });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${surface.method} ${path ?? surface.url} answered ${response.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text);
}

async function checkProducts(name: string, surface: Surface) {
  const payload = await fetchJson(surface);
  if (payload.errors) throw new Error(`${name}: ${JSON.stringify(payload.errors)}`);
  const count = payload.items?.length ?? payload.data?.core?.products?.items?.length;
  if (count !== 100) throw new Error(`${name} did not return 100 products`);
}

/** Calls per page: 1, or the length of a surface's sequence. */
const callsOf = (surface: Surface) => surface.paths?.length ?? 1;

async function load(name: string, surface: Surface, duration = seconds) {
  const { paths, cpuMs, ...request } = surface;
  const cpuBefore = cpuMs?.();
  const result = await autocannon({ ...request, connections, duration, ...(paths ? { requests: paths.map((path) => ({ method: surface.method, path })) } : {}) });
  const statuses = Object.keys(result.statusCodeStats ?? {});
  if (result.non2xx || result.errors || result.timeouts || statuses.some((status) => status !== '200')) {
    throw new Error(
      `${name}: every response must be 200; got statuses ${JSON.stringify(result.statusCodeStats)}, ${result.non2xx} non-2xx, ` +
        `${result.errors} errors, ${result.timeouts} timeouts (BENCH_LOG_ERRORS=1 shows Kassa's error log)`,
    );
  }
  // The server's CPU time per request moves far less than its throughput when other work shares the machine.
  const cpuPerRequest = cpuMs && cpuBefore !== undefined && result.requests.total ? (cpuMs() - cpuBefore) / result.requests.total : null;
  return { rps: result.requests.average, pages: result.requests.average / callsOf(surface), p50: result.latency.p50, p99: result.latency.p99, cpuPerRequest };
}

type Measure = Awaited<ReturnType<typeof load>>;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const summary = (list: Measure[]) => ({
  rps: list.reduce((sum, r) => sum + r.rps, 0) / list.length,
  pages: list.reduce((sum, r) => sum + r.pages, 0) / list.length,
  p50: median(list.map((r) => r.p50)),
  p99: median(list.map((r) => r.p99)),
  cpuPerRequest: list.every((r) => r.cpuPerRequest !== null) ? median(list.map((r) => r.cpuPerRequest!)) : null,
});

/** Warms every case up, then measures them in interleaved rounds, so a drift in the machine's speed weighs on all alike. */
async function measure(cases: Record<string, Surface>) {
  for (const [name, surface] of Object.entries(cases)) await load(name, surface, 2);
  const runs: Record<string, Measure[]> = Object.fromEntries(Object.keys(cases).map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    for (const [name, surface] of Object.entries(cases)) runs[name].push(await load(name, surface));
  }
  return Object.fromEntries(Object.entries(runs).map(([name, list]) => [name, summary(list)]));
}

function printRatios(results: Record<string, ReturnType<typeof summary>>, baselineOf: (name: string) => string, column: string) {
  console.table(
    Object.entries(results).map(([name, r]) => ({
      case: name,
      'req/s': Math.round(r.rps),
      'p50 ms': r.p50,
      'p99 ms': r.p99,
      ...(r.cpuPerRequest !== null ? { 'CPU ms/req': Number(r.cpuPerRequest.toFixed(2)) } : {}),
      [column]: Number((r.rps / results[baselineOf(name)].rps).toFixed(2)),
    })),
  );
}

async function benchProducts() {
  console.log(`GET products (limit=100, 100 seeded), ${connections} connections, ${rounds} rounds of ${seconds}s per surface, on loopback\n`);
  const surfaces = productSurfaces(addresses);
  for (const [name, surface] of Object.entries(surfaces)) await checkProducts(name, surface);
  const results = await measure(surfaces);
  printRatios(results, () => 'baseline', 'ratio to baseline');
  for (const name of ['rest', 'graphql'] as const) {
    const ratio = results[name].rps / results.baseline.rps;
    const ofCeiling = results[name].rps / results.ceiling.rps;
    console.log(`${name}: ${ratio.toFixed(2)} of baseline (target ${readTargets.ofBaseline}) ${ratio >= readTargets.ofBaseline ? 'PASS' : 'BELOW'}`);
    console.log(`${name}: ${ofCeiling.toFixed(3)} of the ceiling's ${Math.round(results.ceiling.rps)} req/s (target ${readTargets.ofCeiling}) ${ofCeiling >= readTargets.ofCeiling ? 'PASS' : 'BELOW'}`);
    console.log(`${name}: p99 ${results[name].p99} ms (target under ${readTargets.p99Ms}) ${results[name].p99 < readTargets.p99Ms ? 'PASS' : 'BELOW'}`);
    const [cpu, baselineCpu] = [results[name].cpuPerRequest, results.baseline.cpuPerRequest];
    if (cpu !== null && baselineCpu) console.log(`${name}: ${cpu.toFixed(2)} ms of server CPU per request, ${(cpu / baselineCpu).toFixed(2)} times the baseline's ${baselineCpu.toFixed(2)} ms`);
  }
}

const nestedQuery = `query { core { customers(limit: 100) { items {
  id email name
  orders(first: 10) { totalCount edges { node { id createdAt status totalAmount currency items { id label amount productPrice { id } } } } }
} pagination { totalCount maxPage } } } }`;

/** A page of customers with their orders as `customer id → order ids with their line ids and price ids`, to compare the surfaces. */
type NestedPage = [string, [string, string[]][]][];

/** The REST equivalent's calls for the page (customers, then their orders page after page), and the page they return. */
async function restNestedPage(rest: Surface): Promise<{ paths: string[]; page: NestedPage }> {
  const customersPath = '/v1/customers/?limit=100';
  const customers: { id: string }[] = (await fetchJson(rest, customersPath)).items;
  const ordersPath = (page: number) => `/v1/orders/?limit=100&page=${page}&${customers.map((c) => `customer_id=${c.id}`).join('&')}`;
  const first = await fetchJson(rest, ordersPath(1));
  const paths = [customersPath, ordersPath(1)];
  const orders: { id: string; customer_id: string; items: { id: string; product_price_id: string }[] }[] = [...first.items];
  for (let page = 2; page <= first.pagination.max_page; page++) {
    paths.push(ordersPath(page));
    orders.push(...(await fetchJson(rest, ordersPath(page))).items);
  }
  const page: NestedPage = customers.map((customer) => [
    customer.id,
    orders.filter((order) => order.customer_id === customer.id).map((order) => [order.id, order.items.map((line) => `${line.id}@${line.product_price_id}`)]),
  ]);
  return { paths, page };
}

/**
 * The nested page through GraphQL, through the REST calls an integrator would make, and the
 * baseline; each reported in pages per second and as a ratio to the baseline's.
 */
async function benchNested() {
  const auth = { authorization: `Bearer ${addresses.token}` };
  const rest: Surface = { url: addresses.kassa, method: 'GET', headers: auth };
  const { paths, page: restPage } = await restNestedPage(rest);
  const surfaces: Record<string, Surface> = {
    baseline: { url: `${addresses.baseline}/customers-orders`, method: 'GET', headers: {} },
    rest: { ...rest, paths },
    graphql: { url: `${addresses.kassa}/v1/graphql`, method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ query: nestedQuery }) },
  };

  const answer = await fetchJson(surfaces.graphql);
  if (answer.errors) throw new Error(`graphql: ${JSON.stringify(answer.errors)}`);
  type Line = { id: string; productPrice: { id: string } };
  const graphqlPage: NestedPage = answer.data.core.customers.items.map((customer: { id: string; orders: { totalCount: number; edges: { node: { id: string; items: Line[] } }[] } }) => {
    if (customer.orders.totalCount !== customer.orders.edges.length) throw new Error('graphql: a customer has more orders than the first 10');
    return [customer.id, customer.orders.edges.map(({ node }) => [node.id, node.items.map((line) => `${line.id}@${line.productPrice.id}`)])];
  });
  type BaselineOrder = { id: string; items: { id: string; productPriceId: string }[] };
  const baselinePage: NestedPage = (await fetchJson(surfaces.baseline)).items.map((customer: { id: string; orders: BaselineOrder[] }) => [
    customer.id,
    customer.orders.map((order) => [order.id, order.items.map((line) => `${line.id}@${line.productPriceId}`)]),
  ]);
  const orders = graphqlPage.reduce((sum, [, list]) => sum + list.length, 0);
  if (graphqlPage.length !== 100 || orders === 0) throw new Error(`graphql: ${graphqlPage.length} customers and ${orders} orders, not the 100 customers seeded with their orders`);
  for (const [name, page] of [['rest', restPage], ['baseline', baselinePage]] as const) {
    if (JSON.stringify(page) !== JSON.stringify(graphqlPage)) throw new Error(`${name} does not return the customers, orders and lines GraphQL returns`);
  }
  const { requestedQueryCost, actualQueryCost } = answer.extensions?.cost ?? {};

  console.log(
    `\nNested page: 100 customers with their ${orders} orders, lines and prices; GraphQL in 1 request (cost ${requestedQueryCost} requested, ${actualQueryCost} actual), ` +
      `REST in ${paths.length} calls; ${connections} connections, ${rounds} rounds of ${seconds}s per surface, on loopback\n`,
  );
  const results = await measure(surfaces);
  console.table(
    Object.entries(results).map(([name, r]) => ({
      case: name,
      'calls/page': callsOf(surfaces[name]),
      'pages/s': Number(r.pages.toFixed(1)),
      'p50 ms (per call)': r.p50,
      'p99 ms (per call)': r.p99,
      'ratio to baseline': Number((r.pages / results.baseline.pages).toFixed(2)),
    })),
  );
  const ratio = results.graphql.pages / results.rest.pages;
  console.log(`graphql nested: ${ratio.toFixed(2)} times the REST equivalent's pages per second (target 1) ${ratio >= 1 ? 'PASS' : 'BELOW'}`);
}

/**
 * The rate limiter's overhead: the same products list on targets without limits, with the
 * in-memory store and with Redis, each surface reported as a ratio to the same surface without
 * limits. The budgets are set high enough that nothing is refused, so every request is counted
 * as in production and none is turned away.
 */
/**
 * The order pipeline on one Kassa process, then on two on the same PostgreSQL databases and the
 * same Redis (each its own pools, job runner and webhook worker), checkouts spread over them: the
 * orders per second of each and their ratio, and every webhook sent once (no job or delivery run
 * by both). The embedded database is one process's alone, so the case needs BENCH_DATABASE_URL.
 */
async function benchProcesses() {
  if (!onPostgres) return console.log('\nThe processes case needs PostgreSQL (BENCH_DATABASE_URL): left out.');
  const redis = await startRedis();
  try {
    const env = { ...unreachedBudgets, REDIS_URL: redis.url };
    const one = await startTarget(env);
    targets.push(one);
    const alone = await benchWebhooks(`${one.kassa}/sandbox`, one.sandboxToken);
    const two = await startTarget(env);
    targets.push(two);
    const together = await benchWebhooks([`${one.kassa}/sandbox`, `${two.kassa}/sandbox`], one.sandboxToken);
    const ratio = together.ordersPerSecond / alone.ordersPerSecond;
    console.log(`\nProcesses: one ${Math.round(alone.ordersPerSecond)} orders/s, two ${Math.round(together.ordersPerSecond)} orders/s, ratio ${ratio.toFixed(2)} (target: more with two) ${ratio > 1 ? 'PASS' : 'BELOW'}`);
    const repeated = alone.repeated + together.repeated;
    console.log(`webhooks sent more than once: ${repeated} (target 0) ${repeated === 0 ? 'PASS' : 'BELOW'}`);
  } finally {
    redis.stop();
  }
}

/** Memory under a long load: the REST products list for `soakSeconds`, the target's RSS every 5 s. */
async function benchSoak() {
  const soakSeconds = Number(process.env.BENCH_SOAK_SECONDS ?? 600);
  const { rest } = productSurfaces(addresses);
  const rss = [addresses.rssMb()];
  const sampler = setInterval(() => rss.push(addresses.rssMb()), 5000);
  let result: autocannon.Result;
  try {
    result = await autocannon({ url: rest.url, method: 'GET', headers: rest.headers, connections, duration: soakSeconds });
  } finally {
    clearInterval(sampler);
  }
  rss.push(addresses.rssMb());
  if (result.non2xx || result.errors || result.timeouts) throw new Error(`soak: every response must be 200; got ${JSON.stringify(result.statusCodeStats)}`);
  const half = Math.max(1, Math.floor(rss.length / 2));
  const [first, second] = [Math.max(...rss.slice(0, half)), Math.max(...rss.slice(half))];
  console.log(`\nSoak: GET products (limit=100) through REST for ${soakSeconds}s, ${connections} connections, ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms`);
  console.log(`RSS (MB, every 5 s): ${rss.join(' ')}`);
  console.log(`memory: first half peaks at ${first} MB, second half at ${second} MB (target: at most ${first + 64}) ${second <= first + 64 ? 'PASS' : 'BELOW'}`);
}

async function benchRateLimits() {
  const redis = hasRedis ? await startRedis() : null;
  const variants: Record<string, Record<string, string>> = { off: { RATE_LIMITS: 'off' }, memory: unreachedBudgets };
  if (redis) variants.redis = { ...unreachedBudgets, REDIS_URL: redis.url };
  else console.log('redis-server is not installed: the Redis variant is left out.');
  try {
    const cases: Record<string, Surface> = {};
    for (const [variant, env] of Object.entries(variants)) {
      const started = await startTarget(env);
      targets.push(started);
      const { rest, graphql } = productSurfaces(started);
      cases[`rest, limits ${variant}`] = rest;
      cases[`graphql, limits ${variant}`] = graphql;
    }
    for (const [name, surface] of Object.entries(cases)) await checkProducts(name, surface);
    console.log(`\nRate limiter overhead: GET products (limit=100) without limits, in memory${redis ? ' and in Redis' : ''}, ${rounds} rounds of ${seconds}s\n`);
    printRatios(await measure(cases), (name) => name.replace(/limits \w+$/, 'limits off'), 'ratio to no limits');
  } finally {
    redis?.stop();
  }
}

try {
  if (cases.has('products')) await benchProducts();
  if (cases.has('nested')) await benchNested();
  if (cases.has('ratelimits')) await benchRateLimits();
  if (cases.has('webhooks')) await benchWebhooks(`${addresses.kassa}/sandbox`, addresses.sandboxToken);
  if (cases.has('processes')) await benchProcesses();
  if (cases.has('fanout')) await benchWebhookFanout(`${addresses.kassa}/sandbox`, addresses.sandboxToken, addresses.command);
  if (cases.has('usage')) await benchUsage(addresses.kassa, addresses.token, seconds, connections, addresses.rssMb);
  if (cases.has('metered')) await benchMetered();
  if (cases.has('soak')) await benchSoak();
  if (cases.has('oauth')) await benchOAuth(addresses.kassa, addresses.oauth!, seconds, connections);
} finally {
  for (const target of targets) target.stop();
}
