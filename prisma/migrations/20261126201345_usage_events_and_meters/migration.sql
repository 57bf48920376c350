-- CreateEnum
CREATE TYPE "usage_event_source" AS ENUM ('system', 'user');

-- CreateTable
CREATE TABLE "usage_events" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "source" "usage_event_source" NOT NULL DEFAULT 'user',
    "customer_id" UUID,
    "external_customer_id" TEXT,
    "external_id" TEXT,
    "timestamp" TIMESTAMPTZ(3) NOT NULL,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "usage_events_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "meters" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "filter" JSONB NOT NULL,
    "aggregation" JSONB NOT NULL,
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modified_at" TIMESTAMPTZ(3),
    "archived_at" TIMESTAMPTZ(3),

    CONSTRAINT "meters_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "usage_events_organization_id_customer_id_name_timestamp_idx" ON "usage_events"("organization_id", "customer_id", "name", "timestamp");

-- CreateIndex
CREATE INDEX "usage_events_organization_id_external_customer_id_name_time_idx" ON "usage_events"("organization_id", "external_customer_id", "name", "timestamp");

-- CreateIndex
CREATE INDEX "usage_events_organization_id_name_timestamp_idx" ON "usage_events"("organization_id", "name", "timestamp");

-- CreateIndex
CREATE INDEX "usage_events_organization_id_timestamp_idx" ON "usage_events"("organization_id", "timestamp");

-- CreateIndex
CREATE UNIQUE INDEX "usage_events_organization_id_external_id_key" ON "usage_events"("organization_id", "external_id");

-- CreateIndex
CREATE INDEX "meters_organization_id_created_at_idx" ON "meters"("organization_id", "created_at");

-- AddForeignKey
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "usage_events" ADD CONSTRAINT "usage_events_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "meters" ADD CONSTRAINT "meters_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
