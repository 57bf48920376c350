// Email delivery: one small interface and its transports. `smtp` hands messages to a mail server
// (nodemailer), text and HTML parts together; `log` writes them to the log, for a machine without one; `memory` keeps them in the
// process, where tests read them; `none` refuses to send, so a feature that needs mail says so
// instead of pretending. Which one runs is configuration (EMAIL_TRANSPORT, see config.ts).
import type { Transporter } from 'nodemailer';
import type { EmailConfig } from '../config.ts';
import type { Logger } from '../logger.ts';
import { KassaError } from '../graphql/errors.ts';

export interface EmailMessage {
  to: string;
  subject: string;
  /** The plain-text part: every email has one. */
  text: string;
  /** The HTML part, sent beside the text as multipart/alternative; see email/templates/. */
  html?: string;
}

export interface EmailTransport {
  readonly kind: EmailConfig['transport'];
  /** Hands the message over for delivery; resolves once the transport has accepted it. */
  send(message: EmailMessage): Promise<void>;
  close(): Promise<void>;
}

/** Sending was refused or failed: nothing was delivered, and the caller may try again. */
export class EmailDeliveryError extends KassaError {
  constructor(message = 'The email could not be sent. Try again later.') {
    super(message, 'EMAIL_DELIVERY_FAILED', 503, 'EmailDeliveryFailed');
  }
}

export class SmtpTransport implements EmailTransport {
  readonly kind = 'smtp';
  /** nodemailer (about 12 MB resident) is loaded only where mail goes to a server. */
  private readonly transporter: Promise<Transporter>;

  constructor(
    url: string,
    private readonly from: string,
    private readonly logger: Logger,
    timeoutMs: number,
  ) {
    const options = { url, connectionTimeout: timeoutMs, greetingTimeout: timeoutMs, socketTimeout: timeoutMs };
    this.transporter = import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport(options as never));
    // A failure surfaces where the transporter is awaited, in send or close.
    this.transporter.catch(() => {});
  }

  async send(message: EmailMessage): Promise<void> {
    try {
      await (await this.transporter).sendMail({ from: this.from, to: message.to, subject: message.subject, text: message.text, html: message.html });
    } catch (error) {
      // The server's answer may quote the message; only its code and kind are logged.
      const { code, responseCode } = error as { code?: string; responseCode?: number };
      this.logger.error({ code, responseCode }, 'email delivery failed');
      throw new EmailDeliveryError();
    }
  }

  async close(): Promise<void> {
    (await this.transporter).close();
  }
}

/** Writes each message to the log instead of sending it: for development, where no mail server runs. */
export class LogTransport implements EmailTransport {
  readonly kind = 'log';
  constructor(
    private readonly from: string,
    private readonly logger: Logger,
  ) {}

  async send(message: EmailMessage): Promise<void> {
    // The HTML part says what the text part says; the log keeps the text.
    this.logger.info({ email: { from: this.from, to: message.to, subject: message.subject, text: message.text } }, 'email not sent (EMAIL_TRANSPORT=log)');
  }

  async close(): Promise<void> {}
}

/** Keeps every message in `sent`, newest last. */
export class MemoryTransport implements EmailTransport {
  readonly kind = 'memory';
  readonly sent: (EmailMessage & { from: string })[] = [];
  constructor(private readonly from: string) {}

  async send(message: EmailMessage): Promise<void> {
    this.sent.push({ from: this.from, ...message });
  }

  async close(): Promise<void> {}
}

/** No delivery is configured: every send is refused. */
export class NoTransport implements EmailTransport {
  readonly kind = 'none';
  async send(): Promise<void> {
    throw new EmailDeliveryError('This server sends no email (EMAIL_TRANSPORT=none), so this action is not available.');
  }

  async close(): Promise<void> {}
}

export function createEmailTransport(config: EmailConfig, logger: Logger): EmailTransport {
  switch (config.transport) {
    case 'smtp':
      return new SmtpTransport(config.smtpUrl!, config.from, logger, config.timeoutMs);
    case 'log':
      return new LogTransport(config.from, logger);
    case 'memory':
      return new MemoryTransport(config.from);
    case 'none':
      return new NoTransport();
  }
}
