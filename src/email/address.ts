// The shape Kassa takes for an email address wherever one is given (a user, a customer, an
// organization's contact, a checkout's buyer, a checkout link's prefill): at most 320 characters
// (a 64-character local part, `@`, a 255-character domain), then a local part, `@`, and a domain
// with a dot, none of them with spaces or a second `@`. Whether the address receives mail is for
// the mail to tell.

export const maxEmailLength = 320;

const pattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * Whether `value` has the shape of an email address. The length is checked first: on a long domain
 * of many dots and no valid end the pattern backtracks in time quadratic in the length (80,000
 * characters took seconds), and a buyer's page sends this value without signing in.
 */
export function isEmailAddress(value: string): boolean {
  return value.length <= maxEmailLength && pattern.test(value);
}
