// What a principal reaches, per model, as Prisma `where` fragments. Every query of a resource that
// the Customer Portal serves starts from these, so a customer's token reaches its own rows in the
// database's `where`, never by filtering results afterwards. Core principals reach the rows of
// their organizations; anyone else reaches nothing.
//
// Combine a fragment with a query's own conditions under `AND` (`{ AND: [reach(ctx).order, { id }] }`)
// so that neither can overwrite the other's `OR`.
import type { Context } from '../context.ts';
import type { Prisma } from '../generated/prisma/client.ts';
import { organizationFilter } from '../modules/organizations/access.ts';

export interface Reach {
  customer: Prisma.CustomerWhereInput;
  order: Prisma.OrderWhereInput;
  subscription: Prisma.SubscriptionWhereInput;
  benefitGrant: Prisma.BenefitGrantWhereInput;
  licenseKey: Prisma.LicenseKeyWhereInput;
}

const nothing = { id: { in: [] } };

export function reach(ctx: Context): Reach {
  const { principal } = ctx;
  switch (principal.kind) {
    case 'customer': {
      const own = { organizationId: principal.organizationId, customerId: principal.customerId, customer: { deletedAt: null } };
      const checkoutId = principal.checkoutId;
      if (checkoutId === null) {
        return {
          customer: { id: principal.customerId, organizationId: principal.organizationId, deletedAt: null },
          order: own,
          subscription: own,
          benefitGrant: own,
          licenseKey: own,
        };
      }
      // A checkout's session: what that checkout bought, including the renewals of the
      // subscription it started, and the benefits and keys granted through them.
      const bought = { OR: [{ order: { checkoutId } }, { subscription: { checkoutId } }] };
      return {
        customer: { id: principal.customerId, organizationId: principal.organizationId, deletedAt: null },
        order: { ...own, OR: [{ checkoutId }, { subscription: { checkoutId } }] },
        subscription: { ...own, checkoutId },
        benefitGrant: { ...own, ...bought },
        licenseKey: { ...own, grant: bought },
      };
    }
    case 'organization':
    case 'user':
    case 'system': {
      const organizationId = organizationFilter(ctx);
      return {
        customer: { organizationId, deletedAt: null },
        order: { organizationId },
        subscription: { organizationId },
        benefitGrant: { organizationId },
        licenseKey: { organizationId },
      };
    }
    default:
      return { customer: nothing, order: nothing, subscription: nothing, benefitGrant: nothing, licenseKey: nothing };
  }
}
