// CSV as the REST exports write it (RFC 4180, the dialect spreadsheets read): one line per row,
// ended by CRLF, every cell a string.
//
// A cell is quoted when it holds a quote, a comma or a line break, and its quotes are doubled, so
// no value can end its cell or its row early. A cell that a spreadsheet would run as a formula
// (starting with =, +, -, @, a tab or a carriage return: OWASP's "CSV injection") is prefixed with
// a single quote, so a customer's name such as `=HYPERLINK(…)` is shown, never evaluated.

const formulaStart = /^[=+\-@\t\r]/;
const needsQuotes = /[",\r\n]/;

/**
 * One cell: null and undefined are empty; numbers and booleans as written (a negative number
 * stays a number); dates in ISO 8601 (UTC); text neutralised and quoted as above.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const text = value instanceof Date ? value.toISOString() : String(value);
  const neutral = formulaStart.test(text) ? `'${text}` : text;
  return needsQuotes.test(neutral) ? `"${neutral.replace(/"/g, '""')}"` : neutral;
}

/** One row, with its line ending. */
export function csvRow(values: readonly unknown[]): string {
  return `${values.map(csvCell).join(',')}\r\n`;
}
