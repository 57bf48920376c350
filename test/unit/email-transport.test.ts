// The SMTP transport against a real SMTP server on 127.0.0.1 (smtp-server), and the email
// configuration's validation.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { EmailDeliveryError, SmtpTransport, createEmailTransport } from '../../src/email/transport.ts';

const quietLogger = { info() {}, warn() {}, error() {}, debug() {}, child() { return this; } } as never;

interface Received {
  from: string | undefined;
  to: string[];
  user: string | undefined;
  data: string;
}

let smtp: SMTPServer;
let port: number;
const received: Received[] = [];

beforeAll(async () => {
  smtp = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === 'kassa' && auth.password === 'secret') callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      if (address.address.endsWith('@refused.example')) callback(new Error('Mailbox unavailable'));
      else callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
          to: session.envelope.rcptTo.map((r) => r.address),
          user: session.user as string | undefined,
          data: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
  port = (smtp.server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => smtp.close(() => resolve())));

describe('the SMTP transport', () => {
  it('delivers the message to the server, signed in with the credentials of SMTP_URL', async () => {
    const config = loadConfig({ EMAIL_TRANSPORT: 'smtp', SMTP_URL: `smtp://kassa:secret@127.0.0.1:${port}`, EMAIL_FROM: 'Acme Billing <billing@acme.example>' });
    const transport = createEmailTransport(config.email, quietLogger);
    expect(transport).toBeInstanceOf(SmtpTransport);
    await transport.send({ to: 'ada@example.com', subject: '123456 is your code', text: 'Enter this code to confirm it: 123456' });
    await transport.close();
    const mail = received.at(-1)!;
    expect(mail).toMatchObject({ from: 'billing@acme.example', to: ['ada@example.com'], user: 'kassa' });
    expect(mail.data).toContain('Subject: 123456 is your code');
    expect(mail.data).toContain('From: Acme Billing <billing@acme.example>');
    expect(mail.data).toContain('Enter this code to confirm it: 123456');
  });

  it('sends the HTML part beside the text part, as multipart/alternative', async () => {
    const transport = new SmtpTransport(`smtp://kassa:secret@127.0.0.1:${port}`, 'billing@acme.example', quietLogger, 5000);
    await transport.send({ to: 'ada@example.com', subject: 'Receipt', text: 'Total: $19.99', html: '<p>Total: <strong>$19.99</strong></p>' });
    await transport.close();
    const mail = received.at(-1)!;
    expect(mail.data).toContain('multipart/alternative');
    expect(mail.data).toContain('Content-Type: text/plain');
    expect(mail.data).toContain('Content-Type: text/html');
    expect(mail.data).toContain('<strong>$19.99</strong>');
  });

  it('fails with EmailDeliveryError when the server refuses the recipient', async () => {
    const transport = new SmtpTransport(`smtp://127.0.0.1:${port}`, 'billing@acme.example', quietLogger, 5000);
    await expect(transport.send({ to: 'nobody@refused.example', subject: 'Hello', text: 'Hello' })).rejects.toBeInstanceOf(EmailDeliveryError);
    await transport.close();
  });

  it('fails with EmailDeliveryError when the credentials are wrong, or no server listens', async () => {
    const wrong = new SmtpTransport(`smtp://kassa:wrong@127.0.0.1:${port}`, 'billing@acme.example', quietLogger, 5000);
    await expect(wrong.send({ to: 'ada@example.com', subject: 'Hello', text: 'Hello' })).rejects.toBeInstanceOf(EmailDeliveryError);
    await wrong.close();
    const closed = new SmtpTransport('smtp://127.0.0.1:1', 'billing@acme.example', quietLogger, 2000);
    await expect(closed.send({ to: 'ada@example.com', subject: 'Hello', text: 'Hello' })).rejects.toBeInstanceOf(EmailDeliveryError);
    await closed.close();
  });
});

describe('the email configuration', () => {
  it('logs mail on the embedded database and sends none on PostgreSQL by default', () => {
    expect(loadConfig({}).email).toEqual({ transport: 'log', smtpUrl: null, from: 'Kassa <no-reply@localhost>', timeoutMs: 10_000 });
    const postgres = { DATABASE_URL: 'postgres://db/a', SANDBOX_DATABASE_URL: 'postgres://db/b' };
    expect(loadConfig(postgres).email.transport).toBe('none');
  });

  it.each([
    [{ EMAIL_TRANSPORT: 'carrier-pigeon' }, /EMAIL_TRANSPORT must be one of smtp, log, memory, none/],
    [{ EMAIL_TRANSPORT: 'smtp', EMAIL_FROM: 'a@b.example' }, /SMTP_URL must be set when EMAIL_TRANSPORT=smtp/],
    [{ EMAIL_TRANSPORT: 'smtp', SMTP_URL: 'http://mail.example', EMAIL_FROM: 'a@b.example' }, /SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/],
    [{ EMAIL_TRANSPORT: 'smtp', SMTP_URL: 'not a url', EMAIL_FROM: 'a@b.example' }, /SMTP_URL must be an smtp:\/\/ or smtps:\/\/ URL/],
    [{ EMAIL_TRANSPORT: 'smtp', SMTP_URL: 'smtp://mail.example' }, /EMAIL_FROM must be set when EMAIL_TRANSPORT=smtp/],
    [{ EMAIL_FROM: 'Billing <not-an-address>' }, /EMAIL_FROM must be an email address or "Name <address>"/],
    [{ SMTP_TIMEOUT_MS: '5' }, /SMTP_TIMEOUT_MS must be a whole number from 100 to 120000/],
  ])('refuses %o, naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });
});
