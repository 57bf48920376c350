import { getIntrospectionQuery, parse } from 'graphql';
import { describe, expect, it, test } from 'vitest';
import { answerCost, checkNesting, costViolation, countTokens, documentSize, maxDocumentNesting, operationCost, sizeViolation } from '../../src/graphql/cost.ts';
import { loadConfig } from '../../src/config.ts';

/** The documented defaults: GRAPHQL_MAX_COST 25000, GRAPHQL_MAX_DEPTH 12, GRAPHQL_MAX_ALIASES 30, GRAPHQL_MAX_TOKENS 2000. */
const defaultCostLimits = loadConfig({}).graphqlLimits;
import type { OperationCost } from '../../src/graphql/cost.ts';
import { schema } from '../../src/graphql/schema.ts';

const id = '"00000000-0000-0000-0000-000000000000"';

function measure(query: string, variables?: Record<string, unknown>, operationName?: string): OperationCost {
  return operationCost(schema, parse(query), operationName, variables);
}

const cost = (query: string, variables?: Record<string, unknown>) => measure(query, variables).cost;

describe('operationCost', () => {
  it('charges 1 per object and nothing for scalars', () => {
    // core 1 + product 1
    expect(measure(`{ core { product(id: ${id}) { id name } } }`)).toMatchObject({ cost: 2, depth: 3, aliases: 0 });
  });

  it('counts every item a page may hold, up to the limit of the field that returned it', () => {
    // core 1 + orders 1 + items 100 × (order 1 + customer 1 + items 10 × 1)
    const orders = `{ core { orders(limit: 100) { items { id customer { id } items { id } } } } }`;
    expect(cost(orders)).toBe(1202);
    expect(cost(`{ core { product(id: ${id}) { id name } } }`)).toBeLessThan(cost(orders));
    // core 1 + products 1 + items 100 × (product 1 + prices 10 × 1) + pagination 1
    const products = `{ core { products(limit: 100) { items { id prices { __typename } } pagination { totalCount } } } }`;
    expect(measure(products)).toMatchObject({ cost: 1103, depth: 5 });
    // The catalogue a storefront shows: 100 products with their prices and benefits.
    const catalogue = `{ core { products(limit: 100) { items { id name prices { id } benefits { id description } } pagination { totalCount } } } }`;
    expect(cost(catalogue)).toBe(2103);
    expect(costViolation(measure(catalogue), defaultCostLimits)).toBeNull();
  });

  it('reads the limit from a literal, a variable, the variable’s default or the argument’s default', () => {
    const page = (args: string) => `products${args} { items { organization { id } } }`;
    // core 1 + products 1 + items limit × (product 1 + organization 1)
    expect(cost(`{ core { ${page('')} } }`)).toBe(22);
    expect(cost(`{ core { ${page('(limit: 40)')} } }`)).toBe(82);
    const withVariable = `query ($n: Int!) { core { ${page('(limit: $n)')} } }`;
    expect(cost(withVariable, { n: 70 })).toBe(142);
    expect(cost(withVariable, {})).toBe(22);
    const withDefault = `query ($n: Int! = 25) { core { ${page('(limit: $n)')} } }`;
    expect(measure(withDefault, undefined).cost).toBe(52);
    expect(operationCost(schema, parse(withDefault), null, null).cost).toBe(52);
    expect(cost(withDefault, { n: 5 })).toBe(12);
  });

  it('measures a reused document again when a variable it reads changes, and not for one it ignores', () => {
    // A parsed document is cached and reused across requests: its measures are kept by the variables they read.
    const document = parse(`query ($n: Int!, $q: String) { core { products(limit: $n, query: $q) { items { organization { id } } } } }`);
    const again = (variables: Record<string, unknown>) => operationCost(schema, document, null, variables);
    const first = again({ n: 70, q: 'a' });
    expect(first.cost).toBe(142);
    expect(again({ n: 70, q: 'b' })).toBe(first);
    expect(again({ n: 5, q: 'a' }).cost).toBe(12);
    expect(again({}).cost).toBe(22);
    // More variants than are kept still measure right.
    for (let n = 1; n <= 20; n++) expect(again({ n }).cost).toBe(2 + 2 * n);
    expect(again({ n: 70 }).cost).toBe(142);
  });

  it('bounds a connection’s edges by first or last, and a related connection by its first', () => {
    // core 1 + products 1 + edges 5 × (edge 1 + node 1) + pageInfo 1
    expect(cost(`{ core { products(first: 5) { edges { cursor node { id } } pageInfo { hasNextPage } } } }`)).toBe(13);
    expect(cost(`{ core { products(last: 3, before: "x") { edges { node { id } } } } }`)).toBe(8);
    // core 1 + customer 1 + orders 1 + edges 4 × (edge 1 + order 1 + items 10 × 1)
    expect(cost(`{ core { customer(id: ${id}) { orders(first: 4) { edges { node { items { id } } } } } } }`)).toBe(51);
  });

  it('counts a plain list as 10 items', () => {
    // core 1 + product 1 + benefits 10 × 1
    expect(cost(`{ core { product(id: ${id}) { benefits { id } } } }`)).toBe(12);
    // customerPortalOrganization 1 + organization 1 + products 10 × 1
    expect(cost(`{ customerPortalOrganization(slug: "x") { organization { id } products { id } } }`)).toBe(12);
  });

  it('expands fragments and takes the dearest type of an interface', () => {
    const benefits = (selection: string) => `{ core { product(id: ${id}) { benefits { id ${selection} } } } }`;
    // Each type's properties cost 1; a benefit is one type at a time: core 1 + product 1 + benefits 10 × (1 + 1)
    expect(
      cost(
        benefits(`... on BenefitCustom { properties { note } } ... on BenefitDownloadables { properties { files } }`),
      ),
    ).toBe(22);
    // Two fragments on the same type add up: benefits 10 × (1 + 2)
    expect(cost(benefits(`... on BenefitCustom { properties { note } } ...More`) + ` fragment More on BenefitCustom { again: properties { note } }`)).toBe(32);
    // A fragment on the interface itself applies to every type
    expect(cost(benefits(`...All ... on BenefitCustom { properties { note } }`) + ` fragment All on Benefit { id }`)).toBe(22);
  });

  it('expands named fragments where they are spread, with the page limit of the spread', () => {
    const query = `
      { core { first: products(limit: 50) { ...Page } second: products { ...Page } } }
      fragment Page on ProductList { items { organization { id } } }`;
    // core 1 + (1 + 50 × 2) + (1 + 10 × 2)
    expect(measure(query)).toMatchObject({ cost: 123, depth: 5, aliases: 2 });
  });

  it('does not loop on recursive fragments', () => {
    const query = `
      { core { product(id: ${id}) { ...A } } }
      fragment A on Product { organization { id } ...B }
      fragment B on Product { ...A }`;
    expect(cost(query)).toBe(3);
  });

  it('stays fast on fragments that spread each other many times over', () => {
    const levels = 40;
    const fragments = Array.from({ length: levels }, (_, i) => `fragment F${i + 1} on Product { ...F${i} ...F${i} }`);
    const query = `{ core { product(id: ${id}) { ...F${levels} } } } fragment F0 on Product { organization { id } } ${fragments.join(' ')}`;
    const started = performance.now();
    expect(cost(query)).toBe(2 + 2 ** levels);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('counts aliases and depth', () => {
    const query = `{ core { a: product(id: ${id}) { id } b: product(id: ${id}) { n: name organization { slug } } } }`;
    expect(measure(query)).toMatchObject({ cost: 4, depth: 4, aliases: 3 });
  });

  it('charges nothing for introspection', () => {
    const introspection = measure(getIntrospectionQuery());
    expect(introspection.cost).toBe(0);
    // __schema types fields args type kind: the nine nested ofType add no depth
    expect(introspection.depth).toBe(6);
    expect(costViolation(introspection, defaultCostLimits)).toBeNull();
    expect(cost(`{ __typename core { __typename } }`)).toBe(1);
    expect(cost(`{ __type(name: "Product") { fields { type { name } } } }`)).toBe(0);
    const nested = `{ __schema { types { ${'fields { type { '.repeat(6)} name ${'} } '.repeat(6)} } } }`;
    expect(costViolation(measure(nested), defaultCostLimits)).toMatch(/15 deep, above the limit of 12/);
  });

  it('measures only the operation that would run', () => {
    const document = `query A { core { product(id: ${id}) { id } } } query B { core { orders { items { id } } } }`;
    expect(measure(document, {}, 'A').cost).toBe(2);
    // core 1 + orders 1 + items 10 × 1
    expect(measure(document, {}, 'B').cost).toBe(12);
    expect(measure(document, {}, 'C').cost).toBe(0);
    expect(measure(document).cost).toBe(0);
  });

  it('counts the tokens of the parsed source', () => {
    expect(measure(`{ core { product(id: ${id}) { id } } }`).tokens).toBe(14);
  });
});

describe('costViolation', () => {
  const within: OperationCost = { cost: 25_000, depth: 12, aliases: 30, tokens: 2000 };

  it('is null within every limit', () => {
    expect(costViolation(within, defaultCostLimits)).toBeNull();
  });

  it('names the limit broken and what to change', () => {
    expect(costViolation({ ...within, cost: 25_001 }, defaultCostLimits)).toMatch(/costs 25001, above the limit of 25000.*limit/);
    expect(costViolation({ ...within, depth: 13 }, defaultCostLimits)).toMatch(/13 deep, above the limit of 12/);
    expect(costViolation({ ...within, aliases: 31 }, defaultCostLimits)).toMatch(/31 aliases, above the limit of 30.*split/);
    expect(costViolation({ ...within, tokens: 2001 }, defaultCostLimits)).toMatch(/2001 tokens, above the limit of 2000/);
  });

  it('rejects a page of 100 orders that each select lists of objects when above the limit', () => {
    // core 1 + orders 1 + items 100 × (order 1 + product 1 + benefits 10 × (benefit 1 + properties 1) + items 10 × 1)
    const query = `{ core { orders(limit: 100) { items { items { id } product { benefits { ... on BenefitCustom { properties { note } } } } } } } }`;
    expect(measure(query).cost).toBe(3202);
    expect(costViolation(measure(query), { ...defaultCostLimits, maxCost: 3000 })).toMatch(/^The query costs 3202, above the limit of 3000/);
  });
});

describe('countTokens', () => {
  it('counts lexical tokens, ignoring comments and commas', () => {
    expect(countTokens('{ a }', 100)).toBe(3);
    expect(countTokens('# note\n{ a(x: 1, y: "s") }', 100)).toBe(11);
    expect(countTokens('', 100)).toBe(0);
  });

  it('stops once above the maximum', () => {
    const long = `{ ${'a '.repeat(10_000)}}`;
    expect(countTokens(long, 50)).toBe(51);
    expect(countTokens(long, Number.POSITIVE_INFINITY)).toBe(10_002);
  });

  it('counts the tokens before a syntax error', () => {
    expect(countTokens('{ a "unterminated', 100)).toBe(2);
  });
});

describe('the size of a document with its fragments expanded', () => {
  const chain = (levels: number) => {
    let document = `{ core { products { items { ...F${levels} } } } }\nfragment F0 on Product { id name }\n`;
    for (let i = 1; i <= levels; i++) document += `fragment F${i} on Product { ...F${i - 1} ...F${i - 1} }\n`;
    return parse(document);
  };

  test('counts every selected field, scalars included, once per place it is spread', () => {
    expect(documentSize(parse('{ core { products { items { id name } } } }'))).toEqual({ fields: 5, depth: 4 });
    expect(documentSize(chain(3)).fields).toBe(3 + 2 ** 3 * 2);
  });

  test('measures an exponential chain of fragments without expanding it', () => {
    expect(documentSize(chain(30)).fields).toBe(3 + 2 ** 31);
    // 2^1001 fields: measured in the document's length, refused whatever its depth.
    const huge = documentSize(chain(1000));
    expect(huge.fields).toBeGreaterThan(Number.MAX_SAFE_INTEGER);
    expect(sizeViolation(huge, defaultCostLimits)).toBe(
      'The document selects more than 2^53 fields once its fragments are expanded, above the limit of 1000: select fewer fields, or spread each fragment in fewer places.',
    );
  });

  test('counts every operation, inline fragments, and cyclic or unknown spreads as empty', () => {
    const document = parse(`
      query A { core { products { items { id ... on Product { name } } } } }
      query B { core { products { items { ...Loop ...Missing } } } }
      fragment Loop on Product { id ...Loop }`);
    expect(documentSize(document)).toEqual({ fields: 5 + 4, depth: 4 });
  });

  test('admits documents up to the limit', () => {
    expect(sizeViolation({ fields: defaultCostLimits.maxFields, depth: 1 }, defaultCostLimits)).toBeNull();
    expect(sizeViolation({ fields: defaultCostLimits.maxFields + 1, depth: 1 }, defaultCostLimits)).toMatch(/selects 1001 fields/);
  });
});

describe('checkNesting', () => {
  const nested = (levels: number) => `mutation { core(a: ${'['.repeat(levels)}${']'.repeat(levels)}) }`;

  it('refuses a document of 5,000 nested lists as a syntax error, where the parser alone runs out of stack', () => {
    expect(() => parse(nested(5_000))).toThrow(RangeError);
    expect(() => checkNesting(nested(5_000), maxDocumentNesting, 2_000)).toThrow(/nests more than 100 levels deep/);
  });

  it('lets a document within the nesting through, and leaves its other syntax errors to the parser', () => {
    expect(() => checkNesting(nested(90), maxDocumentNesting, 2_000)).not.toThrow();
    expect(() => checkNesting('{ a "unterminated', maxDocumentNesting, 2_000)).not.toThrow();
  });
});

describe('answerCost', () => {
  const actual = (query: string, data: unknown) => answerCost(schema, parse(query), undefined, data);

  it('counts the objects fields returned, not the values of JSON scalars or introspection', () => {
    const query = `{ core { products(limit: 2) { items { id metadata prices { id } } pagination { totalCount } } } }`;
    const data = {
      core: {
        products: {
          items: [
            { id: 'a', metadata: { plan: 'gold', nested: { deep: true } }, prices: [{ id: 'p1' }, { id: 'p2' }] },
            { id: 'b', metadata: {}, prices: [] },
          ],
          pagination: { totalCount: 2 },
        },
      },
    };
    // core 1 + products 1 + 2 products + 2 prices + pagination 1; the metadata objects are free.
    expect(actual(query, data)).toBe(7);
    expect(actual(query, data)).toBeLessThanOrEqual(cost(query));
    expect(actual('{ __schema { types { name } } }', { __schema: { types: [{ name: 'Query' }, { name: 'Product' }] } })).toBe(0);
  });

  it('follows aliases, fragments and type conditions', () => {
    const query = `{ core { a: product(id: ${id}) { ...P } b: product(id: ${id}) { id } } } fragment P on Product { ... on Product { prices { id } } }`;
    expect(actual(query, { core: { a: { prices: [{ id: 'x' }] }, b: null } })).toBe(3);
  });
});
