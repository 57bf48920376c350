// The sign-in page: email and password (scrypt hashes), throttled per account and per address,
// then a session cookie and back to where the user was going (only ever a page of the provider).
import type { Environment } from '../context.ts';
import { checkCredentials, createSession, normalizeEmail } from '../modules/users/service.ts';
import { formBody, redirect, type OAuthRequest, type OAuthResponse } from '../oauth/http.ts';
import { defineOAuthRoutes } from '../oauth/routes.ts';
import { html, page } from './html.ts';
import { announcePrincipalChange } from '../auth/principal-cache.ts';
import type { Db } from '../db/client.ts';
import {
  checkSessionCsrf,
  checkSignInCsrf,
  clearSessionCookie,
  currentSession,
  pagesPath,
  sameOriginPost,
  sessionCookie,
  sessionCsrfToken,
  signInCsrf,
} from './session.ts';

/** Failed attempts allowed per account, and per client address, within the window. */
export const signInThrottle = { windowMs: 15 * 60 * 1000, perAccount: 5, perAddress: 20 };

/** Where to go after signing in: only a page of this environment's provider, never another site. */
function safeReturnTo(environment: Environment, value: string | null): string | null {
  if (!value) return null;
  const authorize = `${pagesPath(environment)}/authorize?`;
  return value.startsWith(authorize) && !value.includes('\\') ? value : null;
}

async function signInPage(environment: Environment, request: OAuthRequest, options: { returnTo: string | null; again?: boolean; email?: string; error?: string; status?: number; headers?: Record<string, string> }) {
  const csrf = await signInCsrf(environment, request);
  const action = `${pagesPath(environment)}/login`;
  const body = html`<h1>Sign in to Kassa</h1>
${options.again ? html`<p class="muted">The application asks you to enter your password again.</p>` : options.returnTo ? html`<p class="muted">An application is asking to connect to your account. Sign in to continue.</p>` : ''}
${options.error ? html`<p class="error" role="alert" id="sign-in-error">${options.error}</p>` : ''}
<form method="post" action="${action}" novalidate>
<input type="hidden" name="csrf_token" value="${csrf.token}">
${options.returnTo ? html`<input type="hidden" name="return_to" value="${options.returnTo}">` : ''}
<label for="email">Email</label>
<input type="email" id="email" name="email" autocomplete="username" required value="${options.email ?? ''}"${options.error ? html` aria-describedby="sign-in-error" aria-invalid="true"` : ''}>
<label for="password">Password</label>
<input type="password" id="password" name="password" autocomplete="current-password" required${options.error ? html` aria-describedby="sign-in-error" aria-invalid="true"` : ''}>
<div class="actions"><button type="submit">Sign in</button></div>
</form>`;
  return page(body, { title: 'Sign in', environment: environment.name, status: options.status, headers: { 'set-cookie': csrf.setCookie, ...options.headers } });
}

/**
 * How long until the account or the address may try again, in seconds; 0 when it may now. The
 * attempt being made is recorded (as failed) before this is asked, so of concurrent guesses only
 * as many as the limit allows get past it, however they interleave.
 */
async function throttledFor(prisma: Db, email: string, ip: string, now: Date): Promise<number> {
  const since = new Date(now.getTime() - signInThrottle.windowMs);
  const wait = async (where: { email: string } | { ip: string }, limit: number) => {
    const failures = await prisma.loginAttempt.findMany({ where: { ...where, succeeded: false, createdAt: { gt: since } }, orderBy: { createdAt: 'desc' }, take: limit + 1, select: { createdAt: true } });
    if (failures.length <= limit) return 0;
    // Free again when the oldest of the last `limit` failures leaves the window.
    return Math.max(1, Math.ceil((failures[limit - 1].createdAt.getTime() + signInThrottle.windowMs - now.getTime()) / 1000));
  };
  return Math.max(await wait({ email }, signInThrottle.perAccount), await wait({ ip }, signInThrottle.perAddress));
}

async function showSignIn(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const returnTo = safeReturnTo(environment, request.query.get('return_to'));
  // `again`: the application asked for the password to be entered now (prompt=login, max_age), so
  // being signed in already is not enough.
  const again = request.query.get('again') === '1';
  const session = await currentSession(environment, request, now);
  if (session && returnTo && !again) return redirect(returnTo);
  if (session && !returnTo) return signedInPage(environment, session);
  return signInPage(environment, request, { returnTo, again });
}

async function signedInPage(environment: Environment, session: NonNullable<Awaited<ReturnType<typeof currentSession>>>) {
  const csrf = await sessionCsrfToken(environment, session, 'sign-out');
  const body = html`<h1>Signed in</h1>
<p>You are signed in as <strong>${session.user.email}</strong>.</p>
<form method="post" action="${pagesPath(environment)}/logout">
<input type="hidden" name="csrf_token" value="${csrf}">
<div class="actions"><button type="submit" class="secondary">Sign out</button></div>
</form>`;
  return page(body, { title: 'Signed in', environment: environment.name });
}

async function signIn(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const form = formBody(request);
  const returnTo = safeReturnTo(environment, form.get('return_to'));
  const email = normalizeEmail(form.get('email') ?? '');
  const password = form.get('password') ?? '';
  if (!sameOriginPost(environment, request) || !(await checkSignInCsrf(environment, request, form.get('csrf_token')))) {
    return signInPage(environment, request, { returnTo, email, status: 403, error: 'This form has expired or did not come from this site. Please sign in again.' });
  }
  if (!email || !password) return signInPage(environment, request, { returnTo, email, status: 400, error: 'Enter your email and your password.' });
  const { prisma } = environment;
  const attempt = await prisma.loginAttempt.create({ data: { email, ip: request.clientIp, succeeded: false, createdAt: now } });
  const wait = await throttledFor(prisma, email, request.clientIp, now);
  if (wait > 0) {
    const minutes = Math.ceil(wait / 60);
    return signInPage(environment, request, {
      returnTo,
      email,
      status: 429,
      headers: { 'retry-after': String(wait) },
      error: `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
    });
  }
  const user = await checkCredentials(prisma, email, password);
  if (!user) return signInPage(environment, request, { returnTo, email, status: 401, error: 'Unknown email or wrong password.' });
  await prisma.loginAttempt.update({ where: { id: attempt.id }, data: { succeeded: true } });
  // A new session on every sign-in: a session id known before signing in is worth nothing after.
  const { token } = await createSession(prisma, environment.config, user.id, now);
  const target = returnTo ? withoutLoginPrompt(returnTo) : `${pagesPath(environment)}/login`;
  return redirect(target, { 'set-cookie': sessionCookie(environment, token) });
}

/** After signing in, `prompt=login` has been honoured: the request goes on without it. */
function withoutLoginPrompt(returnTo: string): string {
  const url = new URL(returnTo, 'http://kassa');
  const prompts = (url.searchParams.get('prompt') ?? '').split(' ').filter((p) => p && p !== 'login');
  if (prompts.length) url.searchParams.set('prompt', prompts.join(' '));
  else url.searchParams.delete('prompt');
  return `${url.pathname}${url.search}`;
}

async function signOut(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const form = formBody(request);
  const session = await currentSession(environment, request, now);
  if (session && sameOriginPost(environment, request) && (await checkSessionCsrf(environment, session, 'sign-out', form.get('csrf_token')))) {
    const { tokenHash } = await environment.prisma.$transaction(async (tx) => {
      const ended = await tx.userSession.update({ where: { id: session.id }, data: { revokedAt: now } });
      await announcePrincipalChange(tx as Db, [ended.tokenHash]);
      return ended;
    });
    environment.principals.forget([tokenHash]);
  }
  return redirect(`${pagesPath(environment)}/login`, { 'set-cookie': clearSessionCookie(environment) });
}

defineOAuthRoutes([
  { method: 'GET', path: '/oauth2/login', handler: showSignIn },
  { method: 'POST', path: '/oauth2/login', handler: signIn },
  { method: 'POST', path: '/oauth2/logout', handler: signOut },
]);
