// Whether a subscription has ended, on its own so that payments can ask without importing the
// subscription rules (which schedule charges through payments).
import type { Subscription } from '../../generated/prisma/client.ts';

/** Ended: canceled, expired before its first payment, or unpaid; it is never charged again. */
export const subscriptionEnded = (subscription: Pick<Subscription, 'endedAt' | 'status'>) =>
  subscription.endedAt !== null || ['canceled', 'incomplete_expired', 'unpaid'].includes(subscription.status);
