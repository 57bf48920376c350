import { createHash } from 'node:crypto';
import { queryFromInfo } from '@pothos/plugin-prisma';
import { builder, type PrismaFieldBuilder, type BuilderTypes } from '../../graphql/builder.ts';
import { RequestValidationError } from '../../graphql/errors.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortingScalarConfig } from '../../graphql/sorting.ts';
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
  fields: (t) => ({
    line1: t.exposeString('line1', { nullable: true }),
    line2: t.exposeString('line2', { nullable: true }),
    postalCode: t.exposeString('postal_code', { nullable: true }),
    city: t.exposeString('city', { nullable: true }),
    state: t.exposeString('state', { nullable: true }),
    country: t.exposeString('country', { description: 'ISO 3166-1 alpha-2 code.' }),
  }),
});

export const AddressInput = builder.inputType('AddressInput', {
  fields: (t) => ({
    line1: t.string(),
    line2: t.string(),
    postalCode: t.string(),
    city: t.string(),
    state: t.string(),
    country: t.string({ required: true, description: 'ISO 3166-1 alpha-2 code, such as US.' }),
  }),
});

const CustomerSortProperty = builder.scalarType('CustomerSortProperty', sortingScalarConfig(customerSortProperties));

type CustomerFieldBuilder = PrismaFieldBuilder<'Customer'>;

/** What the customer may see of their own record: neither the organization's metadata nor its external id. */
export const customerProfileFields = (t: CustomerFieldBuilder) => ({
  id: t.expose('id', { type: 'UUID' }),
  createdAt: t.expose('createdAt', { type: 'DateTime' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true }),
  email: t.exposeString('email'),
  emailVerified: t.exposeBoolean('emailVerified'),
  name: t.exposeString('name', { nullable: true }),
  billingAddress: t.field({ type: Address, nullable: true, resolve: (customer) => customer.billingAddress as StoredAddress | null }),
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
  metadata: t.field({ type: MetadataScalar, resolve: (customer) => customer.metadata as Metadata }),
  externalId: t.exposeString('externalId', { nullable: true, description: "The customer's id in the organization's own system." }),
  organizationId: t.expose('organizationId', { type: 'UUID' }),
  deletedAt: t.expose('deletedAt', { type: 'DateTime', nullable: true }),
  avatarUrl: t.string({
    description: 'A Gravatar image for the email, or a 404 there when the customer has none.',
    resolve: (customer) => `https://www.gravatar.com/avatar/${createHash('sha256').update(customer.email.trim().toLowerCase()).digest('hex')}?d=404`,
  }),
});

export const Customer = builder.prismaObject('Customer', {
  description: 'Someone who buys from an organization.',
  fields: (t) => customerFields(t as unknown as CustomerFieldBuilder),
});

export const CustomerState = builder.prismaObject('Customer', {
  variant: 'CustomerState',
  description: 'A customer with what they are entitled to: active subscriptions and granted benefits.',
  fields: (t) => customerFields(t as unknown as CustomerFieldBuilder),
});

const CustomerList = listType('Customer', Customer);

const customerInputFields = (t: PothosSchemaTypes.InputFieldBuilder<BuilderTypes, 'InputObject'>) => ({
  name: t.string(),
  externalId: t.string({ description: 'Unique among the organization’s customers; cannot change once set.' }),
  billingAddress: t.field({ type: AddressInput }),
  taxId: t.field({ type: ['String'], description: '[value, format], for example ["FR61954506077", "eu_vat"].' }),
  metadata: t.field({ type: MetadataScalar }),
});

const CustomerCreateInput = builder.inputType('CustomerCreateInput', {
  fields: (t) => ({
    email: t.string({ required: true }),
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
    ...customerInputFields(t),
  }),
});

const CustomerUpdateInput = builder.inputType('CustomerUpdateInput', {
  description: 'Only the fields given change.',
  fields: (t) => ({ email: t.string(), ...customerInputFields(t) }),
});

const read = { scope: ['customers:read', 'customers:write'] } as const;
const write = { scope: 'customers:write' } as const;

function key(args: { id?: string | null; externalId?: string | null }): CustomerKey {
  return args.id ? { id: args.id } : { externalId: args.externalId! };
}

builder.objectFields(CoreQuery, (t) => ({
  customers: t.field({
    type: CustomerList,
    authScopes: { scope: [...read.scope] },
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'] }),
      email: t.arg.string({ description: 'Exact email, case-insensitive.' }),
      query: t.arg.string({ description: 'Matches email, name or external id, case-insensitively.' }),
      metadata: t.arg({ type: 'JSONObject', description: 'Filter by metadata: {key: value or [values]}.' }),
      sorting: t.arg({ type: [CustomerSortProperty], description: 'Default: -created_at.' }),
    },
    resolve: (_root, args, ctx, info) => listCustomers(ctx, args, queryFromInfo({ context: ctx, info, path: ['items'] })),
  }),
  customer: t.prismaField({
    type: 'Customer',
    authScopes: { scope: [...read.scope] },
    args: { id: t.arg({ type: 'UUID', required: true }) },
    resolve: (query, _root, args, ctx) => getCustomer(ctx, key(args), query),
  }),
  customerByExternalId: t.prismaField({
    type: 'Customer',
    authScopes: { scope: [...read.scope] },
    args: { externalId: t.arg.string({ required: true }) },
    resolve: (query, _root, args, ctx) => getCustomer(ctx, key(args), query),
  }),
  customerState: t.prismaField({
    type: CustomerState,
    authScopes: { scope: [...read.scope] },
    args: { id: t.arg({ type: 'UUID' }), externalId: t.arg.string() },
    description: 'A customer with their active subscriptions and granted benefits, by id or external id.',
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
    authScopes: write,
    args: { input: t.arg({ type: CustomerCreateInput, required: true }) },
    resolve: (query, _root, { input }, ctx) => createCustomer(ctx, input, query),
  }),
  customerUpdate: t.prismaField({
    type: 'Customer',
    authScopes: write,
    args: { id: t.arg({ type: 'UUID' }), externalId: t.arg.string(), input: t.arg({ type: CustomerUpdateInput, required: true }) },
    description: 'Updates a customer given by id or external id.',
    resolve: (query, _root, args, ctx) => updateCustomer(ctx, requireKey(args), args.input, query),
  }),
  customerDelete: t.boolean({
    authScopes: write,
    args: { id: t.arg({ type: 'UUID' }), externalId: t.arg.string() },
    description: 'Deletes a customer given by id or external id. Their orders are kept.',
    resolve: (_root, args, ctx) => deleteCustomer(ctx, requireKey(args)),
  }),
}));
