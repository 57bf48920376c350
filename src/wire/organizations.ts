// The documented JSON of organizations: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).

/**
 * The REST shape of an organization, wherever it appears: its own routes and every resource that
 * embeds its organization (checkouts, the portal). `details` is not part of it.
 */
export const organizationWire = `id createdAt modifiedAt name slug avatarUrl email website socials { platform url } detailsSubmittedAt
  featureSettings { issueFundingEnabled } subscriptionSettings { allowMultipleSubscriptions allowCustomerUpdates prorationBehavior }
  notificationSettings { newOrder newSubscription }`;

export const OrganizationWire = `fragment OrganizationWire on Organization { ${organizationWire} }`;

/** The organization's fields Kassa does not keep, as the wire format carries them: every organization is active. */
export const organizationProfileConstants = {
  status: 'active',
};
