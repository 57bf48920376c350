import type { Scope } from '../../auth/scopes.ts';
import { builder, type BuilderTypes, type PrismaFieldBuilder } from '../../graphql/builder.ts';
import { Node, type NodeLoader } from '../../graphql/node.ts';
import { MetadataScalar, type Metadata } from '../../graphql/metadata.ts';
import { listType, pageArgs, pageQuery } from '../../graphql/pagination.ts';
import { CoreMutation, CoreQuery } from '../../graphql/roots.ts';
import { sortOrderEnum } from '../../graphql/sorting.ts';
import type { CustomField as CustomFieldRow, CustomFieldType as CustomFieldTypes } from '../../generated/prisma/client.ts';
import {
  createCustomField,
  customFieldSortProperties,
  customFieldTypes,
  deleteCustomField,
  getCustomField,
  listCustomFields,
  updateCustomField,
  type CustomFieldProperties,
  type LabelledAnswer,
  type SelectOption,
} from './service.ts';

const read = { scope: ['custom_fields:read', 'custom_fields:write'] satisfies Scope[] as Scope[] };
const write = { scope: 'custom_fields:write' satisfies Scope as Scope };

export const CustomFieldType = builder.enumType('CustomFieldType', {
  description: 'What kind of answer a custom field asks for.',
  values: {
    text: { description: 'A text, on one line or several (textarea), between optional lengths.' },
    number: { description: 'An integer, between optional bounds (ge, le).' },
    date: { description: 'A calendar date, YYYY-MM-DD, between optional bounds (ge, le, as Unix timestamps).' },
    checkbox: { description: 'A box checked or not; a required one must be checked.' },
    select: { description: 'One value among the options.' },
  } satisfies Record<CustomFieldTypes, object>,
});
const CustomFieldSortOrder = sortOrderEnum(
  'CustomFieldSortOrder',
  'custom fields',
  { created_at: 'when the field was created', slug: 'slug', name: 'name', type: 'type' } satisfies Record<(typeof customFieldSortProperties)[number], string>,
  'CustomFieldSortProperty',
);

type Properties = CustomFieldProperties;
type PropertiesFieldBuilder = PothosSchemaTypes.ObjectFieldBuilder<BuilderTypes, Properties>;

/** The form's texts, which every type has. */
const formFields = (t: PropertiesFieldBuilder) => ({
  formLabel: t.string({ nullable: true, description: 'The label of the input on the checkout page; the field name when absent.', resolve: (p) => p.formLabel ?? null }),
  formHelpText: t.string({ nullable: true, description: 'A help text shown under the input; none when absent.', resolve: (p) => p.formHelpText ?? null }),
  formPlaceholder: t.string({ nullable: true, description: 'The placeholder of the input; none when absent.', resolve: (p) => p.formPlaceholder ?? null }),
});

const CustomFieldSelectOption = builder.objectRef<SelectOption>('CustomFieldSelectOption').implement({
  description: 'One option of a select field.',
  fields: (t) => ({
    value: t.exposeString('value', { description: 'What is stored when the buyer picks it.' }),
    label: t.exposeString('label', { description: 'What the buyer sees.' }),
  }),
});

const propertyTypes = {
  text: builder.objectRef<Properties>('CustomFieldTextProperties').implement({
    description: 'How a text field is asked and checked.',
    fields: (t) => ({
      ...formFields(t as unknown as PropertiesFieldBuilder),
      textarea: t.boolean({ nullable: true, description: 'Whether the input spans several lines.', resolve: (p) => p.textarea ?? null }),
      minLength: t.int({ nullable: true, description: 'The fewest characters an answer may have; no minimum when absent.', resolve: (p) => p.minLength ?? null }),
      maxLength: t.int({ nullable: true, description: 'The most characters an answer may have; no maximum when absent.', resolve: (p) => p.maxLength ?? null }),
    }),
  }),
  number: builder.objectRef<Properties>('CustomFieldNumberProperties').implement({
    description: 'How a number field is asked and checked.',
    fields: (t) => ({
      ...formFields(t as unknown as PropertiesFieldBuilder),
      ge: t.int({ nullable: true, description: 'The least answer allowed; no minimum when absent.', resolve: (p) => p.ge ?? null }),
      le: t.int({ nullable: true, description: 'The greatest answer allowed; no maximum when absent.', resolve: (p) => p.le ?? null }),
    }),
  }),
  date: builder.objectRef<Properties>('CustomFieldDateProperties').implement({
    description: 'How a date field is asked and checked.',
    fields: (t) => ({
      ...formFields(t as unknown as PropertiesFieldBuilder),
      ge: t.int({ nullable: true, description: 'The earliest day allowed, as a Unix timestamp (seconds) within it (UTC); none when absent.', resolve: (p) => p.ge ?? null }),
      le: t.int({ nullable: true, description: 'The latest day allowed, as a Unix timestamp (seconds) within it (UTC); none when absent.', resolve: (p) => p.le ?? null }),
    }),
  }),
  checkbox: builder.objectRef<Properties>('CustomFieldCheckboxProperties').implement({
    description: 'How a checkbox field is asked.',
    fields: (t) => formFields(t as unknown as PropertiesFieldBuilder),
  }),
  select: builder.objectRef<Properties>('CustomFieldSelectProperties').implement({
    description: 'How a select field is asked: its options.',
    fields: (t) => ({
      ...formFields(t as unknown as PropertiesFieldBuilder),
      options: t.field({ type: [CustomFieldSelectOption], description: 'The options, in order.', resolve: (p) => p.options ?? [] }),
    }),
  }),
};

type CustomFieldFieldBuilder = PrismaFieldBuilder<'CustomField'>;

const customFieldFields = (t: CustomFieldFieldBuilder) => ({
  id: t.exposeID('id', { description: "The custom field's id. Its global id (see Node)." }),
  createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the field was created.' }),
  modifiedAt: t.expose('modifiedAt', { type: 'DateTime', nullable: true, description: 'When the field was last changed; null if never.' }),
  metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data.", resolve: (f) => f.metadata as Metadata }),
  type: t.expose('type', { type: CustomFieldType, description: 'What kind of answer it asks for; fixed at creation.' }),
  slug: t.exposeString('slug', { description: 'The key its answers are stored under (customFieldData); lowercase, unique in the organization.' }),
  name: t.exposeString('name', { description: 'The name of the field; the label on the checkout page unless properties.formLabel says otherwise.' }),
  organizationId: t.expose('organizationId', { type: 'UUID', description: 'The organization that asks it.' }),
});

const objectTypeName = (type: CustomFieldTypes) => `CustomField${type[0].toUpperCase()}${type.slice(1)}`;

/** The object type of a custom field row. */
export const customFieldObjectType = (field: Pick<CustomFieldRow, 'type'>) => objectTypeName(field.type);

export const CustomField = builder.prismaInterface('CustomField', {
  interfaces: [Node],
  description: 'A question an organization asks buyers at checkout, attached to products; one object type per kind of answer.',
  fields: (t) => customFieldFields(t as unknown as CustomFieldFieldBuilder),
  resolveType: customFieldObjectType,
});

for (const type of customFieldTypes) {
  builder.prismaObject('CustomField', {
    variant: objectTypeName(type),
    description: `A custom field of type ${type}.`,
    interfaces: [Node, CustomField],
    fields: (t) => ({
      ...customFieldFields(t as unknown as CustomFieldFieldBuilder),
      properties: t.field({ type: propertyTypes[type], description: 'How it is asked and checked.', resolve: (f) => f.properties as Properties }),
    }),
  });
}

const CustomFieldList = listType('CustomField', CustomField);

const CustomFieldSelectOptionInput = builder.inputType('CustomFieldSelectOptionInput', {
  description: 'One option of a select field.',
  fields: (t) => ({
    value: t.string({ required: true, description: 'What is stored when the buyer picks it; unique among the options.' }),
    label: t.string({ required: true, description: 'What the buyer sees.' }),
  }),
});

const CustomFieldPropertiesInput = builder.inputType('CustomFieldPropertiesInput', {
  description: 'How a field is asked and checked. The form texts go with every type; the other properties only with the type named beside each. BAD_USER_INPUT for a property of another type.',
  fields: (t) => ({
    formLabel: t.string({ description: 'The label of the input, 1 to 1000 characters.' }),
    formHelpText: t.string({ description: 'A help text under the input, 1 to 1000 characters.' }),
    formPlaceholder: t.string({ description: 'The placeholder of the input, 1 to 1000 characters.' }),
    textarea: t.boolean({ description: 'text: whether the input spans several lines.' }),
    minLength: t.int({ description: 'text: the fewest characters an answer may have, 0 or more.' }),
    maxLength: t.int({ description: 'text: the most characters an answer may have, at least minLength.' }),
    ge: t.int({ description: 'number: the least answer; date: the earliest day, as a Unix timestamp in seconds.' }),
    le: t.int({ description: 'number: the greatest answer; date: the latest day, as a Unix timestamp in seconds. At least ge.' }),
    options: t.field({ type: [CustomFieldSelectOptionInput], description: 'select (required there): the options, at least one, values unique.' }),
  }),
});

const CustomFieldCreateInput = builder.inputType('CustomFieldCreateInput', {
  description: 'A new custom field.',
  fields: (t) => ({
    type: t.field({ type: CustomFieldType, required: true, description: 'What kind of answer it asks for; cannot change later.' }),
    slug: t.string({
      required: true,
      description: 'The key its answers are stored under: 1 to 100 ASCII letters, digits, - or _, stored in lowercase; unique in the organization, deleted fields included.',
    }),
    name: t.string({ required: true, description: 'The name, 1 to 256 characters.' }),
    properties: t.field({ type: CustomFieldPropertiesInput, required: true, description: 'How it is asked and checked.' }),
    metadata: t.field({ type: MetadataScalar, description: "The organization's own key-value data." }),
    organizationId: t.field({ type: 'UUID', description: 'Required unless the request is made with an organization token.' }),
  }),
});

const CustomFieldUpdateInput = builder.inputType('CustomFieldUpdateInput', {
  description: 'Only the fields given change. The type is named, and must be the one the field has.',
  fields: (t) => ({
    type: t.field({ type: CustomFieldType, required: true, description: "The field's type, unchanged; BAD_USER_INPUT otherwise." }),
    slug: t.string({ description: 'A new slug; the answers already stored move to it.' }),
    name: t.string({ description: 'A new name.' }),
    properties: t.field({ type: CustomFieldPropertiesInput, description: 'Replaces the whole properties object.' }),
    metadata: t.field({ type: MetadataScalar, description: 'Replaces the whole metadata object.' }),
  }),
});

builder.objectFields(CoreQuery, (t) => ({
  customFields: t.field({
    type: CustomFieldList,
    description: 'The live (not deleted) custom fields of the organizations the token reaches, by slug unless `sorting` says otherwise.',
    authScopes: read,
    args: {
      ...pageArgs(t.arg),
      organizationId: t.arg({ type: ['UUID'], description: 'Only these organizations; all reachable ones when omitted.' }),
      query: t.arg.string({ description: 'Matches names and slugs, case-insensitively.' }),
      typeFilter: t.arg({ type: [CustomFieldType], description: 'Only fields of these types.' }),
      sorting: t.arg({ type: [CustomFieldSortOrder], description: 'The order of the list, by the first entry, then the next for ties. Default: slug_asc.' }),
    },
    resolve: (_root, args, ctx, info) => listCustomFields(ctx, args, pageQuery(ctx, info)),
  }),
  customField: t.prismaField({
    type: CustomField,
    description: 'One custom field; RESOURCE_NOT_FOUND if the token does not reach it or it was deleted.',
    authScopes: read,
    args: { id: t.arg({ type: 'UUID', required: true, description: "The custom field's id." }) },
    resolve: (query, _root, { id }, ctx) => getCustomField(ctx, id, query),
  }),
}));

builder.objectFields(CoreMutation, (t) => ({
  customFieldCreate: t.prismaField({
    type: CustomField,
    description: 'Creates a custom field. BAD_USER_INPUT names each invalid field: a slug taken or malformed, a property of another type, bounds out of order.',
    authScopes: write,
    args: { input: t.arg({ type: CustomFieldCreateInput, required: true, description: 'The custom field to create.' }) },
    resolve: (query, _root, { input }, ctx) => createCustomField(ctx, input as never, query),
  }),
  customFieldUpdate: t.prismaField({
    type: CustomField,
    description: 'Changes a custom field. RESOURCE_NOT_FOUND if the token does not reach it; BAD_USER_INPUT as for customFieldCreate, or for another type.',
    authScopes: write,
    args: {
      id: t.arg({ type: 'UUID', required: true, description: "The custom field's id." }),
      input: t.arg({ type: CustomFieldUpdateInput, required: true, description: 'The fields to change.' }),
    },
    resolve: (query, _root, { id, input }, ctx) => updateCustomField(ctx, id, input as never, query),
  }),
  customFieldDelete: t.boolean({
    description:
      'Deletes a custom field and returns true: it is detached from every product, so checkouts stop asking it; the answers already given stay on checkouts, orders, subscriptions and customers, and its slug stays taken. RESOURCE_NOT_FOUND if the token does not reach it.',
    authScopes: write,
    args: { id: t.arg({ type: 'UUID', required: true, description: "The custom field's id." }) },
    resolve: (_root, { id }, ctx) => deleteCustomField(ctx, id),
  }),
}));

/** node(id:) answers for custom fields as core.customField does. */
export const customFieldNodeLoader: NodeLoader = {
  surface: 'core',
  model: 'customField',
  typeName: 'CustomField',
  scopes: read.scope,
  load: getCustomField,
  objectType: (row) => customFieldObjectType(row as CustomFieldRow),
};

/** An answer to a custom field as a person reads it: for pages and for customers. */
export const CustomFieldAnswer = builder.objectRef<LabelledAnswer>('CustomFieldAnswer').implement({
  description: "An answer to a custom field, labelled for reading: the field's label and the answer as text.",
  fields: (t) => ({
    slug: t.exposeString('slug', { description: 'The slug of the field answered (the key in customFieldData).' }),
    label: t.exposeString('label', { description: "The field's form label, else its name; the slug when the field is gone." }),
    value: t.exposeString('value', { description: 'The answer as text: Yes or No for a checkbox, the option label for a select.' }),
  }),
});
