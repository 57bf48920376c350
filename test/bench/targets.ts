// A bench figure beside its target: PASS when it meets it, BELOW when it does not, and `n/a` where
// the issue sets no target for that database (the embedded one is measured for comparison only).

export const onPostgres = Boolean(process.env.BENCH_DATABASE_URL);
export const databaseName = onPostgres ? 'PostgreSQL' : 'embedded';

/** `at least` for rates, `at most` for latencies; null when no target applies. */
export function verdict(value: number, target: { atLeast?: number; atMost?: number } | null): { target: string; verdict: string } {
  if (!target) return { target: 'n/a', verdict: 'n/a' };
  if (target.atLeast !== undefined) return { target: `>= ${target.atLeast}`, verdict: value >= target.atLeast ? 'PASS' : 'BELOW' };
  return { target: `<= ${target.atMost}`, verdict: value <= target.atMost! ? 'PASS' : 'BELOW' };
}
