// A buyer's answers to the custom fields of a product, by slug: each checked against its field's
// type and properties. Until confirmation every answer is optional; at confirmation the required
// fields must be answered (a required checkbox must be checked, as the original service asks).
// An answer to a field the product does not ask is refused, so a typo never goes unnoticed.
import type { Db } from '../../db/client.ts';
import type { CustomField } from '../../generated/prisma/client.ts';
import type { Loc, ValidationIssues } from '../../graphql/errors.ts';
import type { CustomFieldProperties } from './service.ts';

export type Answer = string | number | boolean | null;
export type Answers = Record<string, Answer>;

export interface AttachedField {
  required: boolean;
  customField: CustomField;
}

/** The live fields a product asks, in order. */
export async function attachedFieldsOf(db: Db, productId: string): Promise<AttachedField[]> {
  return db.productCustomField.findMany({
    where: { productId, customField: { deletedAt: null } },
    orderBy: { order: 'asc' },
    select: { required: true, customField: true },
  });
}

const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;

/** A calendar date `YYYY-MM-DD` as the UTC midnight it starts at, or null if it is no date. */
function parseDate(value: string): Date | null {
  const match = datePattern.exec(value);
  if (!match) return null;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.toISOString().slice(0, 10) === value ? date : null;
}

/** The calendar day (UTC) of a Unix timestamp in seconds, as its midnight: date bounds compare whole days. */
const dayOf = (timestamp: number) => {
  const date = new Date(timestamp * 1000);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
};
const isoDay = (timestamp: number) => new Date(dayOf(timestamp)).toISOString().slice(0, 10);

/** Whether an answer counts as given: null and the empty string do not. */
export const isAnswered = (value: unknown) => value !== null && value !== undefined && value !== '';

/** Adds an issue about an answer that cannot be stored as given. */
function refuse(issues: ValidationIssues, loc: Loc, msg: string, type: string): null {
  issues.add(loc, msg, type);
  return null;
}

/** One answer checked against its field; the issue (if any) is added at `loc`. Returns the value to store. */
function checkAnswer(issues: ValidationIssues, loc: Loc, field: CustomField, value: unknown): Answer {
  const properties = field.properties as CustomFieldProperties;
  if (value === null || value === undefined) return null;
  switch (field.type) {
    case 'text': {
      if (typeof value !== 'string') return refuse(issues, loc, 'Input should be a valid string', 'string_type');
      if (value === '') return '';
      if (properties.minLength != null && value.length < properties.minLength) issues.add(loc, `String should have at least ${properties.minLength} characters`, 'string_too_short');
      if (properties.maxLength != null && value.length > properties.maxLength) issues.add(loc, `String should have at most ${properties.maxLength} characters`, 'string_too_long');
      return value;
    }
    case 'number': {
      if (typeof value !== 'number' || !Number.isInteger(value)) return refuse(issues, loc, 'Input should be a valid integer', 'int_type');
      if (properties.ge != null && value < properties.ge) issues.add(loc, `Input should be greater than or equal to ${properties.ge}`, 'greater_than_equal');
      if (properties.le != null && value > properties.le) issues.add(loc, `Input should be less than or equal to ${properties.le}`, 'less_than_equal');
      return value;
    }
    case 'date': {
      const date = typeof value === 'string' ? parseDate(value) : null;
      if (!date) return refuse(issues, loc, 'Input should be a valid date in the format YYYY-MM-DD', 'date_from_datetime_parsing');
      if (properties.ge != null && date.getTime() < dayOf(properties.ge)) issues.add(loc, `Input should be greater than or equal to ${isoDay(properties.ge)}`, 'greater_than_equal');
      if (properties.le != null && date.getTime() > dayOf(properties.le)) issues.add(loc, `Input should be less than or equal to ${isoDay(properties.le)}`, 'less_than_equal');
      return value as string;
    }
    case 'checkbox':
      if (typeof value !== 'boolean') return refuse(issues, loc, 'Input should be a valid boolean', 'bool_type');
      return value;
    case 'select': {
      const options = properties.options ?? [];
      if (typeof value !== 'string' || !options.some((option) => option.value === value)) {
        return refuse(issues, loc, `Input should be ${options.map((o) => `'${o.value}'`).join(', ')}`, 'literal_error');
      }
      return value;
    }
  }
}

/**
 * The answers checked against the fields a product asks: unknown slugs refused, each value by its
 * field's type and properties, and with `requireAll` (at confirmation) every required field answered.
 * Issues are added at `[...loc, slug]`. Returns the answers to store.
 */
export function checkAnswers(issues: ValidationIssues, loc: Loc, fields: AttachedField[], answers: Record<string, unknown>, requireAll: boolean): Answers {
  const out: Answers = {};
  for (const slug of Object.keys(answers)) {
    if (!fields.some((f) => f.customField.slug === slug)) issues.add([...loc, slug], 'This product asks no custom field with this slug.', 'extra_forbidden');
  }
  for (const { customField, required } of fields) {
    const at = [...loc, customField.slug];
    const value = answers[customField.slug];
    if (value !== undefined) out[customField.slug] = checkAnswer(issues, at, customField, value);
    if (!requireAll || !required) continue;
    if (!isAnswered(value)) issues.add(at, 'Field required', 'missing');
    else if (customField.type === 'checkbox' && value === false) issues.add(at, 'Input should be true: this box must be checked', 'literal_error');
  }
  return out;
}

/** The answers kept when a checkout moves to another product: those to the fields it asks too. */
export function answersFor(fields: AttachedField[], answers: Answers): Answers {
  return Object.fromEntries(Object.entries(answers).filter(([slug]) => fields.some((f) => f.customField.slug === slug)));
}
