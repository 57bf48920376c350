// The isolation test, generated from the schema and the route table: every root field of Core and
// CustomerPortal (read by introspection) and every REST route is called with the wrong principal
// and with ids that belong to someone else. A field or route added later is covered without a
// change here, and one whose ids this test cannot classify fails until it is taught which resource
// they name.
//
// The cast, all in sandbox: Mallory (the attacker) and Bob, customers of one organization, and
// Carol, a customer of another. Each bought a one-time product with a license key and a
// subscription. Mallory probes with her own portal session and with the read-only session her
// checkout handed her.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, Kind, type OperationDefinitionNode, type FieldNode } from 'graphql';
import { graphqlClient, restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { newOrganization, type Org } from '../helpers/organizations.ts';
import { fixedProduct } from '../helpers/purchases.ts';
import { eventually } from '../helpers/waiting.ts';
import { restRoutes } from '../../src/rest/routes/index.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' } });

const base = () => t.server.base('sandbox');
const prisma = () => t.server.kassa.environments.sandbox.environment.prisma;

// ---- The cast and what each owns ----

type Kind_ = 'customer' | 'order' | 'subscription' | 'benefitGrant' | 'licenseKey' | 'customerMeter';
interface Holdings {
  customerId: string;
  email: string;
  ids: Record<Kind_, string[]>;
  /**
   * The payment methods the customer's renewals are charged to. With the test processor of this
   * file nothing is saved at a processor, so these are test cards; the Stripe case is in
   * portal-payment-methods.test.ts.
   */
  paymentMethods: string[];
  /** Every identifying string of the customer's data: ids, email, license keys. */
  secrets: string[];
}
interface Shop {
  org: Org;
  oneTime: string;
  recurring: string;
}

async function openShop(): Promise<Shop> {
  const org = await newOrganization(t.server, 'sandbox');
  const benefit = await org.api('POST', '/benefits/', { type: 'license_keys', description: 'Key', properties: { prefix: 'ISO' } });
  expect(benefit.status, JSON.stringify(benefit.body)).toBe(201);
  const oneTime = await fixedProduct(org, 'Desktop app', 4900);
  const recurring = await fixedProduct(org, 'Cloud plan', 900, 'month');
  // Credits on a meter with the plan: each subscriber has a customer meter of their own.
  const meter = await org.api('POST', '/meters/', { name: 'API calls', filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api' }] }, aggregation: { func: 'count' } });
  expect(meter.status, JSON.stringify(meter.body)).toBe(201);
  const credits = await org.api('POST', '/benefits/', { type: 'meter_credit', description: 'Calls included', properties: { meter_id: meter.body.id, units: 100, rollover: false } });
  expect(credits.status, JSON.stringify(credits.body)).toBe(201);
  expect((await org.api('POST', `/products/${oneTime.id}/benefits`, { benefits: [benefit.body.id] })).status).toBe(200);
  expect((await org.api('POST', `/products/${recurring.id}/benefits`, { benefits: [benefit.body.id, credits.body.id] })).status).toBe(200);
  return { org, oneTime: oneTime.id, recurring: recurring.id };
}

/** The customer buys both products; returns the checkout session of the first purchase. */
async function shopper(shop: Shop, name: string): Promise<{ holdings: Holdings; checkoutToken: string }> {
  const email = `${name}-${randomUUID()}@example.com`;
  const tokens: string[] = [];
  // The shop set the shopper's address, so both purchases reach one customer.
  await shop.org.polar.customers.create({ email });
  for (const productId of [shop.oneTime, shop.recurring]) {
    const checkout = await shop.org.polar.checkouts.create({ products: [productId] });
    const confirmed = await shop.org.buyer.checkouts.clientConfirm({
      clientSecret: checkout.clientSecret,
      checkoutConfirmStripe: { customerEmail: email, customerName: name, confirmationTokenId: 'tok_visa' },
    });
    tokens.push(confirmed.customerSessionToken);
  }
  const customer = await prisma().customer.findFirstOrThrow({ where: { organizationId: shop.org.organizationId, email } });
  const held = await eventually(
    async () => ({
      orders: await prisma().order.findMany({ where: { customerId: customer.id, status: 'paid' } }),
      subscriptions: await prisma().subscription.findMany({ where: { customerId: customer.id, status: 'active' } }),
      grants: await prisma().benefitGrant.findMany({ where: { customerId: customer.id, grantedAt: { not: null } } }),
      keys: await prisma().licenseKey.findMany({ where: { customerId: customer.id } }),
      meters: await prisma().customerMeter.findMany({ where: { customerId: customer.id } }),
    }),
    (h) => h.orders.length === 2 && h.subscriptions.length === 1 && h.grants.length === 3 && h.keys.length === 2 && h.meters.length === 1,
    `${name}'s purchases to be paid and granted`,
  );
  const ids: Record<Kind_, string[]> = {
    customer: [customer.id],
    order: held.orders.map((o) => o.id),
    subscription: held.subscriptions.map((s) => s.id),
    benefitGrant: held.grants.map((g) => g.id),
    licenseKey: held.keys.map((k) => k.id),
    customerMeter: held.meters.map((m) => m.id),
  };
  return {
    holdings: { customerId: customer.id, email, ids, paymentMethods: held.subscriptions.map((s) => s.paymentMethod), secrets: [...Object.values(ids).flat(), email, ...held.keys.map((k) => k.key)] },
    checkoutToken: tokens[0],
  };
}

async function portalToken(org: Org, customerId: string): Promise<string> {
  const response = await org.api('POST', '/customer-sessions/', { customer_id: customerId });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.token;
}

let shop: Shop;
let otherShop: Shop;
let mallory: Holdings;
let bob: Holdings;
let carol: Holdings;
let malloryToken: string;
let malloryCheckoutToken: string;
/** What Mallory's first checkout bought: all her checkout session may reach. */
let malloryCheckoutIds: string[];

beforeAll(async () => {
  [shop, otherShop] = await Promise.all([openShop(), openShop()]);
  const [m, b, c] = await Promise.all([shopper(shop, 'mallory'), shopper(shop, 'bob'), shopper(otherShop, 'carol')]);
  [mallory, bob, carol] = [m.holdings, b.holdings, c.holdings];
  malloryCheckoutToken = m.checkoutToken;
  malloryToken = await portalToken(shop.org, mallory.customerId);
  // Invoices for Mallory's orders, so that reading one is something her session can do.
  for (const id of mallory.ids.order) {
    const billing = { billing_name: 'Mallory', billing_address: { line1: '1 Rue Exemple', city: 'Paris', postal_code: '75001', country: 'FR' } };
    expect((await shop.org.api('PATCH', `/orders/${id}`, billing)).status).toBe(200);
    expect((await shop.org.api('POST', `/orders/${id}/invoice`)).status).toBe(202);
  }
  const session = await prisma().customerSession.findFirstOrThrow({ where: { customerId: mallory.customerId, checkoutId: { not: null } }, orderBy: { createdAt: 'asc' } });
  const order = await prisma().order.findFirstOrThrow({ where: { checkoutId: session.checkoutId } });
  const grants = await prisma().benefitGrant.findMany({ where: { orderId: order.id }, include: { licenseKey: true } });
  malloryCheckoutIds = [order.id, ...grants.map((g) => g.id), ...grants.flatMap((g) => (g.licenseKey ? [g.licenseKey.id] : []))];
}, 120_000);

/** Everything the victims own, as rows: compared before and after the attacks. */
async function victimsRows() {
  const customerId = { in: [bob.customerId, carol.customerId] };
  return JSON.stringify(
    await Promise.all([
      prisma().customer.findMany({ where: { id: customerId }, orderBy: { id: 'asc' } }),
      prisma().order.findMany({ where: { customerId }, orderBy: { id: 'asc' } }),
      prisma().subscription.findMany({ where: { customerId }, orderBy: { id: 'asc' } }),
      prisma().benefitGrant.findMany({ where: { customerId }, orderBy: { id: 'asc' } }),
      prisma().licenseKey.findMany({ where: { customerId }, orderBy: { id: 'asc' } }),
      prisma().customerSession.findMany({ where: { customerId }, orderBy: { id: 'asc' } }),
    ]),
  );
}

// ---- The schema, by introspection ----

interface TypeRef {
  kind: string;
  name: string | null;
  ofType: TypeRef | null;
}
interface InputValue {
  name: string;
  type: TypeRef;
  defaultValue: string | null;
}
interface Field {
  name: string;
  args: InputValue[];
  type: TypeRef;
}
interface FullType {
  kind: string;
  name: string;
  fields: Field[] | null;
  inputFields: InputValue[] | null;
  enumValues: { name: string }[] | null;
  possibleTypes: { name: string }[] | null;
}

const typeRef = 'kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } }';
let types: Map<string, FullType>;

beforeAll(async () => {
  const response = await graphqlClient(base())(`{ __schema { types {
    kind name enumValues { name } possibleTypes { name }
    fields { name type { ${typeRef} } args { name defaultValue type { ${typeRef} } } }
    inputFields { name defaultValue type { ${typeRef} } } } } }`);
  types = new Map((response.body.data.__schema.types as FullType[]).map((t) => [t.name, t]));
});

const named = (ref: TypeRef): string => (ref.name ?? named(ref.ofType!));
const isRequired = (ref: TypeRef) => ref.kind === 'NON_NULL';
/** An argument the caller must give: non-null and without a default. */
const mustGive = (arg: InputValue) => isRequired(arg.type) && arg.defaultValue === null;
const isList = (ref: TypeRef): boolean => ref.kind === 'LIST' || (ref.kind === 'NON_NULL' && ref.ofType!.kind === 'LIST');
const rootFields = (typeName: string) => types.get(typeName)!.fields!;

/** A value of the input type: any well-formed one, for calls that must be refused before they run. */
function sample(ref: TypeRef, uuid: () => string = randomUUID): unknown {
  if (ref.kind === 'NON_NULL') return sample(ref.ofType!, uuid);
  if (ref.kind === 'LIST') return [sample(ref.ofType!, uuid)];
  const type = types.get(ref.name!)!;
  if (type.kind === 'ENUM') return type.enumValues![0].name;
  if (type.kind === 'INPUT_OBJECT') {
    return Object.fromEntries(type.inputFields!.filter((f) => mustGive(f)).map((f) => [f.name, sample(f.type, uuid)]));
  }
  switch (type.name) {
    case 'UUID':
      return uuid();
    case 'Int':
    case 'Float':
      return 1;
    case 'Boolean':
      return true;
    case 'DateTime':
      return new Date().toISOString();
    case 'Date':
      return new Date().toISOString().slice(0, 10);
    case 'MeterFilter':
      return { conjunction: 'and', clauses: [] };
    case 'JSONObject':
    case 'Metadata':
      return {};
    default:
      return 'x';
  }
}

const typeSource = (ref: TypeRef): string =>
  ref.kind === 'NON_NULL' ? `${typeSource(ref.ofType!)}!` : ref.kind === 'LIST' ? `[${typeSource(ref.ofType!)}]` : ref.name!;

/**
 * Every leaf the type offers, down to `depth` levels (fields with required arguments left out):
 * enough to see any identifier a result leaks.
 */
function selection(typeName: string, depth = 4): string {
  const type = types.get(typeName)!;
  if (type.kind === 'SCALAR' || type.kind === 'ENUM') return '';
  if (depth === 0) return '{ __typename }';
  if (type.kind === 'UNION' || type.kind === 'INTERFACE') {
    const variants = type.possibleTypes!.map((p) => `... on ${p.name} ${selection(p.name, depth)}`).join(' ');
    return `{ __typename ${variants} }`;
  }
  const fields = type.fields!.filter((f) => !f.args.some((a) => mustGive(a)));
  return `{ __typename ${fields.map((f) => `${f.name} ${selection(named(f.type), depth - 1)}`).join(' ')} }`;
}

/** An operation calling one root field under its surface, with the arguments as variables. */
function operation(kind: 'query' | 'mutation', surface: string, field: Field, deep = false) {
  const args = field.args.filter((a) => mustGive(a) || deep);
  const definitions = args.map((a) => `$${a.name}: ${typeSource(a.type)}`).join(', ');
  const call = args.length ? `(${args.map((a) => `${a.name}: $${a.name}`).join(', ')})` : '';
  const select = deep ? selection(named(field.type)) : selection(named(field.type), 1);
  return `${kind}${definitions ? ` (${definitions})` : ''} { ${surface} { ${field.name}${call} ${select} } }`;
}

const surfaces = [
  { kind: 'query', surface: 'core', type: 'CoreQuery' },
  { kind: 'mutation', surface: 'core', type: 'CoreMutation' },
  { kind: 'query', surface: 'customerPortal', type: 'CustomerPortalQuery' },
  { kind: 'mutation', surface: 'customerPortal', type: 'CustomerPortalMutation' },
] as const;

const counted: Record<string, number> = {};
const count = (what: string) => (counted[what] = (counted[what] ?? 0) + 1);
/** A loop over an empty list passes with nothing checked: each sweep must run at least this many cases (about half of today's). */
const expectCases = (what: string, atLeast: number) => expect(counted[what] ?? 0, `${what}: cases run`).toBeGreaterThanOrEqual(atLeast);
afterAll(() => {
  console.log(`isolation cases: ${JSON.stringify(counted)}`);
});

// ---- Which resource an id names ----

/** The resource a portal field addresses, read from the type it returns. */
const kindOfType: Record<string, Kind_> = {
  CustomerOrder: 'order',
  CustomerOrderInvoice: 'order',
  CustomerOrderPaymentStatus: 'order',
  CustomerOrderPaymentConfirmation: 'order',
  CustomerSubscription: 'subscription',
  CustomerBenefitGrant: 'benefitGrant',
  CustomerLicenseKey: 'licenseKey',
  CustomerCustomerMeter: 'customerMeter',
};
/** The resource a portal REST path addresses, read from the collection segment before its {id}. */
const kindOfCollection: Record<string, Kind_ | 'paymentMethod'> = {
  orders: 'order',
  subscriptions: 'subscription',
  'benefit-grants': 'benefitGrant',
  'license-keys': 'licenseKey',
  meters: 'customerMeter',
  'payment-methods': 'paymentMethod',
};

function kindOfField(field: Field): Kind_ {
  const typeName = named(field.type);
  const kind = kindOfType[typeName];
  if (!kind) throw new Error(`portal field ${field.name} takes an id but returns ${typeName}: teach this test which resource it names`);
  return kind;
}

/** Arguments that make a portal mutation valid apart from whose id it names. */
const validInput: Record<string, Record<string, unknown>> = {
  orderUpdate: { input: { billingName: 'Mallory Inc.' } },
  subscriptionUpdate: { input: { cancelAtPeriodEnd: true } },
  orderPaymentConfirm: { input: { confirmationTokenId: 'tok_visa' } },
  benefitGrantUpdate: { input: { benefitType: 'custom' } },
};

// ---- The attacks ----

describe('the Core API refuses customer tokens', () => {
  it('on every Core field, before anything runs', async () => {
    const before = await victimsRows();
    for (const token of [malloryToken, malloryCheckoutToken]) {
      for (const { kind, surface, type } of surfaces.filter((s) => s.surface === 'core')) {
        for (const field of rootFields(type)) {
          const variables = Object.fromEntries(field.args.filter((a) => mustGive(a)).map((a) => [a.name, sample(a.type)]));
          const response = await graphqlClient(base(), token)(operation(kind, surface, field), variables);
          expect(response.body.data?.core ?? null, `${type}.${field.name}`).toBeNull();
          expect(response.body.errors?.[0]?.extensions?.code, `${type}.${field.name}: ${JSON.stringify(response.body)}`).toBe('NOT_PERMITTED');
          count('core field x customer token');
        }
      }
    }
    expectCases('core field x customer token', 100);
    expect(await victimsRows()).toBe(before);
  });

  it('on every Core REST route', async () => {
    const before = await victimsRows();
    for (const route of restRoutes.filter((r) => surfaceOf(r.operation) === 'core')) {
      const path = route.path.replace(/\{\w+\}/g, () => randomUUID());
      for (const token of [malloryToken, malloryCheckoutToken]) {
        const response = await restClient(base(), token)(route.method, path.replace(/^\/v1/, ''), route.body ? {} : undefined);
        expect([401, 403], `${route.method} ${route.path}: ${response.status} ${JSON.stringify(response.body)}`).toContain(response.status);
        count('core route x customer token');
      }
    }
    expectCases('core route x customer token', 60);
    expect(await victimsRows()).toBe(before);
  });
});

describe('the Customer Portal refuses everyone but a customer', () => {
  it('on every portal field: an organization token and no token', async () => {
    for (const { kind, surface, type } of surfaces.filter((s) => s.surface === 'customerPortal')) {
      for (const field of rootFields(type)) {
        const variables = Object.fromEntries(field.args.filter((a) => mustGive(a)).map((a) => [a.name, sample(a.type)]));
        const source = operation(kind, surface, field);
        const byOrganization = await graphqlClient(base(), shop.org.token)(source, variables);
        expect(byOrganization.body.errors?.[0]?.extensions?.code, `${type}.${field.name}`).toBe('NOT_PERMITTED');
        const anonymous = await graphqlClient(base())(source, variables);
        expect(anonymous.body.errors?.[0]?.extensions?.code, `${type}.${field.name}`).toBe('UNAUTHENTICATED');
        count('portal field x wrong principal');
      }
    }
    expectCases('portal field x wrong principal', 10);
  });

  it('on every portal REST route that needs a customer', async () => {
    for (const route of restRoutes.filter((r) => surfaceOf(r.operation) === 'customerPortal')) {
      const path = route.path.replace(/\{\w+\}/g, () => randomUUID()).replace(/^\/v1/, '');
      const byOrganization = await restClient(base(), shop.org.token)(route.method, path, route.body ? {} : undefined);
      expect(byOrganization.status, `${route.method} ${route.path}`).toBe(403);
      const anonymous = await restClient(base())(route.method, path, route.body ? {} : undefined);
      expect(anonymous.status, `${route.method} ${route.path}`).toBe(401);
      count('portal route x wrong principal');
    }
    expectCases('portal route x wrong principal', 8);
  });
});

describe("a customer never reaches another customer's data", () => {
  const victims = () => [
    { who: 'bob (same organization)', holdings: bob },
    { who: 'carol (another organization)', holdings: carol },
  ];

  it('on every portal field that takes an id: 404, exactly as for an id that does not exist', async () => {
    const before = await victimsRows();
    for (const { kind, surface, type } of surfaces.filter((s) => s.surface === 'customerPortal')) {
      for (const field of rootFields(type).filter((f) => f.args.some((a) => named(a.type) === 'UUID' && mustGive(a)))) {
        const resource = kindOfField(field);
        const call = (token: string, id: string) => {
          const variables = Object.fromEntries(
            field.args.filter((a) => mustGive(a)).map((a) => [a.name, named(a.type) === 'UUID' ? id : (validInput[field.name]?.[a.name] ?? sample(a.type))]),
          );
          return graphqlClient(base(), token)(operation(kind, surface, field), variables);
        };
        const unknown = await call(malloryToken, randomUUID());
        expect(unknown.body.errors?.[0]?.extensions?.code, `${field.name} with an unknown id: ${JSON.stringify(unknown.body)}`).toBe('RESOURCE_NOT_FOUND');
        const attempts = [
          ...victims().flatMap(({ who, holdings }) => holdings.ids[resource].map((id) => ({ who, token: malloryToken, id }))),
          // The checkout session reaches only what its checkout bought, not the rest of Mallory's.
          ...mallory.ids[resource].filter((id) => !malloryCheckoutIds.includes(id)).map((id) => ({ who: "mallory's checkout session", token: malloryCheckoutToken, id })),
        ];
        expect(attempts.length, `${field.name}: no ${resource} to attack with`).toBeGreaterThan(0);
        for (const { who, token, id } of attempts) {
          const response = await call(token, id);
          const code = response.body.errors?.[0]?.extensions?.code;
          // A read-only checkout session may be refused outright on a mutation; never let in.
          const refusals = kind === 'mutation' && token === malloryCheckoutToken ? ['RESOURCE_NOT_FOUND', 'NOT_PERMITTED'] : ['RESOURCE_NOT_FOUND'];
          expect(refusals, `${type}.${field.name} as ${who}: ${JSON.stringify(response.body)}`).toContain(code);
          if (code === 'RESOURCE_NOT_FOUND') expect(response.body.errors![0].message).toBe(unknown.body.errors![0].message);
          count('portal field x foreign id');
        }
      }
    }
    expectCases('portal field x foreign id', 20);
    expect(await victimsRows()).toBe(before);
  });

  it("on every portal query: no identifier of another customer anywhere in a full selection", async () => {
    for (const field of rootFields('CustomerPortalQuery')) {
      const requiredIds = field.args.filter((a) => mustGive(a) && named(a.type) === 'UUID');
      const optional = field.args.filter((a) => !mustGive(a));
      // Mallory's own ids where an id is required (for her checkout session, one its checkout
      // bought, if any); every filter pointed at the victims' ids.
      const own = requiredIds.length ? mallory.ids[kindOfField(field)] : [];
      const victimIds = [...bob.secrets, ...carol.secrets].filter((s) => /^[0-9a-f-]{36}$/.test(s));
      const filters = [{}, ...optional.filter((a) => named(a.type) === 'UUID' && isList(a.type)).map((a) => ({ [a.name]: victimIds }))];
      const sessions = [
        { token: malloryToken, ownId: own[0], forbidden: [...bob.secrets, ...carol.secrets] },
        {
          token: malloryCheckoutToken,
          ownId: own.find((id) => malloryCheckoutIds.includes(id)),
          forbidden: [...bob.secrets, ...carol.secrets, ...mallory.secrets.filter((s) => !malloryCheckoutIds.includes(s) && s !== mallory.email && s !== mallory.customerId && !isKeyOfCheckout(s))],
        },
      ].filter((session) => !requiredIds.length || session.ownId);
      for (const filter of filters) {
        for (const { token, ownId, forbidden } of sessions) {
          const variables = { ...Object.fromEntries(requiredIds.map((a) => [a.name, ownId])), ...filter };
          const deepField = { ...field, args: field.args.filter((a) => mustGive(a) || a.name in filter) };
          const response = await graphqlClient(base(), token)(operation('query', 'customerPortal', deepField, true), variables);
          // The scan means something only if the query ran: Mallory's own session reads every field;
          // her checkout session may be refused the profile, never anything else.
          const errors = (response.body.errors ?? []).map((e: { extensions?: { code?: string } }) => e.extensions?.code);
          if (token === malloryToken) expect(response.body.errors, `${field.name}: ${JSON.stringify(response.body.errors)}`).toBeUndefined();
          else expect(errors.filter((code?: string) => code !== 'NOT_PERMITTED'), `${field.name}: ${JSON.stringify(response.body.errors)}`).toEqual([]);
          const text = JSON.stringify(response.body);
          for (const secret of forbidden) expect(text.includes(secret), `${field.name} ${JSON.stringify(filter)} leaks ${secret}`).toBe(false);
          count('portal query x leak scan');
        }
      }
    }
    expectCases('portal query x leak scan', 25);
  });

  it('on every portal REST route with an id: 404', async () => {
    const before = await victimsRows();
    for (const route of restRoutes.filter((r) => surfaceOf(r.operation) === 'customerPortal' && r.path.includes('{id}'))) {
      const collection = /\/([\w-]+)\/\{id\}/.exec(route.path)?.[1] ?? '';
      const resource = kindOfCollection[collection];
      expect(resource, `${route.method} ${route.path}: teach this test which resource {id} names`).toBeDefined();
      const body = route.body ? toWire((validInput[rootFieldOf(route.operation)]?.input ?? {}) as Record<string, unknown>) : undefined;
      for (const { holdings } of victims()) {
        for (const id of resource === 'paymentMethod' ? holdings.paymentMethods : holdings.ids[resource]) {
          const response = await restClient(base(), malloryToken)(route.method, route.path.replace('{id}', id).replace(/^\/v1/, ''), body);
          expect(response.status, `${route.method} ${route.path} with a foreign id: ${JSON.stringify(response.body)}`).toBe(404);
          expect(response.body).toEqual({ error: 'ResourceNotFound', detail: expect.any(String) });
          count('portal route x foreign id');
        }
      }
    }
    expectCases('portal route x foreign id', 15);
    expect(await victimsRows()).toBe(before);
  });
});

// ---- Reading the route table ----

/** The surface an operation runs on: `core`, `customerPortal`, or `public` for the unauthenticated endpoints. */
function surfaceOf(source: string): 'core' | 'customerPortal' | 'public' {
  const name = rootSelection(source).name.value;
  return name === 'core' || name === 'customerPortal' ? name : 'public';
}

function rootSelection(source: string): FieldNode {
  const definition = parse(source).definitions.find((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)!;
  return definition.selectionSet.selections[0] as FieldNode;
}

function rootFieldOf(source: string): string {
  const root = rootSelection(source);
  return (root.selectionSet?.selections[0] as FieldNode | undefined)?.name.value ?? root.name.value;
}

function toWire(input: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(input).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), v]));
}

/** License keys Mallory's checkout granted, which her checkout session may show. */
function isKeyOfCheckout(secret: string): boolean {
  return keysOfCheckout.includes(secret);
}
let keysOfCheckout: string[] = [];
beforeAll(async () => {
  const keys = await prisma().licenseKey.findMany({ where: { id: { in: malloryCheckoutIds } } });
  keysOfCheckout = keys.map((k) => k.key);
});
