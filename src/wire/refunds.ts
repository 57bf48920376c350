// The documented JSON of refunds: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).

export const RefundWire = /* GraphQL */ `
  fragment RefundWire on Refund {
    id createdAt modifiedAt metadata status reason amount taxAmount currency organizationId orderId subscriptionId customerId revokeBenefits
  }`;
