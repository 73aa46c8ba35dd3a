/**
 * The links of notification mails, served by the mail service without a token: the random token
 * in each link is its credential (original-extras §5.7, decision 54); and the replies to them,
 * posted by an inbound-mail parser (§5.8).
 */
import { q, s } from '../schema/index.js';
import { defineRoute, type RawAnswer } from './route.js';
import { successView } from './views.js';

const PAGE: RawAnswer = {
  mediaType: 'text/html',
  description: 'An HTML page saying what was done, or that the link is not valid (also 200).',
  schema: { type: 'string' },
};

const tokenQuery = q.object({ token: q.text("The token of the mail's unsubscribe link.") });

export const mailRoutes = {
  redirect: defineRoute({
    id: 'mail.redirect',
    method: 'GET',
    path: '/redirect/:linkID',
    service: 'mail',
    auth: 'none',
    tag: 'E-mail',
    summary:
      "A mail's button: 302 to the message's (else the thread's) URL, or to the application's redirectURI with a cord_notifications token (HS256, the application's secret); a link that names nothing answers a page saying so",
    params: { linkID: { format: 'any', label: 'linkID', code: 'not_found' } },
    response: { 200: PAGE },
  }),
  unsubscribePage: defineRoute({
    id: 'mail.unsubscribePage',
    method: 'GET',
    path: '/email/unsubscribe_thread',
    service: 'mail',
    auth: 'none',
    tag: 'E-mail',
    summary: 'The page of a mail\'s unsubscribe link: a button that stops the mails of the thread',
    query: tokenQuery,
    response: { 200: PAGE },
  }),
  unsubscribe: defineRoute({
    id: 'mail.unsubscribe',
    method: 'POST',
    path: '/email/unsubscribe_thread',
    service: 'mail',
    auth: 'none',
    tag: 'E-mail',
    summary:
      'Stops the mails of the thread for good and unsubscribes the user from it: the page\'s button, or a mail client\'s one-click unsubscribe (RFC 8058, body List-Unsubscribe=One-Click)',
    query: tokenQuery,
    response: { 200: PAGE },
  }),
  inbound: defineRoute({
    id: 'mail.inbound',
    method: 'POST',
    path: '/email/inbound',
    service: 'mail',
    auth: 'inbound',
    tag: 'E-mail',
    summary:
      "A reply to a notification mail, as an inbound-parse webhook (SendGrid's, or Mailgun-style) posts it: its text above the quoted part becomes a message of the mail's recipient in the thread. A reply that names no mail, is an automatic answer or has no text is dropped (200, messageID null)",
    bodyType: 'form',
    body: s.object({
      to: s.string({ minLength: 1 }).describe("The reply's To header: the Reply-To of the mail, `<local>-<token>@<EMAIL_DOMAIN>`."),
      from: s.string({ minLength: 1 }).describe("The reply's From header."),
      text: s.string().describe('The plain-text body of the reply.'),
      headers: s.string().optional().describe("The reply's raw header block (an Auto-Submitted header other than `no` drops it)."),
      subject: s.string().optional(),
      attachments: s.string().optional().describe('The number of attached files (dropped; the message says so).'),
    }),
    response: { 200: s.object({ ...successView.shape, messageID: s.string().nullable() }) },
  }),
};
