// The shape Kassa takes for an email address wherever one is given (a user, a customer, an
// organization's contact, a checkout link's prefill): a local part, `@`, and a domain with a dot,
// none of them with spaces or a second `@`. Whether the address receives mail is for the mail to tell.

const pattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Whether `value` has the shape of an email address. */
export function isEmailAddress(value: string): boolean {
  return pattern.test(value);
}
