/**
 * The mail of one notification, rendered when it is sent from the templates below: a subject, a
 * text part and an HTML part. Every value from users (names, thread titles, message text, the
 * application's name) is escaped in the HTML and stripped of line breaks in the subject, so no
 * header or markup can be injected through it.
 */
import { contentHtml, escapeHtml, safeHttpUrl } from './content-html.js';

export interface MailView {
  /** What the actor did: `mentioned you`, `replied`, `resolved the thread` … */
  action: string;
  actorName: string;
  threadName: string;
  /** The application's name, or emailSettings.name when set. */
  partnerName: string;
  logoUrl: string | null;
  logoWidth: number | null;
  logoHeight: number | null;
  /** The message that caused it, and up to two before it (oldest first). */
  messages: { authorName: string; content: unknown; plaintext: string; createdTimestamp: string }[];
  /** Messages between the first one shown and the others, not shown. */
  moreCount: number;
  /** Where the button leads: the redirect link (or null when the thread has no URL). */
  openUrl: string | null;
  unsubscribeUrl: string;
}

/** A header value from user text: one line, no control characters, bounded. */
export function headerText(text: string, max = 200): string {
  // eslint-disable-next-line no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The phrase of a reply notification (events.md §6.4) or a thread action. */
export function actionText(kind: 'reply' | 'thread_action', replyActions: readonly string[] | null, threadActionType: string | null): string {
  if (kind === 'thread_action') return threadActionType === 'unresolve' ? 'reopened the thread' : 'resolved the thread';
  const actions = new Set(replyActions ?? []);
  if (actions.has('mention') && actions.has('attach-file')) return 'mentioned you and sent you a file';
  if (actions.has('mention')) return 'mentioned you';
  if (actions.has('create-thread')) return 'created a new thread';
  return 'replied';
}

export function subjectOf(view: MailView): string {
  const thread = view.threadName ? ` in ${view.threadName}` : '';
  return headerText(`${view.actorName} ${view.action}${thread}`, 250);
}

export function textOf(view: MailView): string {
  const lines = [`${view.actorName} ${view.action}${view.threadName ? ` in ${view.threadName}` : ''}`, ''];
  view.messages.forEach((message, index) => {
    if (index === 1 && view.moreCount > 0) lines.push(`(${view.moreCount} more ${view.moreCount === 1 ? 'message' : 'messages'})`, '');
    lines.push(`${message.authorName}:`, message.plaintext, '');
  });
  if (view.openUrl) lines.push(`Open the conversation: ${view.openUrl}`, '');
  lines.push('--', `Sent by ${view.partnerName || 'your collaboration service'}.`, `Stop e-mails about this thread: ${view.unsubscribeUrl}`);
  return `${lines.join('\n')}\n`;
}

export function htmlOf(view: MailView): string {
  const logoUrl = safeHttpUrl(view.logoUrl);
  const size = view.logoHeight ? `height="${view.logoHeight}"` : `width="${view.logoWidth ?? 140}"`;
  const logo = logoUrl ? `<img src="${escapeHtml(logoUrl)}" ${size} alt="${escapeHtml(view.partnerName)}" style="display:block;margin-bottom:16px">` : '';
  const messages = view.messages
    .map((message, index) => {
      const more =
        index === 1 && view.moreCount > 0
          ? `<p style="margin:0 0 12px;color:#666;font-size:13px">${view.moreCount} more ${view.moreCount === 1 ? 'message' : 'messages'}</p>`
          : '';
      const current = index === view.messages.length - 1;
      return `${more}<div style="margin:0 0 12px;padding:12px;border-radius:6px;background:${current ? '#eef4fb' : '#f7f7f7'}">
  <p style="margin:0 0 6px;font-weight:bold">${escapeHtml(message.authorName)} <span style="font-weight:normal;color:#666;font-size:12px">${escapeHtml(new Date(message.createdTimestamp).toUTCString())}</span></p>
  ${contentHtml(message.content) || `<p style="margin:0">${escapeHtml(message.plaintext)}</p>`}
</div>`;
    })
    .join('\n');
  const button = view.openUrl
    ? `<p style="margin:16px 0"><a href="${escapeHtml(view.openUrl)}" style="display:inline-block;padding:10px 18px;background:#1a5fb4;color:#ffffff;text-decoration:none;border-radius:4px">Open the conversation</a></p>`
    : '';
  const thread = view.threadName ? ` in <strong>${escapeHtml(view.threadName)}</strong>` : '';
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(subjectOf(view))}</title></head>
<body style="margin:0;padding:24px;background:#ffffff;font-family:Helvetica,Arial,sans-serif;font-size:15px;color:#222">
<div style="max-width:600px;margin:0 auto">
${logo}<h1 style="font-size:18px;margin:0 0 16px">${escapeHtml(view.actorName)} ${escapeHtml(view.action)}${thread}</h1>
${messages}
${button}
<hr style="border:none;border-top:1px solid #ddd;margin:24px 0 12px">
<p style="font-size:12px;color:#666;margin:0">Sent by ${escapeHtml(view.partnerName || 'your collaboration service')}. <a href="${escapeHtml(view.unsubscribeUrl)}" style="color:#666">Stop e-mails about this thread</a>.</p>
</div>
</body>
</html>
`;
}
