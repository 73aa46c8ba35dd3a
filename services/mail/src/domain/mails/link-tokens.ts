/**
 * The random token that names a mail in its links (redirect and unsubscribe): its only credential.
 * Anything not shaped like one names no mail and is never looked up, so no text a client sends
 * (a NUL, a lone surrogate, a megabyte) reaches the database.
 */
import { randomBytes } from 'node:crypto';
import type { MailRow } from '../../entities/index.js';
import { mailsRepository } from '../../repositories/mails.repository.js';
import type { MailServiceContext } from '../context.js';

const TOKEN_BYTES = 24;
/** base64url of TOKEN_BYTES bytes. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32}$/;

export const newLinkToken = (): string => randomBytes(TOKEN_BYTES).toString('base64url');

/** The mail a link's token names, or null. */
export async function mailOfLink(ctx: MailServiceContext, token: string | undefined): Promise<MailRow | null> {
  if (token === undefined || !TOKEN_SHAPE.test(token)) return null;
  return mailsRepository.findByLinkToken(ctx.db, token);
}
