/**
 * A mail's unsubscribe link (original-extras §5.7, decision 54): permanent for the thread (no
 * more mail of it, whatever happens later), and the user also stops following the thread in the
 * app. The link's random token is its only credential.
 */
import { mailsRepository } from '../../repositories/mails.repository.js';
import type { MailServiceContext } from '../context.js';
import { mailOfLink } from './link-tokens.js';
import { escapeHtml } from './content-html.js';

/** Whether the token names a mail (the page offers the button only then). */
export async function isUnsubscribeToken(ctx: MailServiceContext, token: string | undefined): Promise<boolean> {
  return (await mailOfLink(ctx, token)) !== null;
}

/** Unsubscribes the mail's recipient from its thread; false when the token names no mail. Doing it again changes nothing. */
export async function unsubscribe(ctx: MailServiceContext, token: string | undefined, requestId: string): Promise<boolean> {
  const mail = await mailOfLink(ctx, token);
  if (!mail) return false;
  await mailsRepository.optOut(ctx.db, mail.applicationId, mail.threadRef, mail.recipientId);
  await ctx.unsubscribeInApp(mail.applicationId, mail.threadRef, mail.recipientId, requestId);
  return true;
}

function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head>
<body style="margin:0;padding:48px 24px;font-family:Helvetica,Arial,sans-serif;color:#222">
<main style="max-width:480px;margin:0 auto;text-align:center">
<h1 style="font-size:20px">${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

export const unsubscribePages = {
  /** The button that unsubscribes (a GET never does: mail scanners follow links). */
  confirm: (token: string) =>
    page(
      'Stop e-mails about this thread?',
      `<form method="post" action="?token=${encodeURIComponent(token)}"><button type="submit" style="padding:10px 18px;font-size:15px;background:#1a5fb4;color:#fff;border:none;border-radius:4px">Unsubscribe</button></form>`,
    ),
  done: () => page("You've been unsubscribed from the thread.", '<p>You will not receive e-mails about it any more.</p>'),
  invalid: () => page('This link is not valid.', '<p>It may have been copied incompletely.</p>'),
};
