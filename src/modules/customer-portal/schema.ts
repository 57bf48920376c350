// The Customer Portal API: what a signed-in customer reaches, one file per resource. Every query
// below starts from `reach(ctx)` (src/auth/reach.ts), so a customer's token reads and changes only
// that customer's own rows; an id it does not own is answered exactly as one that does not exist.
import './customers.ts';
import './products.ts';
import './organizations.ts';
import './orders.ts';
import './subscriptions.ts';
import './benefit-grants.ts';
import './license-keys.ts';
import './payment-methods.ts';

export { customerOrderNodeLoader } from './orders.ts';
export { customerSubscriptionNodeLoader } from './subscriptions.ts';
export { customerBenefitGrantNodeLoader } from './benefit-grants.ts';
export { customerLicenseKeyNodeLoader } from './license-keys.ts';
