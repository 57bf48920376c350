-- CreateEnum
CREATE TYPE "SubscriptionStatus" AS ENUM ('incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'canceled', 'unpaid');

-- CreateEnum
CREATE TYPE "CustomerCancellationReason" AS ENUM ('customer_service', 'low_quality', 'missing_features', 'switched_service', 'too_complex', 'too_expensive', 'unused', 'other');

-- CreateEnum
CREATE TYPE "BenefitType" AS ENUM ('custom', 'discord', 'github_repository', 'downloadables', 'license_keys', 'meter_credit');

-- CreateEnum
CREATE TYPE "LicenseKeyStatus" AS ENUM ('granted', 'revoked', 'disabled');

-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "billing_period_start" TIMESTAMPTZ(3),
ADD COLUMN     "subscription_id" UUID;

-- CreateTable
CREATE TABLE "subscriptions" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "product_id" UUID NOT NULL,
    "checkout_id" UUID,
    "status" "SubscriptionStatus" NOT NULL,
    "amount" INTEGER NOT NULL,
    "currency" TEXT NOT NULL,
    "recurring_interval" "RecurringInterval" NOT NULL,
    "current_period_start" TIMESTAMPTZ(3) NOT NULL,
    "current_period_end" TIMESTAMPTZ(3) NOT NULL,
    "cycles" INTEGER NOT NULL DEFAULT 0,
    "cancel_at_period_end" BOOLEAN NOT NULL DEFAULT false,
    "canceled_at" TIMESTAMPTZ(3),
    "started_at" TIMESTAMPTZ(3),
    "ends_at" TIMESTAMPTZ(3),
    "ended_at" TIMESTAMPTZ(3),
    "customer_cancellation_reason" "CustomerCancellationReason",
    "customer_cancellation_comment" TEXT,
    "payment_method" TEXT NOT NULL,
    "failed_attempts" INTEGER NOT NULL DEFAULT 0,
    "retry_at" TIMESTAMPTZ(3),
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modified_at" TIMESTAMPTZ(3),

    CONSTRAINT "subscriptions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "subscription_prices" (
    "subscription_id" UUID NOT NULL,
    "product_price_id" UUID NOT NULL,
    "position" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "subscription_prices_pkey" PRIMARY KEY ("subscription_id","product_price_id")
);

-- CreateTable
CREATE TABLE "subscription_pending_items" (
    "id" UUID NOT NULL,
    "subscription_id" UUID NOT NULL,
    "label" TEXT NOT NULL,
    "amount" INTEGER NOT NULL,
    "proration" BOOLEAN NOT NULL DEFAULT true,
    "product_price_id" UUID,
    "order_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "subscription_pending_items_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "benefits" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "type" "BenefitType" NOT NULL,
    "description" TEXT NOT NULL,
    "selectable" BOOLEAN NOT NULL DEFAULT true,
    "deletable" BOOLEAN NOT NULL DEFAULT true,
    "properties" JSONB NOT NULL DEFAULT '{}',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modified_at" TIMESTAMPTZ(3),

    CONSTRAINT "benefits_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "product_benefits" (
    "product_id" UUID NOT NULL,
    "benefit_id" UUID NOT NULL,
    "position" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "product_benefits_pkey" PRIMARY KEY ("product_id","benefit_id")
);

-- CreateTable
CREATE TABLE "benefit_grants" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "benefit_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "subscription_id" UUID,
    "order_id" UUID,
    "scope_id" UUID NOT NULL,
    "granted_at" TIMESTAMPTZ(3),
    "revoked_at" TIMESTAMPTZ(3),
    "properties" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modified_at" TIMESTAMPTZ(3),

    CONSTRAINT "benefit_grants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "license_keys" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "benefit_id" UUID NOT NULL,
    "grant_id" UUID,
    "key" TEXT NOT NULL,
    "status" "LicenseKeyStatus" NOT NULL DEFAULT 'granted',
    "limit_activations" INTEGER,
    "usage" INTEGER NOT NULL DEFAULT 0,
    "limit_usage" INTEGER,
    "validations" INTEGER NOT NULL DEFAULT 0,
    "last_validated_at" TIMESTAMPTZ(3),
    "expires_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modified_at" TIMESTAMPTZ(3),

    CONSTRAINT "license_keys_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "license_key_activations" (
    "id" UUID NOT NULL,
    "license_key_id" UUID NOT NULL,
    "label" TEXT NOT NULL,
    "meta" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modified_at" TIMESTAMPTZ(3),

    CONSTRAINT "license_key_activations_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "files" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "path" TEXT NOT NULL,
    "mime_type" TEXT NOT NULL,
    "size" INTEGER NOT NULL,
    "service" TEXT NOT NULL,
    "checksum_sha256_base64" TEXT,
    "checksum_sha256_hex" TEXT,
    "checksum_etag" TEXT,
    "version" TEXT,
    "is_uploaded" BOOLEAN NOT NULL DEFAULT false,
    "is_enabled" BOOLEAN NOT NULL DEFAULT true,
    "last_modified_at" TIMESTAMPTZ(3),
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modified_at" TIMESTAMPTZ(3),

    CONSTRAINT "files_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "file_parts" (
    "file_id" UUID NOT NULL,
    "number" INTEGER NOT NULL,
    "chunk_start" INTEGER NOT NULL,
    "chunk_end" INTEGER NOT NULL,
    "checksum_sha256_base64" TEXT,
    "data" BYTEA,

    CONSTRAINT "file_parts_pkey" PRIMARY KEY ("file_id","number")
);

-- CreateIndex
CREATE INDEX "subscriptions_organization_id_created_at_idx" ON "subscriptions"("organization_id", "created_at");

-- CreateIndex
CREATE INDEX "subscriptions_customer_id_idx" ON "subscriptions"("customer_id");

-- CreateIndex
CREATE INDEX "subscriptions_status_current_period_end_idx" ON "subscriptions"("status", "current_period_end");

-- CreateIndex
CREATE INDEX "subscription_pending_items_subscription_id_order_id_idx" ON "subscription_pending_items"("subscription_id", "order_id");

-- CreateIndex
CREATE INDEX "benefits_organization_id_created_at_idx" ON "benefits"("organization_id", "created_at");

-- CreateIndex
CREATE INDEX "product_benefits_benefit_id_idx" ON "product_benefits"("benefit_id");

-- CreateIndex
CREATE INDEX "benefit_grants_customer_id_idx" ON "benefit_grants"("customer_id");

-- CreateIndex
CREATE INDEX "benefit_grants_subscription_id_idx" ON "benefit_grants"("subscription_id");

-- CreateIndex
CREATE INDEX "benefit_grants_order_id_idx" ON "benefit_grants"("order_id");

-- CreateIndex
CREATE UNIQUE INDEX "benefit_grants_benefit_id_customer_id_scope_id_key" ON "benefit_grants"("benefit_id", "customer_id", "scope_id");

-- CreateIndex
CREATE UNIQUE INDEX "license_keys_grant_id_key" ON "license_keys"("grant_id");

-- CreateIndex
CREATE INDEX "license_keys_organization_id_created_at_idx" ON "license_keys"("organization_id", "created_at");

-- CreateIndex
CREATE INDEX "license_keys_customer_id_idx" ON "license_keys"("customer_id");

-- CreateIndex
CREATE UNIQUE INDEX "license_keys_organization_id_key_key" ON "license_keys"("organization_id", "key");

-- CreateIndex
CREATE INDEX "license_key_activations_license_key_id_idx" ON "license_key_activations"("license_key_id");

-- CreateIndex
CREATE INDEX "files_organization_id_created_at_idx" ON "files"("organization_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "orders_subscription_id_billing_period_start_key" ON "orders"("subscription_id", "billing_period_start");

-- AddForeignKey
ALTER TABLE "orders" ADD CONSTRAINT "orders_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "subscriptions"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscriptions" ADD CONSTRAINT "subscriptions_product_id_fkey" FOREIGN KEY ("product_id") REFERENCES "products"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscription_prices" ADD CONSTRAINT "subscription_prices_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "subscriptions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscription_prices" ADD CONSTRAINT "subscription_prices_product_price_id_fkey" FOREIGN KEY ("product_price_id") REFERENCES "product_prices"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "subscription_pending_items" ADD CONSTRAINT "subscription_pending_items_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "subscriptions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "benefits" ADD CONSTRAINT "benefits_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "product_benefits" ADD CONSTRAINT "product_benefits_product_id_fkey" FOREIGN KEY ("product_id") REFERENCES "products"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "product_benefits" ADD CONSTRAINT "product_benefits_benefit_id_fkey" FOREIGN KEY ("benefit_id") REFERENCES "benefits"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "benefit_grants" ADD CONSTRAINT "benefit_grants_benefit_id_fkey" FOREIGN KEY ("benefit_id") REFERENCES "benefits"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "benefit_grants" ADD CONSTRAINT "benefit_grants_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "benefit_grants" ADD CONSTRAINT "benefit_grants_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "subscriptions"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "benefit_grants" ADD CONSTRAINT "benefit_grants_order_id_fkey" FOREIGN KEY ("order_id") REFERENCES "orders"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "license_keys" ADD CONSTRAINT "license_keys_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "license_keys" ADD CONSTRAINT "license_keys_benefit_id_fkey" FOREIGN KEY ("benefit_id") REFERENCES "benefits"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "license_keys" ADD CONSTRAINT "license_keys_grant_id_fkey" FOREIGN KEY ("grant_id") REFERENCES "benefit_grants"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "license_key_activations" ADD CONSTRAINT "license_key_activations_license_key_id_fkey" FOREIGN KEY ("license_key_id") REFERENCES "license_keys"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "file_parts" ADD CONSTRAINT "file_parts_file_id_fkey" FOREIGN KEY ("file_id") REFERENCES "files"("id") ON DELETE CASCADE ON UPDATE CASCADE;
