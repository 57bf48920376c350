// Signing up with an email address and a password, and proving the address: through GraphQL and
// through the pages, in both environments. From the attacker's side: an existing address answers
// as a new one does, a verification link works once, for its own user, until it expires, and in
// its own environment; unverified users create no organization; sign-ups are rate limited.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { EnvironmentName } from '../../src/config.ts';
import type { MemoryTransport } from '../../src/email/transport.ts';
import { Browser as FormBrowser, formFields, userSessionToken } from '../helpers/oauth.ts';
import { restClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';

const t = useTestServer({ env: { EMAIL_TRANSPORT: 'memory', JOB_POLL_INTERVAL_MS: '20' }, organizations: { shop: 'production' } });

const address = (name = 'new') => `${name}-${randomUUID()}@example.com`;
const password = 'a long enough passphrase';
const mailbox = (environment: EnvironmentName) => t.server.kassa.environments[environment].environment.email as MemoryTransport;

/** The mail sent to `to` in the environment, once there is one. */
async function mailTo(environment: EnvironmentName, to: string, count = 1) {
  return eventually(async () => mailbox(environment).sent.filter((m) => m.to === to), (mails) => mails.length >= count, `${count} mail(s) to ${to}`);
}

const linkIn = (text: string) => /(https?:\/\/\S+\/verify-email\?token=\S+)/.exec(text)?.[1];

function gql(environment: EnvironmentName, query: string, variables: Record<string, unknown>) {
  return fetch(`${t.server.base(environment)}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) }).then(
    async (r) => ({ status: r.status, body: (await r.json()) as { data?: any; errors?: any } }),
  );
}

const signUp = (environment: EnvironmentName, email: string, pass = password) =>
  gql(environment, 'mutation ($email: String!, $password: String!) { signUp(email: $email, password: $password) { email } }', { email, password: pass });

const verifyByApi = (environment: EnvironmentName, token: string) => gql(environment, 'mutation ($token: String!) { userEmailVerify(token: $token) { email emailVerified } }', { token });

/** Follows a verification link as a person does: opens it, then presses its button. */
async function verifyByPage(link: string) {
  const browser = new FormBrowser(t.server.url);
  const shown = await browser.get(link);
  expect(shown.status).toBe(200);
  const action = new URL(link);
  return browser.post(`${action.origin}${action.pathname}`, formFields(shown.text));
}

const createOrganization = (environment: EnvironmentName, token: string, slug = `org-${randomUUID().slice(0, 8)}`) => restClient(t.server.base(environment), token)('POST', '/organizations/', { name: 'My shop', slug });

describe.each(['production', 'sandbox'] as const)('signing up in %s', (environment) => {
  it('sign-up, then the link, then an organization: refused with 403 until the address is verified', async () => {
    const email = address();
    const answer = await signUp(environment, email.toUpperCase());
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { signUp: { email } } });
    const [mail] = await mailTo(environment, email);
    expect(mail.subject).toBe('Confirm your email address for Kassa');
    expect(mail.html).toContain('Confirm my email address');
    const link = linkIn(mail.text)!;
    expect(link).toContain(environment === 'sandbox' ? '/sandbox/oauth2/verify-email?token=' : '/oauth2/verify-email?token=');

    // The user may sign in, but creates no organization yet.
    const session = await userSessionToken(t.server, environment, email, password);
    const refused = await createOrganization(environment, session);
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'NotPermitted', detail: expect.stringContaining('Verify your email address before creating an organization') });
    expect(await t.server.kassa.environments[environment].environment.prisma.organizationMember.count({ where: { user: { email } } })).toBe(0);

    const confirmed = await verifyByPage(link);
    expect(confirmed.status).toBe(200);
    expect(confirmed.text).toContain('Email confirmed');
    const created = await createOrganization(environment, session);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  });
});

describe('the pages', () => {
  it('the sign-up page signs up with its CSRF token, and tells a weak password, a malformed address and a forged form apart', async () => {
    const browser = new FormBrowser(t.server.url);
    const form = await browser.get(`${t.server.url}/oauth2/sign-up`);
    expect(form.status).toBe(200);
    expect(form.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(form.headers.get('x-frame-options')).toBe('DENY');
    const fields = formFields(form.text);
    const post = (values: Record<string, string>, headers?: Record<string, string>) => browser.post(`${t.server.url}/oauth2/sign-up`, { ...fields, ...values }, headers);

    const weak = await post({ email: address(), password: 'short' });
    expect(weak.status).toBe(422);
    expect(weak.text).toContain('at least 12 characters');
    const malformed = await post({ email: 'not-an-address', password });
    expect(malformed.status).toBe(422);
    expect(malformed.text).toContain('Enter a valid email address.');
    const crossSite = await post({ email: address(), password }, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    const forged = await post({ email: address(), password, csrf_token: 'forged' });
    expect(forged.status).toBe(403);
    const prisma = t.server.kassa.environments.production.environment.prisma;
    expect(await prisma.user.count({ where: { email: 'not-an-address' } })).toBe(0);

    const email = address('page');
    const done = await post({ email, password });
    expect(done.status).toBe(200);
    expect(done.text).toContain('Check your email');
    expect(await prisma.user.findUnique({ where: { email }, select: { emailVerified: true } })).toEqual({ emailVerified: false });
    const [mail] = await mailTo('production', email);
    expect(linkIn(mail.text)).toBeDefined();
  });

  it('opening a verification link verifies nothing; only its page’s button does', async () => {
    const email = address();
    await signUp('production', email);
    const link = linkIn((await mailTo('production', email))[0].text)!;
    expect((await new FormBrowser(t.server.url).get(link)).status).toBe(200);
    const prisma = t.server.kassa.environments.production.environment.prisma;
    expect((await prisma.user.findUniqueOrThrow({ where: { email } })).emailVerified).toBe(false);
    // The button's form from another site is refused.
    const shown = await new FormBrowser(t.server.url).get(link);
    const refused = await new FormBrowser(t.server.url).post(`${t.server.url}/oauth2/verify-email`, formFields(shown.text), { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(refused.status).toBe(403);
    expect((await prisma.user.findUniqueOrThrow({ where: { email } })).emailVerified).toBe(false);
  });
});

describe("the attacker's side", () => {
  it('signing up with an address that has an account answers the same, changes nothing, and mails its owner', async () => {
    const taken = await signUp('production', t.shop.userEmail, 'another long passphrase');
    const fresh = await signUp('production', address());
    expect(taken.status).toBe(fresh.status);
    expect(Object.keys(taken.body.data.signUp)).toEqual(Object.keys(fresh.body.data.signUp));
    expect(taken.body).toEqual({ data: { signUp: { email: t.shop.userEmail } } });
    const [mail] = await mailTo('production', t.shop.userEmail);
    expect(mail.subject).toBe('You already have a Kassa account');
    expect(linkIn(mail.text)).toBeUndefined();
    // The owner's password is still theirs; the attacker's is nobody's.
    expect(await userSessionToken(t.server, 'production', t.shop.userEmail, t.shop.userPassword)).toMatch(/_us_/);
    await expect(userSessionToken(t.server, 'production', t.shop.userEmail, 'another long passphrase')).rejects.toThrow();
  });

  it('signing up again before verifying mails a new link and keeps the first password', async () => {
    const email = address('again');
    await signUp('production', email);
    await signUp('production', email, 'a different passphrase');
    const mails = await mailTo('production', email, 2);
    expect(mails.map((m) => m.subject)).toEqual(['Confirm your email address for Kassa', 'Confirm your email address for Kassa']);
    expect(await userSessionToken(t.server, 'production', email, password)).toMatch(/_us_/);
    expect((await verifyByApi('production', new URL(linkIn(mails[1].text)!).searchParams.get('token')!)).body.data.userEmailVerify).toEqual({ email, emailVerified: true });
  });

  it('a link works once: used again it is refused with token_used, by the page and by the API', async () => {
    const email = address();
    await signUp('production', email);
    const link = linkIn((await mailTo('production', email))[0].text)!;
    const token = new URL(link).searchParams.get('token')!;
    const first = await verifyByApi('production', token);
    expect(first.body.data.userEmailVerify).toEqual({ email, emailVerified: true });
    const again = await verifyByApi('production', token);
    expect(again.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['token'], type: 'token_used' }] });
    const page = await verifyByPage(link);
    expect(page.status).toBe(400);
    expect(page.text).toContain('already used');
  });

  it('a link expires after 24 hours', async () => {
    const email = address();
    await signUp('production', email);
    const token = new URL(linkIn((await mailTo('production', email))[0].text)!).searchParams.get('token')!;
    t.server.clock.now = new Date(Date.now() + 24 * 3600_000 + 1000);
    try {
      const late = await verifyByApi('production', token);
      expect(late.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ type: 'token_expired' }] });
    } finally {
      t.server.clock.now = null;
    }
    expect((await t.server.kassa.environments.production.environment.prisma.user.findUniqueOrThrow({ where: { email } })).emailVerified).toBe(false);
  });

  it("a token verifies only its own user: another user's secret under one's id, a made-up token or another environment's token is refused", async () => {
    const [mine, theirs] = [address('mine'), address('theirs')];
    await signUp('production', mine);
    await signUp('production', theirs);
    const tokenOf = async (email: string) => new URL(linkIn((await mailTo('production', email))[0].text)!).searchParams.get('token')!;
    const [myToken, theirToken] = [await tokenOf(mine), await tokenOf(theirs)];
    const spliced = `${myToken.split('.')[0]}.${theirToken.split('.')[1]}`;
    for (const token of [spliced, `${randomUUID()}.${theirToken.split('.')[1]}`, 'garbage', '']) {
      const refused = await verifyByApi('production', token);
      expect(refused.body.errors[0].extensions, token).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ type: 'token_invalid' }] });
    }
    // A production token means nothing in sandbox.
    expect((await verifyByApi('sandbox', theirToken)).body.errors[0].extensions).toMatchObject({ issues: [{ type: 'token_invalid' }] });
    const prisma = t.server.kassa.environments.production.environment.prisma;
    expect((await prisma.user.findMany({ where: { email: { in: [mine, theirs] } }, select: { emailVerified: true } })).map((u) => u.emailVerified)).toEqual([false, false]);
    expect((await verifyByApi('production', theirToken)).body.data.userEmailVerify).toEqual({ email: theirs, emailVerified: true });
    expect((await prisma.user.findUniqueOrThrow({ where: { email: mine } })).emailVerified).toBe(false);
  });

  it('bad input writes nothing: a weak password, a malformed address', async () => {
    const email = address();
    const weak = await signUp('production', email, 'short');
    expect(weak.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['password'], type: 'string_too_short' }] });
    const malformed = await signUp('production', 'someone@', password);
    expect(malformed.body.errors[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['email'] }] });
    const prisma = t.server.kassa.environments.production.environment.prisma;
    expect(await prisma.user.count({ where: { email: { in: [email, 'someone@'] } } })).toBe(0);
    expect(await prisma.emailToken.count({ where: { email } })).toBe(0);
  });

  it('one address may sign up 3 times an hour, whether or not it has an account; the 4th gets 429', async () => {
    const email = address('limited');
    for (let i = 0; i < 3; i++) expect((await signUp('sandbox', email)).body.data.signUp.email).toBe(email);
    const fourth = await signUp('sandbox', email);
    expect(fourth.body.errors[0].extensions.code).toBe('TOO_MANY_REQUESTS');
    expect(fourth.body.errors[0].extensions.retryAfter).toBeGreaterThan(0);
    expect(await t.server.kassa.environments.sandbox.environment.prisma.emailToken.count({ where: { email } })).toBe(3);
  });
});
