/**
 * Sends one recorded mail, at most once (decision 55): the mail is taken (`sending`, committed)
 * before it goes to SMTP and marked `sent` after; a run that finds it taken sends nothing. An SMTP
 * failure puts it back to `pending` and fails the job, which is retried with backoff; the last
 * attempt marks it `failed`. The gates of original-extras §5.2 are read now, so whatever changed
 * during the delay (a read, an edit, a deletion, a preference) counts.
 */
import { messageView, threadView, type Infer, type Logger, type MailContext, type MessageExcerpt } from '@collab/shared';
import type { MailRow } from '../../entities/index.js';
import { mailsRepository } from '../../repositories/mails.repository.js';
import type { MailServiceContext } from '../context.js';
import { mailMetrics } from './metrics.js';
import { actionText, headerText, htmlOf, subjectOf, textOf, type MailView } from './render.js';
import type { OutgoingMail } from './transport.js';

type Message = Infer<typeof messageView>;
type Thread = Infer<typeof threadView>;
type MailUser = MailContext['users'][number];

export type SendOutcome = 'sent' | 'not pending' | `skipped: ${string}`;

const displayName = (user: MailUser | undefined, fallback: string) => user?.name || user?.shortName || fallback;

/** The public base of the mail's links: PUBLIC_URL, else that of the request that caused it. */
export function linkBaseOf(ctx: MailServiceContext, mail: Pick<MailRow, 'linkBase'>): string {
  return (ctx.settings.publicUrl || mail.linkBase).replace(/\/$/, '');
}

export const unsubscribeUrl = (base: string, mail: Pick<MailRow, 'linkToken'>) => `${base}/email/unsubscribe_thread?token=${encodeURIComponent(mail.linkToken)}`;

/** The user as the mail context has them, when they are active and still in the thread's group; else undefined. */
export function activeMember(context: MailContext, userId: string): MailUser | undefined {
  const user = context.users.find((candidate) => candidate.id === userId);
  return user && user.status === 'active' && user.inGroup ? user : undefined;
}

/** Why the mail must not go, or null when it may (original-extras §5.2, decision 54). */
async function gate(ctx: MailServiceContext, mail: MailRow, message: Message | undefined, thread: Thread | undefined, context: MailContext | null): Promise<string | null> {
  if (!message || message.deletedTimestamp !== null) return 'message_deleted';
  if (!thread) return 'thread_deleted';
  if (!context) return 'application_deleted';
  const recipient = activeMember(context, mail.recipientId);
  if (!recipient) return 'recipient_not_in_group';
  if (!recipient.email) return 'no_email';
  if (!recipient.sendViaEmail) return 'preference';
  const settings = (context.application.emailSettings ?? {}) as { enableEmailNotifications?: unknown };
  if (settings.enableEmailNotifications === false) return 'application_disabled';
  if (await mailsRepository.optedOut(ctx.db, mail.applicationId, mail.threadRef, mail.recipientId)) return 'unsubscribed';
  // Already read in the app: no mail, unless the recipient mentioned themselves.
  const seen = thread.participants.find((participant) => participant.userID === mail.recipientId)?.lastSeenTimestamp;
  if (mail.recipientId !== mail.actorId && seen && new Date(seen) >= new Date(message.createdTimestamp)) return 'seen';
  return null;
}

function fromOf(ctx: MailServiceContext, context: MailContext): { name: string; address: string } | string {
  const settings = (context.application.emailSettings ?? {}) as { sender?: unknown; name?: unknown };
  if (typeof settings.sender === 'string' && settings.sender.includes('@'))
    return { name: headerText(typeof settings.name === 'string' && settings.name ? settings.name : context.application.name), address: settings.sender };
  return ctx.settings.mailFrom;
}

/**
 * The messages a mail shows (original-extras §5.4): with one earlier message, it; with more, the
 * thread's first and the one just before, and how many between them are not shown.
 */
function excerptOf(excerpt: MessageExcerpt, earlier: ReadonlyMap<string, Message>): { messages: Message[]; moreCount: number } {
  const refs = excerpt.earlierCount >= 2 ? [excerpt.first, excerpt.previous] : [excerpt.previous];
  return {
    messages: refs.flatMap((ref) => (ref !== null && earlier.has(ref) ? [earlier.get(ref)!] : [])),
    moreCount: Math.max(0, excerpt.earlierCount - 2),
  };
}

function viewOf(mail: MailRow, message: Message, shown: { messages: Message[]; moreCount: number }, thread: Thread, context: MailContext, base: string): MailView {
  const settings = (context.application.emailSettings ?? {}) as { name?: unknown; imageURL?: unknown; logoConfig?: { width?: unknown; height?: unknown } };
  const users = new Map(context.users.map((user) => [user.id, user]));
  const url = message.url || thread.url;
  return {
    action: actionText(mail.kind, mail.replyActions, mail.threadActionType),
    actorName: displayName(users.get(mail.actorId), mail.actorId),
    threadName: thread.name,
    partnerName: typeof settings.name === 'string' && settings.name ? settings.name : context.application.name,
    logoUrl: typeof settings.imageURL === 'string' ? settings.imageURL : null,
    logoWidth: typeof settings.logoConfig?.width === 'number' ? Math.round(settings.logoConfig.width) : null,
    logoHeight: typeof settings.logoConfig?.height === 'number' ? Math.round(settings.logoConfig.height) : null,
    messages: [...shown.messages, message].map((entry) => ({
      authorName: displayName(users.get(entry.authorID), entry.authorID),
      content: entry.content,
      plaintext: entry.plaintext,
      createdTimestamp: new Date(entry.createdTimestamp).toISOString(),
    })),
    moreCount: shown.moreCount,
    openUrl: url ? `${base}/redirect/${encodeURIComponent(mail.linkToken)}` : null,
    unsubscribeUrl: unsubscribeUrl(base, mail),
  };
}

/**
 * The address replies to the mail go to when replies by mail are on: the sender's local part (cut
 * so that the whole stays within the 64 characters of a local part) and the mail's link token.
 */
function replyToOf(ctx: MailServiceContext, from: ReturnType<typeof fromOf>, mail: Pick<MailRow, 'linkToken'>) {
  const address = typeof from === 'string' ? (/<([^>]+)>/.exec(from)?.[1] ?? from) : from.address;
  const local = address.split('@')[0].replace(/[^A-Za-z0-9._+]/g, '').slice(0, 31) || 'reply';
  const name = typeof from === 'string' ? (/^\s*"?([^"<]*?)"?\s*</.exec(from)?.[1] ?? '') : from.name;
  return { name, address: `${local}-${mail.linkToken}@${ctx.settings.emailDomain}` };
}

/** Puts a taken mail back for the job's retry (or gives up on the last attempt), then fails the run. */
async function release(ctx: MailServiceContext, mail: MailRow, finalAttempt: boolean, error: unknown): Promise<never> {
  await mailsRepository.settle(ctx.db, mail.applicationId, mail.id, finalAttempt ? 'failed' : 'pending', finalAttempt ? String((error as Error)?.message ?? error).slice(0, 500) : null);
  throw error;
}

export async function sendMail(ctx: MailServiceContext, applicationId: string, mailId: string, requestId: string, finalAttempt: boolean, log: Logger): Promise<SendOutcome> {
  const metrics = mailMetrics();
  const mail = await mailsRepository.claim(ctx.db, applicationId, mailId);
  // Sent, skipped, or taken by a run that may have handed it to SMTP before it stopped: never again.
  if (!mail) return 'not pending';
  let prepared: { outgoing: OutgoingMail } | { skip: string };
  try {
    prepared = await prepare(ctx, mail, requestId);
  } catch (error) {
    return release(ctx, mail, finalAttempt, error);
  }
  if ('skip' in prepared) {
    await mailsRepository.settle(ctx.db, applicationId, mailId, 'skipped', prepared.skip);
    metrics.skipped(prepared.skip);
    log.info({ mailId, reason: prepared.skip }, 'mail skipped');
    return `skipped: ${prepared.skip}`;
  }
  try {
    await ctx.transport.send(prepared.outgoing);
  } catch (error) {
    metrics.failed();
    log.warn({ mailId, err: error, finalAttempt }, 'the SMTP server did not take the mail');
    return release(ctx, mail, finalAttempt, error);
  }
  // Accepted: from here on a failure leaves the mail `sending`, which is never sent again.
  await mailsRepository.settle(ctx.db, applicationId, mailId, 'sent', null);
  metrics.sent();
  return 'sent';
}

/** The mail as it goes out now, or the gate that stops it. */
async function prepare(ctx: MailServiceContext, mail: MailRow, requestId: string): Promise<{ outgoing: OutgoingMail } | { skip: string }> {
  const { applicationId } = mail;
  const excerpt = await ctx.conversation.excerpt(applicationId, mail.messageRef, requestId);
  const earlierRefs = [excerpt.first, excerpt.previous].filter((ref): ref is string => ref !== null);
  const views = await ctx.conversation.views(applicationId, { messageRefs: [mail.messageRef, ...earlierRefs], threadRefs: [mail.threadRef], linkBase: mail.linkBase }, requestId);
  const byRef = new Map(views.messages.map((entry) => [entry.ref, entry.view as Message]));
  const message = byRef.get(mail.messageRef);
  const shown = excerptOf(excerpt, byRef);
  const thread = views.threads.find((entry) => entry.ref === mail.threadRef)?.view as Thread | undefined;
  const authors = [message, ...shown.messages].flatMap((entry) => (entry ? [entry.authorID] : []));
  const context = thread ? await ctx.mailContext(applicationId, [mail.recipientId, mail.actorId, ...authors], thread.groupID, requestId) : null;
  const skip = await gate(ctx, mail, message, thread, context);
  if (skip) return { skip };
  const recipient = context!.users.find((user) => user.id === mail.recipientId)!;
  const view = viewOf(mail, message!, shown, thread!, context!, linkBaseOf(ctx, mail));
  const domain = ctx.settings.emailDomain;
  const threadMessageId = `<thread-${mail.threadRef}@${domain}>`;
  // The first mail of a thread to a recipient is the one later mails of it reply to, so mail clients group them.
  const first = !(await mailsRepository.sentBefore(ctx.db, applicationId, mail.threadRef, mail.recipientId, mail.id));
  const from = fromOf(ctx, context!);
  return {
    outgoing: {
      from,
      ...(ctx.settings.inboundEmail ? { replyTo: replyToOf(ctx, from, mail) } : {}),
      to: { name: headerText(recipient.name ?? ''), address: recipient.email! },
      subject: subjectOf(view),
      text: textOf(view),
      html: htmlOf(view),
      messageId: first ? threadMessageId : `<notif-${mail.id}@${domain}>`,
      ...(first ? {} : { inReplyTo: threadMessageId, references: [threadMessageId] }),
      headers: { 'X-Auto-Response-Suppress': 'OOF', 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
      list: { unsubscribe: view.unsubscribeUrl },
    },
  };
}
