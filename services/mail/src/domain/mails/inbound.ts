/**
 * Replies by mail (original-extras §5.8, decision 54): an inbound-mail parser posts the reply to a
 * notification mail, whose Reply-To, `<local>-<link token>@<EMAIL_DOMAIN>`, names the mail; the
 * reply's own text becomes a message of the mail's recipient in its thread. What cannot be posted
 * (no mail named, an automatic answer, no text, the recipient or thread gone) is dropped with its
 * reason: the parser would only retry it. Parsers retry a post they saw no answer to, so a reply
 * is posted at most once: its message's id is derived from the reply itself (replyMessageId).
 */
import { createHash } from 'node:crypto';
import type { MailServiceContext } from '../context.js';
import { mailOfLink } from './link-tokens.js';
import { activeMember, linkBaseOf } from './send-mail.js';

export interface InboundReply {
  to: string;
  text: string;
  headers?: string;
  /** Whether files came with it (they are not kept). */
  withFiles: boolean;
}

export type InboundOutcome = { messageID: string } | { dropped: string };

/** What replaces attached files, as the original wrote it. */
export const FILES_DROPPED = '(Unable to display attached files)';

/** The token of the first address of the To header shaped `<local>-<token>@…`. */
export function replyToken(to: string): string | undefined {
  for (const [, local] of to.matchAll(/([^\s<>,;:"@]+)@[^\s<>,;"]+/g)) {
    const match = /-([A-Za-z0-9_-]{32})$/.exec(local);
    if (match) return match[1];
  }
  return undefined;
}

/** A header's value in a raw header block (unfolded), or undefined. */
function headerValue(headers: string, name: string): string | undefined {
  const unfolded = headers.replace(/\r?\n[ \t]+/g, ' ');
  return new RegExp(`^${name}:[ \\t]*(.*)$`, 'im').exec(unfolded)?.[1]?.trim();
}

/**
 * The reply's own lines, one paragraph each: those above the quoted mail (a `>` line, an
 * "On … wrote:" line, possibly wrapped, an original-message marker) and above a signature (`-- `).
 */
export function replyParagraphs(text: string): string[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const kept: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index];
    const quoteHeader = /^On\s.*wrote:\s*$/.test(line) || (/^On\s/.test(line) && /wrote:\s*$/.test(lines[index + 1] ?? ''));
    if (/^\s*>/.test(line) || quoteHeader || /^-{2,}\s*Original Message\s*-{2,}/i.test(line) || /^--\s?$/.test(line)) break;
    if (line.trim()) kept.push(line.trim());
  }
  return kept;
}

/**
 * The id of the message a reply becomes, the same each time the same reply is posted: derived from
 * the mail it answers and the reply's Message-ID header, or, for a parser that sends no headers,
 * from its text (then two replies of the very same text to one mail are one message). Shaped as
 * the ids of messages created without one (`cord:` and a UUID).
 */
export function replyMessageId(mailId: string, reply: Pick<InboundReply, 'text' | 'headers'>): string {
  const messageId = reply.headers ? headerValue(reply.headers, 'Message-ID') : undefined;
  const hex = createHash('sha256')
    .update(`${mailId}\n${messageId ? `message-id:${messageId}` : `text:${reply.text}`}`)
    .digest('hex');
  // Version 8 (custom) and the RFC 9562 variant, so that it is a well-formed UUID.
  return `cord:${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export async function postInboundReply(ctx: MailServiceContext, reply: InboundReply, requestId: string): Promise<InboundOutcome> {
  const autoSubmitted = reply.headers ? headerValue(reply.headers, 'Auto-Submitted') : undefined;
  if (autoSubmitted !== undefined && autoSubmitted.toLowerCase() !== 'no') return { dropped: 'automatic_reply' };
  const mail = await mailOfLink(ctx, replyToken(reply.to));
  if (!mail) return { dropped: 'unknown_address' };
  const paragraphs = replyParagraphs(reply.text);
  if (paragraphs.length === 0) return { dropped: 'empty' };
  if (reply.withFiles) paragraphs.push(FILES_DROPPED);
  const { applicationId, threadRef, recipientId } = mail;
  const views = await ctx.conversation.views(applicationId, { messageRefs: [], threadRefs: [threadRef], linkBase: mail.linkBase }, requestId);
  const thread = views.threads.find((entry) => entry.ref === threadRef)?.view as { groupID: string } | undefined;
  if (!thread) return { dropped: 'thread_deleted' };
  const context = await ctx.mailContext(applicationId, [recipientId], thread.groupID, requestId);
  if (!context || !activeMember(context, recipientId)) return { dropped: 'recipient_not_in_group' };
  const posted = { threadRef, userId: recipientId, messageID: replyMessageId(mail.id, reply), paragraphs };
  const messageID = await ctx.postReply(applicationId, posted, linkBaseOf(ctx, mail), requestId);
  return messageID === null ? { dropped: 'thread_deleted' } : { messageID };
}
