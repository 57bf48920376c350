// Meter filters compiled to SQL: whatever a client names or compares, it reaches the database as a
// bound parameter, never as SQL text; and the checks name each bad clause at its own place.
import { describe, expect, it } from 'vitest';
import { ValidationIssues } from '../../src/graphql/errors.ts';
import { aggregationSql, checkAggregation, checkFilter, filterSql } from '../../src/modules/usage/filter.ts';

const hostile = `x'); DROP TABLE usage_events; --`;

describe('filterSql', () => {
  it('binds metadata keys and values as parameters, and keeps them out of the SQL text', () => {
    const issues = new ValidationIssues();
    const filter = checkFilter(
      issues,
      {
        conjunction: 'or',
        clauses: [
          { property: hostile.slice(0, 40), operator: 'eq', value: hostile },
          { conjunction: 'and', clauses: [{ property: 'name', operator: 'like', value: hostile }, { property: 'tokens', operator: 'gte', value: 10 }] },
        ],
      },
      ['filter'],
    );
    expect(issues.list).toEqual([]);
    const sql = filterSql(filter);
    expect(sql.sql).not.toContain('DROP');
    expect(sql.values).toContain(hostile.slice(0, 40));
    expect(sql.values).toContain(JSON.stringify(hostile));
    expect(sql.values).toContain(`%${hostile.replace(/_/g, '\\_')}%`);
    expect(sql.sql).toMatch(/ OR /);
  });

  it('escapes LIKE wildcards: like means contains the text', () => {
    const issues = new ValidationIssues();
    const sql = filterSql(checkFilter(issues, { conjunction: 'and', clauses: [{ property: 'path', operator: 'like', value: '50%_off' }] }, ['filter']));
    expect(sql.values).toContain('%50\\%\\_off%');
  });

  it('matches everything with an empty and, nothing with an empty or', () => {
    expect(filterSql({ conjunction: 'and', clauses: [] }).sql).toBe('TRUE');
    expect(filterSql({ conjunction: 'or', clauses: [] }).sql).toBe('FALSE');
  });

  it('binds the aggregated property too', () => {
    const sql = aggregationSql({ func: 'sum', property: hostile.slice(0, 40) });
    expect(sql.sql).not.toContain('DROP');
    expect(sql.values).toContain(hostile.slice(0, 40));
  });
});

describe('checkFilter and checkAggregation', () => {
  it('name each bad clause at its place', () => {
    const issues = new ValidationIssues();
    checkFilter(
      issues,
      {
        conjunction: 'nand',
        clauses: [{ property: 'a', operator: 'regex', value: 1 }, { conjunction: 'or', clauses: [{ property: '', operator: 'eq', value: null }] }, 'clause'],
        extra: true,
      },
      ['input', 'filter'],
    );
    expect(issues.list.map((i) => i.loc.join('.'))).toEqual([
      'input.filter.extra',
      'input.filter.conjunction',
      'input.filter.clauses.0.operator',
      'input.filter.clauses.1.clauses.0.property',
      'input.filter.clauses.1.clauses.0.value',
      'input.filter.clauses.2',
    ]);
  });

  it('refuses a property on count and requires one on every other function', () => {
    const issues = new ValidationIssues();
    checkAggregation(issues, { func: 'count', property: 'x' }, ['a']);
    checkAggregation(issues, { func: 'unique' }, ['b']);
    checkAggregation(issues, { func: 'sum', property: 'name' }, ['c']);
    expect(issues.list.map((i) => [i.loc.join('.'), i.type])).toEqual([
      ['a.property', 'extra_forbidden'],
      ['b.property', 'missing'],
      ['c.property', 'value_error'],
    ]);
  });
});
