// The errors a checkout's operations raise, beyond bad input and not-found.
import { KassaError } from '../../graphql/errors.ts';

export class CheckoutError extends KassaError {}
export const notOpen = (detail: string) => new CheckoutError(detail, 'NOT_OPEN_CHECKOUT', 403, 'NotOpenCheckout');
export const expired = () => new CheckoutError('This checkout has expired; start a new one.', 'EXPIRED_CHECKOUT', 410, 'ExpiredCheckoutError');
export const paymentError = (detail: string) => new CheckoutError(detail, 'PAYMENT_ERROR', 400, 'PaymentError');
