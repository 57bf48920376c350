// Custom fields: questions an organization asks buyers at checkout (text, number, date, checkbox,
// select), each with its validation and form properties. A field is attached to products (see
// products/service.ts); the answers are stored by the field's slug on the checkout and copied to
// the order, the subscription and the customer (see ./answers.ts). The slug is lowercase and
// unique in the organization, deleted fields included, so an answer's key never changes meaning.
// The type cannot change once created. Deleting is soft and detaches the field from every product:
// orders keep their answers.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { CustomField, CustomFieldType, Prisma } from '../../generated/prisma/client.ts';
import { RequestValidationError, ResourceNotFoundError, ValidationIssues, type Loc } from '../../graphql/errors.ts';
import type { Metadata } from '../../graphql/metadata.ts';
import { pageWindow, toPage, type PageArgs } from '../../graphql/pagination.ts';
import { escapeLike, sortingOrderBy } from '../../graphql/sorting.ts';
import { organizationFilter, owningOrganization } from '../organizations/access.ts';

export const customFieldSortProperties = ['created_at', 'slug', 'name', 'type'] as const;
export const customFieldTypes = ['text', 'number', 'date', 'checkbox', 'select'] as const satisfies readonly CustomFieldType[];

export interface SelectOption {
  value: string;
  label: string;
}

/** The properties of a field as stored (camelCase): the form's texts, and its type's rules. */
export interface CustomFieldProperties {
  formLabel?: string;
  formHelpText?: string;
  formPlaceholder?: string;
  textarea?: boolean;
  minLength?: number;
  maxLength?: number;
  ge?: number;
  le?: number;
  options?: SelectOption[];
}

/** The properties as they arrive: every key optional, null as good as absent. */
export type CustomFieldPropertiesInput = { [K in keyof CustomFieldProperties]?: CustomFieldProperties[K] | null };

export interface CustomFieldCreateInput {
  type: CustomFieldType;
  slug: string;
  name: string;
  properties: CustomFieldPropertiesInput;
  metadata?: Metadata | null;
  organizationId?: string | null;
}

export interface CustomFieldUpdateInput {
  type: CustomFieldType;
  slug?: string | null;
  name?: string | null;
  properties?: CustomFieldPropertiesInput | null;
  metadata?: Metadata | null;
}

export interface CustomFieldListArgs extends PageArgs {
  organizationId?: string[] | null;
  query?: string | null;
  typeFilter?: CustomFieldType[] | null;
  sorting?: string[] | null;
}

const live = { deletedAt: null };
/** The original service's rule: ASCII letters, digits, - and _, stored in lowercase. */
const slugPattern = /^[a-z0-9_-]+$/;
const maxSlugLength = 100;
const maxNameLength = 256;
const maxFormTextLength = 1000;

/** The properties each type may carry besides the form's texts (formLabel, formHelpText, formPlaceholder). */
const typeProperties: Record<CustomFieldType, (keyof CustomFieldProperties)[]> = {
  text: ['textarea', 'minLength', 'maxLength'],
  number: ['ge', 'le'],
  date: ['ge', 'le'],
  checkbox: [],
  select: ['options'],
};
const formProperties = ['formLabel', 'formHelpText', 'formPlaceholder'] as const;

// ---------------------------------------------------------------------------------------------
// Reading

export async function listCustomFields(ctx: Context, args: CustomFieldListArgs, query: object) {
  const window = pageWindow(args);
  const where: Prisma.CustomFieldWhereInput = {
    ...live,
    organizationId: organizationFilter(ctx, args.organizationId),
    ...(args.typeFilter?.length ? { type: { in: args.typeFilter } } : {}),
    ...(args.query
      ? { OR: [{ name: { contains: escapeLike(args.query), mode: 'insensitive' } }, { slug: { contains: escapeLike(args.query), mode: 'insensitive' } }] }
      : {}),
  };
  const orderBy = sortingOrderBy<(typeof customFieldSortProperties)[number]>(args.sorting?.length ? args.sorting : ['slug'], (property, sort) => {
    switch (property) {
      case 'created_at':
        return { createdAt: sort };
      case 'slug':
        return { slug: sort };
      case 'name':
        return { name: sort };
      case 'type':
        return { type: sort };
    }
  });
  const [items, total] = await Promise.all([
    ctx.prisma.customField.findMany({ ...query, where, orderBy: [...(orderBy as Prisma.CustomFieldOrderByWithRelationInput[]), { id: 'asc' }], ...window }),
    ctx.prisma.customField.count({ where }),
  ]);
  return toPage(items, total, args);
}

export async function getCustomField(ctx: Context, id: string, query: object) {
  const field = await ctx.prisma.customField.findFirst({ ...query, where: { id, ...live, organizationId: organizationFilter(ctx) } });
  if (!field) throw new ResourceNotFoundError('Custom field not found.');
  return field;
}

// ---------------------------------------------------------------------------------------------
// Writing: each check adds its issues at the input field it is about.

function checkSlug(issues: ValidationIssues, slug: string): string {
  const lower = slug.toLowerCase();
  if (lower.length < 1) issues.add(['input', 'slug'], 'String should have at least 1 character', 'string_too_short');
  else if (lower.length > maxSlugLength) issues.add(['input', 'slug'], `String should have at most ${maxSlugLength} characters`, 'string_too_long');
  else if (!slugPattern.test(lower)) issues.add(['input', 'slug'], 'A slug is ASCII letters, digits, "-" or "_".', 'string_pattern_mismatch');
  return lower;
}

function checkName(issues: ValidationIssues, name: string): string {
  const trimmed = name.trim();
  if (trimmed.length < 1) issues.add(['input', 'name'], 'String should have at least 1 character', 'string_too_short');
  if (trimmed.length > maxNameLength) issues.add(['input', 'name'], `String should have at most ${maxNameLength} characters`, 'string_too_long');
  return trimmed;
}

const isInteger = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value);

/** The properties of a field of `type`, checked: only the type's own, each within its bounds. */
export function checkProperties(issues: ValidationIssues, type: CustomFieldType, input: CustomFieldPropertiesInput): CustomFieldProperties {
  const at = (key: string): Loc => ['input', 'properties', key];
  const out: CustomFieldProperties = {};
  for (const key of formProperties) {
    const text = input[key];
    if (text == null) continue;
    if (text.length < 1) issues.add(at(key), 'String should have at least 1 character', 'string_too_short');
    else if (text.length > maxFormTextLength) issues.add(at(key), `String should have at most ${maxFormTextLength} characters`, 'string_too_long');
    out[key] = text;
  }
  for (const key of Object.keys(input) as (keyof CustomFieldProperties)[]) {
    if (input[key] == null || (formProperties as readonly string[]).includes(key)) continue;
    if (!typeProperties[type].includes(key)) issues.add(at(key), `Not allowed on a ${type} field.`, 'extra_forbidden');
  }
  switch (type) {
    case 'text': {
      if (input.textarea != null) out.textarea = input.textarea;
      for (const key of ['minLength', 'maxLength'] as const) {
        const length = input[key];
        if (length == null) continue;
        if (!isInteger(length) || length < 0) issues.add(at(key), 'Input should be greater than or equal to 0', 'greater_than_equal');
        else out[key] = length;
      }
      if (out.minLength != null && out.maxLength != null && out.minLength > out.maxLength) {
        issues.add(at('maxLength'), 'max_length must be greater than or equal to min_length.');
      }
      break;
    }
    case 'number':
    case 'date': {
      for (const key of ['ge', 'le'] as const) {
        const bound = input[key];
        if (bound == null) continue;
        if (!isInteger(bound)) issues.add(at(key), 'Input should be a valid integer', 'int_type');
        else out[key] = bound;
      }
      if (out.ge != null && out.le != null && out.ge > out.le) issues.add(at('le'), 'le must be greater than or equal to ge.');
      break;
    }
    case 'select': {
      const options = input.options;
      if (options == null) {
        issues.add(at('options'), 'Field required: a select field offers options', 'missing');
        break;
      }
      if (options.length < 1) issues.add(at('options'), 'List should have at least 1 item after validation, not 0', 'too_short');
      const seen = new Set<string>();
      options.forEach((option, i) => {
        for (const key of ['value', 'label'] as const) {
          if (option[key].length < 1) issues.add([...at('options'), i, key], 'String should have at least 1 character', 'string_too_short');
        }
        if (seen.has(option.value)) issues.add([...at('options'), i, 'value'], 'Each option value may appear once.');
        seen.add(option.value);
      });
      out.options = options.map(({ value, label }) => ({ value, label }));
      break;
    }
    case 'checkbox':
      break;
  }
  return out;
}

function slugTaken(): RequestValidationError {
  return RequestValidationError.at(['input', 'slug'], 'A custom field with this slug already exists.');
}

/** A write that hit the (organization, slug) index: another request took the slug meanwhile. */
function rethrowSlugTaken(error: unknown): never {
  if ((error as { code?: string }).code === 'P2002') throw slugTaken();
  throw error;
}

export async function createCustomField(ctx: Context, input: CustomFieldCreateInput, query: object) {
  const issues = new ValidationIssues();
  const slug = checkSlug(issues, input.slug);
  const name = checkName(issues, input.name);
  const properties = checkProperties(issues, input.type, input.properties);
  let organizationId = '';
  try {
    organizationId = owningOrganization(ctx, input.organizationId, ['input', 'organizationId']);
  } catch (error) {
    issues.list.push(...(error as RequestValidationError).issues);
  }
  issues.throwIfAny();
  if (await ctx.prisma.customField.findFirst({ where: { organizationId, slug }, select: { id: true } })) throw slugTaken();
  return ctx.prisma.customField
    .create({
      ...query,
      data: {
        organizationId,
        type: input.type,
        slug,
        name,
        properties: properties as Prisma.InputJsonObject,
        metadata: input.metadata ?? {},
        createdAt: ctx.now(),
      },
    })
    .catch(rethrowSlugTaken);
}

/** Locks a live custom field the principal reaches, for the rest of the transaction. */
async function lockCustomField(ctx: Context, db: Db, id: string): Promise<CustomField> {
  await db.$queryRaw`SELECT id FROM custom_fields WHERE id = ${id}::uuid FOR UPDATE`;
  const field = await db.customField.findFirst({ where: { id, ...live, organizationId: organizationFilter(ctx) } });
  if (!field) throw new ResourceNotFoundError('Custom field not found.');
  return field;
}

/**
 * Changes a field. The type is named (the client library always sends it) and must be the
 * field's own. A new slug renames the key of the answers already stored on the organization's
 * checkouts, orders, subscriptions and customers, in the same transaction.
 */
export async function updateCustomField(ctx: Context, id: string, input: CustomFieldUpdateInput, query: object) {
  return ctx.prisma
    .$transaction(async (tx) => {
      const db = tx as Db;
      const field = await lockCustomField(ctx, db, id);
      const issues = new ValidationIssues();
      if (input.type !== field.type) issues.add(['input', 'type'], "The type of a custom field can't be changed.");
      const slug = input.slug != null ? checkSlug(issues, input.slug) : field.slug;
      const name = input.name != null ? checkName(issues, input.name) : field.name;
      const properties = input.properties != null ? checkProperties(issues, field.type, input.properties) : null;
      issues.throwIfAny();
      if (slug !== field.slug) {
        if (await db.customField.findFirst({ where: { organizationId: field.organizationId, slug }, select: { id: true } })) throw slugTaken();
        await renameAnswers(db, field.organizationId, field.slug, slug);
      }
      return db.customField.update({
        ...query,
        where: { id },
        data: {
          slug,
          name,
          ...(properties ? { properties: properties as Prisma.InputJsonObject } : {}),
          ...(input.metadata != null ? { metadata: input.metadata } : {}),
          modifiedAt: ctx.now(),
        },
      });
    })
    .catch(rethrowSlugTaken);
}

/** Moves the answers stored under `from` to `to` on every record of the organization that carries answers. */
async function renameAnswers(db: Db, organizationId: string, from: string, to: string) {
  await db.$executeRaw`UPDATE checkouts SET custom_field_data = (custom_field_data - ${from}::text) || jsonb_build_object(${to}::text, custom_field_data -> ${from}::text)
    WHERE organization_id = ${organizationId}::uuid AND custom_field_data ? ${from}::text`;
  await db.$executeRaw`UPDATE orders SET custom_field_data = (custom_field_data - ${from}::text) || jsonb_build_object(${to}::text, custom_field_data -> ${from}::text)
    WHERE organization_id = ${organizationId}::uuid AND custom_field_data ? ${from}::text`;
  await db.$executeRaw`UPDATE subscriptions SET custom_field_data = (custom_field_data - ${from}::text) || jsonb_build_object(${to}::text, custom_field_data -> ${from}::text)
    WHERE organization_id = ${organizationId}::uuid AND custom_field_data ? ${from}::text`;
  await db.$executeRaw`UPDATE customers SET custom_field_data = (custom_field_data - ${from}::text) || jsonb_build_object(${to}::text, custom_field_data -> ${from}::text)
    WHERE organization_id = ${organizationId}::uuid AND custom_field_data ? ${from}::text`;
}

/**
 * Soft-deletes a field, as the original service does: it is detached from every product (checkouts
 * stop asking it), its slug stays taken, and the answers already given stay where they are.
 */
export async function deleteCustomField(ctx: Context, id: string) {
  await ctx.prisma.$transaction(async (tx) => {
    await lockCustomField(ctx, tx as Db, id);
    await tx.productCustomField.deleteMany({ where: { customFieldId: id } });
    await tx.customField.update({ where: { id }, data: { deletedAt: ctx.now() } });
  });
  return true;
}

// ---------------------------------------------------------------------------------------------
// Answers as people read them

export interface LabelledAnswer {
  slug: string;
  label: string;
  value: string;
}

/**
 * Stored answers with their fields' labels (the form label, else the name): in the order the
 * product asks its fields, then the others by slug. A checkbox reads Yes or No, a select its
 * option's label. A field deleted since keeps its label; an answer whose field is gone altogether
 * is labelled by its slug.
 */
export async function labelledAnswers(db: Db, of: { organizationId: string; productId: string; customFieldData: unknown }): Promise<LabelledAnswer[]> {
  const given = Object.entries(of.customFieldData as Record<string, unknown>).filter(([, value]) => value !== null && value !== '');
  if (!given.length) return [];
  const fields = await db.customField.findMany({
    where: { organizationId: of.organizationId, slug: { in: given.map(([slug]) => slug) } },
    include: { products: { where: { productId: of.productId }, select: { order: true } } },
  });
  const place = (slug: string) => fields.find((f) => f.slug === slug)?.products[0]?.order ?? Number.MAX_SAFE_INTEGER;
  given.sort(([a], [b]) => place(a) - place(b) || a.localeCompare(b));
  return given.map(([slug, value]) => {
    const field = fields.find((f) => f.slug === slug);
    const properties = (field?.properties ?? {}) as CustomFieldProperties;
    const shown =
      typeof value === 'boolean' ? (value ? 'Yes' : 'No') : field?.type === 'select' ? (properties.options?.find((o) => o.value === value)?.label ?? String(value)) : String(value);
    return { slug, label: properties.formLabel ?? field?.name ?? slug, value: shown };
  });
}
