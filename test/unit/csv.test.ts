// The CSV cells of the REST exports: nothing a value holds can end its cell or row early, and
// nothing a spreadsheet would run as a formula stays one.
import { describe, expect, it } from 'vitest';
import { csvCell, csvRow } from '../../src/rest/csv.ts';

describe('csvCell', () => {
  it('writes plain text, numbers, booleans and dates as they are', () => {
    expect(csvCell('Pro plan')).toBe('Pro plan');
    expect(csvCell(12.5)).toBe('12.5');
    expect(csvCell(-3)).toBe('-3');
    expect(csvCell(true)).toBe('true');
    expect(csvCell(new Date('2027-01-31T10:00:00.000Z'))).toBe('2027-01-31T10:00:00.000Z');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
  });

  it('quotes a cell holding a comma, a quote or a line break, doubling its quotes', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('cr\rlf')).toBe('"cr\rlf"');
  });

  it('prefixes text a spreadsheet would run as a formula with a single quote', () => {
    for (const start of ['=', '+', '-', '@', '\t', '\r']) expect(csvCell(`${start}SUM(A1)`).replace(/^"/, '')).toMatch(/^'/);
    expect(csvCell('=HYPERLINK("http://evil.example","x")')).toBe(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
    expect(csvCell('a=b')).toBe('a=b');
  });
});

describe('csvRow', () => {
  it('joins the cells with commas and ends the row with CRLF', () => {
    expect(csvRow(['a', 1, null, 'b,c'])).toBe('a,1,,"b,c"\r\n');
  });
});
