// The documented JSON of organizations: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).

/** The REST shape of an organization's public profile, wherever a resource embeds its organization. */
export const organizationWire = 'id createdAt modifiedAt name slug';

/** The organization's public profile fields Kassa does not keep (yet), as the wire format carries them. */
export const organizationProfileConstants = {
  avatar_url: null,
  email: null,
  website: null,
  socials: [],
  status: 'active',
  details_submitted_at: null,
  feature_settings: {},
  subscription_settings: { allow_multiple_subscriptions: false, allow_customer_updates: true, proration_behavior: 'prorate' },
  notification_settings: { new_order: true, new_subscription: true },
};
