// Custom fields end to end, in sandbox: the resource through the official client (@polar-sh/sdk),
// whose schemas parse every response, and through GraphQL; who may reach it; attached to products;
// answered at checkout, checked by type and properties, required at confirmation, and copied to
// the order, the subscription and the customer.
import { randomUUID } from 'node:crypto';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, openPage, screenshots, seriousViolations } from '../helpers/chromium.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { tokenWithScopes, type Org } from '../helpers/organizations.ts';
import { checkoutWhen, fixedProduct, paidOrderOf } from '../helpers/purchases.ts';
import { expectStatus, expectValidationError, graphqlData, graphqlFailure } from '../helpers/responses.ts';
import { uuid } from '../helpers/matchers.ts';
import { eventually, rejectionOf } from '../helpers/waiting.ts';
import { restClient } from '../helpers/server.ts';

const t = useTestServer({ env: { TEST_CARD_DELAY_MS: '0' }, organizations: { org: 'sandbox', other: 'sandbox', live: 'production' } });

const slug = (prefix: string) => `${prefix}-${randomUUID().slice(0, 8)}`;

/** One field of each kind, with properties that give each answer something to fail. */
async function fiveFields(org: Org) {
  const company = await org.polar.customFields.create({
    type: 'text', slug: slug('company'), name: 'Company', properties: { formLabel: 'Your company', formHelpText: 'As on the invoice', minLength: 2, maxLength: 10 },
  });
  const seats = await org.polar.customFields.create({ type: 'number', slug: slug('seats'), name: 'Seats', properties: { ge: 1, le: 50 } });
  const start = await org.polar.customFields.create({
    type: 'date', slug: slug('start'), name: 'Start date', properties: { ge: Date.UTC(2026, 0, 1) / 1000, le: Date.UTC(2026, 11, 31) / 1000 },
  });
  const terms = await org.polar.customFields.create({ type: 'checkbox', slug: slug('terms'), name: 'I accept the terms', properties: {} });
  const size = await org.polar.customFields.create({
    type: 'select', slug: slug('size'), name: 'Size', properties: { options: [{ value: 's', label: 'Small' }, { value: 'l', label: 'Large' }] },
  });
  return { company, seats, start, terms, size };
}

type Fields = Awaited<ReturnType<typeof fiveFields>>;

/** A product asking the five fields: company and terms required, the others optional. */
async function productAsking(org: Org, fields: Fields, recurring = false) {
  return org.polar.products.create({
    name: recurring ? 'Team plan' : 'Workshop',
    recurringInterval: recurring ? 'month' : null,
    prices: [{ amountType: 'fixed', priceAmount: 4000, priceCurrency: 'usd' }],
    attachedCustomFields: [
      { customFieldId: fields.company.id, required: true },
      { customFieldId: fields.seats.id, required: false },
      { customFieldId: fields.start.id, required: false },
      { customFieldId: fields.terms.id, required: true },
      { customFieldId: fields.size.id, required: false },
    ],
  });
}

describe('the custom fields resource through the client library', () => {
  it('creates each of the five kinds and reads them back, properties exactly as set', async () => {
    const { company, seats, start, terms, size } = await fiveFields(t.org);
    expect(company).toEqual({
      id: uuid,
      createdAt: expect.any(Date),
      modifiedAt: expect.any(Date),
      metadata: {},
      type: 'text',
      slug: company.slug,
      name: 'Company',
      organizationId: t.org.organizationId,
      properties: { formLabel: 'Your company', formHelpText: 'As on the invoice', minLength: 2, maxLength: 10 },
    });
    expect(seats.properties).toEqual({ ge: 1, le: 50 });
    expect(start.properties).toEqual({ ge: Date.UTC(2026, 0, 1) / 1000, le: Date.UTC(2026, 11, 31) / 1000 });
    expect(terms).toMatchObject({ type: 'checkbox', properties: {} });
    expect(size.properties).toEqual({ options: [{ value: 's', label: 'Small' }, { value: 'l', label: 'Large' }] });
    for (const field of [company, seats, start, terms, size]) expect(await t.org.polar.customFields.get({ id: field.id })).toEqual(field);
    const raw = expectStatus(await t.org.api('GET', `/custom-fields/${seats.id}`), 200);
    expect(raw.properties).toEqual({ ge: 1, le: 50 });
  });

  it('stores the slug in lowercase, and refuses a slug taken in the organization, whatever its case', async () => {
    const name = slug('Vat-ID');
    const created = await t.org.polar.customFields.create({ type: 'text', slug: name, name: 'VAT id', properties: {} });
    expect(created.slug).toBe(name.toLowerCase());
    const taken = expectValidationError(await t.org.api('POST', '/custom-fields/', { type: 'text', slug: name.toUpperCase(), name: 'Again', properties: {} }), ['body', 'slug']);
    expect(taken.msg).toMatch(/already exists/);
    // Another organization may use it.
    await t.other.polar.customFields.create({ type: 'text', slug: name, name: 'VAT id', properties: {} });
    expectValidationError(await t.org.api('POST', '/custom-fields/', { type: 'text', slug: 'no spaces', name: 'Bad', properties: {} }), ['body', 'slug'], 'string_pattern_mismatch');
  });

  it('lists by page, filters by query and type, and sorts', async () => {
    const org = t.other;
    const prefix = randomUUID().slice(0, 6);
    for (const [i, type] of (['text', 'number', 'checkbox'] as const).entries()) {
      await org.polar.customFields.create({ type, slug: `${prefix}-${i}`, name: `${prefix} ${['Alpha', 'Beta', 'Gamma'][i]}`, properties: {} });
    }
    const pages = [];
    for await (const page of await org.polar.customFields.list({ query: prefix, limit: 2 })) pages.push(page.result.items.map((f) => f.slug));
    expect(pages).toEqual([[`${prefix}-0`, `${prefix}-1`], [`${prefix}-2`]]);
    const numbers = await org.polar.customFields.list({ query: prefix, typeFilter: ['number', 'checkbox'], sorting: ['-name'] });
    expect(numbers.result.items.map((f) => f.name)).toEqual([`${prefix} Gamma`, `${prefix} Beta`]);
    expect(numbers.result.pagination).toEqual({ totalCount: 2, maxPage: 1 });
  });

  it('updates name, slug and properties; the type cannot change', async () => {
    const field = await t.org.polar.customFields.create({ type: 'number', slug: slug('qty'), name: 'Quantity', properties: { ge: 1 } });
    const newSlug = slug('count');
    const updated = await t.org.polar.customFields.update({ id: field.id, customFieldUpdate: { type: 'number', name: 'Count', slug: newSlug, properties: { ge: 0, le: 9, formLabel: 'How many?' } } });
    expect(updated).toMatchObject({ name: 'Count', slug: newSlug, properties: { ge: 0, le: 9, formLabel: 'How many?' }, modifiedAt: expect.any(Date) });
    const error = await rejectionOf(t.org.polar.customFields.update({ id: field.id, customFieldUpdate: { type: 'text', name: 'Other' } }));
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail?.[0].loc).toEqual(['body', 'type']);
    expect((await t.org.polar.customFields.get({ id: field.id })).name).toBe('Count');
  });

  it('refuses properties of another type and bounds out of order, writing nothing', async () => {
    const before = (await t.org.polar.customFields.list({ limit: 100 })).result.pagination.totalCount;
    expectValidationError(await t.org.api('POST', '/custom-fields/', { type: 'number', slug: slug('x'), name: 'X', properties: { min_length: 2 } }), ['body', 'properties', 'min_length'], 'extra_forbidden');
    expectValidationError(await t.org.api('POST', '/custom-fields/', { type: 'number', slug: slug('x'), name: 'X', properties: { ge: 5, le: 1 } }), ['body', 'properties', 'le']);
    expectValidationError(await t.org.api('POST', '/custom-fields/', { type: 'text', slug: slug('x'), name: 'X', properties: { min_length: 5, max_length: 2 } }), ['body', 'properties', 'max_length']);
    expectValidationError(await t.org.api('POST', '/custom-fields/', { type: 'select', slug: slug('x'), name: 'X', properties: {} }), ['body', 'properties', 'options'], 'missing');
    expectValidationError(
      await t.org.api('POST', '/custom-fields/', { type: 'select', slug: slug('x'), name: 'X', properties: { options: [{ value: 'a', label: 'A' }, { value: 'a', label: 'B' }] } }),
      ['body', 'properties', 'options', 1, 'value'],
    );
    expect((await t.org.polar.customFields.list({ limit: 100 })).result.pagination.totalCount).toBe(before);
  });

  it('deletes softly: the field is gone from reads and from the products asking it, and its slug stays taken', async () => {
    const field = await t.org.polar.customFields.create({ type: 'text', slug: slug('gone'), name: 'Gone', properties: {} });
    const product = await t.org.polar.products.create({
      name: 'Asks it', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 1000, priceCurrency: 'usd' }], attachedCustomFields: [{ customFieldId: field.id, required: true }],
    });
    expect(product.attachedCustomFields.map((a) => a.customFieldId)).toEqual([field.id]);
    await t.org.polar.customFields.delete({ id: field.id });
    expect(await rejectionOf(t.org.polar.customFields.get({ id: field.id }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(t.org.polar.customFields.delete({ id: field.id }))).toBeInstanceOf(ResourceNotFound);
    expect((await t.org.polar.products.get({ id: product.id })).attachedCustomFields).toEqual([]);
    expectValidationError(await t.org.api('POST', '/custom-fields/', { type: 'text', slug: field.slug, name: 'Again', properties: {} }), ['body', 'slug']);
  });

  it('answers 404 for an unknown id on get, update and delete', async () => {
    const id = randomUUID();
    expect(await rejectionOf(t.org.polar.customFields.get({ id }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(t.org.polar.customFields.update({ id, customFieldUpdate: { type: 'text', name: 'X' } }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(t.org.polar.customFields.delete({ id }))).toBeInstanceOf(ResourceNotFound);
  });
});

describe('custom fields through GraphQL', () => {
  it('reads the five kinds through the interface, the list and node(id:), and creates and deletes by mutation', async () => {
    const created = await graphqlData(
      t.org.gql(
        `mutation ($input: CustomFieldCreateInput!) { core { customFieldCreate(input: $input) {
          __typename id slug ... on CustomFieldSelect { properties { formLabel options { value label } } } } } }`,
        { input: { type: 'select', slug: slug('colour'), name: 'Colour', properties: { formLabel: 'Pick one', options: [{ value: 'red', label: 'Red' }] } } },
      ),
    );
    const field = created.core.customFieldCreate;
    expect(field).toMatchObject({ __typename: 'CustomFieldSelect', properties: { formLabel: 'Pick one', options: [{ value: 'red', label: 'Red' }] } });
    const read = await graphqlData(
      t.org.gql(
        `query ($id: ID!, $q: String) { node(id: $id) { __typename id }
          core { customFields(query: $q) { totalCount edges { node { id name type } } } } }`,
        { id: field.id, q: field.slug },
      ),
    );
    expect(read.node).toEqual({ __typename: 'CustomFieldSelect', id: field.id });
    expect(read.core.customFields).toEqual({ totalCount: 1, edges: [{ node: { id: field.id, name: 'Colour', type: 'select' } }] });
    const deleted = await graphqlData(t.org.gql('mutation ($id: UUID!) { core { customFieldDelete(id: $id) } }', { id: field.id }));
    expect(deleted.core.customFieldDelete).toBe(true);
    await graphqlFailure(t.org.gql('query ($id: UUID!) { core { customField(id: $id) { id } } }', { id: field.id }), 'RESOURCE_NOT_FOUND');
  });
});

describe('who may reach custom fields', () => {
  it('refuses no token, a token without the scope, another organization and a sandbox token on production', async () => {
    const field = await t.org.polar.customFields.create({ type: 'text', slug: slug('secret'), name: 'Secret', properties: {} });
    const sandboxBase = t.server.base('sandbox');
    expect((await restClient(sandboxBase)('GET', '/custom-fields/')).status).toBe(401);
    expect((await restClient(sandboxBase)('GET', `/custom-fields/${field.id}`)).status).toBe(401);

    const readOnly = await tokenWithScopes(t.server, t.org, ['custom_fields:read']);
    expectStatus(await restClient(sandboxBase, readOnly)('GET', `/custom-fields/${field.id}`), 200);
    expect((await restClient(sandboxBase, readOnly)('POST', '/custom-fields/', { type: 'text', slug: slug('x'), name: 'X', properties: {} })).status).toBe(403);
    expect((await restClient(sandboxBase, readOnly)('DELETE', `/custom-fields/${field.id}`)).status).toBe(403);
    const productsOnly = await tokenWithScopes(t.server, t.org, ['products:read']);
    expect((await restClient(sandboxBase, productsOnly)('GET', '/custom-fields/')).status).toBe(403);

    // Another organization sees nothing of it and cannot change or delete it.
    expect(await rejectionOf(t.other.polar.customFields.get({ id: field.id }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(t.other.polar.customFields.update({ id: field.id, customFieldUpdate: { type: 'text', name: 'Mine' } }))).toBeInstanceOf(ResourceNotFound);
    expect(await rejectionOf(t.other.polar.customFields.delete({ id: field.id }))).toBeInstanceOf(ResourceNotFound);
    expect((await t.other.polar.customFields.list({ query: field.slug })).result.items).toEqual([]);
    const node = await t.other.gql('query ($id: ID!) { node(id: $id) { id } }', { id: field.id });
    expect(node.body.data?.node ?? null).toBeNull();

    // A sandbox token is unknown in production.
    expect((await restClient(t.server.base('production'), t.org.token)('GET', `/custom-fields/${field.id}`)).status).toBe(401);
    expect((await t.org.polar.customFields.get({ id: field.id })).name).toBe('Secret');
  });

  it('refuses attaching another organization’s field to a product, writing nothing', async () => {
    const theirs = await t.other.polar.customFields.create({ type: 'text', slug: slug('theirs'), name: 'Theirs', properties: {} });
    const mine = await t.org.polar.customFields.create({ type: 'text', slug: slug('mine'), name: 'Mine', properties: {} });
    const error = await rejectionOf(
      t.org.polar.products.create({
        name: 'Borrowing', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 1000, priceCurrency: 'usd' }],
        attachedCustomFields: [{ customFieldId: mine.id, required: false }, { customFieldId: theirs.id, required: true }],
      }),
    );
    expect(error).toBeInstanceOf(HTTPValidationError);
    expect((error as HTTPValidationError).detail?.map((d) => d.loc)).toEqual([['body', 'attached_custom_fields', 1, 'custom_field_id']]);
    expect((await t.org.polar.products.list({ query: 'Borrowing' })).result.items).toEqual([]);

    const product = await fixedProduct(t.org, 'Plain');
    expectValidationError(
      await t.org.api('PATCH', `/products/${product.id}`, { attached_custom_fields: [{ custom_field_id: theirs.id, required: false }] }),
      ['body', 'attached_custom_fields', 0, 'custom_field_id'],
    );
    expect((await t.org.polar.products.get({ id: product.id })).attachedCustomFields).toEqual([]);
  });

  it('serves the five operations in production too', async () => {
    const field = await t.live.polar.customFields.create({ type: 'checkbox', slug: slug('live'), name: 'Live', properties: { formHelpText: 'Check it' } });
    expect(await t.live.polar.customFields.get({ id: field.id })).toEqual(field);
    expect((await t.live.polar.customFields.list({})).result.items.map((f) => f.id)).toContain(field.id);
    expect((await t.live.polar.customFields.update({ id: field.id, customFieldUpdate: { type: 'checkbox', name: 'Renamed' } })).name).toBe('Renamed');
    await t.live.polar.customFields.delete({ id: field.id });
    // The sandbox organization's token does not reach production's field.
    expect((await restClient(t.server.base('production'), t.org.token)('GET', `/custom-fields/${field.id}`)).status).toBe(401);
  });
});

describe('custom fields on products and checkouts', () => {
  it('attaches fields in order, replaces them on update, and shows them on the product and the checkout', async () => {
    const fields = await fiveFields(t.org);
    const product = await productAsking(t.org, fields);
    expect(product.attachedCustomFields.map((a) => [a.customFieldId, a.order, a.required, a.customField.type])).toEqual([
      [fields.company.id, 0, true, 'text'],
      [fields.seats.id, 1, false, 'number'],
      [fields.start.id, 2, false, 'date'],
      [fields.terms.id, 3, true, 'checkbox'],
      [fields.size.id, 4, false, 'select'],
    ]);
    expect(product.attachedCustomFields[0].customField).toEqual(fields.company);
    const checkout = await t.org.polar.checkouts.create({ products: [product.id] });
    expect(checkout.attachedCustomFields).toEqual(product.attachedCustomFields);
    expect(checkout.customFieldData).toEqual({});
    const buyerView = await t.org.buyer.checkouts.clientGet({ clientSecret: checkout.clientSecret });
    expect(buyerView.attachedCustomFields.map((a) => a.customFieldId)).toEqual(product.attachedCustomFields.map((a) => a.customFieldId));

    const updated = await t.org.polar.products.update({ id: product.id, productUpdate: { attachedCustomFields: [{ customFieldId: fields.size.id, required: true }, { customFieldId: fields.company.id, required: false }] } });
    expect(updated.attachedCustomFields.map((a) => [a.customField.slug, a.order, a.required])).toEqual([[fields.size.slug, 0, true], [fields.company.slug, 1, false]]);
    expectValidationError(
      await t.org.api('PATCH', `/products/${product.id}`, { attached_custom_fields: [{ custom_field_id: fields.size.id, required: true }, { custom_field_id: fields.size.id, required: false }] }),
      ['body', 'attached_custom_fields', 1, 'custom_field_id'],
    );
  });

  it('checks each answer by its field, with a loc naming the field, and writes nothing on a refusal', async () => {
    const fields = await fiveFields(t.org);
    const product = await productAsking(t.org, fields);
    const checkout = await t.org.polar.checkouts.create({ products: [product.id] });
    const answer = (data: Record<string, unknown>) => t.org.publicApi('PATCH', `/checkouts/client/${checkout.clientSecret}`, { custom_field_data: data });
    const at = (field: { slug: string }) => ['body', 'custom_field_data', field.slug];

    expectValidationError(await answer({ [fields.company.slug]: 42 }), at(fields.company), 'string_type');
    expectValidationError(await answer({ [fields.company.slug]: 'A' }), at(fields.company), 'string_too_short');
    expectValidationError(await answer({ [fields.company.slug]: 'A much too long name' }), at(fields.company), 'string_too_long');
    expectValidationError(await answer({ [fields.seats.slug]: '3' }), at(fields.seats), 'int_type');
    expectValidationError(await answer({ [fields.seats.slug]: 2.5 }), at(fields.seats), 'int_type');
    expectValidationError(await answer({ [fields.seats.slug]: 0 }), at(fields.seats), 'greater_than_equal');
    expectValidationError(await answer({ [fields.seats.slug]: 51 }), at(fields.seats), 'less_than_equal');
    expectValidationError(await answer({ [fields.start.slug]: '2026-02-30' }), at(fields.start));
    expectValidationError(await answer({ [fields.start.slug]: '2025-12-31' }), at(fields.start), 'greater_than_equal');
    expectValidationError(await answer({ [fields.start.slug]: '2027-01-01' }), at(fields.start), 'less_than_equal');
    expectValidationError(await answer({ [fields.terms.slug]: 'yes' }), at(fields.terms), 'bool_type');
    expectValidationError(await answer({ [fields.size.slug]: 'xl' }), at(fields.size), 'literal_error');
    expectValidationError(await answer({ nickname: 'Ada' }), ['body', 'custom_field_data', 'nickname'], 'extra_forbidden');
    // The organization's own update and create check the same way.
    expectValidationError(await t.org.api('PATCH', `/checkouts/${checkout.id}`, { custom_field_data: { [fields.seats.slug]: 99 } }), at(fields.seats), 'less_than_equal');
    expectValidationError(await t.org.api('POST', '/checkouts/', { products: [product.id], custom_field_data: { [fields.size.slug]: 'm' } }), at(fields.size), 'literal_error');

    expect((await t.org.polar.checkouts.get({ id: checkout.id })).customFieldData).toEqual({});
    const good = expectStatus(await answer({ [fields.company.slug]: 'Acme', [fields.seats.slug]: 50, [fields.start.slug]: '2026-01-01', [fields.size.slug]: 'l' }), 200);
    expect(good.custom_field_data).toEqual({ [fields.company.slug]: 'Acme', [fields.seats.slug]: 50, [fields.start.slug]: '2026-01-01', [fields.size.slug]: 'l' });
  });

  it('requires the required fields at confirmation, then copies the answers to the order, the subscription and the customer', async () => {
    const fields = await fiveFields(t.org);
    const product = await productAsking(t.org, fields, true);
    const checkout = await t.org.polar.checkouts.create({ products: [product.id], customFieldData: { [fields.seats.slug]: 5 } });
    expect(checkout.customFieldData).toEqual({ [fields.seats.slug]: 5 });
    const confirm = (customFieldData?: Record<string, unknown>) =>
      t.org.publicApi('POST', `/checkouts/client/${checkout.clientSecret}/confirm`, {
        customer_email: 'grace@example.com', confirmation_token_id: 'tok_visa', ...(customFieldData ? { custom_field_data: customFieldData } : {}),
      });

    const missing = await confirm();
    expectValidationError(missing, ['body', 'custom_field_data', fields.company.slug], 'missing');
    expectValidationError(missing, ['body', 'custom_field_data', fields.terms.slug], 'missing');
    expectValidationError(await confirm({ [fields.company.slug]: 'Acme', [fields.terms.slug]: false }), ['body', 'custom_field_data', fields.terms.slug]);
    expect((await t.org.polar.checkouts.get({ id: checkout.id })).status).toBe('open');
    expect((await t.org.polar.orders.list({ checkoutId: checkout.id })).result.items).toEqual([]);

    const answers = { [fields.company.slug]: 'Acme', [fields.terms.slug]: true, [fields.size.slug]: 's' };
    expectStatus(await confirm(answers), 200);
    const order = await paidOrderOf(t.org, checkout.id);
    expect(order.customFieldData).toEqual(answers);
    const subscription = await t.org.polar.subscriptions.get({ id: order.subscriptionId! });
    expect(subscription.customFieldData).toEqual(answers);
    expect((await checkoutWhen(t.org, checkout.id, 'succeeded')).customFieldData).toEqual(answers);
    const customer = await graphqlData(t.org.gql('query ($id: UUID!) { core { customer(id: $id) { customFieldData } } }', { id: order.customerId }));
    expect(customer.core.customer.customFieldData).toEqual(answers);
    const state = await eventually(() => t.org.polar.customers.getState({ id: order.customerId }), (s) => s.activeSubscriptions.length === 1, 'the subscription to be active');
    expect(state.activeSubscriptions[0].customFieldData).toEqual(answers);
    expect(expectStatus(await t.org.api('GET', `/orders/${order.id}`), 200).custom_field_data).toEqual(answers);
  });

  it('moves stored answers to a field’s new slug', async () => {
    const fields = await fiveFields(t.org);
    const product = await productAsking(t.org, fields);
    const checkout = await t.org.polar.checkouts.create({ products: [product.id] });
    await t.org.buyer.checkouts.clientConfirm({
      clientSecret: checkout.clientSecret,
      checkoutConfirmStripe: { customerEmail: 'lin@example.com', confirmationTokenId: 'tok_visa', customFieldData: { [fields.company.slug]: 'Initech', [fields.terms.slug]: true } },
    });
    const order = await paidOrderOf(t.org, checkout.id);
    const renamed = slug('employer');
    await t.org.polar.customFields.update({ id: fields.company.id, customFieldUpdate: { type: 'text', slug: renamed } });
    expect((await t.org.polar.orders.get({ id: order.id })).customFieldData).toEqual({ [renamed]: 'Initech', [fields.terms.slug]: true });
  });

  it('leaves other organizations’ answers alone when a slug is renamed', async () => {
    const shared = slug('shared');
    const mine = await t.org.polar.customFields.create({ type: 'text', slug: shared, name: 'Mine', properties: {} });
    const theirs = await t.other.polar.customFields.create({ type: 'text', slug: shared, name: 'Theirs', properties: {} });
    const product = await t.other.polar.products.create({
      name: 'Theirs', recurringInterval: null, prices: [{ amountType: 'fixed', priceAmount: 1000, priceCurrency: 'usd' }], attachedCustomFields: [{ customFieldId: theirs.id, required: false }],
    });
    const checkout = await t.other.polar.checkouts.create({ products: [product.id], customFieldData: { [shared]: 'kept' } });
    await t.org.polar.customFields.update({ id: mine.id, customFieldUpdate: { type: 'text', slug: slug('moved') } });
    expect((await t.other.polar.checkouts.get({ id: checkout.id })).customFieldData).toEqual({ [shared]: 'kept' });
  });

  it('refuses GraphQL answers the same way', async () => {
    const fields = await fiveFields(t.org);
    const product = await productAsking(t.org, fields);
    const error = await graphqlFailure(
      t.org.gql('mutation ($input: CheckoutCreateInput!) { core { checkoutCreate(input: $input) { id } } }', { input: { products: [product.id], customFieldData: { [fields.seats.slug]: 100 } } }),
      'BAD_USER_INPUT',
    );
    expect(error.extensions.issues[0].loc).toEqual(['input', 'customFieldData', fields.seats.slug]);
  });
});

describe('custom fields on the hosted checkout page', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('renders each field as its input, shows refusals next to the field, and carries the answers to the order', async () => {
    const fields = await fiveFields(t.org);
    await t.org.polar.customFields.update({ id: fields.company.id, customFieldUpdate: { type: 'text', properties: { formLabel: 'Your company', formHelpText: 'As on the invoice', formPlaceholder: 'Acme Inc.', textarea: true, minLength: 2, maxLength: 10 } } });
    const product = await productAsking(t.org, fields);
    const checkout = await t.org.polar.checkouts.create({ products: [product.id] });
    const page = await openPage(browser);
    await page.goto(checkout.url);
    const input = (field: { slug: string }) => page.locator(`#field-${field.slug}`);
    expect(await input(fields.company).evaluate((e) => [e.tagName, e.getAttribute('placeholder'), e.hasAttribute('required')])).toEqual(['TEXTAREA', 'Acme Inc.', true]);
    expect(await page.locator(`label[for="field-${fields.company.slug}"]`).textContent()).toBe('Your company');
    expect(await page.locator(`#field-${fields.company.slug}-hint`).textContent()).toBe('As on the invoice');
    expect(await input(fields.seats).evaluate((e) => [e.getAttribute('type'), e.getAttribute('min'), e.getAttribute('max')])).toEqual(['number', '1', '50']);
    expect(await input(fields.start).evaluate((e) => [e.getAttribute('type'), e.getAttribute('min'), e.getAttribute('max')])).toEqual(['date', '2026-01-01', '2026-12-31']);
    expect(await input(fields.terms).getAttribute('type')).toBe('checkbox');
    expect(await input(fields.size).evaluate((e) => [e.tagName, [...(e as HTMLSelectElement).options].map((o) => o.value)])).toEqual(['SELECT', ['', 's', 'l']]);
    expect(await page.locator(`label[for="field-${fields.seats.slug}"]`).textContent()).toBe('Seats (optional)');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: `${screenshots}/checkout-custom-fields-desktop.png`, fullPage: true });

    await page.getByLabel('Email').fill('fields@example.com');
    await page.getByLabel('Country').selectOption('US');
    await input(fields.company).fill('A');
    await input(fields.seats).fill('80');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await expect.poll(() => page.locator(`#field-${fields.company.slug}-error`).textContent()).toBe('String should have at least 2 characters');
    expect(await page.locator(`#field-${fields.seats.slug}-error`).textContent()).toBe('Input should be less than or equal to 50');
    expect(await page.locator(`#field-${fields.terms.slug}-error`).textContent()).toMatch(/checked/);
    expect(await input(fields.company).getAttribute('aria-invalid')).toBe('true');
    expect(await input(fields.company).inputValue()).toBe('A');
    expect((await t.org.polar.checkouts.get({ id: checkout.id })).status).toBe('open');
    expect(await seriousViolations(page)).toEqual([]);

    await input(fields.company).fill('Acme');
    await input(fields.seats).fill('12');
    await input(fields.start).fill('2026-03-15');
    await input(fields.terms).check();
    await input(fields.size).selectOption('l');
    await page.getByRole('button', { name: /^Pay/ }).click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent(), { timeout: 15_000 }).toBe('Paid');
    const order = await paidOrderOf(t.org, checkout.id);
    expect(order.customFieldData).toEqual({
      [fields.company.slug]: 'Acme', [fields.seats.slug]: 12, [fields.start.slug]: '2026-03-15', [fields.terms.slug]: true, [fields.size.slug]: 'l',
    });

    // The customer's portal shows the answers under the order, labelled.
    const session = expectStatus(await t.org.api('POST', '/customer-sessions/', { customer_id: order.customerId }), 201);
    await page.goto(session.customer_portal_url);
    await page.getByRole('button', { name: /^Continue as / }).click();
    await page.waitForURL((url) => !url.search.includes('customer_session_token'));
    const answers = page.locator('.item', { hasText: 'Workshop' }).locator('dl.answers > div');
    expect(await answers.allTextContents()).toEqual(['Your company: Acme', 'Seats: 12', 'Start date: 2026-03-15', 'I accept the terms: Yes', 'Size: Large']);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: `${screenshots}/portal-custom-fields-desktop.png`, fullPage: true });
    await page.context().close();
  });
});
