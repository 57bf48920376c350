-- CreateIndex
-- The due events in the order the worker claims them, so a claim reads only the first few.
CREATE INDEX CONCURRENTLY "webhook_events_next_attempt_at_sequence_idx" ON "webhook_events"("next_attempt_at", "sequence");
