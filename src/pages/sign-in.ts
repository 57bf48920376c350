// The sign-in page: email and password (scrypt hashes), throttled per account and per address,
// then a session cookie and back to where the user was going (only ever a page of the provider).
import type { Environment } from '../context.ts';
import { attemptSignIn, createSession, endUserSession, normalizeEmail } from '../auth/sessions.ts';
import { formBody, redirect, type OAuthRequest, type OAuthResponse } from '../oauth/http.ts';
import type { OAuthRoute } from '../oauth/routes.ts';
import { html, page } from './html.ts';
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
</form>
<p class="muted">No account yet? <a href="${pagesPath(environment)}/sign-up">Sign up</a>.</p>`;
  return page(body, { title: 'Sign in', environment: environment.name, status: options.status, headers: { 'set-cookie': csrf.setCookie, ...options.headers } });
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
  const outcome = await attemptSignIn(environment.prisma, email, password, request.clientIp, now);
  if (outcome.kind === 'throttled') {
    const minutes = Math.ceil(outcome.retryAfterSeconds / 60);
    return signInPage(environment, request, {
      returnTo,
      email,
      status: 429,
      headers: { 'retry-after': String(outcome.retryAfterSeconds) },
      error: `Too many failed sign-in attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
    });
  }
  if (outcome.kind === 'refused') return signInPage(environment, request, { returnTo, email, status: 401, error: 'Unknown email or wrong password.' });
  const { user } = outcome;
  // A new session on every sign-in: a session id known before signing in is worth nothing after.
  const { token } = await createSession(environment.prisma, environment.config, user.id, now);
  const target = returnTo ? withoutLoginPrompt(returnTo) : `${pagesPath(environment)}/login`;
  return redirect(target, { 'set-cookie': sessionCookie(environment, token) });
}

/**
 * After signing in, `prompt=login` and `max_age` have been honoured by the password just entered:
 * the request goes on without them (with them, `max_age=0` would ask for the password for ever).
 */
function withoutLoginPrompt(returnTo: string): string {
  const url = new URL(returnTo, 'http://kassa');
  const prompts = (url.searchParams.get('prompt') ?? '').split(' ').filter((p) => p && p !== 'login');
  if (prompts.length) url.searchParams.set('prompt', prompts.join(' '));
  else url.searchParams.delete('prompt');
  url.searchParams.delete('max_age');
  return `${url.pathname}${url.search}`;
}

async function signOut(environment: Environment, request: OAuthRequest, now: Date): Promise<OAuthResponse> {
  const form = formBody(request);
  const session = await currentSession(environment, request, now);
  // A sign-out that is not this site's own form changes nothing, the cookie included.
  if (!session || !sameOriginPost(environment, request) || !(await checkSessionCsrf(environment, session, 'sign-out', form.get('csrf_token')))) {
    return redirect(`${pagesPath(environment)}/login`);
  }
  await endUserSession(environment, session.id, now);
  return redirect(`${pagesPath(environment)}/login`, { 'set-cookie': clearSessionCookie(environment) });
}

export const signInPages: OAuthRoute[] = [
  { method: 'GET', path: '/oauth2/login', handler: showSignIn },
  { method: 'POST', path: '/oauth2/login', handler: signIn },
  { method: 'POST', path: '/oauth2/logout', handler: signOut },
];
