// The documented JSON of customer sessions: the selections REST responses, webhook payloads and
// live events render it from (see wire/shape.ts for the mapping).
import { customerWire } from './customers.ts';

export const CustomerSessionWire = /* GraphQL */ `
  fragment CustomerSessionWire on CustomerSessionCreated {
    id createdAt modifiedAt token expiresAt customerPortalUrl customerId customerExternalId customer { ${customerWire} }
  }`;
