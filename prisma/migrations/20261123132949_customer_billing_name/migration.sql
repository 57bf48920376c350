-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "billing_name" TEXT;
