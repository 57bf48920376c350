// A customer's own email change, through the Customer Portal. The new address becomes theirs only
// when they type back the code sent to it, so a customer can never hold an address they do not
// receive mail at, and no checkout is ever attached to them through one.
//
// Invariants:
// - Asking changes nothing but the pending request: the customer's email stays until the code is
//   typed back. A new request ends the pending one.
// - The answer to a request is the same whether or not another customer of the organization
//   holds the address: a code is sent when it is free; when it is taken, the mail tells the
//   address's owner so and no code exists that could apply it.
// - A code is 6 digits, kept only as an HMAC under an environment key, compared in constant time,
//   good for 15 minutes and for one use; 5 wrong codes end the request; 5 requests per customer
//   per hour.
// - Confirming locks the customer, then the address, so of two confirms one applies and the other
//   finds nothing pending; an address taken meanwhile is refused.
import { createHmac, randomInt, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Context } from '../../context.ts';
import type { Db } from '../../db/client.ts';
import type { CustomerEmailChange } from '../../generated/prisma/client.ts';
import { linkKey } from '../../auth/signed-links.ts';
import { KassaError, RequestValidationError, ValidationIssues } from '../../graphql/errors.ts';
import { renderEmail } from '../../email/templates/index.ts';
import { checkEmail, lockCustomer, lockCustomerIdentity, recordCustomerEvents as record, type CustomerKey } from './service.ts';

export const emailCodeLifetimeMs = 15 * 60_000;
export const maxCodeAttempts = 5;
export const maxEmailChangesPerHour = 5;

export class TooManyEmailChangesError extends KassaError {
  constructor() {
    super(`At most ${maxEmailChangesPerHour} email changes may be asked for in an hour. Try again later.`, 'TOO_MANY_REQUESTS', 429, 'TooManyRequests');
  }
}

const codeKey = (db: Db) => linkKey(db, 'customer-email-codes');

/** The stored form of a code: bound to its request, so a hash says nothing about another request. */
function codeHash(key: Buffer, changeId: string, code: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(createHmac('sha256', key).update(`${changeId}.${code}`).digest());
}

function newCode(): string {
  return String(randomInt(0, 1_000_000)).padStart(6, '0');
}

/** The request now pending for the customer, if any: the newest one neither applied nor ended. */
export async function pendingEmailChange(db: Db, customerId: string) {
  return db.customerEmailChange.findFirst({ where: { customerId, verifiedAt: null, invalidatedAt: null }, orderBy: { createdAt: 'desc' } });
}

/** Whether the customer must prove `email` before it becomes theirs; a verified address may change case freely. */
function needsVerification(customer: { email: string; emailVerified: boolean }, email: string): boolean {
  return !(customer.emailVerified && customer.email.toLowerCase() === email.trim().toLowerCase());
}

export function checkRequestedEmail(issues: ValidationIssues, email: string | null | undefined): void {
  checkEmail(issues, email);
  if (email === null) issues.add(['input', 'email'], 'A customer always has an email address.');
}

/**
 * Records a pending change to `requested` and mails the new address: the code when the address is
 * free in the organization, a notice without one when another customer holds it. Answers nothing
 * that tells the two apart. The customer's own verified address only changes case, at once.
 */
export async function requestEmailChange(ctx: Context, key: CustomerKey, requested: string): Promise<void> {
  const email = requested.trim();
  const message = await ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const customer = await lockCustomer(ctx, db, key);
    if (!needsVerification(customer, email)) {
      if (customer.email !== email) await record(ctx, db, ['customer.updated'], await db.customer.update({ where: { id: customer.id }, data: { email } }));
      return null;
    }
    const now = ctx.now();
    await checkRequestsPerHour(db, customer.id, now);
    await db.customerEmailChange.updateMany({ where: { customerId: customer.id, verifiedAt: null, invalidatedAt: null }, data: { invalidatedAt: now } });
    const holder = await db.customer.findFirst({
      where: { organizationId: customer.organizationId, activeEmail: email.toLowerCase(), id: { not: customer.id } },
      select: { id: true },
    });
    const id = randomUUID();
    const code = newCode();
    // A taken address gets a request too, with a code no one is ever told: confirming it fails as
    // any wrong code does, so no answer tells a taken address from a free one.
    const stored = holder ? newCode() : code;
    await db.customerEmailChange.create({
      data: { id, customerId: customer.id, email, codeHash: codeHash(await codeKey(db), id, stored), expiresAt: new Date(now.getTime() + emailCodeLifetimeMs), createdAt: now },
    });
    const organization = await db.organization.findUniqueOrThrow({ where: { id: customer.organizationId }, select: { name: true } });
    // The name goes into a header line: it keeps to one line.
    const name = organization.name.replace(/[\r\n]+/g, ' ');
    return holder ? takenNotice(email, name) : codeMessage(email, name, code);
  });
  if (message) await ctx.environment.email.send(message);
}

async function checkRequestsPerHour(db: Db, customerId: string, now: Date) {
  const recent = await db.customerEmailChange.count({ where: { customerId, createdAt: { gt: new Date(now.getTime() - 3600_000) } } });
  if (recent >= maxEmailChangesPerHour) throw new TooManyEmailChangesError();
}

function codeMessage(to: string, organization: string, code: string) {
  return renderEmail('email_code', to, { organization, code, minutes: emailCodeLifetimeMs / 60_000 });
}

function takenNotice(to: string, organization: string) {
  return renderEmail('email_taken', to, { organization });
}

// Each check below refuses with the error a client can act on; a refusal that must be remembered
// (a wrong code counts) is returned rather than thrown, so the transaction that records it commits.

function checkChangePending(change: CustomerEmailChange | null): asserts change is CustomerEmailChange {
  if (!change) throw RequestValidationError.at(['input', 'code'], 'No email change is pending: ask for a new code.', 'email_change_not_pending');
}

function checkCodeNotExpired(ctx: Context, change: CustomerEmailChange) {
  if (change.expiresAt <= ctx.now()) throw RequestValidationError.at(['input', 'code'], 'This code has expired: ask for a new one.', 'code_expired');
}

function codeMatches(key: Buffer, change: CustomerEmailChange, code: string): boolean {
  return timingSafeEqual(Buffer.from(codeHash(key, change.id, code.trim())), Buffer.from(change.codeHash));
}

function wrongCode(attemptsLeft: number) {
  return attemptsLeft > 0
    ? RequestValidationError.at(['input', 'code'], `This code is not right. ${attemptsLeft} ${attemptsLeft === 1 ? 'try' : 'tries'} left.`, 'code_invalid')
    : RequestValidationError.at(['input', 'code'], 'This code is not right, and that was the last try: ask for a new code.', 'code_invalid');
}

async function checkEmailStillFree(db: Db, customer: { id: string; organizationId: string }, email: string): Promise<RequestValidationError | null> {
  const holder = await db.customer.count({ where: { organizationId: customer.organizationId, activeEmail: email.toLowerCase(), id: { not: customer.id } } });
  return holder ? RequestValidationError.at(['input', 'code'], 'This email address belongs to another customer account and cannot be used.', 'email_unavailable') : null;
}

/**
 * Applies the pending change when `code` is its code: the customer then holds the new address,
 * verified, and customer.updated is recorded. Every refusal leaves the customer as it was.
 */
export async function confirmEmailChange(ctx: Context, key: CustomerKey, code: string, query: object) {
  const outcome = await ctx.prisma.$transaction(async (tx) => {
    const db = tx as Db;
    const customer = await lockCustomer(ctx, db, key);
    const change = await pendingEmailChange(db, customer.id);
    checkChangePending(change);
    checkCodeNotExpired(ctx, change);
    if (!codeMatches(await codeKey(db), change, code)) {
      const attempts = change.attempts + 1;
      await db.customerEmailChange.update({ where: { id: change.id }, data: { attempts, invalidatedAt: attempts >= maxCodeAttempts ? ctx.now() : null } });
      return { refused: wrongCode(maxCodeAttempts - attempts) };
    }
    await lockCustomerIdentity(db, customer.organizationId, { email: change.email });
    const taken = await checkEmailStillFree(db, customer, change.email);
    if (taken) {
      await db.customerEmailChange.update({ where: { id: change.id }, data: { invalidatedAt: ctx.now() } });
      return { refused: taken };
    }
    await db.customerEmailChange.update({ where: { id: change.id }, data: { verifiedAt: ctx.now() } });
    const updated = await db.customer.update({
      where: { id: customer.id },
      data: { email: change.email, activeEmail: change.email.toLowerCase(), emailVerified: true },
    });
    await record(ctx, db, ['customer.updated'], updated);
    return { customer: await db.customer.findUniqueOrThrow({ ...query, where: { id: customer.id } }) };
  });
  if ('refused' in outcome) throw outcome.refused;
  return outcome.customer;
}
