-- CreateEnum
CREATE TYPE "CustomFieldType" AS ENUM ('text', 'number', 'date', 'checkbox', 'select');

-- AlterTable
ALTER TABLE "checkouts" ADD COLUMN     "custom_field_data" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "customers" ADD COLUMN     "custom_field_data" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "custom_field_data" JSONB NOT NULL DEFAULT '{}';

-- AlterTable
ALTER TABLE "subscriptions" ADD COLUMN     "custom_field_data" JSONB NOT NULL DEFAULT '{}';

-- CreateTable
CREATE TABLE "custom_fields" (
    "id" UUID NOT NULL,
    "organization_id" UUID NOT NULL,
    "type" "CustomFieldType" NOT NULL,
    "slug" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "properties" JSONB NOT NULL DEFAULT '{}',
    "metadata" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "modified_at" TIMESTAMPTZ(3),
    "deleted_at" TIMESTAMPTZ(3),

    CONSTRAINT "custom_fields_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "product_custom_fields" (
    "product_id" UUID NOT NULL,
    "custom_field_id" UUID NOT NULL,
    "order" INTEGER NOT NULL,
    "required" BOOLEAN NOT NULL,

    CONSTRAINT "product_custom_fields_pkey" PRIMARY KEY ("product_id","custom_field_id")
);

-- CreateIndex
CREATE INDEX "custom_fields_organization_id_created_at_idx" ON "custom_fields"("organization_id", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "custom_fields_organization_id_slug_key" ON "custom_fields"("organization_id", "slug");

-- CreateIndex
CREATE INDEX "product_custom_fields_custom_field_id_idx" ON "product_custom_fields"("custom_field_id");

-- AddForeignKey
ALTER TABLE "custom_fields" ADD CONSTRAINT "custom_fields_organization_id_fkey" FOREIGN KEY ("organization_id") REFERENCES "organizations"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "product_custom_fields" ADD CONSTRAINT "product_custom_fields_product_id_fkey" FOREIGN KEY ("product_id") REFERENCES "products"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "product_custom_fields" ADD CONSTRAINT "product_custom_fields_custom_field_id_fkey" FOREIGN KEY ("custom_field_id") REFERENCES "custom_fields"("id") ON DELETE CASCADE ON UPDATE CASCADE;
