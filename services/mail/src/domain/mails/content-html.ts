/**
 * A message's content as the HTML of a mail (original-extras §5.4): bold, italic and underline as
 * <strong>/<em>/<u>, links as <a> (http and https only), paragraphs, lists, quotes and code;
 * mentions as the name in bold; markdown as its text. Every text is escaped.
 */

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);
}

/** Only http and https links are followed; anything else (javascript:, data:) is shown as text. */
export function safeHttpUrl(url: unknown): string | null {
  if (typeof url !== 'string') return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.toString() : null;
  } catch {
    return null;
  }
}

type Node = Record<string, unknown>;

function children(node: Node): string {
  return Array.isArray(node.children) ? node.children.map(nodeHtml).join('') : '';
}

function textHtml(node: Node): string {
  let html = escapeHtml(String(node.text ?? ''));
  if (node.code) html = `<code>${html}</code>`;
  if (node.bold) html = `<strong>${html}</strong>`;
  if (node.italic) html = `<em>${html}</em>`;
  if (node.underline) html = `<u>${html}</u>`;
  return html;
}

function nodeHtml(value: unknown): string {
  if (value === null || typeof value !== 'object') return '';
  const node = value as Node;
  if (node.type === undefined) return textHtml(node);
  switch (node.type) {
    case 'p':
      return `<p style="margin:0 0 8px">${children(node)}</p>`;
    case 'mention':
    case 'assignee':
      return `<strong>${children(node)}</strong>`;
    case 'link': {
      const url = safeHttpUrl(node.url);
      return url ? `<a href="${escapeHtml(url)}" style="color:#1a5fb4">${children(node)}</a>` : children(node);
    }
    case 'bullet':
    case 'number_bullet':
    case 'todo':
      return `<li>${children(node)}</li>`;
    case 'quote':
      return `<blockquote style="margin:0 0 8px;padding-left:8px;border-left:3px solid #ccc;color:#555">${children(node)}</blockquote>`;
    case 'code':
      return `<pre style="margin:0 0 8px;background:#f4f4f4;padding:6px"><code>${children(node)}</code></pre>`;
    default:
      return children(node);
  }
}

/** Consecutive list items are wrapped in one <ul> (or <ol> for numbered ones) inside a <div>. */
export function contentHtml(content: unknown): string {
  if (!Array.isArray(content)) return '';
  const parts: string[] = [];
  let list: { tag: 'ul' | 'ol'; items: string[] } | null = null;
  const flush = () => {
    if (list) parts.push(`<div><${list.tag} style="margin:0 0 8px">${list.items.join('')}</${list.tag}></div>`);
    list = null;
  };
  for (const node of content) {
    const type = (node as Node | null)?.type;
    const tag = type === 'number_bullet' ? 'ol' : type === 'bullet' || type === 'todo' ? 'ul' : null;
    if (!tag) {
      flush();
      parts.push(nodeHtml(node));
      continue;
    }
    if (list && (list as { tag: string }).tag !== tag) flush();
    list ??= { tag, items: [] };
    list.items.push(nodeHtml(node));
  }
  flush();
  return parts.join('');
}
