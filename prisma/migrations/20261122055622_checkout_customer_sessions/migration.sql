-- AlterTable
ALTER TABLE "customer_sessions" ADD COLUMN     "checkout_id" UUID;
