-- A customer holds its email (active_email) only when the organization set it or the customer
-- verified it. A customer a checkout created carries the address its buyer typed, unproven: it
-- stops holding it, so no later checkout is attached to it through that address. Such a customer
-- is one created after a checkout that names it was opened; one the organization created existed
-- before any of its checkouts.
UPDATE "customers" SET "active_email" = NULL
WHERE "active_email" IS NOT NULL AND NOT "email_verified"
  AND EXISTS (SELECT 1 FROM "checkouts" WHERE "checkouts"."customer_id" = "customers"."id" AND "checkouts"."created_at" <= "customers"."created_at");
