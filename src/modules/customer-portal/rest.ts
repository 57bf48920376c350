// The `/v1/customer-portal/...` routes: table entries over the CustomerPortal root.
import type { RestRoute } from '../../rest/routes.ts';
import { portalCustomersRoutes } from './customers.ts';
import { portalOrganizationsRoutes } from './organizations.ts';
import { portalOrdersRoutes } from './orders.ts';
import { portalSubscriptionsRoutes } from './subscriptions.ts';
import { portalBenefitGrantsRoutes } from './benefit-grants.ts';
import { portalLicenseKeysRoutes } from './license-keys.ts';

export const customerPortalRoutes: RestRoute[] = [
  ...portalCustomersRoutes,
  ...portalOrganizationsRoutes,
  ...portalOrdersRoutes,
  ...portalSubscriptionsRoutes,
  ...portalBenefitGrantsRoutes,
  ...portalLicenseKeysRoutes,
];
