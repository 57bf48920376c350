// The checks an answer to a custom field passes, without a server: each type's own, the bounds of
// its properties (dates compared by whole UTC days), unknown slugs, and what confirmation requires.
import { describe, expect, it } from 'vitest';
import { checkAnswers, type AttachedField } from '../../src/modules/custom-fields/answers.ts';
import { checkProperties } from '../../src/modules/custom-fields/service.ts';
import { ValidationIssues } from '../../src/graphql/errors.ts';
import type { CustomField } from '../../src/generated/prisma/client.ts';

function field(type: CustomField['type'], slug: string, properties: object, required = false): AttachedField {
  const now = new Date();
  return { required, customField: { id: slug, organizationId: 'org', type, slug, name: slug, properties, metadata: {}, createdAt: now, modifiedAt: null, deletedAt: null } };
}

const fields = [
  field('text', 'company', { minLength: 2, maxLength: 5 }, true),
  field('number', 'seats', { ge: 1, le: 10 }),
  // 2026-03-10T18:00Z and 2026-03-20T06:00Z: the bounds are the 10th and the 20th, whatever the hour.
  field('date', 'start', { ge: Date.UTC(2026, 2, 10, 18) / 1000, le: Date.UTC(2026, 2, 20, 6) / 1000 }),
  field('checkbox', 'terms', {}, true),
  field('select', 'size', { options: [{ value: 's', label: 'Small' }] }),
];

/** The issues of one set of answers, as `slug: type`. */
function issuesOf(answers: Record<string, unknown>, requireAll = false): string[] {
  const issues = new ValidationIssues();
  checkAnswers(issues, ['input', 'customFieldData'], fields, answers, requireAll);
  return issues.list.map((issue) => `${issue.loc.slice(2).join('.')}: ${issue.type}`);
}

describe('answers to custom fields', () => {
  it('are checked by type and by the properties of their field', () => {
    expect(issuesOf({ company: 'Acme', seats: 10, start: '2026-03-10', terms: false, size: 's' })).toEqual([]);
    expect(issuesOf({ start: '2026-03-20' })).toEqual([]);
    expect(issuesOf({ company: 'A' })).toEqual(['company: string_too_short']);
    expect(issuesOf({ company: 'Acme Inc' })).toEqual(['company: string_too_long']);
    expect(issuesOf({ company: 3 })).toEqual(['company: string_type']);
    expect(issuesOf({ seats: 0 })).toEqual(['seats: greater_than_equal']);
    expect(issuesOf({ seats: 11 })).toEqual(['seats: less_than_equal']);
    expect(issuesOf({ seats: 1.5 })).toEqual(['seats: int_type']);
    expect(issuesOf({ start: '2026-03-09' })).toEqual(['start: greater_than_equal']);
    expect(issuesOf({ start: '2026-03-21' })).toEqual(['start: less_than_equal']);
    expect(issuesOf({ start: '2026-02-29' })).toEqual(['start: date_from_datetime_parsing']);
    expect(issuesOf({ start: '2026-03-15T00:00:00Z' })).toEqual(['start: date_from_datetime_parsing']);
    expect(issuesOf({ terms: 'on' })).toEqual(['terms: bool_type']);
    expect(issuesOf({ size: 'xl' })).toEqual(['size: literal_error']);
    expect(issuesOf({ colour: 'red' })).toEqual(['colour: extra_forbidden']);
  });

  it('need the required fields only at confirmation, where a required checkbox must be checked', () => {
    expect(issuesOf({})).toEqual([]);
    expect(issuesOf({}, true)).toEqual(['company: missing', 'terms: missing']);
    expect(issuesOf({ company: '', terms: false }, true)).toEqual(['company: missing', 'terms: literal_error']);
    expect(issuesOf({ company: 'Acme', terms: true, seats: null }, true)).toEqual([]);
  });
});

describe('the properties of a custom field', () => {
  const check = (type: CustomField['type'], input: object) => {
    const issues = new ValidationIssues();
    const properties = checkProperties(issues, type, input);
    return { properties, issues: issues.list.map((issue) => `${issue.loc.slice(2).join('.')}: ${issue.type}`) };
  };

  it('keep only what was set, and refuse another type’s', () => {
    expect(check('text', { formLabel: 'Company', textarea: null, minLength: 1 })).toEqual({ properties: { formLabel: 'Company', minLength: 1 }, issues: [] });
    expect(check('checkbox', { ge: 1 }).issues).toEqual(['ge: extra_forbidden']);
    expect(check('date', { options: [] }).issues).toEqual(['options: extra_forbidden']);
    expect(check('number', { ge: 3, le: 2 }).issues).toEqual(['le: value_error']);
    expect(check('text', { minLength: -1 }).issues).toEqual(['minLength: greater_than_equal']);
    expect(check('select', { options: [] }).issues).toEqual(['options: too_short']);
    expect(check('text', { formHelpText: '' }).issues).toEqual(['formHelpText: string_too_short']);
  });
});
