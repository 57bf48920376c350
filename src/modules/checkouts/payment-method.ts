// The buyer's payment method at a confirm, first or again after a decline: one the processor
// takes, that it said nothing against, and (for its single-use tokens) not spent by another payment.
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { ValidationIssues } from '../../graphql/errors.ts';
import { unknownPaymentMethod } from '../payments/processor.ts';

const loc = ['input', 'confirmationTokenId'];

/** Adds to `issues` what is wrong with `token`; `tokenProblem` is what the processor said of it, asked before the transaction. */
export async function checkBuyerPaymentMethod(ctx: Context, db: Db, token: string | null | undefined, tokenProblem: string | null, issues: ValidationIssues, missing: string) {
  const processor = ctx.environment.paymentProcessor;
  if (!token) issues.add(loc, missing, 'missing');
  else if (processor && !processor.acceptsPaymentMethod(token)) {
    issues.add(loc, processor.checkPaymentMethod ? 'Unknown payment method: pass the ConfirmationToken (ctoken_…) Stripe.js made on the buyer’s page.' : unknownPaymentMethod);
  } else if (tokenProblem) {
    issues.add(loc, tokenProblem);
  } else if (processor?.checkPaymentMethod && (await db.payment.count({ where: { paymentMethod: token } })) > 0) {
    // Another payment took this token already, before the processor heard of it.
    issues.add(loc, 'This confirmation token was used already: make a new one with Stripe.js.');
  }
}
