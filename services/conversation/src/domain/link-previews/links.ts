/**
 * Which URLs of a message get a preview. Pure: the request (to drop the previews of URLs an edit
 * removed) and the job (to know what to fetch) compute the same list from the same content.
 */
import type { MessageNode } from '@collab/shared';
import { find } from 'linkifyjs';

/** Previews per message at most: the first URLs of the content. */
export const MAX_PREVIEWS_PER_MESSAGE = 10;

/** Longer URLs are not previewed (they are stored as the key of their preview). */
const MAX_URL_LENGTH = 2048;

/** Nodes that show a user: their text is a name, never a link. */
const USER_NODES = new Set(['mention', 'assignee']);

/**
 * The URL a preview is stored under: the text with `http://` added when it has no scheme, so that a
 * link node's `example.com/a` and the text `example.com/a` are one URL. A URL with any other scheme
 * (`mailto:`, `ftp://`) or without a host is not previewed: null.
 */
export function previewUrl(raw: string): string | null {
  const text = raw.trim();
  // `host:port/path` has no scheme: a scheme is letters before a colon that no digit follows.
  const hasOtherScheme = !/^https?:\/\//i.test(text) && /^[a-z][a-z0-9+.-]*:(?!\d)/i.test(text);
  if (text === '' || hasOtherScheme || text.length > MAX_URL_LENGTH) return null;
  const url = /^https?:\/\//i.test(text) ? text : `http://${text}`;
  try {
    return new URL(url).hostname === '' ? null : url;
  } catch {
    return null;
  }
}

/**
 * The URLs of a content, in order, each once, at most MAX_PREVIEWS_PER_MESSAGE: a link node's `url`
 * (its children are not searched), every URL a text node's text contains (bare domains included,
 * e-mail addresses not), and the URLs inside every other node except mentions and assignees.
 */
export function contentUrls(content: readonly MessageNode[]): string[] {
  const urls = new Set<string>();
  const add = (raw: string) => {
    const url = previewUrl(raw);
    if (url !== null && urls.size < MAX_PREVIEWS_PER_MESSAGE) urls.add(url);
  };
  const walk = (nodes: readonly MessageNode[]) => {
    for (const node of nodes) {
      if (node.type === 'link' && typeof node.url === 'string') add(node.url);
      else if (node.type === undefined && typeof node.text === 'string') for (const match of find(node.text, 'url')) add(match.href);
      else if (node.type !== undefined && !USER_NODES.has(node.type)) walk(node.children ?? []);
    }
  };
  walk(content);
  return [...urls];
}

/** The URLs a message should have previews for: none when it skips them or is an action message. */
export function previewUrlsOf(message: { content: unknown; skipLinkPreviews: boolean; type: string }): string[] {
  if (message.skipLinkPreviews || message.type === 'action_message') return [];
  return contentUrls(message.content as MessageNode[]);
}

/**
 * Whether appending `appended` cannot change the URLs of the text it is appended to, whatever that
 * text is: it starts with a space, tab or line break, which ends the text's last word as it was,
 * and holds nothing a URL is made of (a dot or colon with more after it, or `localhost`: every URL
 * the link finder sees has one). A bot's next word usually passes, and its append then needs
 * neither the text before it nor any link-preview work.
 */
export function appendCannotChangeUrls(appended: string): boolean {
  return /^[ \n\r\t]/.test(appended) && !/[.:][^ \n\r\t]|localhost/i.test(appended);
}

/**
 * Whether appending `appended` to the text `before` can change the text's URLs. A URL never spans
 * a space, so the URLs before the text's last space stay as they are: only its last word, with the
 * appended text after it, can gain, lose or change one. False when neither that word alone nor the
 * word with the appended text holds one, so that an append, however long its message already is,
 * searches only its own end (a bot appends thousands of times to one message).
 */
export function appendMayChangeUrls(before: string, appended: string): boolean {
  const lastWord = before.slice(Math.max(...[' ', '\n', '\r', '\t'].map((space) => before.lastIndexOf(space))) + 1);
  return find(lastWord, 'url').length > 0 || find(lastWord + appended, 'url').length > 0;
}
