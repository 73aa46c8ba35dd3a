/** What a preview shows of an HTML page: its title, description and image. Pure. */
import { Parser } from 'htmlparser2';

export interface PagePreview {
  /** `""` when the page has none (a preview always has a title). */
  title: string;
  description: string | null;
  imageUrl: string | null;
}

/** Longer titles and descriptions are cut: a page must not bloat every read of the message. */
const MAX_TEXT_LENGTH = 1000;
const MAX_IMAGE_URL_LENGTH = 2048;

/**
 * Reads the page's `<meta>` tags and its first `<title>`. Each field takes the OpenGraph tag
 * (`property="og:x"`), else the plain one (`name="x"`), skipping empty ones; the title falls back to
 * the first `<title>`'s text, then `""`. A relative image URL is resolved against the page's URL; an
 * image that is not http(s) is dropped.
 */
export function extractPagePreview(html: string, pageUrl: string): PagePreview {
  const openGraph = new Map<string, string>();
  const named = new Map<string, string>();
  let title: string | null = null;
  let inTitle = false;
  let titleText = '';
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'meta') {
          const content = attributes.content;
          if (!content) return;
          const property = attributes.property?.toLowerCase();
          const metaName = attributes.name?.toLowerCase();
          if (property?.startsWith('og:') && !openGraph.has(property.slice(3))) openGraph.set(property.slice(3), content);
          if (metaName && !named.has(metaName)) named.set(metaName, content);
        } else if (name === 'title' && title === null) inTitle = true;
      },
      ontext(text) {
        if (inTitle) titleText += text;
      },
      onclosetag(name) {
        if (name === 'title' && inTitle) {
          inTitle = false;
          title = titleText;
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.end(html);
  const meta = (field: string) => openGraph.get(field) ?? named.get(field) ?? null;
  const description = meta('description');
  return {
    title: cut(meta('title') ?? title ?? ''),
    description: description === null ? null : cut(description),
    imageUrl: imageUrlOf(meta('image'), pageUrl),
  };
}

/** The first MAX_TEXT_LENGTH characters (code points, so no emoji is cut in half). */
function cut(text: string): string {
  return text.length <= MAX_TEXT_LENGTH ? text : Array.from(text).slice(0, MAX_TEXT_LENGTH).join('');
}

function imageUrlOf(raw: string | null, pageUrl: string): string | null {
  if (raw === null) return null;
  try {
    const url = new URL(raw.trim(), pageUrl);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.href.length > MAX_IMAGE_URL_LENGTH) return null;
    return url.href;
  } catch {
    return null;
  }
}
