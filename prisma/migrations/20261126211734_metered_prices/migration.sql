-- AlterEnum
ALTER TYPE "PriceAmountType" ADD VALUE 'metered_unit';

-- AlterTable
ALTER TABLE "product_prices" ADD COLUMN     "cap_amount" INTEGER,
ADD COLUMN     "meter_id" UUID,
ADD COLUMN     "unit_amount" DECIMAL(30,12);

-- CreateTable
CREATE TABLE "customer_meters" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "meter_id" UUID NOT NULL,
    "credited_units" INTEGER NOT NULL DEFAULT 0,
    "window_start" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modified_at" TIMESTAMPTZ(3),

    CONSTRAINT "customer_meters_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "subscription_meter_usages" (
    "id" UUID NOT NULL,
    "subscription_id" UUID NOT NULL,
    "meter_id" UUID NOT NULL,
    "product_price_id" UUID,
    "order_id" UUID,
    "period_start" TIMESTAMPTZ(3) NOT NULL,
    "period_end" TIMESTAMPTZ(3) NOT NULL,
    "units" DOUBLE PRECISION NOT NULL,
    "credited_units" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "billed_units" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "amount" INTEGER NOT NULL DEFAULT 0,
    "final" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "subscription_meter_usages_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "customer_meters_organization_id_created_at_idx" ON "customer_meters"("organization_id", "created_at");

-- CreateIndex
CREATE INDEX "customer_meters_meter_id_idx" ON "customer_meters"("meter_id");

-- CreateIndex
CREATE UNIQUE INDEX "customer_meters_customer_id_meter_id_key" ON "customer_meters"("customer_id", "meter_id");

-- CreateIndex
CREATE UNIQUE INDEX "subscription_meter_usages_subscription_id_meter_id_period_s_key" ON "subscription_meter_usages"("subscription_id", "meter_id", "period_start");

-- AddForeignKey
ALTER TABLE "product_prices" ADD CONSTRAINT "product_prices_meter_id_fkey" FOREIGN KEY ("meter_id") REFERENCES "meters"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "customer_meters" ADD CONSTRAINT "customer_meters_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "customer_meters" ADD CONSTRAINT "customer_meters_meter_id_fkey" FOREIGN KEY ("meter_id") REFERENCES "meters"("id") ON DELETE CASCADE ON UPDATE CASCADE;
