// Kassa's background work, listed: every job kind with the code that runs it, and the sweeps run
// on every tick. Each environment's job runner runs exactly these (server.ts).
import type { BackgroundWork } from './jobs/runner.ts';
import { grantSyncJob, productGrantSyncJob } from './modules/benefits/grants.ts';
import { expirySweep } from './modules/checkouts/service.ts';
import { chargeJob, reconcileJob } from './modules/payments/charge.ts';
import { refundJob } from './modules/refunds/service.ts';
import { incompleteExpirySweep, renewalSweep } from './modules/subscriptions/service.ts';

export const backgroundWork: BackgroundWork = {
  jobs: [grantSyncJob, productGrantSyncJob, chargeJob, reconcileJob, refundJob],
  sweeps: [expirySweep, renewalSweep, incompleteExpirySweep],
};
