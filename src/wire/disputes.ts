// The documented JSON of disputes: the selection REST responses, webhook payloads and live events
// render it from (see wire/shape.ts for the mapping). A dispute has no metadata: the processor
// owns it, not the organization.

export const DisputeWire = /* GraphQL */ `
  fragment DisputeWire on Dispute {
    id createdAt modifiedAt status reason amount currency orderId closedAt
  }`;
