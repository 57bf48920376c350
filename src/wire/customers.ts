// The documented JSON of customers: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).

export const addressWire = 'line1 line2 postalCode city state country';
export const customerWire = `
  id createdAt modifiedAt metadata externalId email emailVerified name
  billingAddress { ${addressWire} } taxId organizationId deletedAt avatarUrl`;

export const CustomerWire = /* GraphQL */ `fragment CustomerWire on Customer { ${customerWire} }`;
export const CustomerStateWire = /* GraphQL */ `
  fragment CustomerStateWire on CustomerState {
    ${customerWire}
    activeSubscriptions {
      id createdAt modifiedAt metadata customFieldData status amount currency recurringInterval currentPeriodStart currentPeriodEnd
      cancelAtPeriodEnd canceledAt startedAt endsAt productId discountId
      meters { id createdAt modifiedAt consumedUnits creditedUnits amount meterId }
    }
    grantedBenefits { id createdAt modifiedAt grantedAt benefitId benefitType benefitMetadata properties }
    activeMeters { id createdAt modifiedAt meterId consumedUnits creditedUnits balance }
  }`;
