// The documented JSON of payments: the selection REST responses render it from (see wire/shape.ts
// for the mapping). A payment is the client library's GenericPayment: Kassa keeps no card brand or
// last digits, so no method_metadata.

export const PaymentWire = /* GraphQL */ `
  fragment PaymentWire on Payment {
    createdAt modifiedAt id processor status amount currency method declineReason declineMessage
    organizationId checkoutId orderId processorMetadata
  }`;
