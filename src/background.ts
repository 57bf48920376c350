// Kassa's background work, listed: every job kind with the code that runs it, and the sweeps run
// on every tick. Each environment's job runner runs exactly these (server.ts).
import type { BackgroundWork } from './jobs/runner.ts';
import { grantSyncJob, productGrantSyncJob } from './modules/benefits/grants.ts';
import { expirySweep } from './modules/checkouts/service.ts';
import { emailEventJob, emailSendJob } from './modules/emails/jobs.ts';
import { chargeJob, reconcileJob } from './modules/payments/charge.ts';
import { refundJob } from './modules/refunds/service.ts';
import { incompleteExpirySweep, renewalSweep } from './modules/subscriptions/service.ts';

export const backgroundWork: BackgroundWork = {
  jobs: [grantSyncJob, productGrantSyncJob, chargeJob, reconcileJob, refundJob, emailEventJob, emailSendJob],
  sweeps: [expirySweep, renewalSweep, incompleteExpirySweep],
};
