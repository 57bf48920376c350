-- CreateIndex
CREATE INDEX "payments_payment_method_idx" ON "payments"("payment_method");
