// Whether a migration may be applied while the previous version of Kassa keeps serving (expand and
// contract): a statement is unsafe when it breaks what the running version reads or writes (a table
// or column dropped or renamed, a type changed, a NOT NULL its inserts do not fill, a type's value
// removed) or holds a lock that stops writes for longer than a moment (an index built, or a
// constraint validated, on a large table). Only tables that exist in the database now are the
// running version's; what a pending migration creates, the next may still change freely.
import type { DatabaseState } from './state.ts';

export interface Finding {
  statement: string;
  reason: string;
}

export interface MigrationVerdict {
  name: string;
  findings: Finding[];
}

/** A table counts as large from this size on: building an index on it holds writes for a noticeable time. */
export const largeTableBytes = 10 * 1024 * 1024;

/** Splits a script into statements, minding quotes, quoted identifiers, dollar quotes and comments. */
export function splitStatements(sql: string): string[] {
  const statements: string[] = [];
  let current = '';
  let i = 0;
  while (i < sql.length) {
    const rest = sql.slice(i);
    const skip = /^--[^\n]*/.exec(rest) ?? /^\/\*[\s\S]*?\*\//.exec(rest);
    if (skip) {
      current += ' ';
      i += skip[0].length;
      continue;
    }
    const quoted = /^'(?:[^']|'')*'/.exec(rest) ?? /^"(?:[^"]|"")*"/.exec(rest);
    const dollar = /^\$([A-Za-z_]*)\$/.exec(rest);
    if (quoted) {
      current += quoted[0];
      i += quoted[0].length;
    } else if (dollar) {
      const end = sql.indexOf(dollar[0], i + dollar[0].length);
      const stop = end < 0 ? sql.length : end + dollar[0].length;
      current += sql.slice(i, stop);
      i = stop;
    } else if (sql[i] === ';') {
      if (current.trim()) statements.push(current.trim());
      current = '';
      i++;
    } else {
      current += sql[i];
      i++;
    }
  }
  if (current.trim()) statements.push(current.trim());
  return statements.map((s) => s.replace(/\s+/g, ' '));
}

/** A table or column name as PostgreSQL stores it: quoted kept as is, bare folded to lower case; the schema dropped. */
function nameOf(raw: string): string {
  const last = raw.match(/"(?:[^"]|"")*"|[^."\s]+/g)?.at(-1) ?? raw;
  return last.startsWith('"') ? last.slice(1, -1).replace(/""/g, '"') : last.toLowerCase();
}

const identifier = String.raw`(?:"(?:[^"]|"")*"|[A-Za-z_][\w$]*)`;
const qualified = String.raw`${identifier}(?:\s*\.\s*${identifier})?`;

/** Splits on the commas outside parentheses and quotes: the actions of one ALTER TABLE. */
function actionsOf(text: string): string[] {
  const actions: string[] = [];
  let depth = 0;
  let current = '';
  for (const token of text.match(/'(?:[^']|'')*'|"(?:[^"]|"")*"|[(),]|[^'"(),]+/g) ?? []) {
    if (token === '(') depth++;
    if (token === ')') depth--;
    if (token === ',' && depth === 0) {
      actions.push(current.trim());
      current = '';
    } else current += token;
  }
  if (current.trim()) actions.push(current.trim());
  return actions;
}

function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** What in one migration would break the running version or stop its writes, statement by statement. */
export function findUnsafeStatements(sql: string, state: Pick<DatabaseState, 'tableBytes'>, largeBytes = largeTableBytes): Finding[] {
  const findings: Finding[] = [];
  const existing = (table: string) => Object.hasOwn(state.tableBytes, table);
  const large = (table: string) => existing(table) && state.tableBytes[table] >= largeBytes;
  const statements = splitStatements(sql);
  // Columns given a default anywhere in the migration: making them NOT NULL leaves old inserts working.
  const defaulted = new Set<string>();
  for (const statement of statements) {
    const alter = new RegExp(String.raw`^ALTER TABLE (?:IF EXISTS )?(?:ONLY )?(${qualified}) (.*)$`, 'is').exec(statement);
    if (!alter) continue;
    for (const action of actionsOf(alter[2])) {
      const set = new RegExp(String.raw`^ALTER (?:COLUMN )?(${identifier}) SET DEFAULT`, 'i').exec(action);
      if (set) defaulted.add(`${nameOf(alter[1])}.${nameOf(set[1])}`);
    }
  }
  for (const statement of statements) {
    const flag = (reason: string) => findings.push({ statement, reason });
    const dropTable = new RegExp(String.raw`^DROP TABLE (?:IF EXISTS )?(.*?)(?: CASCADE| RESTRICT)?$`, 'is').exec(statement);
    if (dropTable) {
      const tables = (dropTable[1].match(new RegExp(qualified, 'g')) ?? []).map(nameOf).filter(existing);
      if (tables.length) flag(`drops ${tables.join(', ')}, which the running version still reads and writes: drop a table in a later release, once no running version uses it (contract)`);
      continue;
    }
    if (/^TRUNCATE\b/i.test(statement)) {
      flag('deletes every row of a table the running version uses');
      continue;
    }
    if (/^DROP TYPE\b/i.test(statement)) {
      flag('drops a type (an enum value removed is a type dropped and made again): the running version may still write the values it no longer has');
      continue;
    }
    if (/^ALTER TYPE\b.*\b(RENAME|DROP)\b/is.test(statement)) {
      flag('renames a type or its values, or drops an attribute: the running version still uses the old names');
      continue;
    }
    const index = new RegExp(String.raw`^CREATE (?:UNIQUE )?INDEX (CONCURRENTLY )?.*? ON (?:ONLY )?(${qualified})`, 'is').exec(statement);
    if (index) {
      const table = nameOf(index[2]);
      if (!index[1] && large(table)) {
        flag(`builds an index on ${table} (${megabytes(state.tableBytes[table])}) without CONCURRENTLY: it locks writes to ${table} until the index is built; use CREATE INDEX CONCURRENTLY, alone in its migration`);
      }
      continue;
    }
    const alter = new RegExp(String.raw`^ALTER TABLE (?:IF EXISTS )?(?:ONLY )?(${qualified}) (.*)$`, 'is').exec(statement);
    if (!alter) continue;
    const table = nameOf(alter[1]);
    if (!existing(table)) continue;
    for (const action of actionsOf(alter[2])) {
      const column = (pattern: string) => new RegExp(pattern, 'is').exec(action);
      let match: RegExpExecArray | null;
      if ((match = column(String.raw`^DROP (?:COLUMN )?(?:IF EXISTS )?(${identifier})`)) && !/^DROP CONSTRAINT/i.test(action)) {
        flag(`drops ${table}.${nameOf(match[1])}, which the running version still reads and writes: stop using it first, drop it in a later release (contract)`);
      } else if (/^RENAME\b/i.test(action)) {
        flag(`renames ${/^RENAME TO/i.test(action) ? `the table ${table}` : `a column of ${table}`}: the running version still uses the old name; add the new one, write both, and drop the old one in a later release`);
      } else if ((match = column(String.raw`^ALTER (?:COLUMN )?(${identifier}) (?:SET DATA )?TYPE\b`))) {
        flag(`changes the type of ${table}.${nameOf(match[1])}: it rewrites ${table} under a lock that stops reads and writes, and the running version expects the old type; add a new column instead`);
      } else if ((match = column(String.raw`^ALTER (?:COLUMN )?(${identifier}) SET NOT NULL`)) && !defaulted.has(`${table}.${nameOf(match[1])}`)) {
        flag(`makes ${table}.${nameOf(match[1])} NOT NULL without a default: the running version's inserts that leave it out fail, and ${table} is scanned under an exclusive lock`);
      } else if ((match = column(String.raw`^ADD (?:COLUMN )?(?:IF NOT EXISTS )?(${identifier}) `)) && !/^ADD CONSTRAINT/i.test(action) && /\bNOT NULL\b/i.test(action) && !/\bDEFAULT\b/i.test(action)) {
        flag(`adds ${table}.${nameOf(match[1])} NOT NULL without a default: the running version's inserts, which leave it out, fail; give it a default, or make it NOT NULL in a later release`);
      } else if (/^ADD (?:CONSTRAINT \S+ )?(?:FOREIGN KEY|CHECK)\b/i.test(action) && !/\bNOT VALID\b/i.test(action) && large(table)) {
        flag(`validates a constraint on every row of ${table} (${megabytes(state.tableBytes[table])}) while writes to it wait: add it NOT VALID, and VALIDATE CONSTRAINT in a later migration`);
      } else if (/^ADD (?:CONSTRAINT \S+ )?(?:UNIQUE|PRIMARY KEY)\b/i.test(action) && !/\bUSING INDEX\b/i.test(action) && large(table)) {
        flag(`builds a unique index on ${table} (${megabytes(state.tableBytes[table])}) while writes to it wait: build it with CREATE UNIQUE INDEX CONCURRENTLY first, then add the constraint USING INDEX`);
      }
    }
  }
  return findings;
}

/** The pending migrations of one database, each with what makes it unsafe (nothing, for a safe one). */
export function checkPending(migrations: { name: string; sql: string }[], state: DatabaseState, largeBytes = largeTableBytes): MigrationVerdict[] {
  const applied = new Set(state.migrations);
  return migrations.filter((m) => !applied.has(m.name)).map((m) => ({ name: m.name, findings: findUnsafeStatements(m.sql, state, largeBytes) }));
}

/** The report `kassa migrate --check` prints for one environment. */
export function describeVerdicts(environment: string, verdicts: MigrationVerdict[]): string {
  if (verdicts.length === 0) return `${environment}: up to date\n`;
  const lines = [`${environment}: ${verdicts.length} pending migration${verdicts.length === 1 ? '' : 's'}`];
  for (const verdict of verdicts) {
    lines.push(`  ${verdict.name}: ${verdict.findings.length ? 'UNSAFE under live traffic' : 'safe under live traffic'}`);
    for (const finding of verdict.findings) lines.push(`    ${finding.statement.length > 120 ? `${finding.statement.slice(0, 117)}...` : finding.statement}`, `      ${finding.reason}`);
  }
  return `${lines.join('\n')}\n`;
}
