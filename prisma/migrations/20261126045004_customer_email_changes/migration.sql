-- CreateTable
CREATE TABLE "customer_email_changes" (
    "id" UUID NOT NULL,
    "customer_id" UUID NOT NULL,
    "email" TEXT NOT NULL,
    "code_hash" BYTEA NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "verified_at" TIMESTAMPTZ(3),
    "invalidated_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "customer_email_changes_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "customer_email_changes_customer_id_created_at_idx" ON "customer_email_changes"("customer_id", "created_at");

-- AddForeignKey
ALTER TABLE "customer_email_changes" ADD CONSTRAINT "customer_email_changes_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;
