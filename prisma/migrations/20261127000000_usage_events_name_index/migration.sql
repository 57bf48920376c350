-- DropIndex
DROP INDEX "usage_events_organization_id_name_timestamp_idx";
