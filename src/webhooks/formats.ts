// What an endpoint receives for an event, by its format: `raw` gets the event itself,
// `{"type","timestamp","data"}` with `data` as the REST API renders the resource; `discord` and
// `slack` get a message a person can read in a channel, in those services' incoming-webhook
// formats, built from the event type and the resource's key fields.
import { formatMoney } from '../currencies.ts';
import type { WebhookFormat } from '../generated/prisma/enums.ts';

export interface OutboxEvent {
  type: string;
  createdAt: Date;
  data: unknown;
}

/** The exact body sent to an endpoint of `format` for `event`. */
export function webhookBody(format: WebhookFormat, event: OutboxEvent): string {
  if (format === 'raw') return JSON.stringify({ type: event.type, timestamp: event.createdAt.toISOString(), data: event.data });
  const message = readableMessage(event.type, (event.data ?? {}) as Fields);
  return JSON.stringify(format === 'discord' ? discordMessage(message, event.createdAt) : slackMessage(message));
}

interface Message {
  title: string;
  summary: string;
  fields: { name: string; value: string }[];
}

type Fields = Record<string, unknown>;

/** `order.paid` → "Order paid", `benefit_grant.created` → "Benefit grant created". */
function titleOf(type: string): string {
  const text = type.replace(/[._]/g, ' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : null;
}

function nested(value: unknown, key: string): unknown {
  return value && typeof value === 'object' ? (value as Fields)[key] : undefined;
}

/** Minor units as the currency is written, e.g. 1999 usd → "$19.99", 1500 kwd → "KWD 1.500". */
export function money(amount: unknown, currency: unknown): string | null {
  if (!Number.isSafeInteger(amount) || typeof currency !== 'string' || !/^[a-z]{3}$/i.test(currency)) return null;
  return formatMoney(amount as number, currency);
}

function readableMessage(type: string, data: Fields): Message {
  const resource = type.split('.')[0];
  const customerEmail = text(nested(data.customer, 'email')) ?? text(data.customer_email) ?? (resource === 'customer' ? text(data.email) : null);
  const product = text(nested(data.product, 'name'));
  const interval = text(data.recurring_interval);
  const amount = (key: string) => money(data[key], data.currency);
  const candidates: [string, string | null][] = [];
  switch (resource) {
    case 'order':
      candidates.push(['Amount', amount('total_amount')], ['Customer', customerEmail], ['Product', product], ['Status', text(data.status)], ['Billing reason', text(data.billing_reason)]);
      break;
    case 'subscription': {
      const price = amount('amount');
      candidates.push(['Amount', price && interval ? `${price} / ${interval}` : price], ['Customer', customerEmail], ['Product', product], ['Status', text(data.status)]);
      break;
    }
    case 'checkout':
      candidates.push(['Amount', amount('total_amount')], ['Customer', customerEmail], ['Product', product], ['Status', text(data.status)]);
      break;
    case 'refund':
    case 'dispute':
      candidates.push(['Amount', amount('amount')], ['Reason', text(data.reason)], ['Status', text(data.status)], ['Order', text(data.order_id)]);
      break;
    case 'customer':
      candidates.push(['Email', customerEmail], ['Name', text(data.name)], ['External ID', text(data.external_id)]);
      break;
    case 'benefit':
      candidates.push(['Description', text(data.description)], ['Type', text(data.type)]);
      break;
    case 'benefit_grant':
      candidates.push(['Benefit', text(nested(data.benefit, 'description'))], ['Customer', customerEmail], ['Granted', text(data.is_granted)]);
      break;
  }
  candidates.push(['ID', text(data.id)]);
  const fields = candidates.filter((c): c is [string, string] => c[1] !== null).map(([name, value]) => ({ name, value }));
  // The headline: the first key field (an amount, an email, a description), and whom it concerns.
  const headline = fields[0] && fields[0].name !== 'ID' ? fields[0].value : null;
  const summary = [headline, customerEmail !== headline ? customerEmail : null].filter(Boolean).join(' · ');
  return { title: titleOf(type), summary, fields };
}

const cut = (value: string, max: number) => (value.length > max ? `${value.slice(0, max - 1)}…` : value);

// Discord: https://discord.com/developers/docs/resources/webhook#execute-webhook. Mentions are
// switched off, so a customer named "@everyone" pings no one.
function discordMessage(message: Message, at: Date) {
  return {
    content: cut(message.summary ? `${message.title}: ${message.summary}` : message.title, 2000),
    embeds: [
      {
        title: cut(message.title, 256),
        description: cut(message.summary, 4096),
        fields: message.fields.slice(0, 25).map((f) => ({ name: cut(f.name, 256), value: cut(f.value, 1024), inline: true })),
        timestamp: at.toISOString(),
      },
    ],
    allowed_mentions: { parse: [] },
  };
}

// Slack: https://api.slack.com/messaging/webhooks, Block Kit. `text` is the notification fallback.
const slackEscape = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function slackMessage(message: Message) {
  const line = message.summary ? `${message.title}: ${message.summary}` : message.title;
  return {
    text: cut(slackEscape(line), 3000),
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: cut(message.title, 150) } },
      ...(message.summary ? [{ type: 'section', text: { type: 'mrkdwn', text: cut(slackEscape(message.summary), 3000) } }] : []),
      ...(message.fields.length
        ? [{ type: 'section', fields: message.fields.slice(0, 10).map((f) => ({ type: 'mrkdwn', text: cut(`*${slackEscape(f.name)}*\n${slackEscape(f.value)}`, 2000) })) }]
        : []),
    ],
  };
}
