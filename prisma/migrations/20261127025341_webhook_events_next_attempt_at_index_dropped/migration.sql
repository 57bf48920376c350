-- DropIndex
-- Covered by webhook_events_next_attempt_at_sequence_idx.
DROP INDEX "webhook_events_next_attempt_at_idx";
