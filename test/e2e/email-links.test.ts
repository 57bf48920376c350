// The one-time links Kassa mails (src/auth/email-tokens.ts), through the two ways of asking for
// one: signing up (a link that verifies the address, GraphQL) and the customer portal's sign-in
// page. Each refusal is checked whole (where, what, which reason); the request limits to the
// second, per address and per client address (the server trusts 127.0.0.1 as a proxy, so each test
// asks from its own addresses), and each on its own hour of the server's clock.
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { MemoryTransport } from '../../src/email/transport.ts';
import { Browser as FormBrowser, formFields } from '../helpers/oauth.ts';
import { clockFrom, graphqlClient } from '../helpers/server.ts';
import { useTestServer } from '../helpers/use-test-server.ts';
import { eventually } from '../helpers/waiting.ts';

const t = useTestServer({
  env: { EMAIL_TRANSPORT: 'memory', JOB_POLL_INTERVAL_MS: '20', TRUSTED_PROXIES: '127.0.0.1' },
  organizations: { shop: 'production' },
  resetClockAfterEach: true,
});

const environment = () => t.server.kassa.environments.production.environment;
const mailbox = () => environment().email as MemoryTransport;
const address = (name: string) => `${name}-${randomUUID()}@example.com`;
const password = 'a long enough passphrase';

/** A GraphQL request from the client address `ip`. */
const gql = (query: string, variables: Record<string, unknown>, ip = '10.9.9.9') => graphqlClient(t.server.base())(query, variables, { 'x-forwarded-for': ip });

const signUp = (email: string, ip?: string) => gql('mutation ($email: String!, $password: String!) { signUp(email: $email, password: $password) { email } }', { email, password }, ip);
const verify = (token: string) => gql('mutation ($token: String!) { userEmailVerify(token: $token) { email emailVerified } }', { token });

/** The text of the mails sent to `to`, once there are `count`. */
async function mailsTo(to: string, count = 1): Promise<string[]> {
  const mails = await eventually(async () => mailbox().sent.filter((m) => m.to === to), (sent) => sent.length >= count, `${count} mail(s) to ${to}`);
  return mails.map((m) => m.text);
}

const tokenIn = (text: string) => new URL(/(https?:\/\/\S+\?token=\S+)/.exec(text)![1]).searchParams.get('token')!;

/** Signs `email` up and answers the token of the link mailed to it. */
async function verificationToken(email: string): Promise<string> {
  expect((await signUp(email)).body.data?.signUp).toEqual({ email });
  return tokenIn((await mailsTo(email))[0]);
}

const refusal = (type: 'token_invalid' | 'token_used' | 'token_expired') => {
  const msg = {
    token_invalid: 'This link is not valid: ask for a new one.',
    token_used: 'This link was already used: each link works once.',
    token_expired: 'This link has expired: ask for a new one.',
  }[type];
  return { code: 'BAD_USER_INPUT', issues: [{ loc: ['token'], msg, type }] };
};

const startClock = (hours: number) => clockFrom(t.server, hours);

let slug: string;
beforeAll(async () => {
  slug = (await t.shop.api('GET', `/organizations/${t.shop.organizationId}`)).body.slug;
});

const portalPage = () => `${t.server.url}/portal/${slug}/sign-in`;

/** Asks for a portal sign-in link on the page from `ip`. */
async function askPortalLink(email: string, ip = '10.9.9.9') {
  const browser = new FormBrowser(t.server.url);
  const form = await browser.get(portalPage());
  expect(form.status).toBe(200);
  return browser.post(portalPage(), { ...formFields(form.text), email }, { 'x-forwarded-for': ip });
}

async function portalCustomer(): Promise<string> {
  const email = address('customer');
  expect((await t.shop.api('POST', '/customers/', { email, name: 'Ada' })).status).toBe(201);
  return email;
}

describe('a link’s token', () => {
  it('is refused whole when malformed, with something around it, or under another id, and each refusal says where and why', async () => {
    const token = await verificationToken(address('format'));
    const [id, secret] = token.split('.');
    const other = await verificationToken(address('other'));
    for (const forged of ['garbage', '', `x${token}`, `${token}x`, `${token}.${secret}`, `${randomUUID()}.${secret}`, `${other.split('.')[0]}.${secret}`, `${id}.${other.split('.')[1]}`, `${id}.${'A'.repeat(43_000)}`]) {
      const refused = await verify(forged);
      expect(refused.body.errors?.[0].extensions, forged).toMatchObject(refusal('token_invalid'));
    }
    // A NUL is refused before any link is looked up, as in any text.
    expect((await verify(`${token}\u0000`)).body.errors?.[0].extensions).toMatchObject({ code: 'BAD_USER_INPUT', issues: [{ loc: ['token'], type: 'string_nul' }] });
    // Surrounding spaces, as a pasted link may carry, are not part of it.
    expect((await verify(` ${token}\n`)).body.data?.userEmailVerify).toMatchObject({ emailVerified: true });
    expect((await verify(token)).body.errors?.[0].extensions).toMatchObject(refusal('token_used'));
  });

  it('works only for what it was mailed for: a portal sign-in link verifies no address, and a verification link signs nobody in', async () => {
    const customer = await portalCustomer();
    expect((await askPortalLink(customer)).status).toBe(200);
    const portalToken = tokenIn((await mailsTo(customer))[0]);
    expect((await verify(portalToken)).body.errors?.[0].extensions).toMatchObject(refusal('token_invalid'));

    const verification = await verificationToken(address('purpose'));
    const shown = await new FormBrowser(t.server.url).get(`${portalPage()}?token=${encodeURIComponent(verification)}`);
    expect(shown.status).toBe(400);
    expect(shown.text).toContain('This link is not valid: ask for a new one.');
    // Both still work for what they were made for.
    expect((await verify(verification)).body.data?.userEmailVerify).toMatchObject({ emailVerified: true });
    expect((await new FormBrowser(t.server.url).get(`${portalPage()}?token=${encodeURIComponent(portalToken)}`)).status).toBe(200);
  });

  it('verifies an address until 24 hours after it was mailed, the last millisecond included', async () => {
    const at = startClock(30);
    const [early, late] = [address('early'), address('late')];
    const [earlyToken, lateToken] = [await verificationToken(early), await verificationToken(late)];
    at(24 * 3600 - 0.001);
    expect((await verify(earlyToken)).body.data?.userEmailVerify).toEqual({ email: early, emailVerified: true });
    at(24 * 3600);
    expect((await verify(lateToken)).body.errors?.[0].extensions).toMatchObject(refusal('token_expired'));
  });

  it('signs a customer in to the portal until 15 minutes after it was mailed', async () => {
    const at = startClock(32);
    const customer = await portalCustomer();
    await askPortalLink(customer);
    const link = `${portalPage()}?token=${encodeURIComponent(tokenIn((await mailsTo(customer))[0]))}`;
    at(15 * 60 - 0.001);
    expect((await new FormBrowser(t.server.url).get(link)).status).toBe(200);
    at(15 * 60);
    const expired = await new FormBrowser(t.server.url).get(link);
    expect(expired.status).toBe(400);
    expect(expired.text).toContain('This link has expired: ask for a new one.');
  });

  it('of two uses at once, one verifies and the other is told the link was used', async () => {
    const token = await verificationToken(address('race'));
    const answers = await Promise.all([verify(token), verify(token), verify(token)]);
    expect(answers.filter((a) => a.body.data?.userEmailVerify?.emailVerified === true)).toHaveLength(1);
    expect(answers.filter((a) => a.body.errors?.[0].extensions.issues?.[0].type === 'token_used')).toHaveLength(2);
  });
});

describe('asking for links', () => {
  it('allows an address three sign-ups an hour, then says when the oldest leaves the window, in the header, the error and its words', async () => {
    const at = startClock(34);
    const email = address('limited');
    for (const minute of [0, 10, 20]) {
      at(minute * 60);
      expect((await signUp(email, '10.7.0.1')).body.data?.signUp).toEqual({ email });
    }
    at(30 * 60 + 30);
    const limited = await signUp(email, '10.7.0.2');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1770');
    expect(limited.body.errors).toEqual([
      expect.objectContaining({
        message: 'Too many requests for this address or from this network. Try again in 30 minutes.',
        extensions: expect.objectContaining({ code: 'TOO_MANY_REQUESTS', retryAfter: 1770 }),
      }),
    ]);
    // The refused request is not counted: at 60:00 the first request has left the window (its
    // start excluded), so one more is allowed, and then none until 70:00.
    at(60 * 60);
    expect((await signUp(email, '10.7.0.3')).body.data?.signUp).toEqual({ email });
    expect((await signUp(email, '10.7.0.4')).headers.get('retry-after')).toBe('600');
    expect(await environment().prisma.emailToken.count({ where: { email } })).toBe(4);
  });

  it('allows a client address twenty sign-ups an hour for different addresses, then refuses it but not another', async () => {
    startClock(36);
    for (let i = 0; i < 20; i++) {
      const email = address(`network-${i}`);
      expect((await signUp(email, '10.8.0.1')).body.data?.signUp, `sign-up ${i + 1}`).toEqual({ email });
    }
    const refused = await signUp(address('network-21'), '10.8.0.1');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('3600');
    const elsewhere = address('elsewhere');
    expect((await signUp(elsewhere, '10.8.0.2')).body.data?.signUp).toEqual({ email: elsewhere });
  });

  it('counts sign-ups and portal sign-in requests apart, even for one address', async () => {
    startClock(38);
    const email = await portalCustomer();
    for (let i = 0; i < 3; i++) expect((await signUp(email, '10.10.0.1')).body.data?.signUp).toEqual({ email });
    for (let i = 0; i < 5; i++) expect((await askPortalLink(email, '10.10.0.1')).status, `portal request ${i + 1}`).toBe(200);
    expect((await askPortalLink(email, '10.10.0.1')).status).toBe(429);
    expect((await signUp(email, '10.10.0.1')).status).toBe(429);
  });

  it('of concurrent sign-ups for one address, only as many as the limit are recorded', async () => {
    startClock(40);
    const email = address('concurrent');
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => signUp(email, `10.11.0.${i + 1}`)));
    expect(answers.filter((a) => a.body.data?.signUp?.email === email)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(3);
    expect(await environment().prisma.emailToken.count({ where: { email } })).toBe(3);
  });

  it('plans no mail for an address that is no customer: its request is recorded, and no email.send job exists for it', async () => {
    const stranger = address('stranger');
    expect((await askPortalLink(stranger)).status).toBe(200);
    const recorded = await environment().prisma.emailToken.findFirstOrThrow({ where: { email: stranger } });
    expect(recorded.purpose).toBe('portal_sign_in_unknown');
    const customer = await portalCustomer();
    await askPortalLink(customer);
    await mailsTo(customer);
    const mailJob = (tokenId: string) => environment().prisma.job.findUnique({ where: { uniqueKey: `email.token:${tokenId}` }, select: { kind: true } });
    const customerToken = await environment().prisma.emailToken.findFirstOrThrow({ where: { email: customer } });
    expect(await mailJob(customerToken.id)).toEqual({ kind: 'email.send' });
    expect(await mailJob(recorded.id)).toBeNull();
  });
});
