-- AlterTable
ALTER TABLE "discount_redemptions" ADD COLUMN     "subscription_id" UUID,
ALTER COLUMN "checkout_id" DROP NOT NULL;

-- AlterTable
ALTER TABLE "subscriptions" ADD COLUMN     "discount_starts_at" TIMESTAMPTZ(3);

-- AddForeignKey
ALTER TABLE "discount_redemptions" ADD CONSTRAINT "discount_redemptions_subscription_id_fkey" FOREIGN KEY ("subscription_id") REFERENCES "subscriptions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- A redemption is of a checkout or of a subscription, never of both or neither.
ALTER TABLE "discount_redemptions" ADD CONSTRAINT "discount_redemptions_one_redeemer" CHECK (num_nonnulls("checkout_id", "subscription_id") = 1);
