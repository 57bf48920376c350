-- AlterTable
ALTER TABLE "organizations" ADD COLUMN     "avatar_url" TEXT,
ADD COLUMN     "details" JSONB,
ADD COLUMN     "details_submitted_at" TIMESTAMPTZ(3),
ADD COLUMN     "email" TEXT,
ADD COLUMN     "feature_settings" JSONB NOT NULL DEFAULT '{"issue_funding_enabled": false}',
ADD COLUMN     "notification_settings" JSONB NOT NULL DEFAULT '{"new_order": true, "new_subscription": true}',
ADD COLUMN     "socials" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "subscription_settings" JSONB NOT NULL DEFAULT '{"allow_multiple_subscriptions": false, "allow_customer_updates": true, "proration_behavior": "prorate"}',
ADD COLUMN     "website" TEXT;
