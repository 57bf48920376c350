// What the backlog gauges report, read at scrape time in one statement per environment: each part
// is answered from an index (jobs by completion and due time, webhook events by next attempt, the
// outbox by dispatch), so a scrape stays cheap however long the tables grow.
import type { Db } from '../db/client.ts';
import type { Backlog } from './metrics.ts';

export async function readBacklog(prisma: Db, now: Date): Promise<Backlog> {
  // An event waits either in the outbox (not yet dispatched) or as a webhook event with a next
  // attempt; one whose endpoint is disabled or deleted is not waited on. LEAST ignores NULLs.
  const [row] = await prisma.$queryRaw<{ jobs_due: number; oldest_due_at: Date | null; oldest_undelivered_at: Date | null }[]>`
    SELECT
      (SELECT count(*)::int FROM jobs WHERE completed_at IS NULL AND run_at <= ${now}) AS jobs_due,
      (SELECT min(run_at) FROM jobs WHERE completed_at IS NULL AND run_at <= ${now}) AS oldest_due_at,
      LEAST(
        (SELECT min(e.created_at) FROM webhook_events e JOIN webhook_endpoints w ON w.id = e.endpoint_id
          WHERE e.next_attempt_at IS NOT NULL AND w.enabled AND w.deleted_at IS NULL),
        (SELECT min(created_at) FROM events WHERE dispatched_at IS NULL)
      ) AS oldest_undelivered_at`;
  return { jobsDue: Number(row.jobs_due), oldestDueAt: row.oldest_due_at, oldestUndeliveredAt: row.oldest_undelivered_at };
}
