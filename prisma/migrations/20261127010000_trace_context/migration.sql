-- AlterTable
ALTER TABLE "events" ADD COLUMN     "traceparent" TEXT;

-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "traceparent" TEXT;
