import { createHash } from 'node:crypto';
import { builder, type PrismaFieldBuilder, type BuilderTypes } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { withoutId } from '../../graphql/shared-fields.ts';
import { RequestValidationError } from '../../graphql/errors.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import {
  createCustomer,
  customerSortProperties,
  deleteCustomer,
  getCustomer,
  listCustomers,
  updateCustomer,
  type CustomerKey,
} from './service.ts';

type StoredAddress = { line1: string | null; line2: string | null; postal_code: string | null; city: string | null; state: string | null; country: string };

export const Address = builder.objectRef<StoredAddress>('Address').implement({
  description: 'A postal address. Only the country is always known; each other part is null when not given.',
  fields: (t) => ({
    line1: t.exposeString('line1', { nullable: true, description: 'Street and number.' }),
    line2: t.exposeString('line2', { nullable: true, description: 'Apartment, suite or floor.' }),
    postalCode: t.exposeString('postal_code', { nullable: true, description: 'Postal or ZIP code.' }),
    city: t.exposeString('city', { nullable: true, description: 'City or town.' }),
    state: t.exposeString('state', { nullable: true, description: 'State, province or region.' }),
    country: t.exposeString('country', { description: 'ISO 3166-1 alpha-2 code.' }),
  }),
});

export const AddressInput = builder.inputType('AddressInput', {
  description: 'A postal address. The country is required; the other parts are optional.',
  fields: (t) => ({
    line1: t.string({ description: 'Street and number.' }),
    line2: t.string({ description: 'Apartment, suite or floor.' }),
    postalCode: t.string({ description: 'Postal or ZIP code.' }),
    city: t.string({ description: 'City or town.' }),
    state: t.string({ description: 'State, province or region.' }),
    country: t.string({ required: true, description: 'ISO 3166-1 alpha-2 code, such as US.' }),
  }),
});

const CustomerSortOrder = sortOrderEnum(
  'CustomerSortOrder',
  'customers',
  {
  created_at: 'when the customer was created',
  email: 'email address',
  name: 'name, customers without one last',
  } satisfies Record<(typeof customerSortProperties)[number], string>,
  'CustomerSortProperty',
);

type CustomerFieldBuilder = PrismaFieldBuilder<'Customer'>;

/** What the customer may see of their own record: neither the organization's metadata nor its external id. */
export const customerProfileFields = (t: CustomerFieldBuilder) => ({
  id: t.exposeID('id', { description: "The customer's id. Its global id (see Node)." }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the customer was created.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the customer was last changed; null if never.' }),
  email: t.exposeString('email', { description: "The customer's email address, as given (case kept); unique among the organization's customers, ignoring case." }),
  emailVerified: t.exposeBoolean('emailVerified', {
    description: 'Whether the customer proved they receive mail at the address. Becomes false when the organization sets a different address.',
  }),
  name: t.exposeString('name', { nullable: true, description: "The customer's name; null if not given." }),
  billingAddress: t.field({ type: Address, nullable: true, description: 'The address invoices are made out to; null if not given.', resolve: (customer) => customer.billingAddress as StoredAddress | null }),
  taxId: t.field({
    type: ['String'],
    nullable: { list: true, items: true },
    description: '[value, format], for example ["FR61954506077", "eu_vat"].',
    resolve: (customer) => customer.taxId as (string | null)[] | null,
  }),
});

// The customer's fields, shared by Customer, CustomerState (the customer with its entitlements) and
// the portal's LicenseKeyCustomer (a key's holder, as the client library has it).
export const customerFields = (t: CustomerFieldBuilder) => ({
  ...customerProfileFields(t),
  metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data.", resolve: (customer) => customer.metadata as Metadata }),
  externalId: t.exposeString('externalId', { nullable: true, description: "The customer's id in the organization's own system." }),
  organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization the customer buys from.' }),
  deletedAt: t.expose('deletedAt', { type: 'DateTime', nullable: true, description: 'When the customer was deleted; null while they exist.' }),
  avatarUrl: t.string({
    description: 'A Gravatar image for the email, or a 404 there when the customer has none.',
    resolve: (customer) => `https://www.gravatar.com/avatar/${createHash('sha256').update(customer.email.trim().toLowerCase()).digest('hex')}?d=404`,
  }),
});

/** What a customer is to anyone who may see them: Customer, CustomerState, LicenseKeyCustomer and CustomerPortalCustomer implement it. */
export const CustomerFields = builder.prismaInterface('Customer', {
  variant: 'CustomerFields',
  description: "The fields every view of a customer shares: their email, name and billing details. Customer is the organization's view, CustomerPortalCustomer the customer's own.",
  fields: (t) => withoutId(customerProfileFields(t as unknown as CustomerFieldBuilder)),
});

export const Customer = builder.prismaObject('Customer', {
  interfaces: [Node, CustomerFields],
  description: 'Someone who buys from an organization.',
  fields: (t) => ({
    ...customerFields(t as unknown as CustomerFieldBuilder),
    customFieldData: t.field({
      type: 'JSONObject',
      description: "The answers to custom fields of the checkouts the customer confirmed, by the field's slug; a later answer replaces an earlier one.",
      resolve: (customer) => customer.customFieldData as Record<string, unknown>,
    }),
  }),
});

export const CustomerState = builder.prismaObject('Customer', {
  variant: 'CustomerState',
  interfaces: [CustomerFields],
  description: 'A customer with what they are entitled to: active subscriptions and granted benefits.',
  fields: (t) => customerFields(t as unknown as CustomerFieldBuilder),
});

const CustomerList = listType('Customer', Customer);

const customerInputFields = (t: PothosSchemaTypes.InputFieldBuilder<BuilderTypes, 'InputObject'>) => ({
  name: t.string({ description: "The customer's name, at most 256 characters." }),
  externalId: t.string({ description: 'Unique among the organization’s customers, 1 to 256 characters; cannot change once set.' }),
  billingAddress: t.field({ type: AddressInput, description: 'The address invoices are made out to; null clears it (update).' }),
  taxId: t.field({ type: ['String'], description: '[value, format], for example ["FR61954506077", "eu_vat"]; null clears it (update).' }),
  metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data; replaces the whole object." }),
});

const CustomerCreateInput = builder.inputType('CustomerCreateInput', {
  description: 'A new customer.',
  fields: (t) => ({
    email: t.string({ required: true, description: "A valid email address, not yet held by another of the organization's customers (ignoring case)." }),
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
    ...customerInputFields(t),
  }),
});

const CustomerUpdateInput = builder.inputType('CustomerUpdateInput', {
  description: 'Only the fields given change.',
  fields: (t) => ({
    email: t.string({
      description: 'A new email address, not held by another customer; a different address (not only its case) is unverified until the customer proves it. Null is refused.',
    }),
    ...customerInputFields(t),
  }),
});

const read = { scope: ['customers:read', 'customers:write'] } as const;
const write = { scope: 'customers:write' } as const;

function key(args: { id?: string | null; externalId?: string | null }): CustomerKey {
  return args.id ? { id: args.id } : { externalId: args.externalId! };
}

builder.objectFields(CoreQuery, (t) => ({
  customers: t.field({
    type: CustomerList,
    description: 'The customers (not deleted) of the organizations the token reaches, newest first unless `sorting` says otherwise.',
    authScopes: { scope: [...read.scope] },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      email: t.arg.string({ description: 'Exact email, case-insensitive.' }),
      query: t.arg.string({ description: 'Matches email, name or external id, case-insensitively.' }),
      metadata: t.arg({ type: 'JSONObject', description: 'Filter by metadata: {key: value or [values]}.' }),
      sorting: t.arg({ type: [CustomerSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: created_at_desc.' }),
    },
    resolve: (_root, args, ctx, info) => listCustomers(ctx, args, pageQuery(ctx, info)),
  }),
  customer: t.prismaField({
    type: 'Customer',
    description: 'One customer by id; RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: { scope: [...read.scope] },
    args: { id: t.arg({ type: 'UUID', required: true, description: "The customer's id." }) },
    resolve: (query, _root, args, ctx) => getCustomer(ctx, key(args), query),
  }),
  customerByExternalId: t.prismaField({
    type: 'Customer',
    description: "One customer by the organization's own id for them; RESOURCE_NOT_FOUND if none.",
    authScopes: { scope: [...read.scope] },
    args: { externalId: t.arg.string({ required: true, description: "The customer's id in the organization's own system." }) },
    resolve: (query, _root, args, ctx) => getCustomer(ctx, key(args), query),
  }),
  customerState: t.prismaField({
    type: CustomerState,
    authScopes: { scope: [...read.scope] },
    args: { id: t.arg({ type: 'UUID', description: "The customer's id; give it or externalId." }), externalId: t.arg.string({ description: "The customer's external id; give it or id." }) },
    description: 'A customer with their active subscriptions and granted benefits, by id or external id (exactly one, else BAD_USER_INPUT). RESOURCE_NOT_FOUND if none.',
    resolve: (query, _root, args, ctx) => getCustomer(ctx, requireKey(args), query),
  }),
}));

function requireKey(args: { id?: string | null; externalId?: string | null }): CustomerKey {
  if (!args.id === !args.externalId) throw RequestValidationError.at(['id'], 'Give either id or externalId.');
  return key(args);
}

builder.objectFields(CoreMutation, (t) => ({
  customerCreate: t.prismaField({
    type: 'Customer',
    description:
      'Creates a customer and sends the customer.created webhook. BAD_USER_INPUT names each invalid field: an invalid or already used email or external id, an unknown country, a tax id not valid for the country.',
    authScopes: write,
    args: { input: t.arg({ type: CustomerCreateInput, required: true, description: 'The customer to create.' }) },
    resolve: (query, _root, { input }, ctx) => createCustomer(ctx, input, query),
  }),
  customerUpdate: t.prismaField({
    type: 'Customer',
    authScopes: write,
    args: {
      id: t.arg({ type: 'UUID', description: "The customer's id; give it or externalId." }),
      externalId: t.arg.string({ description: "The customer's external id; give it or id." }),
      input: t.arg({ type: CustomerUpdateInput, required: true, description: 'The fields to change.' }),
    },
    description:
      'Updates a customer given by id or external id. RESOURCE_NOT_FOUND if none (or deleted); BAD_USER_INPUT as for customerCreate, or for a changed external id.',
    resolve: (query, _root, args, ctx) => updateCustomer(ctx, requireKey(args), args.input, query),
  }),
  customerDelete: t.boolean({
    authScopes: write,
    args: {
      id: t.arg({ type: 'UUID', description: "The customer's id; give it or externalId." }),
      externalId: t.arg.string({ description: "The customer's external id; give it or id." }),
    },
    description:
      'Deletes a customer given by id or external id and returns true. Their orders are kept; their live subscriptions end now, their benefits are revoked and their sessions stop working. RESOURCE_NOT_FOUND if none.',
    resolve: (_root, args, ctx) => deleteCustomer(ctx, requireKey(args)),
  }),
}));

/** node(id:) answers for customers as core.customer does. */
export const customerNodeLoader: NodeLoader = { surface: 'core', model: 'customer', typeName: 'Customer', scopes: read.scope, load: (ctx, id, query) => getCustomer(ctx, { id }, query) };
