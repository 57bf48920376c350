-- AlterTable
ALTER TABLE "jobs" ADD COLUMN     "unique_key" TEXT;

-- CreateTable
CREATE TABLE "email_tokens" (
    "id" UUID NOT NULL,
    "purpose" TEXT NOT NULL,
    "user_id" UUID,
    "customer_id" UUID,
    "email" TEXT NOT NULL,
    "ip" TEXT NOT NULL,
    "token_hash" BYTEA NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "email_tokens_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "email_tokens_email_created_at_idx" ON "email_tokens"("email", "created_at");

-- CreateIndex
CREATE INDEX "email_tokens_ip_created_at_idx" ON "email_tokens"("ip", "created_at");

-- CreateIndex
CREATE UNIQUE INDEX "jobs_unique_key_key" ON "jobs"("unique_key");

-- AddForeignKey
ALTER TABLE "email_tokens" ADD CONSTRAINT "email_tokens_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "email_tokens" ADD CONSTRAINT "email_tokens_customer_id_fkey" FOREIGN KEY ("customer_id") REFERENCES "customers"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every user so far was created by the operator (bootstrap, CLI), who vouches for the address:
-- creating an organization now needs a verified address, and they keep that right.
UPDATE "users" SET "email_verified" = true;
