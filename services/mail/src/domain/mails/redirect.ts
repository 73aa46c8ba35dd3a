/**
 * The button of a mail: `/redirect/<token>` leads to the message's (else the thread's) URL, or,
 * when the application set a `redirectURI`, there with a `cord_notifications` token that tells the
 * application which message the user came for (original-extras §5.6, decision 54): HS256-signed
 * with the application's secret, naming the message by its own (external) ID.
 */
import { messageView, threadView, type Infer } from '@collab/shared';
import { SignJWT } from 'jose';
import type { MailServiceContext } from '../context.js';
import { safeHttpUrl } from './content-html.js';
import { mailOfLink } from './link-tokens.js';

type Message = Infer<typeof messageView>;
type Thread = Infer<typeof threadView>;

/** Where the link leads now, or null when it names nothing (no such mail, message or thread gone, no URL). */
export async function redirectTarget(ctx: MailServiceContext, token: string, requestId: string): Promise<string | null> {
  const mail = await mailOfLink(ctx, token);
  if (!mail) return null;
  const { applicationId } = mail;
  const views = await ctx.conversation.views(applicationId, { messageRefs: [mail.messageRef], threadRefs: [mail.threadRef], linkBase: mail.linkBase }, requestId);
  const message = views.messages.find((entry) => entry.ref === mail.messageRef)?.view as Message | undefined;
  const thread = views.threads.find((entry) => entry.ref === mail.threadRef)?.view as Thread | undefined;
  const url = safeHttpUrl(message?.url || thread?.url);
  if (!thread || !url) return null;
  const context = await ctx.mailContext(applicationId, [mail.actorId, mail.recipientId], thread.groupID, requestId);
  const redirectUri = safeHttpUrl(context?.application.redirectURI);
  if (!context || !redirectUri) return url;

  const details = (userId: string) => {
    const user = context.users.find((candidate) => candidate.id === userId);
    return { userType: 'platform', userID: userId, orgID: thread.groupID, groupID: thread.groupID, name: user?.name ?? null, email: user?.email ?? null };
  };
  const secret = await ctx.applicationSecret(applicationId, requestId);
  const jwt = await new SignJWT({
    notificationInfo: {
      type: 'email',
      sharerDetails: details(mail.actorId),
      targetDetails: details(mail.recipientId),
      messageID: message?.id ?? null,
      threadID: thread.id,
      url,
      timestamp: new Date().toISOString(),
    },
  })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .sign(new TextEncoder().encode(secret));
  const target = new URL(redirectUri);
  target.searchParams.set('cord_notifications', jwt);
  return target.toString();
}
