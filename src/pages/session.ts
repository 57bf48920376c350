// The browser side of signing in: the session cookie and CSRF tokens of the pages.
// - The session cookie holds a user session token (`<prefix>_us_…`, stored hashed like every token).
//   It is HttpOnly, Secure and SameSite=Lax (Lax so that a client's top-level redirect to the
//   authorization page carries it), scoped to the environment's page path, one name per environment.
// - Forms carry a CSRF token: an HMAC under a key of the environment, of the session id (signed-in
//   forms) or of a random value also set as a cookie (the sign-in form, before any session exists).
//   A forged cross-site POST has neither the cookie's value nor the key.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Environment } from '../context.ts';
import { csrfKey, liveUserSession, type BrowserSession } from '../auth/sessions.ts';
import { cookies, type OAuthRequest } from '../oauth/http.ts';

export const sessionLifetimeSeconds = 7 * 24 * 3600;

/** Where the environment's pages live: `/oauth2` or `/sandbox/oauth2`. */
export function pagesPath(environment: Environment): string {
  return `${environment.name === 'sandbox' ? '/sandbox' : ''}/oauth2`;
}

function sessionCookieName(environment: Environment): string {
  return environment.name === 'sandbox' ? 'kassa_sandbox_session' : 'kassa_session';
}

function csrfCookieName(environment: Environment): string {
  return environment.name === 'sandbox' ? 'kassa_sandbox_csrf' : 'kassa_csrf';
}

function cookie(environment: Environment, name: string, value: string, maxAgeSeconds: number, sameSite: 'Lax' | 'Strict'): string {
  return `${name}=${value}; Path=${pagesPath(environment)}; Max-Age=${maxAgeSeconds}; HttpOnly; Secure; SameSite=${sameSite}`;
}

export function sessionCookie(environment: Environment, token: string): string {
  return cookie(environment, sessionCookieName(environment), token, sessionLifetimeSeconds, 'Lax');
}

export function clearSessionCookie(environment: Environment): string {
  return cookie(environment, sessionCookieName(environment), '', 0, 'Lax');
}

/** The signed-in user of the request, from the session cookie, if the session is live. */
export async function currentSession(environment: Environment, request: OAuthRequest, now: Date): Promise<BrowserSession | null> {
  const token = cookies(request).get(sessionCookieName(environment));
  return token ? liveUserSession(environment, token, now) : null;
}

function mac(key: Buffer, purpose: string, subject: string): string {
  return createHmac('sha256', key).update(`${purpose}:${subject}`).digest('base64url');
}

function same(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** The CSRF token of a form shown to a signed-in user. */
export async function sessionCsrfToken(environment: Environment, session: BrowserSession, purpose: string): Promise<string> {
  return mac(await csrfKey(environment), purpose, session.id);
}

export async function checkSessionCsrf(environment: Environment, session: BrowserSession, purpose: string, given: string | null): Promise<boolean> {
  return given !== null && same(given, mac(await csrfKey(environment), purpose, session.id));
}

/**
 * The CSRF token of the sign-in form, and the cookie that goes with it. The cookie is reused while
 * it lasts, so two tabs showing the form both stay valid.
 */
export async function signInCsrf(environment: Environment, request: OAuthRequest): Promise<{ token: string; setCookie: string }> {
  const existing = cookies(request).get(csrfCookieName(environment));
  const value = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : randomBytes(32).toString('base64url');
  return { token: mac(await csrfKey(environment), 'sign-in', value), setCookie: cookie(environment, csrfCookieName(environment), value, 3600, 'Strict') };
}

export async function checkSignInCsrf(environment: Environment, request: OAuthRequest, given: string | null): Promise<boolean> {
  const value = cookies(request).get(csrfCookieName(environment));
  return given !== null && value !== undefined && same(given, mac(await csrfKey(environment), 'sign-in', value));
}

/**
 * A POST from a page must come from the page's own origin when the browser says where it comes
 * from: defence in depth beside the CSRF token. Sec-Fetch-Site is the browser's own verdict and is
 * read first; a browser without it is judged by Origin. A page with a strict referrer policy may
 * send `Origin: null` for a same-origin post, which only Sec-Fetch-Site can vouch for.
 */
export function sameOriginPost(environment: Environment, request: OAuthRequest): boolean {
  const site = request.facts.fetchSite;
  if (typeof site === 'string') return site === 'same-origin' || site === 'none';
  const origin = request.facts.origin;
  if (origin === undefined) return true;
  return origin === new URL(environment.publicUrl).origin;
}

/**
 * A POST whose form token anyone holding a link can read (signing in from a portal link): the
 * browser must say where it comes from, so a post carrying neither Sec-Fetch-Site nor Origin is
 * refused too. Every current browser sends at least one of them on a form post.
 */
export function vouchedSameOriginPost(environment: Environment, request: OAuthRequest): boolean {
  if (request.facts.fetchSite === undefined && request.facts.origin === undefined) return false;
  return sameOriginPost(environment, request);
}

/**
 * The token of a form whose authority is a secret the page already holds (a checkout's client
 * secret, a customer's portal session), with no sign-in session to bind it to: an HMAC of the
 * subject under the environment's key.
 */
export async function boundFormToken(environment: Environment, subject: string): Promise<string> {
  return mac(await csrfKey(environment), 'form', subject);
}

export async function checkBoundFormToken(environment: Environment, subject: string, given: string | null): Promise<boolean> {
  return given !== null && same(given, await boundFormToken(environment, subject));
}
